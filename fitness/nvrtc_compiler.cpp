#include "fitness/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <unordered_map>

#include "fitness/ptxas_info.hpp"
#include "fitness/thread_pool.hpp"
#include "grammar/source_hash.hpp"

namespace gi::fitness {

namespace {

// Always on: the register and spill counts are part of every result.
constexpr const char* kVerbosePtxas = "-Xptxas=-v";

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The target must come from `arch` alone, or the key and is_ptx would lie.
bool names_target(const std::string& option) {
  return starts_with(option, "-arch") || starts_with(option, "--gpu-architecture") ||
         starts_with(option, "--gpu-name");
}

struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program) nvrtcDestroyProgram(&program);
  }
};

std::string fetch_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

std::string failed(const char* call, nvrtcResult code) {
  return std::string(call) + " failed: " + nvrtcGetErrorString(code);
}

// Failures that depend only on the request (so the key) are worth caching;
// others (out of memory, missing builtins library) may pass next time.
bool deterministic_failure(nvrtcResult code) {
  return code == NVRTC_ERROR_COMPILATION || code == NVRTC_ERROR_INVALID_OPTION;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> nvrtc_supported_archs() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  std::vector<std::string> names;
  for (int a : archs) names.push_back("sm_" + std::to_string(a));
  return names;
}

std::string compile_key(const CompileRequest& request) {
  // Length-prefixed fields, so no choice of option text can make two
  // different requests serialise to the same bytes.
  std::string material = "gi-compile-key-v1\n";
  auto field = [&material](std::string_view name, std::string_view value) {
    material.append(name).append(":").append(std::to_string(value.size())).append(":");
    material.append(value).append("\n");
  };
  field("nvrtc", nvrtc_version());
  field("arch", request.arch);
  field("file", request.file_name);
  for (const auto& option : request.options) field("option", option);
  field("source", grammar::normalise_source(request.source));
  return grammar::sha256_hex(material);
}

Compiler::Compiler(std::optional<std::filesystem::path> cache_dir) {
  if (cache_dir) cache_.emplace(std::move(*cache_dir));
}

Compiler::Stats Compiler::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

CompileResult Compiler::compile(const CompileRequest& request) {
  CompileResult result;
  try {
    result.key = compile_key(request);
    if (cache_) {
      CacheLookup lookup = cache_->get(result.key);
      if (lookup.result) {
        std::lock_guard lock(stats_mutex_);
        ++stats_.hits;
        return std::move(*lookup.result);
      }
      if (lookup.corrupt) {
        std::lock_guard lock(stats_mutex_);
        ++stats_.corrupt_entries;
        stats_.last_cache_problem = lookup.problem;
      }
    }
    result = compile_uncached(request, result.key);
  } catch (const std::exception& e) {
    result.ok = false;
    result.error = std::string("compile of ") + request.file_name + " failed: " + e.what();
  } catch (...) {
    result.ok = false;
    result.error = "compile of " + request.file_name + " failed: unknown exception";
  }
  return result;
}

CompileResult Compiler::compile_uncached(const CompileRequest& request, const std::string& key) {
  CompileResult result;
  result.key = key;
  result.is_ptx = starts_with(request.arch, "compute_");

  std::vector<std::string> options = {"--gpu-architecture=" + request.arch};
  bool verbose = false;
  for (const auto& option : request.options) {
    if (names_target(option)) {
      result.error = "option '" + option + "' names a target; set CompileRequest::arch instead";
      return result;
    }
    verbose = verbose || option == kVerbosePtxas;
    options.push_back(option);
  }
  if (!verbose) options.emplace_back(kVerbosePtxas);
  std::vector<const char*> argv;
  for (const auto& option : options) argv.push_back(option.c_str());

  nvrtcResult last = NVRTC_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  {
    ProgramGuard guard;
    last = nvrtcCreateProgram(&guard.program, request.source.c_str(), request.file_name.c_str(), 0,
                              nullptr, nullptr);
    if (last != NVRTC_SUCCESS) {
      guard.program = nullptr;
      result.error = failed("nvrtcCreateProgram", last);
    } else {
      last = nvrtcCompileProgram(guard.program, static_cast<int>(argv.size()), argv.data());
      result.log = fetch_log(guard.program);
      if (last != NVRTC_SUCCESS) {
        result.error = failed("nvrtcCompileProgram", last) + " (" + request.file_name + ", arch " +
                       request.arch + "; see log)";
      } else {
        std::size_t size = 0;
        last = result.is_ptx ? nvrtcGetPTXSize(guard.program, &size)
                             : nvrtcGetCUBINSize(guard.program, &size);
        if (last != NVRTC_SUCCESS || size == 0) {
          result.error = last != NVRTC_SUCCESS
                             ? failed(result.is_ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize", last)
                             : "NVRTC produced an empty binary for arch " + request.arch;
        } else {
          result.cubin.resize(size);
          last = result.is_ptx ? nvrtcGetPTX(guard.program, result.cubin.data())
                               : nvrtcGetCUBIN(guard.program, result.cubin.data());
          if (last != NVRTC_SUCCESS) {
            result.error = failed(result.is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", last);
            result.cubin.clear();
          } else {
            result.ok = true;
          }
        }
      }
    }
  }
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const PtxasInfo info = parse_ptxas_info(result.log);
  result.registers = info.registers;
  result.spill_store_bytes = info.spill_store_bytes;
  result.spill_load_bytes = info.spill_load_bytes;
  result.stack_frame_bytes = info.stack_frame_bytes;

  std::string cache_error;
  const bool store = cache_ && (result.ok || deterministic_failure(last));
  const bool stored = store && cache_->put(key, request, result, &cache_error);

  std::lock_guard lock(stats_mutex_);
  ++stats_.misses;
  ++stats_.compiles;
  if (!result.ok) ++stats_.failures;
  stats_.total_compile_seconds += result.compile_seconds;
  if (store && !stored) stats_.last_cache_problem = cache_error;
  return result;
}

std::vector<CompileResult> Compiler::compile_all(const std::vector<CompileRequest>& requests,
                                                 int jobs) {
  std::vector<CompileResult> results(requests.size());
  // first[i] is the index of the first request with the same key as i.
  std::vector<std::size_t> first(requests.size());
  std::unordered_map<std::string, std::size_t> seen;
  std::vector<std::string> keys(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      keys[i] = compile_key(requests[i]);
    } catch (const std::exception&) {
      keys[i].clear();  // compile() reports the failure for this request
    }
    auto [it, inserted] = seen.emplace(keys[i], i);
    first[i] = (keys[i].empty() || inserted) ? i : it->second;
  }
  {
    ThreadPool pool(jobs);
    std::vector<std::future<CompileResult>> pending(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (first[i] == i) pending[i] = pool.submit([this, &requests, i] { return compile(requests[i]); });
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (pending[i].valid()) results[i] = pending[i].get();
    }
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (first[i] == i) continue;
    results[i] = results[first[i]];
    results[i].cache_hit = true;
    std::lock_guard lock(stats_mutex_);
    ++stats_.hits;
  }
  return results;
}

}  // namespace gi::fitness
