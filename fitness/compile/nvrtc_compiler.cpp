#include "fitness/compile/nvrtc_compiler.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "fitness/compile/automatic_pch.hpp"
#include "fitness/compile/compile_server.hpp"
#include "fitness/compile/cuda_toolkit.hpp"
#include "fitness/compile/first_occurrence.hpp"
#include "fitness/compile/ptxas_info.hpp"
#include "fitness/compile/thread_pool.hpp"
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

namespace {

// Hash material of length-prefixed fields, so no choice of option text can
// make two different requests serialise to the same bytes.
void append_field(std::string& material, std::string_view name, std::string_view value) {
  material.append(name).append(":").append(std::to_string(value.size())).append(":");
  material.append(value).append("\n");
}

}  // namespace

std::string compile_key(const CompileRequest& request) {
  std::string material = "gi-compile-key-v1\n";
  auto field = [&material](std::string_view name, std::string_view value) { append_field(material, name, value); };
  field("nvrtc", nvrtc_version());
  field("arch", request.arch);
  field("file", request.file_name);
  for (const auto& option : request.options) field("option", option);
  for (const auto& [name, text] : request.headers) {
    field("header", name);
    field("header_text", text);
  }
  for (const auto& name : request.name_expressions) field("name_expression", name);
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

const std::filesystem::path& toolkit_include_dir() {
  static const std::filesystem::path dir = [] {
    for (const std::filesystem::path& root : cuda_toolkit_roots())
      if (std::filesystem::is_regular_file(root / "include" / "cuda_fp16.h")) return root / "include";
    return std::filesystem::path();
  }();
  return dir;
}

const std::vector<std::filesystem::path>& toolkit_include_dirs() {
  static const std::vector<std::filesystem::path> dirs = [] {
    std::vector<std::filesystem::path> out;
    if (toolkit_include_dir().empty()) return out;
    out.push_back(toolkit_include_dir());
    if (std::filesystem::is_directory(toolkit_include_dir() / "cccl")) out.push_back(toolkit_include_dir() / "cccl");
    return out;
  }();
  return dirs;
}

namespace {

// The toolkit's own headers (cuda_fp16.h, math_constants.h,
// cooperative_groups.h, cub/...), which real kernels include and NVRTC does
// not search by itself. They belong to the toolkit whose NVRTC version is
// part of every compile key.
const std::vector<std::string>& toolkit_include_options() {
  static const std::vector<std::string> options = [] {
    std::vector<std::string> out;
    for (const std::filesystem::path& dir : toolkit_include_dirs()) out.push_back("--include-path=" + dir.string());
    return out;
  }();
  return options;
}

}  // namespace

// One NVRTC call: `request.source` to PTX (compute_XX) or a cubin (sm_XX).
NvrtcOutput nvrtc_compile_once(const CompileRequest& request, const std::string& arch,
                               const std::vector<std::string>& options) {
  NvrtcOutput out;
  const bool ptx = starts_with(arch, "compute_");
  std::vector<const char*> argv;
  const std::string target = "--gpu-architecture=" + arch;
  argv.push_back(target.c_str());
  for (const auto& option : options) argv.push_back(option.c_str());
  // After the request's own, so a user's include folders come first.
  for (const std::string& option : toolkit_include_options()) argv.push_back(option.c_str());
  // On in compile servers only (fitness/compile/automatic_pch.hpp); no binary changes with it.
  const std::vector<std::string> pch = automatic_pch_options(request.source, options);
  for (const std::string& option : pch) argv.push_back(option.c_str());
  ProgramGuard guard;
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : request.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  out.last = nvrtcCreateProgram(&guard.program, request.source.c_str(), request.file_name.c_str(),
                                static_cast<int>(request.headers.size()), header_texts.data(), header_names.data());
  if (out.last != NVRTC_SUCCESS) {
    guard.program = nullptr;
    out.error = failed("nvrtcCreateProgram", out.last);
    return out;
  }
  for (const std::string& name : request.name_expressions) {
    out.last = nvrtcAddNameExpression(guard.program, name.c_str());
    if (out.last != NVRTC_SUCCESS) {
      out.error = failed("nvrtcAddNameExpression", out.last) + " (" + name + ")";
      return out;
    }
  }
  out.last = nvrtcCompileProgram(guard.program, static_cast<int>(argv.size()), argv.data());
  out.log = fetch_log(guard.program);
  if (out.last != NVRTC_SUCCESS) {
    out.error = failed("nvrtcCompileProgram", out.last) + " (" + request.file_name + ", arch " + arch + "; see log)";
    return out;
  }
  std::size_t size = 0;
  out.last = ptx ? nvrtcGetPTXSize(guard.program, &size) : nvrtcGetCUBINSize(guard.program, &size);
  if (out.last != NVRTC_SUCCESS || size == 0) {
    out.error = out.last != NVRTC_SUCCESS ? failed(ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize", out.last)
                                          : "NVRTC produced an empty binary for arch " + arch;
    return out;
  }
  out.binary.resize(size);
  out.last = ptx ? nvrtcGetPTX(guard.program, out.binary.data()) : nvrtcGetCUBIN(guard.program, out.binary.data());
  if (out.last != NVRTC_SUCCESS) {
    out.error = failed(ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", out.last);
    out.binary.clear();
    return out;
  }
  out.ok = true;
  return out;
}


namespace {

// Options that act on ptxas only go to the second stage, in ptxas's own
// spelling; everything else shapes the PTX.
void split_options(const std::vector<std::string>& options, std::vector<std::string>* front,
                   std::vector<std::string>* back) {
  auto pass_through = [back](const std::string& list) {
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, ',');)
      if (!item.empty()) back->push_back(item);
  };
  for (const auto& o : options) {
    if (starts_with(o, "--maxrregcount=")) back->push_back(o);
    else if (starts_with(o, "-maxrregcount=")) back->push_back("-" + o);
    else if (starts_with(o, "-Xptxas=")) pass_through(o.substr(8));
    else if (starts_with(o, "--ptxas-options=")) pass_through(o.substr(16));
    else front->push_back(o);
  }
}

std::string ptx_key(const std::string& arch, const std::vector<std::string>& back, const std::vector<char>& ptx) {
  std::string material = "gi-ptx-key-v2\n";
  append_field(material, "arch", arch);
  for (const auto& o : back) append_field(material, "ptxas-option", o);
  append_field(material, "ptx", std::string_view(ptx.data(), ptx.size()));
  return grammar::sha256_hex(material);
}

}  // namespace

NvrtcOutput Compiler::nvrtc_stage(const CompileRequest& request, const std::string& arch,
                                  const std::vector<std::string>& options) const {
  return servers_ ? servers_->compile(request, arch, options) : nvrtc_compile_once(request, arch, options);
}

void Compiler::set_compile_servers(const std::filesystem::path& executable, int servers) {
  servers_ = std::make_shared<CompileServerPool>(executable, servers);
}


std::shared_ptr<const Assembly> Compiler::assemble_once(const std::string& key, const std::vector<char>& ptx,
                                                        const std::string& arch, const std::vector<std::string>& back,
                                                        bool* reused) {
  std::shared_ptr<std::promise<std::shared_ptr<const Assembly>>> mine;
  std::shared_future<std::shared_ptr<const Assembly>> shared;
  {
    std::lock_guard lock(assembled_mutex_);
    auto it = assembled_.find(key);
    if (it != assembled_.end()) {
      shared = it->second;
    } else {
      // Bounded memory over an overnight run: start afresh past the cap.
      if (assembled_.size() >= kMaxAssembled) assembled_.clear();
      mine = std::make_shared<std::promise<std::shared_ptr<const Assembly>>>();
      shared = mine->get_future().share();
      assembled_.emplace(key, shared);
    }
  }
  *reused = mine == nullptr;
  if (!mine) return shared.get();  // the same PTX is (being) assembled by another compile
  std::shared_ptr<const Assembly> done;
  try {
    const std::string text(ptx.data(), strnlen(ptx.data(), ptx.size()));
    done = std::make_shared<const Assembly>(assemble_ptx(text, arch, back));
  } catch (const std::exception& e) {
    // Waiters must never hang on an unset promise.
    Assembly failed_assembly;
    failed_assembly.error = std::string("assembling PTX failed: ") + e.what();
    done = std::make_shared<const Assembly>(std::move(failed_assembly));
  }
  mine->set_value(done);
  return done;
}

CompileResult Compiler::compile_uncached(const CompileRequest& request, const std::string& key) {
  CompileResult result;
  result.key = key;
  result.is_ptx = starts_with(request.arch, "compute_");

  std::vector<std::string> options;
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

  const auto start = std::chrono::steady_clock::now();
  nvrtcResult last = NVRTC_SUCCESS;
  bool ptx_reused = false;
  if (!result.is_ptx && two_stage()) {
    std::vector<std::string> front, back;
    split_options(options, &front, &back);
    NvrtcOutput first = nvrtc_stage(request, "compute_" + request.arch.substr(3), front);
    last = first.last;
    result.log = first.log;
    if (!first.ok) {
      result.error = first.error;
    } else {
      const auto assembly = assemble_once(ptx_key(request.arch, back, first.binary), first.binary, request.arch, back,
                                          &ptx_reused);
      result.log += assembly->log;
      if (assembly->ok) {
        result.cubin = assembly->cubin;
        result.ok = true;
      } else {
        result.error = assembly->error + " (" + request.file_name + ", arch " + request.arch + ")";
      }
    }
  } else {
    NvrtcOutput only = nvrtc_stage(request, request.arch, options);
    last = only.last;
    result.log = std::move(only.log);
    result.error = std::move(only.error);
    result.cubin = std::move(only.binary);
    result.ok = only.ok;
  }
  result.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.ptx_reused = ptx_reused;

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
  stats_.ptx_reuses += ptx_reused;
  if (!result.ok) ++stats_.failures;
  stats_.total_compile_seconds += result.compile_seconds;
  if (store && !stored) stats_.last_cache_problem = cache_error;
  return result;
}

std::vector<CompileResult> Compiler::compile_all(const std::vector<CompileRequest>& requests,
                                                 int jobs) {
  std::vector<CompileResult> results(requests.size());
  std::vector<std::string> keys(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      keys[i] = compile_key(requests[i]);
    } catch (const std::exception&) {
      keys[i].clear();  // compile() reports the failure for this request
    }
  }
  const std::vector<std::size_t> first = first_occurrence(keys);
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
