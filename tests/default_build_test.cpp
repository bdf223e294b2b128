// Macros in the default build (analysis/default_build.hpp) and the local
// headers gi init reads for them (gi/seed/included_headers.hpp).
#include "analysis/default_build.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gi/seed/included_headers.hpp"
#include "parameter_use_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;

analysis::DefaultBuild build_of(const std::string& text, bool complete = true) {
  return analysis::default_build(analysis::directive_lines(text, ""), complete);
}

std::string body_of(const analysis::DefaultBuild& b, const std::string& name) {
  const auto d = b.defined.find(name);
  return d == b.defined.end() ? "(undefined)" : d->second.body;
}

// Rodinia's block-size knob: -D options choose, and without them the #else.
TEST(DefaultBuild, AConditionalOnANameOnlyDashDDefinesTakesItsDefaultBranch) {
  const auto b = build_of(
      "#ifdef RD_WG_SIZE_0_0\n"
      "        #define BLOCK_SIZE RD_WG_SIZE_0_0\n"
      "#elif defined(RD_WG_SIZE_0)\n"
      "        #define BLOCK_SIZE RD_WG_SIZE_0\n"
      "#elif defined(RD_WG_SIZE)\n"
      "        #define BLOCK_SIZE RD_WG_SIZE\n"
      "#else\n"
      "        #define BLOCK_SIZE 16  // the default\n"
      "#endif\n");
  EXPECT_EQ(body_of(b, "BLOCK_SIZE"), "16");
  EXPECT_TRUE(b.defined.at("BLOCK_SIZE").conditional);
  EXPECT_EQ(b.defined.at("BLOCK_SIZE").line, 8);
  EXPECT_TRUE(b.undecided.empty());
}

TEST(DefaultBuild, IfConditionsReadTheMacrosDefinedSoFar) {
  const auto b = build_of(
      "#define LEVEL 3\n"
      "#if LEVEL > 2 && !defined(SMALL)\n"
      "#define WIDTH 64\n"
      "#else\n"
      "#define WIDTH 8\n"
      "#endif\n"
      "#define GONE 1\n"
      "#undef GONE\n"
      "#if UNSET_KNOB\n"  // an undefined name is 0
      "#define KNOB 1\n"
      "#endif\n");
  EXPECT_EQ(body_of(b, "WIDTH"), "64");
  EXPECT_EQ(body_of(b, "GONE"), "(undefined)");
  EXPECT_EQ(body_of(b, "KNOB"), "(undefined)");
}

// A local header gi has not read may define the knob: nothing is decided,
// except the include-guard idiom, which is open the first time.
TEST(DefaultBuild, WithAHeaderUnreadOnlyIncludeGuardsAreDecided) {
  const auto b = build_of(
      "#ifndef LAYOUT_H\n"
      "#define LAYOUT_H\n"
      "#define ROWS 4\n"
      "#ifdef WIDE\n"
      "#define TILE 32\n"
      "#else\n"
      "#define TILE 16\n"
      "#endif\n"
      "#endif\n",
      false);
  EXPECT_EQ(body_of(b, "ROWS"), "4");
  EXPECT_EQ(body_of(b, "TILE"), "(undefined)");
  ASSERT_TRUE(b.undecided.count("TILE"));
  EXPECT_NE(b.undecided.at("TILE").find("defined under a condition gi cannot decide (line 5)"), std::string::npos)
      << b.undecided.at("TILE");
}

TEST(DefaultBuild, FunctionLikeMacrosKeepTheirParametersAndContinuationsJoin) {
  const auto b = build_of("#define IDX2C(i, j, ld) \\\n  (((j) * (ld)) + (i))\n#define NEG (-1)\n");
  ASSERT_TRUE(b.defined.count("IDX2C"));
  const auto& m = b.defined.at("IDX2C");
  EXPECT_TRUE(m.function_like);
  EXPECT_EQ(m.params, (std::vector<std::string>{"i", "j", "ld"}));
  EXPECT_EQ(m.body, "(((j) * (ld)) + (i))");
  EXPECT_FALSE(b.defined.at("NEG").function_like);  // a space before '(': object-like
}

struct TempFolder {
  fs::path path = fs::temp_directory_path() / ("gi-headers-" + std::to_string(::getpid()));
  TempFolder() { fs::create_directories(path / "inc"); }
  ~TempFolder() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

TEST(IncludedHeaders, LocalHeadersAreReadWithTheirOwnIncludesOnce) {
  const TempFolder t;
  t.write("outer.h", "#pragma once\n#include \"inc/inner.h\"\n#define OUTER 2\n");
  t.write("inc/inner.h", "#define INNER 1\n");
  t.write("other.h", "#define OTHER 3\n");
  const std::string source =
      "#include \"outer.h\"\n#include \"outer.h\"\n#include \"math.h\"\n#include \"other.h\"\n#include <stdio.h>\n";
  const auto h = read_included_headers(source, (t.path / "k.cu").string(), {});
  EXPECT_TRUE(h.complete);  // "math.h" is the C library's, written with quotes
  std::vector<std::string> order;
  for (const auto& d : h.lines)
    if (d.text.find("#define") != std::string::npos) order.push_back(d.file + ":" + d.text);
  EXPECT_EQ(order, (std::vector<std::string>{"inner.h:#define INNER 1", "outer.h:#define OUTER 2",
                                             "other.h:#define OTHER 3"}));
  // One that no folder holds: the set is incomplete.
  EXPECT_FALSE(read_included_headers("#include \"absent.h\"\n", (t.path / "k.cu").string(), {}).complete);
  // An --include-dir folder is searched too.
  t.write("inc/found.h", "#define FOUND 1\n");
  EXPECT_TRUE(
      read_included_headers("#include \"found.h\"\n", (t.path / "k.cu").string(), {(t.path / "inc").string()}).complete);
}

// A __device__ helper defined in a local header (NiftyReg's SquareDistance3d
// in Maths.hpp) is followed as one in the kernel's file is: its accesses
// through a pointer it is handed, and the value it returns. The evidence
// names the header.
TEST(IncludedHeaders, HelpersInLocalHeadersAreFollowedForCounts) {
  const TempFolder t;
  t.write("inc/maths.h",
          "#pragma once\n"
          "#define DEVICE __host__ __device__\n"
          "DEVICE inline float dot3(const float* a, const float* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }\n"
          "DEVICE inline int last_of(int n) { return n - 1; }\n");
  const std::string source =
      "#include \"maths.h\"\n"
      "__global__ void k(const float* p, const float* q, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = dot3(&p[i * 3], q) + q[last_of(n)];\n"
      "}\n";
  const grammar::ParsedKernel k = grammar::parse_kernel(source, "k.cu");
  const auto headers = read_included_headers(source, (t.path / "k.cu").string(), {(t.path / "inc").string()});
  ASSERT_TRUE(headers.parsed);
  ASSERT_EQ(headers.parsed->size(), 1u);
  const auto u = analysis::analyse_parameter_use(k, k.functions.back(), headers);
  EXPECT_EQ(test::count(u, "p"), "3 * n");
  EXPECT_NE(test::pointer(u, "p").count_evidence.find("(defined in maths.h)"), std::string::npos)
      << test::pointer(u, "p").count_evidence;
  EXPECT_EQ(test::count(u, "q"), "max(3, n)");  // q[0..2] in dot3 and q[n - 1]
  EXPECT_TRUE(test::pointer(u, "p").read);
  EXPECT_FALSE(test::pointer(u, "p").written);
  // Without the header the helper is unknown: no count, with the reason.
  const auto alone = analysis::analyse_parameter_use(k, k.functions.back());
  EXPECT_NE(test::count(alone, "p").find("address is taken"), std::string::npos) << test::count(alone, "p");
}

}  // namespace
}  // namespace gi
