// A buffer read or written through a pointer of another type (gi init's
// cast aliases, analysis/parameter_use_access.cpp, Analyser::cast_alias):
// a pitched byte buffer viewed as floats, a byte buffer copied four bytes
// at a time. The count is in the buffer's own elements; the sizes the view
// needs (an aligned pitch, rows that do not overlap) are kept on every
// drafted workload.
#include <gtest/gtest.h>

#include <stdexcept>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/init_sizes.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "grammar/type_aliases.hpp"
#include "parameter_use_support.hpp"

namespace gi {
namespace {

using test::count;
using test::pointer;
using test::use_of;

// CubicInterpolation's CopyCast: row y of a pitched byte buffer, read as floats.
const char* const kPitchedStore =
    "__global__ void k(unsigned char* destination, const float* source, unsigned pitch, unsigned width, int n, int rows) {\n"
    "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const int y = blockIdx.y;\n"
    "  if (x < n && y < rows) {\n"
    "    float* dest = (float*)(destination + y * pitch) + x;\n"
    "    *dest = 2.f * source[y * width + x];\n"
    "  }\n"
    "}\n";

TEST(CastView, APitchedRowOfBytesViewedAsFloatsCountsBytes) {
  const auto u = use_of(kPitchedStore);
  // The last row's start plus n floats.
  EXPECT_EQ(count(u, "destination"), "pitch * rows + 4 * n - pitch");
  EXPECT_TRUE(pointer(u, "destination").written);
  EXPECT_FALSE(pointer(u, "destination").read);
  EXPECT_TRUE(pointer(u, "destination").store_reaches_zero);
}

TEST(CastView, APitchedStoreNeedsAnAlignedPitchAndRowsApart) {
  const auto u = use_of(kPitchedStore);
  const auto& needs = pointer(u, "destination").size_needs;
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].name, "pitch");
  EXPECT_EQ(needs[0].multiple, 4);
  ASSERT_TRUE(needs[1].at_least_zero);
  EXPECT_EQ(needs[1].at_least_zero->text(), "-4 * n + pitch");
  EXPECT_EQ(needs[1].row, "4 * n");
}

TEST(CastView, AReadThroughAViewNeedsNoRowsApart) {
  // CopyCastBack: overlapping rows read the same bytes twice, which is harmless.
  const auto u = use_of(
      "__global__ void k(float* out, const unsigned char* source, unsigned pitch, int n, int rows) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < n && y < rows) {\n"
      "    const float* src = (const float*)(source + y * pitch) + x;\n"
      "    out[y * n + x] = *src;\n"
      "  }\n"
      "}\n");
  EXPECT_EQ(count(u, "source"), "pitch * rows + 4 * n - pitch");
  const auto& needs = pointer(u, "source").size_needs;
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].multiple, 4);
}

TEST(CastView, BytesReadAsFloatsAreDrawnSoEachFloatIsANormalNumber) {
  // CopyCastBack: random bytes read as floats hold NaNs, whose payloads no
  // two runs need agree on.
  const char* const source =
      "__global__ void k(float* out, const unsigned char* source, unsigned pitch, int n, int rows) {\n"
      "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const int y = blockIdx.y;\n"
      "  if (x < n && y < rows) out[y * n + x] = *((const float*)(source + y * pitch) + x);\n"
      "}\n";
  EXPECT_EQ(pointer(use_of(source), "source").viewed_as, "");  // a cast that declares nothing is not followed
  const std::string declared = std::string(source).replace(
      std::string(source).find("out[y * n + x] = *((const float*)(source + y * pitch) + x);"),
      std::string("out[y * n + x] = *((const float*)(source + y * pitch) + x);").size(),
      "{ const float* row = (const float*)(source + y * pitch); out[y * n + x] = row[x]; }");
  const SpecScaffold s = scaffold_spec(declared, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"pitch=4*n", "n=1000", "rows=500"}, {}));
  EXPECT_EQ(s.spec["workloads"]["train"]["variables"]["inputs"]["source"],
            nlohmann::ordered_json::parse(R"({"uniform": [32, 63]})"))
      << s.spec.dump(2);
}

TEST(CastView, AWholeBufferViewedAsFloatsAndAsAVector) {
  // Rodinia dwt2d's c_CopySrcToComponent: bytes copied a float at a time.
  const auto u = use_of(
      "__global__ void k(unsigned char* src, float4* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  const float* s = (const float*)src;\n"
      "  const float4* v = reinterpret_cast<const float4*>(src);\n"
      "  if (i < n) out[i] = make_float4(s[i], v[i].y, 0.f, 0.f);\n"
      "}\n");
  // 16 bytes for each of n float4s, more than 4 for each float.
  EXPECT_EQ(count(u, "src"), "16 * n");
  EXPECT_TRUE(pointer(u, "src").size_needs.empty());  // no pitch: the allocation's own alignment holds
}

TEST(CastView, AViewNarrowerThanTheElementIsRefusedWithItsReason) {
  const auto u = use_of(
      "__global__ void k(float* f, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  unsigned char* b = (unsigned char*)f;\n"
      "  if (i < n) b[i] = 0;\n"
      "}\n");
  EXPECT_EQ(count(u, "f"), "none: line 3: it is viewed as 'unsigned char*' (line 3), whose elements gi cannot count "
                           "in the buffer's own");
}

TEST(CastView, TheDraftedWorkloadsKeepThePitchAlignedAndTheRowsApart) {
  const SpecScaffold s = scaffold_spec(kPitchedStore, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"pitch=4096", "width=1000", "n=1000", "rows=500"}, {}));
  EXPECT_TRUE(fitness::fields_to_fill(nlohmann::json::parse(s.spec.dump())).empty()) << s.spec.dump(2);
  int workloads = 0;
  const auto check = [&](const nlohmann::json& variables) {
    ++workloads;
    const double pitch = variables.at("pitch").get<double>(), n = variables.at("n").get<double>();
    EXPECT_EQ(static_cast<long long>(pitch) % 4, 0) << variables.dump();
    EXPECT_GE(pitch, 4 * n) << variables.dump();
  };
  for (const auto& [name, w] : s.spec.at("workloads").items()) {
    if (w.is_array())
      for (const auto& one : w) check(one.at("variables"));
    else
      check(w.at("variables"));
  }
  EXPECT_GE(workloads, 7);
  // Sizes that break either are refused, with the reason.
  EXPECT_THROW(scaffold_spec(kPitchedStore, "k.cu", std::nullopt, "user",
                             parse_init_sizes({"pitch=4097", "width=1000", "n=1000", "rows=500"}, {})),
               std::runtime_error);
  try {
    scaffold_spec(kPitchedStore, "k.cu", std::nullopt, "user",
                  parse_init_sizes({"pitch=400", "width=1000", "n=1000", "rows=500"}, {}));
    ADD_FAILURE() << "rows 400 bytes apart, 4000 bytes long, were accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pitch >= 4 * n (--size pitch=4*n ties the pitch to the row)"),
              std::string::npos)
        << e.what();
  }
}

TEST(CastView, RowsAPitchApartKeepTheBytesBetweenThemUnlessThePitchIsTiedToTheRow) {
  const auto role = [](const std::vector<std::string>& sizes) {
    const SpecScaffold s = scaffold_spec(kPitchedStore, "k.cu", std::nullopt, "user", parse_init_sizes(sizes, {}));
    return s.spec["parameters"][0]["role"].get<std::string>();
  };
  EXPECT_EQ(role({"pitch=4096", "width=1000", "n=1000", "rows=500"}), "inout");
  EXPECT_EQ(role({"pitch=4*n", "width=1000", "n=1000", "rows=500"}), "out");
}

TEST(CastView, BuiltInTypesHaveCudasSizesAndAlignments) {
  EXPECT_EQ(grammar::builtin_type_bytes("uchar"), 1);
  EXPECT_EQ(grammar::builtin_type_bytes("const float"), 4);
  EXPECT_EQ(grammar::builtin_type_bytes("float3"), 12);
  EXPECT_EQ(grammar::builtin_type_alignment("float3"), 4);
  EXPECT_EQ(grammar::builtin_type_alignment("float4"), 16);
  EXPECT_EQ(grammar::builtin_type_bytes("double2"), 16);
  EXPECT_EQ(grammar::builtin_type_bytes("MyStruct"), 0);
}

}  // namespace
}  // namespace gi
