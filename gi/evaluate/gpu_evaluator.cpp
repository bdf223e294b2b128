#include "gi/evaluate/gpu_evaluator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <future>
#include <map>
#include <thread>

#include "fitness/process/atomic_file.hpp"
#include "fitness/instrument/clock_instrument.hpp"
#include "fitness/compile/first_occurrence.hpp"
#include "fitness/workload/plan_io.hpp"
#include "fitness/compile/thread_pool.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/evaluate/seed_reference.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_hash.hpp"

namespace gi {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The identity of what the worker would run: the binary and, when clock
// ticks are measured, the instrumented binary too.
std::string binary_key(const fitness::CompileResult& plain, const fitness::CompileResult& clock) {
  std::string material(plain.cubin.begin(), plain.cubin.end());
  if (clock.ok) material.append("\nclock\n").append(clock.cubin.begin(), clock.cubin.end());
  return grammar::sha256_hex(material);
}

std::vector<std::string> worker_args_for(const GpuEvaluatorConfig& c, int device) {
  if (c.worker_args.empty()) return {"worker", "--device", std::to_string(device)};
  std::vector<std::string> args = c.worker_args;
  for (std::string& a : args)
    for (std::size_t at; (at = a.find("{device}")) != std::string::npos;) a.replace(at, 8, std::to_string(device));
  return args;
}

std::vector<int> devices_of(const GpuEvaluatorConfig& c) {
  return c.devices.empty() ? std::vector<int>{c.device} : c.devices;
}

// Measurements waiting for a free worker (several workers only).
class MeasureQueue {
 public:
  void push(std::size_t k) {
    {
      std::lock_guard<std::mutex> lock(m_);
      q_.push_back(k);
    }
    cv_.notify_one();
  }
  void close() {
    {
      std::lock_guard<std::mutex> lock(m_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  // The next job, or nullopt once closed and empty.
  std::optional<std::size_t> pop() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return closed_ || !q_.empty(); });
    if (q_.empty()) return std::nullopt;
    const std::size_t k = q_.front();
    q_.erase(q_.begin());
    return k;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::size_t> q_;
  bool closed_ = false;
};

// "train:1" -> "train-1": a file name without a colon.
std::string file_part(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '-';
  return s;
}

void remove_plan_files(const std::vector<fs::path>& files) {
  for (const fs::path& f : files) {
    std::error_code ignored;
    fs::remove(f, ignored);
  }
}

// "wrong_output" -> "wrong output", for messages.
std::string status_words(EvalStatus s) {
  std::string text = to_string(s);
  std::replace(text.begin(), text.end(), '_', ' ');
  return text;
}

}  // namespace

LaunchGeometry variant_launch_geometry(const fitness::KernelSpec& spec, const std::map<std::string, double>& variables,
                                       unsigned block_size, const grammar::LaunchEffect& launch) {
  fitness::LaunchPlan plan;
  fitness::set_launch_geometry(plan, spec, variables, block_size, launch);
  return {plan.block, plan.grid, plan.dynamic_shared_bytes};
}

EvalStatus eval_status_of(fitness::RunStatus s) {
  switch (s) {
    case fitness::RunStatus::Ok: return EvalStatus::Ok;
    case fitness::RunStatus::WrongOutput: return EvalStatus::WrongOutput;
    case fitness::RunStatus::LaunchError: return EvalStatus::LaunchError;
    case fitness::RunStatus::Timeout: return EvalStatus::Timeout;
    case fitness::RunStatus::IllegalAddress: return EvalStatus::IllegalAddress;
    case fitness::RunStatus::Trap: return EvalStatus::Trap;
    case fitness::RunStatus::GuardViolation: return EvalStatus::GuardViolation;
    case fitness::RunStatus::InputModified: return EvalStatus::InputModified;
    case fitness::RunStatus::LoadError: return EvalStatus::LoadError;
  }
  return EvalStatus::WorkerDied;
}

GpuEvaluator::GpuEvaluator(const Seed& seed, const fitness::KernelSpec& spec, GpuEvaluatorConfig config)
    : seed_(seed),
      spec_(spec),
      config_(std::move(config)),
      compiler_(config_.cache_dir / "compile"),
      devices_(devices_of(config_)) {
  for (int d : devices_)
    workers_.push_back(std::make_unique<fitness::WorkerProcess>(config_.worker_executable.string(), worker_args_for(config_, d)));
  // Compiled for the GPU it runs on (the search, validation and comparison
  // alike); several GPUs of one evaluator are of one model.
  if (config_.arch.empty()) {
    config_.arch = device_arch(devices_.front());
    for (int d : devices_)
      if (device_arch(d) != config_.arch)
        throw std::runtime_error("GPUs " + std::to_string(devices_.front()) + " and " + std::to_string(d) +
                                 " are of different architectures (" + config_.arch + ", " + device_arch(d) +
                                 "): one run measures on one GPU model");
  }
  scratch_ = config_.cache_dir / ("scratch-" + std::to_string(::getpid()));
  fs::create_directories(scratch_);
  tuning_.block_size = spec.default_block_size;
  use_seed_as_reference(seed, spec, devices_.front(), config_.cache_dir);
  compiler_.set_two_stage(config_.two_stage_compile);
  if (config_.compile_processes) compiler_.set_compile_servers(config_.worker_executable, config_.jobs);
}

GpuEvaluator::~GpuEvaluator() {
  if (prefetch_.valid()) prefetch_.wait();  // it writes into scratch_, removed below
  for (auto& w : workers_) {
    try {
      w->stop();
    } catch (...) {
      // Shutting down: a worker that will not stop is killed by its destructor.
    }
  }
  std::error_code ignored;
  fs::remove_all(scratch_, ignored);
}

// A search's training sets are each made once (a fresh seed per data set):
// their references skip the disk cache, which would only grow by them.
void GpuEvaluator::begin_generation(int, std::uint64_t data_seed) { load_workloads("train", data_seed, false); }

void GpuEvaluator::use_workload(const std::string& which, std::uint64_t data_seed) {
  load_workloads(which, data_seed, true);
}

std::vector<std::string> GpuEvaluator::workload_set(const std::string& which) const {
  if (which == "train") return spec_.training_workloads();
  spec_.workload(which);  // throws naming the spec and the accepted names
  return {which};
}

std::string GpuEvaluator::describe_workload(const std::string& name) const {
  for (const LoadedWorkload& w : loaded_)
    if (w.name == name && !w.purpose.empty()) return name + " (" + w.purpose + ")";
  return name;
}

std::future<GpuEvaluator::Prepared> GpuEvaluator::prepare_async(const std::string& which, std::uint64_t data_seed,
                                                               bool cache_references) {
  const unsigned block = tuning_.block_size;
  const std::optional<fs::path> reference_dir =
      cache_references ? std::optional<fs::path>(config_.cache_dir / "reference") : std::nullopt;
  // Named before the task starts, so files of a set being made never
  // collide with those the worker may still read.
  std::vector<std::string> names = workload_set(which);
  std::vector<fs::path> files;
  const std::string prefix = "plan-" + std::to_string(plan_files_made_++) + "-";
  for (const std::string& name : names) files.push_back(scratch_ / (prefix + file_part(name) + ".bin"));
  const bool one = names.size() == 1;
  return std::async(std::launch::async, [this, which, data_seed, block, reference_dir, names, files, one] {
    Prepared p;
    p.which = which;
    p.data_seed = data_seed;
    p.block_size = block;
    try {
      // The workloads of a set are made side by side: the small border and
      // mask checks then cost no time beside the large timed workload.
      std::vector<std::future<LoadedWorkload>> made;
      for (std::size_t i = 0; i < names.size(); ++i)
        made.push_back(std::async(std::launch::async, [&, i] {
          LoadedWorkload w;
          w.name = names[i];
          const fitness::WorkloadSpec& spec_workload = spec_.workload(names[i]);
          // A lone workload needs no label; in a set the timed one is named as such.
          w.purpose = !spec_workload.purpose.empty() ? spec_workload.purpose : (one ? "" : "timed workload");
          w.plan_file = files[i];
          w.workload = std::make_unique<fitness::PreparedWorkload>(
              fitness::prepare_workload(spec_, names[i], data_seed, reference_dir, block));
          fitness::save_plan(w.plan_file, w.workload->plan, w.workload->expected, w.workload->tolerance);
          return w;
        }));
      std::exception_ptr failure;
      for (auto& f : made) {
        try {
          p.workloads.push_back(f.get());
        } catch (...) {
          if (!failure) failure = std::current_exception();  // every task is waited for before files are removed
        }
      }
      if (failure) std::rethrow_exception(failure);
    } catch (...) {
      remove_plan_files(files);
      throw;
    }
    return p;
  });
}

void GpuEvaluator::prefetch_generation(int, std::uint64_t data_seed) {
  // The next generation's data (generators, CPU references, plan files) is
  // made while this one is evaluated: it costs about a second of one core.
  if (prefetch_.valid()) {
    try {
      Prepared unused = prefetch_.get();
      std::vector<fs::path> files;
      for (const LoadedWorkload& w : unused.workloads) files.push_back(w.plan_file);
      remove_plan_files(files);
    } catch (const std::exception&) {
      // Made again when it is used, where the error reaches the caller.
    }
  }
  prefetch_ = prepare_async("train", data_seed, false);
}

void GpuEvaluator::load_workloads(const std::string& which, std::uint64_t data_seed, bool cache_references) {
  // Generations that share a data set (SearchConfig::data_every) find it
  // loaded already; a prefetched next set stays where it is.
  if (!loaded_.empty() && loaded_which_ == which && loaded_data_seed_ == data_seed &&
      loaded_block_size_ == tuning_.block_size)
    return;
  const auto start = Clock::now();
  Prepared ready;
  bool have = false;
  if (prefetch_.valid()) {
    try {
      ready = prefetch_.get();
      have = ready.which == which && ready.data_seed == data_seed && ready.block_size == tuning_.block_size;
    } catch (const std::exception&) {
      have = false;  // prepared again below, where the error reaches the caller
    }
    if (!have) {
      std::vector<fs::path> files;
      for (const LoadedWorkload& w : ready.workloads) files.push_back(w.plan_file);
      remove_plan_files(files);
    }
  }
  if (!have) ready = prepare_async(which, data_seed, cache_references).get();

  std::vector<fs::path> old_files, new_files;
  for (const LoadedWorkload& w : loaded_) old_files.push_back(w.plan_file);
  for (const LoadedWorkload& w : ready.workloads) new_files.push_back(w.plan_file);
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    fitness::WorkerProcess& worker = *workers_[k];
    for (const LoadedWorkload& w : ready.workloads) {
      const auto reply = worker.load_slot(w.name, w.plan_file);
      if (reply.request_failed || reply.worker_died || reply.status != fitness::RunStatus::Ok) {
        // Nothing half-loaded stays behind: evaluate() refuses until a set loads.
        for (auto& other : workers_)
          for (const auto& [slot, file] : std::map<std::string, fs::path>(other->loaded_slots())) other->unload(slot);
        loaded_.clear();
        remove_plan_files(old_files);
        remove_plan_files(new_files);
        throw std::runtime_error("worker" + (workers_.size() > 1 ? " of GPU " + std::to_string(devices_[k]) : std::string()) +
                                 " could not load workload " + w.name + " of " + spec_.display_path + ": " + reply.message);
      }
    }
    // Slots of the previous set that this one lacks are freed in the worker.
    for (const LoadedWorkload& old : loaded_) {
      const bool kept = std::any_of(ready.workloads.begin(), ready.workloads.end(),
                                    [&](const LoadedWorkload& w) { return w.name == old.name; });
      if (!kept) worker.unload(old.name);
    }
  }
  remove_plan_files(old_files);
  loaded_ = std::move(ready.workloads);
  loaded_which_ = ready.which;
  loaded_data_seed_ = ready.data_seed;
  loaded_block_size_ = ready.block_size;
  // The inputs and references now live in the worker; the parent keeps only
  // the geometry and the variables.
  for (LoadedWorkload& w : loaded_) {
    for (auto& b : w.workload->plan.buffers) std::vector<std::byte>().swap(b.initial);
    for (auto& e : w.workload->expected) std::vector<double>().swap(e.values);
  }
  stats_.prepare_seconds += seconds_since(start);
}

const fitness::PreparedWorkload& GpuEvaluator::workload() const {
  if (loaded_.empty()) throw std::logic_error("GpuEvaluator: no workload loaded (begin_generation first)");
  return *loaded_.front().workload;
}

std::vector<std::string> GpuEvaluator::workload_names() const {
  std::vector<std::string> names;
  for (const LoadedWorkload& w : loaded_) names.push_back(w.name);
  return names;
}

fs::path GpuEvaluator::stage_cubin(const fitness::CompileResult& compiled, std::size_t w) const {
  // Per worker: several may measure the same binary (the seed) at once.
  const fs::path cubin = scratch_ / ("w" + std::to_string(w) + "-" + compiled.key + ".cubin");
  if (!fs::exists(cubin)) fitness::write_file_atomically(cubin, std::string_view(compiled.cubin.data(), compiled.cubin.size()));
  return cubin;
}

Evaluation GpuEvaluator::measure(const fitness::CompileResult& compiled, const fitness::CompileResult* clock,
                                 const grammar::LaunchEffect& launch, std::size_t w) {
  Evaluation e;
  e.compiled = true;
  e.compile_seconds = compiled.compile_seconds;
  e.registers = compiled.registers;
  fitness::WorkerProcess& worker = *workers_[w];
  const fs::path cubin = stage_cubin(compiled, w);
  fitness::EvalRequest request;
  request.cubin_file = cubin;
  request.entry = spec_.entry;
  // Checked on every workload loaded, the timed one first; timed on that one.
  try {
    for (const LoadedWorkload& w : loaded_) {
      const LaunchGeometry g = variant_launch_geometry(spec_, w.workload->variables, tuning_.block_size, launch);
      request.slots.push_back({w.name, g.block, g.grid, g.shared_bytes});
    }
  } catch (const std::runtime_error& error) {
    // A switch setting whose launch expressions give no valid grid.
    fs::remove(cubin);
    e.status = EvalStatus::LaunchError;
    e.message = std::string("no launch for this variant: ") + error.what();
    return e;
  }
  request.time_slot = loaded_.front().name;
  request.timing = config_.timing;
  fs::path clock_cubin;
  if (clock != nullptr && clock->ok) {
    clock_cubin = stage_cubin(*clock, w);
    request.clock_cubin_file = clock_cubin;
  }
  request.kernel_timeout = std::max(config_.min_kernel_timeout,
                                    std::chrono::milliseconds(static_cast<long>(seed_ms_ * config_.timeout_factor)));
  const int restarts_before = worker.restarts();
  const auto eval_start = Clock::now();
  const auto reply = worker.eval(request);
  e.measure_seconds = seconds_since(eval_start);
  std::lock_guard<std::mutex> lock(stats_mutex_);
  stats_.worker_restarts += worker.restarts() - restarts_before;
  fs::remove(cubin);
  if (!clock_cubin.empty()) fs::remove(clock_cubin);
  if (reply.request_failed) {
    e.status = EvalStatus::WorkerDied;
    e.message = "worker refused the request: " + reply.message;
    return e;
  }
  if (reply.body.is_object() && reply.body.contains("phases")) {
    const auto& ph = reply.body["phases"];
    stats_.load_ms += ph.value("load_ms", 0.0);
    stats_.check_ms += ph.value("check_ms", 0.0);
    stats_.time_ms += ph.value("time_ms", 0.0);
    stats_.clock_ms += ph.value("clock_ms", 0.0);
  }
  const auto check = reply.check_report();
  e.status = eval_status_of(reply.status);
  e.message = reply.message.empty() ? check.message : reply.message;
  if (!e.valid()) {
    // Which workload caught it, so run logs can count failures per workload.
    e.failed_workload = reply.failed_slot();
    if (!e.failed_workload.empty())
      e.message = describe_workload(e.failed_workload) + ": " + status_words(e.status) + ": " + e.message;
  }
  e.max_abs_error = check.max_abs_error;
  e.max_rel_error = check.max_rel_error;
  e.rms_error = check.rms_error;
  if (e.valid()) {
    if (const auto t = reply.timing()) {
      e.median_ms = t->median_ms;
      e.relative_spread = t->relative_spread;
      if (const auto c = reply.clock_ticks()) {
        e.clock_ticks = c->median_ticks;
        e.clock_span_ms = c->median_span_ms;
        e.sm_mhz = c->sm_mhz;
      }
      e.rank_by_ticks = config_.rank_by_clock_ticks;
    } else {
      e.status = EvalStatus::WorkerDied;
      e.message = "worker reply holds no timing";
    }
  }
  return e;
}

fitness::CompileRequest GpuEvaluator::clock_request(const fitness::CompileRequest& plain) const {
  fitness::CompileRequest r = plain;
  try {
    r.source = fitness::instrument_clock_ticks(plain.source, spec_.entry, plain.file_name);
  } catch (const std::exception&) {
    // Compiles to an error result: the variant is still measured by events.
    r.source = "#error clock-tick instrumentation failed\n";
  }
  return r;
}

bool GpuEvaluator::time_seed_on_every_worker() {
  const VariantSource plain = variant_source(seed_, grammar::Patch{});
  const fitness::CompileResult c = compiler_.compile(variant_request(plain, seed_, tuning_, config_.arch));
  if (!c.ok) return false;  // an option set of the tuning the seed does not build with
  const bool ticks = config_.timing.clock_ticks;
  const fitness::CompileResult clock_build =
      ticks ? compiler_.compile(clock_request(variant_request(plain, seed_, tuning_, config_.arch))) : fitness::CompileResult{};
  seed_on_worker_.assign(workers_.size(), Evaluation{});
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers_.size(); ++w)
    threads.emplace_back([&, w] { seed_on_worker_[w] = measure(c, ticks ? &clock_build : nullptr, plain.launch, w); });
  for (auto& t : threads) t.join();
  for (const Evaluation& e : seed_on_worker_)
    if (!e.valid() || !(e.median_ms > 0)) return false;
  return true;
}

void GpuEvaluator::scale(Evaluation& e, std::size_t w) const {
  e.device = devices_[w];
  e.device_median_ms = e.median_ms;
  if (w == 0 || !e.valid()) return;
  const Evaluation& here = seed_on_worker_[w];
  const Evaluation& first = seed_on_worker_[0];
  e.median_ms *= first.median_ms / here.median_ms;
  if (std::isfinite(e.clock_ticks) && std::isfinite(here.clock_ticks) && here.clock_ticks > 0)
    e.clock_ticks *= first.clock_ticks / here.clock_ticks;
}

void GpuEvaluator::measure_batch(const std::vector<std::size_t>& distinct,
                                 std::vector<std::future<fitness::CompileResult>>& plain,
                                 std::vector<std::future<fitness::CompileResult>>& clocked,
                                 const std::vector<grammar::LaunchEffect>& launches,
                                 const std::vector<std::string>& keys, std::vector<Evaluation>& results,
                                 Clock::time_point compile_start) {
  const bool ticks = config_.timing.clock_ticks;
  const bool several = workers_.size() > 1 && !distinct.empty() && time_seed_on_every_worker();
  // Different sources often give the same binary (most edits do not change
  // the optimised code): on the same data it is the same experiment, so it
  // is measured once per generation and the others share that measurement.
  std::map<std::string, std::size_t> first_with_binary;  // binary -> k of its measurement
  std::vector<std::optional<std::size_t>> shares(distinct.size());
  std::vector<fitness::CompileResult> built(distinct.size()), built_clock(ticks ? distinct.size() : 0);
  // Distinct binary k on worker w, on the first worker's scale when there are several.
  const auto measure_one = [&](std::size_t k, std::size_t w) {
    const auto gpu_start = Clock::now();
    Evaluation e = measure(built[k], ticks ? &built_clock[k] : nullptr, launches[distinct[k]], w);
    if (workers_.size() > 1) scale(e, w);
    e.key = keys[distinct[k]];
    results[distinct[k]] = e;
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.measured;
    stats_.gpu_seconds += seconds_since(gpu_start);
  };
  MeasureQueue queue;
  std::vector<std::thread> consumers;
  // Each worker takes the next compiled binary as soon as it is free.
  for (std::size_t w = 0; several && w < workers_.size(); ++w)
    consumers.emplace_back([&, w] {
      while (const auto k = queue.pop()) measure_one(*k, w);
    });
  for (std::size_t k = 0; k < distinct.size(); ++k) {
    const auto wait_start = Clock::now();
    built[k] = plain[k].get();
    if (ticks) built_clock[k] = clocked[k].get();
    const fitness::CompileResult& c = built[k];
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      stats_.compile_wait_seconds += seconds_since(wait_start);
      if (k + 1 == distinct.size()) stats_.compile_seconds += seconds_since(compile_start);
      stats_.compile_cache_hits += c.cache_hit;
      stats_.ptx_reuses += c.ptx_reused;
    }
    Evaluation e;
    e.key = keys[distinct[k]];
    if (!c.ok) {
      e.status = EvalStatus::CompileError;
      e.message = c.error;
      e.compile_seconds = c.compile_seconds;
      results[distinct[k]] = e;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      ++stats_.compiled;
    }
    const std::string binary =
        binary_key(c, ticks ? built_clock[k] : fitness::CompileResult{}) + "/" + grammar::to_string(launches[distinct[k]]);
    if (const auto same = first_with_binary.find(binary); same != first_with_binary.end()) {
      shares[k] = same->second;
      continue;
    }
    first_with_binary.emplace(binary, k);
    if (several)
      queue.push(k);
    else
      measure_one(k, 0);
  }
  queue.close();
  for (auto& t : consumers) t.join();
  for (std::size_t k = 0; k < distinct.size(); ++k) {
    if (!shares[k]) continue;
    Evaluation e = results[distinct[*shares[k]]];
    e.same_binary = true;
    e.compile_seconds = built[k].compile_seconds;
    e.key = keys[distinct[k]];
    results[distinct[k]] = e;
    ++stats_.binary_reuses;
  }
}

std::vector<Evaluation> GpuEvaluator::evaluate(const std::vector<grammar::Patch>& patches) {
  if (loaded_.empty()) throw std::logic_error("GpuEvaluator: no workload loaded (begin_generation first)");
  const auto call_start = Clock::now();
  std::vector<fitness::CompileRequest> requests;
  std::vector<grammar::LaunchEffect> launches;
  std::vector<std::string> keys, rejected;
  requests.reserve(patches.size());
  for (const auto& p : patches) {
    // A patch whose switch setting the spec does not allow is rejected before
    // compiling (crossover can combine two allowed settings into one that is not).
    VariantSource variant;
    std::string why;
    try {
      variant = variant_source(seed_, p);
    } catch (const grammar::PatchError& e) {
      why = e.what();
    }
    fitness::CompileRequest r = variant_request(variant, seed_, tuning_, config_.arch);
    // A variant is its binary and its launch: the same source launched
    // differently is another experiment.
    keys.push_back(why.empty() ? fitness::compile_key(r) + "/b" + std::to_string(tuning_.block_size) + "/" +
                                     grammar::to_string(variant.launch)
                               : "rejected/" + why);
    requests.push_back(std::move(r));
    launches.push_back(std::move(variant.launch));
    rejected.push_back(std::move(why));
  }
  const bool ticks = config_.timing.clock_ticks;
  // Identical variants are compiled and measured once ("cached").
  const std::vector<std::size_t> first = fitness::first_occurrence(keys);
  std::vector<std::size_t> distinct;
  std::vector<Evaluation> results(patches.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (first[i] != i) continue;
    if (!rejected[i].empty()) {
      results[i].status = EvalStatus::Rejected;
      results[i].message = rejected[i];
      results[i].key = keys[i];
      continue;
    }
    distinct.push_back(i);
  }

  // Every compile of the batch is queued at once and the worker measures
  // each variant as soon as its compile is done, in order: NVRTC is the
  // bottleneck, so the pool never waits for a batch's slowest compile and
  // the GPU never waits for more than the next variant.
  const auto compile_start = Clock::now();
  fitness::ThreadPool pool(config_.jobs);
  std::vector<std::future<fitness::CompileResult>> plain(distinct.size()), clocked(ticks ? distinct.size() : 0);
  for (std::size_t k = 0; k < distinct.size(); ++k) {
    const fitness::CompileRequest* r = &requests[distinct[k]];
    plain[k] = pool.submit([this, r] { return compiler_.compile(*r); });
    if (ticks) clocked[k] = pool.submit([this, r] { return compiler_.compile(clock_request(*r)); });
  }
  measure_batch(distinct, plain, clocked, launches, keys, results, compile_start);
  for (std::size_t i = 0; i < patches.size(); ++i) {
    if (first[i] == i) continue;
    results[i] = results[first[i]];
    results[i].cached = true;
  }
  stats_.evaluations += static_cast<long>(patches.size());
  stats_.total_seconds += seconds_since(call_start);
  return results;
}

}  // namespace gi
