#include "gi/publish/versions.hpp"

#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"


namespace gi {

std::string gpu_slug(const std::string& gpu_name) {
  std::string out;
  for (char c : gpu_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-gpu" : out;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string driver_release_from(const std::string& line) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sun ..." or
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...":
  // the first word after "Kernel Module" made of digits and dots.
  const auto at = line.find("Kernel Module");
  if (at == std::string::npos) return "";
  std::istringstream words(line.substr(at + 13));
  for (std::string word; words >> word;) {
    const bool version = std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos &&
                         word.find_first_not_of("0123456789.") == std::string::npos;
    if (version) return word;
  }
  return "";
}

std::string kernel_driver_release() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  return std::getline(in, line) ? driver_release_from(line) : "";
}

extern const char kGiGitCommit[];  // gi/publish/gi_commit.cpp.in, made at configure time

std::string gi_commit() { return kGiGitCommit; }

nlohmann::json versions_json(int device) {
  const auto env = fitness::probe_cuda();
  // The driver's release (580.159.04) says more than its CUDA version (13.0);
  // the CUDA version alone when the release cannot be read.
  const std::string cuda = fitness::cuda_version_string(env.driver_version);
  const std::string release = kernel_driver_release();
  nlohmann::json j = {{"gi_commit", gi_commit()}, {"nvrtc", fitness::nvrtc_version()},
                      {"driver", release.empty() ? cuda : release + " (CUDA " + cuda + ")"},
                      {"runtime", fitness::cuda_version_string(env.runtime_version)}, {"date", utc_now_iso8601()}};
  if (device >= 0 && device < static_cast<int>(env.gpus.size())) {
    const auto& g = env.gpus[device];
    j["gpu"] = g.name;
    j["gpu_slug"] = gpu_slug(g.name);
    j["gpu_pci_bus_id"] = g.pci_bus_id;
    j["sm_count"] = g.sm_count;
  } else {
    j["gpu"] = nullptr;
    j["gpu_message"] = env.message;
  }
  return j;
}

}  // namespace gi
