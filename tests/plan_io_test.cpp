// Plan files: a LaunchPlan, its references and tolerance survive a round
// trip bit for bit, and a truncated or damaged file is refused clearly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "fitness/workload/plan_io.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

struct Sample {
  LaunchPlan plan;
  std::vector<ExpectedOutput> expected;
  Tolerance tolerance{1e-6, 2e-5};
};

Sample sample() {
  Sample s;
  s.plan.entry = "deform";
  s.plan.buffers.push_back({"image", ParamRole::In, ElementType::F32, 4, bytes_of<float>({1, 2, 3, 4.5f})});
  s.plan.buffers.push_back({"field", ParamRole::Out, ElementType::F32x4, 2, {}});
  s.plan.buffers.push_back({"mask", ParamRole::In, ElementType::I32, 3, bytes_of<int>({1, -1, 7}), true});
  s.plan.buffers.push_back({"acc", ParamRole::InOut, ElementType::F64, 2, bytes_of<double>({0.5, -0.25})});
  // A texture over a 3 x 2 CUDA array, sampled linearly, zero outside, normalised.
  s.plan.buffers.push_back({"volume", ParamRole::In, ElementType::F32, 6, bytes_of<float>({1, 2, 3, 4, 5, 6}), true,
                            TextureArray{2, {3, 2, 1}, TextureFilter::Linear, TextureAddress::Border, true}});
  s.plan.scalars.push_back({"n", bytes_of<int>({4})});
  s.plan.scalars.push_back({"spacing", bytes_of<float>({5.0f})});
  s.plan.params = {{true, 0}, {true, 1}, {true, 2}, {true, 3}, {true, 4}, {false, 0}, {false, 1}};
  s.plan.constants.push_back({"c_VoxelNumber", bytes_of<int>({4})});
  s.plan.constants.push_back({"c_Weight", bytes_of<float>({0.25f})});
  s.plan.grid = {7, 2, 1};
  s.plan.block = {128, 1, 2};
  s.plan.dynamic_shared_bytes = 4096;
  s.plan.min_bytes_moved = 123456.5;
  ExpectedOutput field{"field", {1, 2, 3, 4, 5, 6, 7, std::numeric_limits<double>::quiet_NaN()}, std::vector<std::uint32_t>{1}, {0, 1, 2}};
  ExpectedOutput acc{"acc", {1e-300, -3.25}, std::nullopt, {}};
  s.expected = {field, acc};
  return s;
}

void expect_same(const Sample& a, const PlanBundle& b) {
  EXPECT_EQ(b.plan.entry, a.plan.entry);
  ASSERT_EQ(b.plan.buffers.size(), a.plan.buffers.size());
  for (std::size_t i = 0; i < a.plan.buffers.size(); ++i) {
    EXPECT_EQ(b.plan.buffers[i].name, a.plan.buffers[i].name);
    EXPECT_EQ(b.plan.buffers[i].role, a.plan.buffers[i].role);
    EXPECT_EQ(b.plan.buffers[i].type, a.plan.buffers[i].type);
    EXPECT_EQ(b.plan.buffers[i].count, a.plan.buffers[i].count);
    EXPECT_EQ(b.plan.buffers[i].initial, a.plan.buffers[i].initial);
    EXPECT_EQ(b.plan.buffers[i].texture, a.plan.buffers[i].texture);
    const TextureArray &got = b.plan.buffers[i].array, &want = a.plan.buffers[i].array;
    EXPECT_EQ(got.dimensions, want.dimensions);
    EXPECT_EQ(got.extent, want.extent);
    EXPECT_EQ(got.filter, want.filter);
    EXPECT_EQ(got.address, want.address);
    EXPECT_EQ(got.normalized, want.normalized);
  }
  ASSERT_EQ(b.plan.scalars.size(), a.plan.scalars.size());
  for (std::size_t i = 0; i < a.plan.scalars.size(); ++i) {
    EXPECT_EQ(b.plan.scalars[i].name, a.plan.scalars[i].name);
    EXPECT_EQ(b.plan.scalars[i].bytes, a.plan.scalars[i].bytes);
  }
  EXPECT_EQ(b.plan.params, a.plan.params);
  ASSERT_EQ(b.plan.constants.size(), a.plan.constants.size());
  for (std::size_t i = 0; i < a.plan.constants.size(); ++i) {
    EXPECT_EQ(b.plan.constants[i].name, a.plan.constants[i].name);
    EXPECT_EQ(b.plan.constants[i].bytes, a.plan.constants[i].bytes);
  }
  EXPECT_EQ(b.plan.grid, a.plan.grid);
  EXPECT_EQ(b.plan.block, a.plan.block);
  EXPECT_EQ(b.plan.dynamic_shared_bytes, a.plan.dynamic_shared_bytes);
  EXPECT_EQ(b.plan.min_bytes_moved, a.plan.min_bytes_moved);
  ASSERT_EQ(b.expected.size(), a.expected.size());
  for (std::size_t i = 0; i < a.expected.size(); ++i) {
    EXPECT_EQ(b.expected[i].buffer, a.expected[i].buffer);
    ASSERT_EQ(b.expected[i].values.size(), a.expected[i].values.size());
    // Bit for bit: NaN and denormals too.
    EXPECT_EQ(std::memcmp(b.expected[i].values.data(), a.expected[i].values.data(),
                          a.expected[i].values.size() * sizeof(double)),
              0);
    EXPECT_EQ(b.expected[i].written_elements, a.expected[i].written_elements);
    EXPECT_EQ(b.expected[i].checked_components, a.expected[i].checked_components);
  }
  EXPECT_EQ(b.tolerance.abs, a.tolerance.abs);
  EXPECT_EQ(b.tolerance.rel, a.tolerance.rel);
}

std::string error_of(std::span<const std::byte> bytes) {
  try {
    deserialize_plan(bytes, "test.plan");
  } catch (const PlanIoError& e) {
    return e.what();
  }
  return "";
}

class PlanIoFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("gi-plan-io-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(PlanIo, RoundTripsEveryField) {
  const Sample s = sample();
  expect_same(s, deserialize_plan(serialize_plan(s.plan, s.expected, s.tolerance), "memory"));
}

TEST_F(PlanIoFile, SaveAndLoadRoundTrip) {
  const Sample s = sample();
  const fs::path path = dir_ / "workload.plan";
  save_plan(path, s.plan, s.expected, s.tolerance);
  expect_same(s, load_plan(path));
  // No temporary file left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(PlanIoFile, MissingFileNamesThePath) {
  try {
    load_plan(dir_ / "absent.plan");
    FAIL() << "no error";
  } catch (const PlanIoError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.plan"), std::string::npos) << e.what();
  }
}

TEST(PlanIo, EveryTruncationIsRefusedAsTruncated) {
  const Sample s = sample();
  const std::vector<std::byte> bytes = serialize_plan(s.plan, s.expected, s.tolerance);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::string error = error_of(std::span(bytes).first(n));
    EXPECT_NE(error.find("truncated"), std::string::npos) << "length " << n << ": " << error;
    EXPECT_NE(error.find("test.plan"), std::string::npos) << error;
  }
}

TEST(PlanIo, DamageIsRefused) {
  const Sample s = sample();
  const std::vector<std::byte> good = serialize_plan(s.plan, s.expected, s.tolerance);

  std::vector<std::byte> bad = good;
  bad[0] = std::byte{'X'};
  EXPECT_NE(error_of(bad).find("not a gi plan file"), std::string::npos) << error_of(bad);

  bad = good;
  bad[8] = std::byte{9};  // version
  EXPECT_NE(error_of(bad).find("format version 9"), std::string::npos) << error_of(bad);

  // Every single flipped payload byte is caught.
  for (std::size_t i = 32; i < good.size(); ++i) {
    bad = good;
    bad[i] ^= std::byte{0x40};
    EXPECT_NE(error_of(bad).find("checksum"), std::string::npos) << "byte " << i;
  }

  bad = good;
  bad.push_back(std::byte{0});
  EXPECT_NE(error_of(bad).find("trailing"), std::string::npos) << error_of(bad);
}

TEST(PlanIo, InconsistentPlanIsRefusedAfterTheChecksum) {
  Sample s = sample();
  s.plan.params.push_back({true, 9});  // there are 5 buffers
  EXPECT_NE(error_of(serialize_plan(s.plan, s.expected, s.tolerance)).find("buffer #9"),
            std::string::npos);

  s = sample();
  s.plan.buffers[0].initial.pop_back();  // 15 bytes for 4 floats
  const std::string error = error_of(serialize_plan(s.plan, s.expected, s.tolerance));
  EXPECT_NE(error.find("'image'"), std::string::npos) << error;
  EXPECT_NE(error.find("15 initial bytes"), std::string::npos) << error;

  s = sample();
  s.plan.buffers[0].array.dimensions = 2;  // 'image' is no texture
  EXPECT_NE(error_of(serialize_plan(s.plan, s.expected, s.tolerance)).find("'image': an array but no texture"),
            std::string::npos);
  s = sample();
  s.plan.buffers[4].array.dimensions = 4;
  EXPECT_NE(error_of(serialize_plan(s.plan, s.expected, s.tolerance)).find("'volume': a texture array of 4 dimensions"),
            std::string::npos);
}

}  // namespace
