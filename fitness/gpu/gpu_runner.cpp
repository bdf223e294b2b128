#include "fitness/gpu/gpu_runner.hpp"

#include <algorithm>
#include <bit>
#include <thread>
#include <utility>

#include "fitness/instrument/clock_instrument.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/gpu/cuda_error.hpp"
#include "fitness/gpu/cuda_timer.hpp"
#include "fitness/gpu/device_buffers.hpp"
#include "fitness/gpu/device_check.hpp"
#include "fitness/gpu/l2_flush.hpp"
#include "fitness/gpu/module_load.hpp"
#include "fitness/check/output_check.hpp"
#include "fitness/check/output_digest.hpp"
#include "fitness/gpu/spin_kernel.hpp"
#include "fitness/timing/stopping_criterion.hpp"

namespace gi::fitness {

namespace {

using Clock = std::chrono::steady_clock;

// Long enough to cover the host's event record and launch behind it.
constexpr double kSpinMicroseconds = 50;
// The kernel may use at most this much dynamic shared memory without opting in.
constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

// Identity of the buffers and input bytes of a plan: a plan whose signature
// matches the uploaded one needs no new upload. Hashing every input byte on
// each call cost ~50 ms for 256 MB - more than the evaluation itself - so the
// hash reads a fixed sample (the head, the tail and 256 strided words) of
// each buffer: a plan the caller swaps for another still changes it.
std::string plan_signature(const LaunchPlan& plan) {
  std::string s;
  std::uint64_t hash = 0x9E3779B97F4A7C15ull;
  auto mix = [&](const std::byte* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<std::uint64_t>(p[i])) * 0x100000001B3ull;
  };
  for (const BufferArg& b : plan.buffers) {
    s += b.name + '\x1f' + std::to_string(static_cast<int>(b.role)) + '\x1f' +
         std::to_string(static_cast<int>(b.type)) + '\x1f' + std::to_string(b.count) + '\x1e';
    const std::byte* p = b.initial.data();
    const std::size_t n = b.initial.size();
    constexpr std::size_t kEdge = 4096;
    if (n <= 4 * kEdge) {
      mix(p, n);
    } else {
      mix(p, kEdge);
      mix(p + n - kEdge, kEdge);
      const std::size_t stride = (n - 8) / 256;
      for (std::size_t k = 0; k < 256; ++k) mix(p + k * stride, 8);
    }
    hash ^= n;
  }
  for (const ScalarArg& c : plan.constants) {
    s += c.name + '\x1d';
    mix(c.bytes.data(), c.bytes.size());
  }
  return s + std::to_string(hash);
}

// What a plan's constants set, as one key: a module keeps what it was given
// last, so they are copied only when a launch needs others.
std::string constants_key(const LaunchPlan& plan) {
  std::string key;
  for (const ScalarArg& c : plan.constants) {
    key += c.name + '\x1f';
    key.append(reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    key += '\x1e';
  }
  return key;
}

// Identity of the references kept on the device, sampled like plan_signature
// (hashing 70 MB of doubles per evaluation would cost more than checking).
std::string reference_signature(const ExpectedOutput& e) {
  std::uint64_t hash = 0x9E3779B97F4A7C15ull;
  const std::size_t n = e.values.size();
  const std::size_t step = std::max<std::size_t>(1, n / 512);
  for (std::size_t i = 0; i < n; i += step) hash = (hash ^ std::bit_cast<std::uint64_t>(e.values[i])) * 0x100000001B3ull;
  if (n > 0) hash = (hash ^ std::bit_cast<std::uint64_t>(e.values[n - 1])) * 0x100000001B3ull;
  std::string s = e.buffer + '\x1f' + std::to_string(n) + '\x1f' +
                  std::to_string(reinterpret_cast<std::uintptr_t>(e.values.data())) + '\x1f' + std::to_string(hash);
  s += '\x1f' + (e.written_elements ? std::to_string(e.written_elements->size()) : std::string("all"));
  for (int c : e.checked_components) s += ',' + std::to_string(c);
  return s + '\x1e';
}

std::string param_name(const LaunchPlan& plan, std::size_t i) {
  const auto& [is_buffer, index] = plan.params[i];
  if (is_buffer) return index < plan.buffers.size() ? "buffer '" + plan.buffers[index].name + "'" : "buffer #" + std::to_string(index);
  return index < plan.scalars.size() ? "scalar '" + plan.scalars[index].name + "'" : "scalar #" + std::to_string(index);
}


}  // namespace

// ---- LoadedKernel ---------------------------------------------------------

LoadedKernel::LoadedKernel(CUmodule module, CUfunction function, std::string entry)
    : module_(module), function_(function), entry_(std::move(entry)) {}

LoadedKernel::LoadedKernel(LoadedKernel&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      function_(std::exchange(other.function_, nullptr)),
      entry_(std::move(other.entry_)),
      registers_(other.registers_),
      max_threads_per_block_(other.max_threads_per_block_),
      constants_set_(std::move(other.constants_set_)) {}

LoadedKernel& LoadedKernel::operator=(LoadedKernel&& other) noexcept {
  if (this != &other) {
    if (module_) driver_api().module_unload(module_);
    module_ = std::exchange(other.module_, nullptr);
    function_ = std::exchange(other.function_, nullptr);
    entry_ = std::move(other.entry_);
    registers_ = other.registers_;
    max_threads_per_block_ = other.max_threads_per_block_;
    constants_set_ = std::move(other.constants_set_);
  }
  return *this;
}

LoadedKernel::~LoadedKernel() {
  if (module_) driver_api().module_unload(module_);
}

// ---- GpuRunner ------------------------------------------------------------

GpuRunner::GpuRunner(int device) : device_(device) {
  const OpenedDevice opened = open_device(device);
  device_name_ = opened.name;
  arch_ = opened.arch;
  check_runtime(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  timer_ = std::make_unique<CudaTimer>();
}

GpuRunner::~GpuRunner() {
  if (!usable_) {
    // The context is lost, or a kernel may still be spinning: freeing would
    // block or fail. The process is about to be replaced; leave it all.
    for (auto& [slot, resident] : residents_) (void)resident.buffers.release();
    (void)l2_flush_.release();
    (void)spin_.release();
    (void)device_check_.release();
    (void)timer_.release();
    return;
  }
  residents_.clear();
  l2_flush_.reset();
  spin_.reset();
  device_check_.reset();
  if (clock_counters_) cudaFree(reinterpret_cast<void*>(clock_counters_));
  timer_.reset();
  if (stream_) cudaStreamDestroy(stream_);
}

void GpuRunner::require_usable() const {
  if (!usable_)
    throw std::logic_error("GpuRunner: the CUDA context is lost after an earlier failure; "
                           "replace the process");
}

LoadResult GpuRunner::load(std::span<const char> image, const std::string& entry) {
  LoadResult result;
  result.status = RunStatus::LoadError;
  if (image.empty()) {
    result.message = "empty module image for '" + entry + "'";
    return result;
  }
  try {
    require_usable();
    cudaSetDevice(device_);
    const ModuleLoad loaded = load_module(image, entry);
    if (!loaded.ok()) {
      result.message = loaded.error;
      return result;
    }
    const DriverApi& api = driver_api();
    const CUfunction function = loaded.function;
    LoadedKernel kernel(loaded.module, function, entry);
    api.func_get_attribute(&kernel.registers_, CU_FUNC_ATTRIBUTE_NUM_REGS, function);
    api.func_get_attribute(&kernel.max_threads_per_block_,
                           CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    result.kernel.emplace(std::move(kernel));
    result.status = RunStatus::Ok;
  } catch (const std::exception& e) {
    result.message = e.what();
  }
  return result;
}

void GpuRunner::prepare(const LaunchPlan& plan, const std::string& slot) {
  require_usable();
  cudaSetDevice(device_);
  Resident& r = residents_[slot];
  // The old memory goes first: a slot never holds two plans' worth.
  r.buffers.reset();
  r.signature.clear();
  r.buffers = std::make_unique<DeviceBuffers>(plan, stream_);
  r.signature = plan_signature(plan);
  ++uploads_;
}

void GpuRunner::release(const std::string& slot) {
  const auto it = residents_.find(slot);
  if (it == residents_.end()) return;
  if (!usable_) {
    (void)it->second.buffers.release();  // see ~GpuRunner
  } else if (device_check_) {
    device_check_->clear_references(slot);
  }
  residents_.erase(it);
}

CUdeviceptr GpuRunner::device_reference(const std::string& slot, const std::string& buffer) const {
  return device_check_ ? device_check_->reference_values(slot, buffer) : 0;
}

GpuRunner::Resident& GpuRunner::ensure_prepared(const LaunchPlan& plan, const std::string& slot) {
  const auto it = residents_.find(slot);
  if (it == residents_.end() || !it->second.buffers || plan_signature(plan) != it->second.signature)
    prepare(plan, slot);
  return residents_.at(slot);
}

RunFailure GpuRunner::failure_from(const std::exception& error, const char* what) {
  if (const auto* f = dynamic_cast<const RunFailure*>(&error)) return *f;
  if (const auto* c = dynamic_cast<const CudaError*>(&error)) {
    if (is_sticky_error(c->code())) usable_ = false;
    return RunFailure(run_status_of(c->code()), std::string(what) + ": " + c->what());
  }
  return RunFailure(RunStatus::LaunchError, std::string(what) + ": " + error.what());
}

void GpuRunner::launch(const LoadedKernel& kernel, const LaunchPlan& plan, const DeviceBuffers& buffers,
                       std::optional<CUdeviceptr> extra) {
  const DriverApi& api = driver_api();
  // The clock-tick instrumentation takes one pointer after the plan's parameters.
  const std::size_t param_count = plan.params.size() + (extra ? 1 : 0);
  std::vector<CUdeviceptr> pointers(param_count);
  std::vector<void*> args(param_count);
  if (extra) {
    pointers.back() = *extra;
    args.back() = &pointers.back();
  }
  for (std::size_t i = 0; i < plan.params.size(); ++i) {
    const auto& [is_buffer, index] = plan.params[i];
    std::size_t bytes = 0;
    if (is_buffer) {
      if (index >= buffers.size())
        throw RunFailure(RunStatus::LaunchError, "parameter " + std::to_string(i) +
                                                     " names buffer #" + std::to_string(index) +
                                                     ", the plan has " +
                                                     std::to_string(buffers.size()));
      pointers[i] = buffers.argument(index);
      args[i] = &pointers[i];
      bytes = sizeof(CUdeviceptr);
    } else {
      if (index >= plan.scalars.size())
        throw RunFailure(RunStatus::LaunchError, "parameter " + std::to_string(i) +
                                                     " names scalar #" + std::to_string(index) +
                                                     ", the plan has " +
                                                     std::to_string(plan.scalars.size()));
      args[i] = const_cast<std::byte*>(plan.scalars[index].bytes.data());
      bytes = plan.scalars[index].bytes.size();
    }
    if (api.func_get_param_info) {
      std::size_t offset = 0, size = 0;
      if (api.func_get_param_info(kernel.function(), i, &offset, &size) != CUDA_SUCCESS)
        throw RunFailure(RunStatus::LaunchError,
                         "kernel '" + kernel.entry() + "' takes " + std::to_string(i) +
                             " parameters, the plan gives " + std::to_string(plan.params.size()));
      if (size != bytes)
        throw RunFailure(RunStatus::LaunchError,
                         "kernel '" + kernel.entry() + "' parameter " + std::to_string(i) +
                             " is " + std::to_string(size) + " bytes, the plan's " +
                             param_name(plan, i) + " is " + std::to_string(bytes));
    }
  }
  if (api.func_get_param_info) {
    std::size_t offset = 0, size = 0;
    if (api.func_get_param_info(kernel.function(), param_count, &offset, &size) == CUDA_SUCCESS)
      throw RunFailure(RunStatus::LaunchError, "kernel '" + kernel.entry() +
                                                   "' takes more than the plan's " +
                                                   std::to_string(param_count) +
                                                   " parameters");
  }
  set_constants(kernel, plan);
  if (plan.dynamic_shared_bytes > kDefaultDynamicSharedLimit) {
    const CUresult status = api.func_set_attribute(
        kernel.function(), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(plan.dynamic_shared_bytes));
    if (status != CUDA_SUCCESS)
      throw RunFailure(RunStatus::LaunchError,
                       describe_driver_error("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", status));
  }
  const CUresult status = api.launch_kernel(
      kernel.function(), plan.grid[0], plan.grid[1], plan.grid[2], plan.block[0], plan.block[1],
      plan.block[2], static_cast<unsigned>(plan.dynamic_shared_bytes), stream_, args.data(),
      nullptr);
  if (status != CUDA_SUCCESS) {
    const std::string message =
        describe_driver_error("cuLaunchKernel", status) + " (grid " +
        std::to_string(plan.grid[0]) + "x" + std::to_string(plan.grid[1]) + "x" +
        std::to_string(plan.grid[2]) + ", block " + std::to_string(plan.block[0]) + "x" +
        std::to_string(plan.block[1]) + "x" + std::to_string(plan.block[2]) + ")";
    if (is_sticky_error(status)) {
      usable_ = false;
      throw RunFailure(run_status_of(status), message);
    }
    throw RunFailure(RunStatus::LaunchError, message);
  }
}

void GpuRunner::set_constants(const LoadedKernel& kernel, const LaunchPlan& plan) {
  std::string key = constants_key(plan);
  if (key == kernel.constants_set_) return;
  const DriverApi& api = driver_api();
  for (const ScalarArg& c : plan.constants) {
    CUdeviceptr address = 0;
    std::size_t bytes = 0;
    const CUresult status = api.module_get_global(&address, &bytes, kernel.module_, c.name.c_str());
    if (status != CUDA_SUCCESS)
      throw RunFailure(RunStatus::LaunchError, describe_driver_error(("cuModuleGetGlobal(" + c.name + ")").c_str(), status) +
                                                   ": the plan sets the __constant__ variable '" + c.name +
                                                   "', which the kernel's module does not hold");
    if (bytes != c.bytes.size())
      throw RunFailure(RunStatus::LaunchError, "the __constant__ variable '" + c.name + "' is " + std::to_string(bytes) +
                                                   " bytes, the plan gives " + std::to_string(c.bytes.size()));
    // On the launch's stream, so it lands before the kernel reads it.
    const cudaError_t copied = cudaMemcpyAsync(reinterpret_cast<void*>(address), c.bytes.data(), bytes,
                                               cudaMemcpyHostToDevice, stream_);
    if (copied != cudaSuccess)
      throw RunFailure(RunStatus::LaunchError, std::string("setting the __constant__ variable '") + c.name +
                                                   "': " + cudaGetErrorString(copied));
  }
  kernel.constants_set_ = std::move(key);
}

void GpuRunner::wait(const char* what) {
  const auto start = Clock::now();
  const auto deadline = start + kernel_timeout_;
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) {
      if (is_sticky_error(status)) usable_ = false;
      throw RunFailure(run_status_of(status), std::string(what) + ": " +
                                                  describe_runtime_error("cudaStreamQuery", status));
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      // The kernel may run forever: nothing can stop it short of ending the process.
      usable_ = false;
      throw RunFailure(RunStatus::Timeout,
                       std::string(what) + ": the kernel did not finish within " +
                           std::to_string(kernel_timeout_.count()) + " ms");
    }
    // Spin briefly for short kernels, then sleep so a long one costs no CPU.
    if (now - start < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void GpuRunner::ensure_references(Resident& resident, const std::string& slot, const LaunchPlan& plan,
                                  const std::vector<ExpectedOutput>& expected,
                                  const std::vector<std::size_t>& indices) {
  if (!device_check_) device_check_ = std::make_unique<DeviceCheck>(arch_);
  std::string signature;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (indices[j] == indices[i])
        throw std::invalid_argument("two references for buffer '" + expected[i].buffer + "'");
    signature += reference_signature(expected[i]);
  }
  if (signature == resident.references) return;
  resident.references.clear();
  device_check_->clear_references(slot);
  for (std::size_t i = 0; i < expected.size(); ++i)
    device_check_->upload_reference(slot, plan.buffers[indices[i]], expected[i], stream_);
  resident.references = signature;
}

void GpuRunner::check_on_device(Resident& resident, const std::string& slot, const DeviceBuffers& buffers,
                                const LaunchPlan& plan, std::size_t b, const std::vector<ExpectedOutput>& expected,
                                const std::vector<std::size_t>& indices, const Tolerance& tolerance,
                                OutputChecker& checker, OutputDigest& digest) {
  const BufferArg& buffer = plan.buffers[b];
  const std::size_t bytes = buffer.count * element_bytes(buffer.type);
  const auto it = std::find(indices.begin(), indices.end(), b);
  if (it == indices.end()) {
    digest.add_sum(device_check_->digest_sum(buffers.data(b), bytes, digest.next_ordinal(), stream_), bytes);
    return;
  }
  const ExpectedOutput& reference = expected[static_cast<std::size_t>(it - indices.begin())];
  std::uint64_t sum = 0;
  const BufferCheck result =
      device_check_->check(slot, buffer, buffers.data(b), tolerance, digest.next_ordinal(), sum, stream_);
  digest.add_sum(sum, bytes);  // of the output alone: a damaged reference leaves it right
  if (result.failures == 0) {
    checker.add(result, "");
    return;
  }
  // Only the first failing element comes back, to name what is wrong, and
  // it is judged again against the host's reference. Should the host find it
  // passing, the reference on the device is damaged: a variant's write far
  // out of bounds can land in it (gi saw this on an H100: every later check
  // of the slot failed, the unmodified seed's too, and the search stopped).
  // The references are then uploaded again and this buffer is checked on
  // the host, which the variant cannot have touched.
  const std::size_t e = result.first_failing_element;
  const std::size_t eb = element_bytes(buffer.type);
  std::vector<std::byte> element(eb);
  check_runtime(cudaMemcpyAsync(element.data(), reinterpret_cast<void*>(buffers.data(b) + e * eb), eb,
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync(first failing element)");
  check_runtime(cudaStreamSynchronize(stream_), "cudaStreamSynchronize(first failing element)");
  const bool written =
      !reference.written_elements ||
      std::find(reference.written_elements->begin(), reference.written_elements->end(), e) !=
          reference.written_elements->end();
  if (const auto message = describe_element_failure(buffer, element.data(), e, reference, written, tolerance)) {
    checker.add(result, *message);
    return;
  }
  ++reference_repairs_;
  resident.references.clear();
  ensure_references(resident, slot, plan, expected, indices);
  checker.check(buffer, buffers.download(b, stream_), reference);
}

CheckReport GpuRunner::run_checked(const LoadedKernel& kernel, const LaunchPlan& plan,
                                   const std::vector<ExpectedOutput>& expected,
                                   const Tolerance& tolerance, const std::string& slot) {
  require_usable();
  // The reference must name output buffers of this plan.
  const std::vector<std::size_t> indices = expected_buffer_indices(plan, expected);
  CheckReport report;
  try {
    cudaSetDevice(device_);
    Resident& resident = ensure_prepared(plan, slot);
    DeviceBuffers& buffers = *resident.buffers;
    const bool on_device = !check_on_host_;
    if (on_device) ensure_references(resident, slot, plan, expected, indices);
    DeviceCheck* device = on_device ? device_check_.get() : nullptr;
    buffers.reset_outputs(stream_);
    launch(kernel, plan, buffers);
    wait("checked run");
    // Damaged guards or inputs would fail the next variant too: upload anew
    // before the next run.
    if (auto guard = buffers.check_guards(stream_, device)) {
      resident.signature.clear();
      resident.references.clear();  // a stray write may have reached them too
      report.status = RunStatus::GuardViolation;
      report.message = *guard;
      return report;
    }
    if (auto input = buffers.check_inputs(plan, stream_, device)) {
      resident.signature.clear();
      resident.references.clear();
      report.status = RunStatus::InputModified;
      report.message = *input;
      return report;
    }
    OutputChecker checker(tolerance);
    OutputDigest digest;
    for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
      const ParamRole role = plan.buffers[b].role;
      if (role != ParamRole::Out && role != ParamRole::InOut) continue;
      // The device's check reads 32-bit components: 8- and 16-bit ones
      // (an image of unsigned char, a uchar4) are compared on the host.
      if (on_device && component_bytes(plan.buffers[b].type) >= 4) {
        check_on_device(resident, slot, buffers, plan, b, expected, indices, tolerance, checker, digest);
        continue;
      }
      const std::vector<std::byte> got = buffers.download(b, stream_);
      digest.add(got);
      for (std::size_t i = 0; i < expected.size(); ++i)
        if (indices[i] == b) checker.check(plan.buffers[b], got, expected[i]);
    }
    report = checker.report();
    report.output_digest = digest.hex();
    return report;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    const RunFailure failure = failure_from(e, "checked run");
    report.status = failure.status();
    report.message = failure.what();
    return report;
  }
}

CountedRun GpuRunner::run_counted(const LoadedKernel& instrumented, const LaunchPlan& plan,
                                  const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance,
                                  const std::string& counter_symbol, std::size_t counters) {
  require_usable();
  CountedRun result;
  CUdeviceptr address = 0;
  const std::size_t wanted = counters * sizeof(std::uint64_t);
  try {
    cudaSetDevice(device_);
    std::size_t bytes = 0;
    const CUresult status =
        driver_api().module_get_global(&address, &bytes, instrumented.module_, counter_symbol.c_str());
    if (status != CUDA_SUCCESS) {
      result.check.status = RunStatus::LoadError;
      result.check.message = describe_driver_error(("cuModuleGetGlobal(" + counter_symbol + ")").c_str(), status) +
                             ": the module of '" + instrumented.entry() + "' is not instrumented";
      return result;
    }
    if (bytes < wanted) {
      result.check.status = RunStatus::LoadError;
      result.check.message = "'" + counter_symbol + "' in the module of '" + instrumented.entry() + "' holds " +
                             std::to_string(bytes) + " bytes, expected at least " + std::to_string(wanted) +
                             " (" + std::to_string(counters) + " counters)";
      return result;
    }
    // Queued before run_checked's launch on the same stream.
    check_runtime(cudaMemsetAsync(reinterpret_cast<void*>(address), 0, wanted, stream_),
                  "cudaMemsetAsync(branch counters)");
  } catch (const std::exception& e) {
    const RunFailure failure = failure_from(e, "counted run");
    result.check.status = failure.status();
    result.check.message = failure.what();
    return result;
  }
  result.check = run_checked(instrumented, plan, expected, tolerance);
  const RunStatus s = result.check.status;
  const bool finished = s == RunStatus::Ok || s == RunStatus::WrongOutput || s == RunStatus::GuardViolation ||
                        s == RunStatus::InputModified;
  if (!finished || !usable_) return result;
  try {
    std::vector<std::uint64_t> counts(counters);
    check_runtime(cudaMemcpyAsync(counts.data(), reinterpret_cast<void*>(address), wanted, cudaMemcpyDeviceToHost,
                                  stream_),
                  "cudaMemcpyAsync(branch counters)");
    check_runtime(cudaStreamSynchronize(stream_), "cudaStreamSynchronize(branch counters)");
    result.counts = std::move(counts);
  } catch (const std::exception& e) {
    const RunFailure failure = failure_from(e, "reading the branch counters");
    result.check.status = failure.status();
    result.check.message = failure.what();
  }
  return result;
}

void GpuRunner::prepare_sample(DeviceBuffers& buffers, const TimingConfig& config) {
  buffers.restore_inouts(stream_);
  if (config.flush_l2) {
    if (!l2_flush_) l2_flush_ = std::make_unique<L2Flush>(device_);
    l2_flush_->flush(stream_);
  }
}

double GpuRunner::sample(const LoadedKernel& kernel, const LaunchPlan& plan, DeviceBuffers& buffers,
                         const TimingConfig& config, bool spin) {
  prepare_sample(buffers, config);
  if (spin) {
    if (!spin_) spin_ = std::make_unique<SpinKernel>(arch_);
    spin_->launch(stream_, kSpinMicroseconds);
  }
  timer_->start(stream_);
  launch(kernel, plan, buffers);
  timer_->stop(stream_);
  wait("timed run");
  return timer_->elapsed_ms();
}

bool GpuRunner::decide_spin(const LoadedKernel& kernel, const LaunchPlan& plan, DeviceBuffers& buffers,
                            const TimingConfig& config) {
  // Warm-up launches (at least one: it also pays for lazy module loading)
  // are timed only to decide whether launch latency could show.
  std::vector<double> warm;
  for (int i = 0; i < std::max(config.warmup, 1); ++i) warm.push_back(sample(kernel, plan, buffers, config, false));
  return config.spin_below_ms > 0 && median(warm) < config.spin_below_ms;
}

TimingResult GpuRunner::time(const LoadedKernel& kernel, const LaunchPlan& plan,
                             const TimingConfig& config, const std::string& slot) {
  require_usable();
  if (config.min_samples < 1 || config.max_samples < config.min_samples)
    throw std::invalid_argument("timing needs 1 <= min_samples <= max_samples");
  try {
    cudaSetDevice(device_);
    DeviceBuffers& buffers = *ensure_prepared(plan, slot).buffers;
    const bool spin = decide_spin(kernel, plan, buffers, config);
    RelativeSpreadCriterion criterion(config.min_samples, config.target_relative_spread);
    const auto start = Clock::now();
    const auto budget = std::chrono::duration<double>(config.budget_seconds);
    bool converged = false;
    while (static_cast<int>(criterion.samples().size()) < config.max_samples) {
      criterion.add(sample(kernel, plan, buffers, config, spin));
      if (criterion.is_finished()) {
        converged = true;
        break;
      }
      if (static_cast<int>(criterion.samples().size()) >= config.min_samples &&
          Clock::now() - start > budget)
        break;
    }
    return summarize_timing(criterion.samples(), converged);
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw failure_from(e, "timing");
  }
}

std::vector<std::byte> GpuRunner::buffer_bytes(const LaunchPlan& plan, const std::string& name,
                                               const std::string& slot) {
  require_usable();
  const DeviceBuffers& buffers = *ensure_prepared(plan, slot).buffers;
  for (std::size_t b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].name == name) return buffers.download(b, stream_);
  throw std::invalid_argument("no buffer '" + name + "' in the plan");
}

ClockTicks GpuRunner::clock_ticks(const LoadedKernel& instrumented, const LaunchPlan& plan,
                                  const TimingConfig& config, const std::string& slot) {
  require_usable();
  if (config.min_samples < 1) throw std::invalid_argument("clock ticks need min_samples >= 1");
  cudaSetDevice(device_);
  DeviceBuffers& buffers = *ensure_prepared(plan, slot).buffers;
  if (!clock_counters_) {
    void* p = nullptr;
    check_runtime(cudaMalloc(&p, kClockCounters * sizeof(std::uint64_t)), "cudaMalloc(clock counters)");
    clock_counters_ = reinterpret_cast<CUdeviceptr>(p);
  }
  std::vector<double> ticks, span_ms, mhz;
  // One warm-up launch (module loading, caches), then min_samples samples
  // prepared like the event samples (inputs restored, L2 flushed).
  for (int i = -1; i < config.min_samples; ++i) {
    prepare_sample(buffers, config);
    const std::uint64_t initial[kClockCounters] = {0, 0, ~0ull, 0, 0};
    check_runtime(cudaMemcpyAsync(reinterpret_cast<void*>(clock_counters_), initial, sizeof initial,
                                  cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync(clock counters)");
    launch(instrumented, plan, buffers, clock_counters_);
    wait("clock-tick run");
    std::uint64_t c[kClockCounters] = {};
    check_runtime(cudaMemcpyAsync(c, reinterpret_cast<void*>(clock_counters_), sizeof c, cudaMemcpyDeviceToHost,
                                  stream_),
                  "cudaMemcpyAsync(clock counters)");
    check_runtime(cudaStreamSynchronize(stream_), "cudaStreamSynchronize(clock counters)");
    if (i < 0 || c[4] == 0) continue;
    ticks.push_back(static_cast<double>(c[0]));
    span_ms.push_back(static_cast<double>(c[3] - c[2]) * 1e-6);
    if (c[1] > 0) mhz.push_back(static_cast<double>(c[0]) / static_cast<double>(c[1]) * 1e3);
  }
  ClockTicks result;
  result.samples = ticks;
  if (!ticks.empty()) {
    result.median_ticks = median(ticks);
    result.median_span_ms = median(span_ms);
  }
  if (!mhz.empty()) result.sm_mhz = median(mhz);
  return result;
}

std::vector<PairedSample> GpuRunner::time_interleaved(const LoadedKernel& a, const LoadedKernel& b,
                                                      const LaunchPlan& plan, int rounds,
                                                      const TimingConfig& config, const std::string& slot) {
  require_usable();
  try {
    cudaSetDevice(device_);
    DeviceBuffers& buffers = *ensure_prepared(plan, slot).buffers;
    const bool spin_a = decide_spin(a, plan, buffers, config);
    const bool spin_b = decide_spin(b, plan, buffers, config);
    const bool spin = spin_a || spin_b;  // alike for both, or the spin would bias the ratio
    std::vector<PairedSample> pairs;
    for (int i = 0; i < rounds; ++i) {
      PairedSample p;
      p.a_ms = sample(a, plan, buffers, config, spin);
      p.b_ms = sample(b, plan, buffers, config, spin);
      pairs.push_back(p);
    }
    return pairs;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw failure_from(e, "interleaved timing");
  }
}

}  // namespace gi::fitness
