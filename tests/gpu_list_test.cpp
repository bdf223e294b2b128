// gi/cli/gpu_list.hpp: the GPUs `gi evolve --gpus` and `gi evolve-all --gpus` are given.
#include <gtest/gtest.h>

#include "fitness/gpu/cuda_devices.hpp"
#include "gi/cli/gpu_list.hpp"

namespace gi {
namespace {

TEST(GpuList, DeviceNumbersSeparatedByCommas) {
  EXPECT_EQ(parse_gpu_list("0", "--gpus"), std::vector<int>({0}));
  EXPECT_EQ(parse_gpu_list("2,0,1", "--gpus"), std::vector<int>({2, 0, 1}));
  for (const char* bad : {"", "0,", "a", "0,,1", "-1", "1.5", "0,0"}) {
    try {
      parse_gpu_list(bad, "--gpus");
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--gpus", 0), 0u) << e.what();
    }
  }
}

TEST(GpuList, AllIsEveryDeviceThisProcessSees) {
  const auto env = fitness::probe_cuda();
  if (env.gpus.empty()) {
    EXPECT_THROW(parse_gpu_list("all", "--gpus"), std::runtime_error);
  } else {
    EXPECT_EQ(parse_gpu_list("all", "--gpus").size(), env.gpus.size());
  }
}

}  // namespace
}  // namespace gi
