// A user's own data as an input (`--like 'y:values(@y.txt)'`): an ODE
// solver such as Rodinia's myocyte goes to inf on random initial values, so
// the user gives the values the application reads, and where the file holds
// one work item's record, the record repeats per work item
// (`values(@y.txt)[91];constant(0) every (xmax+1)*91`).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/random_workload.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/init_sizes.hpp"
#include "gi/seed/spec_scaffold.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// One work item per record of m floats, of which the first two are state.
const char* kRecords = R"(__global__ void advance(int n, int m, float* y, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = y[i * m] + y[i * m + 1];
  }
}
)";

std::string error_of(const std::vector<std::string>& likes) {
  try {
    parse_init_sizes({}, likes);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

class ValuesFile : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
  const fs::path dir = fs::temp_directory_path() / ("gi-own-data-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

TEST_F(ValuesFile, ValuesAreReadInOrderFromTheTextOrAFile) {
  EXPECT_EQ(parse_init_sizes({}, {"v:values(1, 2.5,-3)"}).like.at("v").dump(), R"({"values":[1,2.5,-3]})");
  // Rodinia's y.txt writes its exponents with three digits, one value a line;
  // commas and blank lines are separators too.
  const std::string path = write("y.txt", "1.000000e003\n4.180000e-002\n\n7, 8\t9\n");
  EXPECT_EQ(parse_init_sizes({}, {"y:values(@" + path + ")"}).like.at("y").dump(), R"({"values":[1000,0.0418,7,8,9]})");
}

TEST_F(ValuesFile, ABadFileIsNamedWithItsLine) {
  const std::string path = write("bad.txt", "1\n2\n3x\n");
  EXPECT_NE(error_of({"y:values(@" + path + ")"}).find(path + ":3: '3x' is no finite number"), std::string::npos)
      << error_of({"y:values(@" + path + ")"});
  EXPECT_NE(error_of({"y:values(@" + write("empty.txt", "\n") + ")"}).find("holds no numbers"), std::string::npos);
  EXPECT_NE(error_of({"y:values(@" + (dir / "absent.txt").string() + ")"}).find("cannot read"), std::string::npos);
  EXPECT_NE(error_of({"y:values()"}).find("values takes one number or more, or @FILE"), std::string::npos);
  // JSON holds no infinity: spec.json could not keep it.
  EXPECT_NE(error_of({"y:values(@" + write("inf.txt", "1 inf\n") + ")"}).find(":1: 'inf' is no finite number"),
            std::string::npos);
  EXPECT_NE(error_of({"y:values(1,inf)"}).find("values are finite numbers"), std::string::npos);
}

TEST(RepeatedPieces, EveryRepeatsThePiecesAndTakesAnExpressionOfTheSizes) {
  EXPECT_EQ(parse_init_sizes({}, {"y:values(5,6)[2];constant(0) every (xmax+1)*91"}).like.at("y").dump(),
            R"({"pieces":[{"length":2,"values":[5,6]},{"constant":0}],"every":"(xmax+1)*91"})");
  // One distribution repeated is one piece.
  EXPECT_EQ(parse_init_sizes({}, {"p:values(1,2,3) every 4"}).like.at("p").dump(),
            R"({"pieces":[{"values":[1,2,3]}],"every":4})");
  EXPECT_NE(error_of({"y:values(5,6)[2];constant(0) every m+"}).find("every 'm+' is no length"), std::string::npos);
}

// Drafted, loaded and drawn: each work item's record starts with the file's
// values and the rest of it is zero, whatever the number of work items.
TEST_F(ValuesFile, ARecordPerWorkItemIsDrawnFromTheFile) {
  const std::string path = write("y.txt", "0.25\n0.5\n");
  const SpecScaffold s = scaffold_spec(kRecords, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"n=1000", "m=5"}, {"y:values(@" + path + ")[2];constant(0) every m"}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", kRecords, "k.cu", {.registry = false});
  for (const fitness::WorkloadSpec* w : {&k.train, &k.train_checks.at(0)}) {
    const fitness::Workload drawn = fitness::generate_workload(k, *w, 7);
    const std::vector<std::byte>& bytes = drawn.inputs.at("y");
    std::vector<float> y(bytes.size() / 4);
    std::memcpy(y.data(), bytes.data(), bytes.size());
    const auto m = static_cast<std::size_t>(drawn.variables.at("m"));
    ASSERT_GE(y.size(), 2 * m) << w->json_path;
    for (std::size_t e = 0; e < y.size(); ++e)
      ASSERT_EQ(y[e], e % m == 0 ? 0.25f : e % m == 1 ? 0.5f : 0.0f) << w->json_path << " element " << e;
  }
}

// The generator checks what a hand-written spec gives it, naming the place.
TEST(RepeatedPieces, BadValuesAndPeriodsAreNamed) {
  const json base = json::parse(scaffold_spec(kRecords, "k.cu", std::nullopt, "user",
                                              parse_init_sizes({"n=1000", "m=5"}, {}))
                                    .spec.dump());
  const auto error_for = [&](const json& y) {
    json spec = base;
    spec["workloads"]["train"]["variables"]["inputs"]["y"] = y;
    try {
      const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", kRecords, "k.cu", {.registry = false});
      fitness::random_workload(k, k.train, 1);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_for({{"pieces", {{{"length", 2}, {"values", {1, 2}}}, {{"constant", 0}}}}, {"every", "m"}}), "no error");
  EXPECT_NE(error_for({{"values", json::array()}}).find("inputs.y.values: expected a list of numbers"), std::string::npos);
  EXPECT_NE(error_for({{"values", {1, "two"}}}).find("inputs.y.values[1]: expected a number"), std::string::npos);
  EXPECT_NE(error_for({{"pieces", {{{"constant", 0}}}}, {"every", 0}}).find("inputs.y.every: expected a whole number"),
            std::string::npos);
  EXPECT_NE(error_for({{"pieces", {{{"length", 6}, {"values", {1}}}, {{"constant", 0}}}}, {"every", "m"}})
                .find("pieces[0].length: the pieces so far hold 6 elements, more than the period's 5"),
            std::string::npos);
  EXPECT_NE(error_for({{"pieces", {{{"constant", 0}}}}, {"each", 5}}).find("inputs.y: expected {\"pieces\""),
            std::string::npos);
}

}  // namespace
}  // namespace gi
