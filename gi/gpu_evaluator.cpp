#include "gi/gpu_evaluator.hpp"

#include "fitness/clock_instrument.hpp"

#include <unistd.h>

#include <future>
#include <map>

#include "fitness/atomic_file.hpp"
#include "fitness/plan_io.hpp"
#include "gi/variant_build.hpp"

namespace gi {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

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

nlohmann::json EvaluatorStats::to_json() const {
  // Compiles overlap GPU work: the time the search waited for compiles is
  // compile_wait; what is neither waiting nor measuring is overhead.
  const double overhead = total_seconds - compile_wait_seconds - gpu_seconds;
  return {{"compile_seconds", compile_seconds}, {"compile_wait_seconds", compile_wait_seconds},
          {"gpu_seconds", gpu_seconds}, {"overhead_seconds", overhead}, {"total_seconds", total_seconds},
          {"prepare_seconds", prepare_seconds},
          {"worker_phases_seconds", {{"load", load_ms / 1000}, {"check", check_ms / 1000}, {"timing", time_ms / 1000}, {"clock_ticks", clock_ms / 1000}}},
          {"evaluations_per_second", total_seconds > 0 ? static_cast<double>(evaluations) / total_seconds : 0.0},
          {"evaluations", evaluations}, {"measured", measured}, {"compiled", compiled},
          {"compile_cache_hits", compile_cache_hits}, {"worker_restarts", worker_restarts}};
}

GpuEvaluator::GpuEvaluator(const Seed& seed, const fitness::KernelSpec& spec, GpuEvaluatorConfig config)
    : seed_(seed),
      spec_(spec),
      config_(std::move(config)),
      compiler_(config_.cache_dir / "compile"),
      worker_(config_.worker_executable.string(), {"worker", "--device", std::to_string(config_.device)}) {
  scratch_ = config_.cache_dir / ("scratch-" + std::to_string(::getpid()));
  fs::create_directories(scratch_);
  tuning_.block_size = spec.default_block_size;
}

GpuEvaluator::~GpuEvaluator() {
  try {
    worker_.stop();
  } catch (...) {
    // Shutting down: a worker that will not stop is killed by its destructor.
  }
  std::error_code ignored;
  fs::remove_all(scratch_, ignored);
}

void GpuEvaluator::begin_generation(int, std::uint64_t data_seed) { use_workload("train", data_seed); }

void GpuEvaluator::use_workload(const std::string& which, std::uint64_t data_seed) {
  const auto start = Clock::now();
  workload_ = std::make_unique<fitness::PreparedWorkload>(
      fitness::prepare_workload(spec_, which, data_seed, config_.cache_dir / "reference", tuning_.block_size));
  const fs::path plan_file = scratch_ / "plan.bin";
  fitness::save_plan(plan_file, workload_->plan, workload_->expected, workload_->tolerance);
  const auto reply = worker_.load_plan(plan_file);
  if (reply.request_failed || reply.worker_died)
    throw std::runtime_error("worker could not load workload " + which + ": " + reply.message);
  // The inputs now live in the worker; the parent keeps only the geometry.
  for (auto& b : workload_->plan.buffers) std::vector<std::byte>().swap(b.initial);
  for (auto& e : workload_->expected) std::vector<double>().swap(e.values);
  stats_.prepare_seconds += seconds_since(start);
}

fs::path GpuEvaluator::stage_cubin(const fitness::CompileResult& compiled) const {
  const fs::path cubin = scratch_ / (compiled.key + ".cubin");
  if (!fs::exists(cubin)) fitness::write_file_atomically(cubin, std::string_view(compiled.cubin.data(), compiled.cubin.size()));
  return cubin;
}

Evaluation GpuEvaluator::measure(const fitness::CompileResult& compiled, const fitness::CompileResult* clock) {
  Evaluation e;
  e.compiled = true;
  e.compile_seconds = compiled.compile_seconds;
  e.registers = compiled.registers;
  const fs::path cubin = stage_cubin(compiled);
  fitness::LaunchPlan geometry;
  fitness::set_launch_geometry(geometry, spec_, workload_->variables, tuning_.block_size);
  fitness::EvalRequest request;
  request.cubin_file = cubin;
  request.entry = spec_.entry;
  request.block = geometry.block;
  request.grid = geometry.grid;
  request.timing = config_.timing;
  fs::path clock_cubin;
  if (clock != nullptr && clock->ok) {
    clock_cubin = stage_cubin(*clock);
    request.clock_cubin_file = clock_cubin;
  }
  request.kernel_timeout = std::max(config_.min_kernel_timeout,
                                    std::chrono::milliseconds(static_cast<long>(seed_ms_ * config_.timeout_factor)));
  const int restarts_before = worker_.restarts();
  const auto eval_start = Clock::now();
  const auto reply = worker_.eval(request);
  e.measure_seconds = seconds_since(eval_start);
  stats_.worker_restarts += worker_.restarts() - restarts_before;
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

std::vector<Evaluation> GpuEvaluator::evaluate(const std::vector<grammar::Patch>& patches) {
  if (!workload_) throw std::logic_error("GpuEvaluator: no workload loaded (begin_generation first)");
  const auto call_start = Clock::now();
  std::vector<fitness::CompileRequest> requests;
  std::vector<std::string> keys;
  requests.reserve(patches.size());
  for (const auto& p : patches) {
    fitness::CompileRequest r = variant_request(seed_, p, tuning_, config_.arch);
    keys.push_back(fitness::compile_key(r) + "/b" + std::to_string(tuning_.block_size));
    requests.push_back(std::move(r));
  }
  const bool ticks = config_.timing.clock_ticks;
  // Distinct variants in first-seen order; the rest are measured once ("cached").
  std::vector<std::size_t> distinct;
  std::map<std::string, std::size_t> first_of;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (first_of.emplace(keys[i], i).second) distinct.push_back(i);

  // Compile chunk k+1 on the pool while the worker measures chunk k: NVRTC
  // is the bottleneck, and the GPU would otherwise idle during compiles.
  const std::size_t chunk = std::max<std::size_t>(16, 2 * static_cast<std::size_t>(config_.jobs));
  auto compile_chunk = [&](std::size_t begin) {
    std::vector<fitness::CompileRequest> batch;
    const std::size_t end = std::min(distinct.size(), begin + chunk);
    for (std::size_t i = begin; i < end; ++i) batch.push_back(requests[distinct[i]]);
    // The instrumented builds follow the plain ones in the same batch.
    for (std::size_t i = begin; ticks && i < end; ++i) batch.push_back(clock_request(requests[distinct[i]]));
    const auto t = Clock::now();
    auto results = compiler_.compile_all(batch, config_.jobs);
    return std::make_pair(std::move(results), seconds_since(t));
  };
  std::map<std::string, Evaluation> measured;
  std::future<std::pair<std::vector<fitness::CompileResult>, double>> next;
  if (!distinct.empty()) next = std::async(std::launch::async, compile_chunk, 0);
  for (std::size_t begin = 0; begin < distinct.size(); begin += chunk) {
    const auto wait_start = Clock::now();
    auto [compiled, compile_wall] = next.get();
    stats_.compile_wait_seconds += seconds_since(wait_start);
    stats_.compile_seconds += compile_wall;
    if (begin + chunk < distinct.size()) next = std::async(std::launch::async, compile_chunk, begin + chunk);
    const auto gpu_start = Clock::now();
    const std::size_t plain = ticks ? compiled.size() / 2 : compiled.size();
    for (std::size_t j = 0; j < plain; ++j) {
      const auto& c = compiled[j];
      const std::string& key = keys[distinct[begin + j]];
      stats_.compile_cache_hits += c.cache_hit;
      Evaluation e;
      if (!c.ok) {
        e.status = EvalStatus::CompileError;
        e.message = c.error;
        e.compile_seconds = c.compile_seconds;
      } else {
        ++stats_.compiled;
        e = measure(c, ticks ? &compiled[plain + j] : nullptr);
        ++stats_.measured;
      }
      e.key = key;
      measured[key] = e;
    }
    stats_.gpu_seconds += seconds_since(gpu_start);
  }
  std::vector<Evaluation> out;
  out.reserve(patches.size());
  for (std::size_t i = 0; i < patches.size(); ++i) {
    Evaluation e = measured.at(keys[i]);
    e.cached = first_of.at(keys[i]) != i;
    out.push_back(std::move(e));
  }
  stats_.evaluations += static_cast<long>(patches.size());
  stats_.total_seconds += seconds_since(call_start);
  return out;
}

}  // namespace gi
