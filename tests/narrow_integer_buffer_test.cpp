// Buffers of 8- and 16-bit integers and uchar4 (an image of grey levels, a
// mask, CT numbers as `short`, an RGBA picture): spec types uint8, int8,
// uint16, int16 and uchar4, which gi init drafts from `unsigned char*`,
// `short*`, `uchar4*`; their values, their fill, their guards and their
// checks. The GPU side is GpuRunnerCheck.NarrowIntegerBuffersAreFilledGuardedAndChecked.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>

#include "fitness/check/output_check.hpp"
#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/random_workload.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "tests/plan_helpers.hpp"

namespace gi::fitness {
namespace {

using json = nlohmann::json;

const std::string kThreshold =
    "__global__ void threshold(const unsigned char* image, unsigned char* mask, int n, int level) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) mask[i] = image[i] > level ? 255 : 0;\n"
    "}\n";

TEST(NarrowIntegerBuffers, TypesSizesAndValues) {
  EXPECT_TRUE(type_matches("uint8", "unsigned char"));
  EXPECT_TRUE(type_matches("uint8", "uint8_t"));
  EXPECT_TRUE(type_matches("int8", "char"));
  EXPECT_TRUE(type_matches("int16", "short"));
  EXPECT_TRUE(type_matches("uint16", "unsigned short"));
  EXPECT_FALSE(type_matches("uint8", "char"));
  EXPECT_FALSE(type_matches("int16", "unsigned short"));
  EXPECT_EQ(element_bytes(ElementType::U8), 1u);
  EXPECT_EQ(element_bytes(ElementType::I16), 2u);
  EXPECT_EQ(element_bytes(ElementType::U8x4), 4u);
  EXPECT_EQ(element_components(ElementType::U8x4), 4u);
  EXPECT_TRUE(element_is_sub_word(ElementType::U16));
  EXPECT_FALSE(element_is_sub_word(ElementType::U8x4));
  EXPECT_FALSE(fits_linear_texture(ElementType::U8));
  const std::byte minus_five[1] = {std::byte{0xFB}};
  EXPECT_EQ(component_value(ElementType::I8, minus_five, 0), -5.0);
  EXPECT_EQ(component_value(ElementType::U8, minus_five, 0), 251.0);
  std::byte shorts[4];
  const std::int16_t ct[2] = {-1000, 3000};
  std::memcpy(shorts, ct, 4);
  EXPECT_EQ(component_value(ElementType::I16, shorts, 0), -1000.0);
  EXPECT_EQ(component_value(ElementType::I16, shorts + 2, 0), 3000.0);
  const std::byte rgba[4] = {std::byte{1}, std::byte{2}, std::byte{200}, std::byte{255}};
  EXPECT_EQ(component_value(ElementType::U8x4, rgba, 2), 200.0);
  EXPECT_EQ(component_value(ElementType::U8x4, rgba, 3), 255.0);
}

TEST(NarrowIntegerBuffers, GiInitDraftsThemAndTheirValuesStayInRange) {
  const SpecScaffold s = scaffold_spec(kThreshold, "k.cu", std::nullopt, "user", parse_init_sizes({"n=1003", "level=100"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["parameters"][0]["type"], "uint8");
  EXPECT_EQ(spec["parameters"][1]["type"], "uint8");
  EXPECT_EQ(spec["tolerance"]["abs"], 0);
  EXPECT_EQ(spec["workloads"]["train"]["variables"]["inputs"]["image"], json::parse(R"({"uniform": [0, 255]})"));
  const KernelSpec k = parse_kernel_spec(spec, "spec.json", kThreshold, "k.cu", {.registry = false});
  const Workload w = generate_workload(k, k.train, 1);
  const std::vector<std::byte>& image = w.inputs.at("image");
  ASSERT_EQ(image.size(), 1003u);  // one byte an element, no padding
  int high = 0;
  for (std::byte b : image) high += std::to_integer<int>(b) > 200;
  EXPECT_GT(high, 100);  // the whole range is drawn, not only 0..100
  // A distribution beyond the type's range is an error naming it.
  json wide = spec;
  wide["workloads"]["train"]["variables"]["inputs"]["image"] = json::parse(R"({"uniform": [0, 300]})");
  const KernelSpec kw = parse_kernel_spec(wide, "spec.json", kThreshold, "k.cu", {.registry = false});
  try {
    generate_workload(kw, kw.train, 1);
    ADD_FAILURE() << "a uint8 input drawn up to 300 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'image' holds 8-bit integers, 0..255"), std::string::npos) << e.what();
  }
  // A scalar of 16 bits passes two bytes, range-checked.
  const std::string shift =
      "__global__ void shift(const short* hu, short* out, int n, short offset) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = hu[i] + offset;\n"
      "}\n";
  const SpecScaffold ss =
      scaffold_spec(shift, "k.cu", std::nullopt, "user", parse_init_sizes({"n=5000", "offset=-300"}, {}));
  json shift_spec = json::parse(ss.spec.dump());
  EXPECT_TRUE(fields_to_fill(shift_spec).empty()) << shift_spec.dump(2);
  EXPECT_EQ(shift_spec["parameters"][0]["type"], "int16");
  EXPECT_EQ(shift_spec["parameters"][3]["type"], "int16");
  const KernelSpec ks = parse_kernel_spec(shift_spec, "spec.json", shift, "k.cu", {.registry = false});
  const LaunchPlan plan = build_launch_plan(ks, generate_workload(ks, ks.train, 1), 256);
  ASSERT_EQ(plan.scalars.size(), 2u);
  ASSERT_EQ(plan.scalars[1].bytes.size(), 2u);
  std::int16_t offset = 0;
  std::memcpy(&offset, plan.scalars[1].bytes.data(), 2);
  EXPECT_EQ(offset, -300);
  EXPECT_EQ(plan.buffers[0].initial.size(), 2u * 5000);
  shift_spec["parameters"][3]["value"] = "40000";
  const KernelSpec too_big = parse_kernel_spec(shift_spec, "spec.json", shift, "k.cu", {.registry = false});
  EXPECT_THROW(build_launch_plan(too_big, generate_workload(too_big, too_big.train, 1), 256), std::exception);
}

class NarrowIntegerEmulated : public ::testing::Test {
 protected:
  void SetUp() override {
    if (emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  }
  static const CpuEmulator& emulator() {
    static const CpuEmulator e([] {
      EmulatorOptions o;
      o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
      return o;
    }());
    return e;
  }
};

// The output is filled with kSubWordFillByte, so an element the kernel
// should write and does not is caught; a write one byte past the end of an
// odd-length buffer lands in its guard.
TEST_F(NarrowIntegerEmulated, AnUnwrittenElementAndAByteWrittenPastTheEndAreCaught) {
  const std::string source =
      "__global__ void threshold(const unsigned char* image, unsigned char* mask, int n, int level, int mode) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (mode == 1 && i == 7) return;\n"
      "  if (i < n + (mode == 2)) mask[i] = image[i < n ? i : 0] > level ? 255 : 0;\n"
      "}\n";
  const EmulatedKernel k = emulator().load(source, "threshold", "k.cu");
  ASSERT_TRUE(k.ok()) << k.error;
  std::vector<std::uint8_t> image(1003);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i * 37);
  std::vector<double> want(image.size());
  for (std::size_t i = 0; i < image.size(); ++i) want[i] = image[i] > 100 ? 255 : 0;
  auto plan = [&](int mode) {
    LaunchPlan p;
    p.entry = "threshold";
    p.buffers = {BufferArg{"image", ParamRole::In, ElementType::U8, image.size(), test::bytes_of(image)},
                 BufferArg{"mask", ParamRole::Out, ElementType::U8, image.size(), {}}};
    p.scalars = {test::scalar<int>("n", static_cast<int>(image.size())), test::scalar<int>("level", 100),
                 test::scalar<int>("mode", mode)};
    p.params = {{true, 0}, {true, 1}, {false, 0}, {false, 1}, {false, 2}};
    p.grid = {8, 1, 1};
    p.block = {128, 1, 1};
    return p;
  };
  ExpectedOutput e;
  e.buffer = "mask";
  e.values = want;
  const CheckReport good = emulator().run_checked(k, plan(0), {e}, Tolerance{0, 0});
  EXPECT_TRUE(good.ok()) << good.message;
  EXPECT_EQ(good.values_checked, image.size());
  const CheckReport unwritten = emulator().run_checked(k, plan(1), {e}, Tolerance{0, 0});
  EXPECT_EQ(unwritten.status, RunStatus::WrongOutput);
  EXPECT_NE(unwritten.message.find("element 7"), std::string::npos) << unwritten.message;
  EXPECT_NE(unwritten.message.find("got 167"), std::string::npos) << unwritten.message;  // the fill byte
  EXPECT_NE(unwritten.message.find("still the fill 0xA7: never written"), std::string::npos) << unwritten.message;
  const CheckReport past_end = emulator().run_checked(k, plan(2), {e}, Tolerance{0, 0});
  EXPECT_EQ(past_end.status, RunStatus::GuardViolation);
  EXPECT_NE(past_end.message.find("guard region after buffer 'mask' was written: byte 0 bytes after the end"),
            std::string::npos)
      << past_end.message;
}

}  // namespace
}  // namespace gi::fitness
