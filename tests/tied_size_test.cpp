// --size NAME=EXPRESSION (gi/seed/spec_scaffold.hpp, InitSizes::tied): a
// scalar the host computes from other sizes (NiftyReg's voxelNumber, the
// product of the image's dimensions) is that expression on every workload,
// not a size drawn on its own; a kernel that relies on the relation (its
// output's x, y and z a voxelNumber apart) is then checked as it runs.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/spec_scaffold.hpp"

namespace gi {
namespace {

using json = nlohmann::json;

const std::string kField =
    "__global__ void field(float* def, int nx, int ny, int voxels) {\n"
    "  const int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  const int y = blockIdx.y;\n"
    "  if (x < nx && y < ny) {\n"
    "    float* px = &def[y * nx + x];\n"
    "    float* py = &px[voxels];\n"
    "    *px = x;\n"
    "    *py = y;\n"
    "  }\n"
    "}\n";

TEST(TiedSize, ASizeTheOthersGiveIsTheirExpressionOnEveryWorkload) {
  const SpecScaffold s = scaffold_spec(kField, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"nx=512", "ny=256", "voxels=nx*ny"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["parameters"][0]["count"], "nx * ny + (nx*ny)");
  EXPECT_EQ(spec["parameters"][3]["value"], "(nx*ny)");
  for (const json& w : spec["workloads"]["validate"]) EXPECT_FALSE(w["variables"].contains("voxels")) << w;
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "spec.json", kField, "k.cu", {.registry = false});
  for (const fitness::WorkloadSpec* ws : {&k.train, &k.validate[2]}) {
    const fitness::Workload w = fitness::generate_workload(k, *ws, 1);
    const fitness::LaunchPlan plan = fitness::build_launch_plan(k, w, 256);
    int voxels = 0;
    std::memcpy(&voxels, plan.scalars[2].bytes.data(), 4);
    EXPECT_EQ(voxels, static_cast<int>(w.variables.at("nx") * w.variables.at("ny")));
  }
}

// NiftyReg's node-centric resampling: the grid is over nodeNumber alone,
// which the host sets to the node image's extent. Tied, the extent's
// components are the sizes the small check and held-out workloads vary;
// kept at the given 32^3 the grid was a multiple of every block size and
// the last block's guard never failed (gi init --check's coverage, H200).
TEST(TiedSize, ASizeOnlyATieNamesVariesOnTheDraftedWorkloads) {
  const std::string kernel =
      "__global__ void nodes(float* out, int nodes, int3 dims) {\n"
      "  const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (tid < nodes) out[tid] = tid % dims.x;\n"
      "}\n";
  const SpecScaffold s = scaffold_spec(kernel, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"dims=32,32,32", "nodes=dims_x*dims_y*dims_z"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  const json& small = spec["workloads"]["train_checks"][0]["variables"];
  const double product = small["dims_x"].get<double>() * small["dims_y"].get<double>() * small["dims_z"].get<double>();
  EXPECT_NE(product, 32 * 32 * 32) << small;
  EXPECT_NE(static_cast<long long>(product) % 32, 0) << small;  // no multiple of any block size
  std::set<double> xs;
  for (const json& w : spec["workloads"]["validate"]) xs.insert(w["variables"]["dims_x"].get<double>());
  EXPECT_GT(xs.size(), 1u);
}

TEST(TiedSize, WhatCannotBeTiedIsAnErrorNamingIt) {
  const auto error = [&](const std::vector<std::string>& sizes) {
    try {
      scaffold_spec(kField, "k.cu", std::nullopt, "user", parse_init_sizes(sizes, {}));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({"nx=512", "ny=256", "voxels=nx*nz"}).find("'nz' is no size of its own"), std::string::npos);
  EXPECT_NE(error({"nx=512", "ny=256", "count=nx*ny", "voxels=5"}).find("no integer scalar parameter or __constant__ 'count'"),
            std::string::npos);
  EXPECT_NE(error({"nx=512", "ny=nx", "voxels=nx*ny"}).find("'ny' is no size of its own"), std::string::npos);
  EXPECT_NE(error({"nx=512", "ny=256", "voxels=nx*"}).find("is no number, nor an expression of other sizes"),
            std::string::npos);
}

}  // namespace
}  // namespace gi
