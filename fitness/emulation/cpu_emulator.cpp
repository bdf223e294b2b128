#include "fitness/emulation/cpu_emulator.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "fitness/emulation/emulation_source.hpp"
#include "fitness/emulation/host_buffers.hpp"
#include "fitness/check/output_check.hpp"
#include "fitness/check/output_digest.hpp"
#include "grammar/template_instance.hpp"

namespace gi::fitness {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A kernel's name, or a template's instance (`scale<float, 2>`, as
// grammar/template_instance.hpp reads it): the entry goes into the
// emulator's C++ source, so nothing but names, numbers and the punctuation of
// template arguments may be in it.
bool is_kernel_name(const std::string& s) {
  std::optional<grammar::TemplateInstance> instance;
  try {
    instance = grammar::parse_template_instance(s);
  } catch (const std::runtime_error&) {
    return false;  // brackets that do not close, text after them
  }
  if (!instance) return is_identifier(s);
  return is_identifier(instance->name) &&
         std::all_of(instance->args.begin(), instance->args.end(), [](const std::string& arg) {
           return std::all_of(arg.begin(), arg.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_ ,:*&.+-<>()").find(c) != std::string_view::npos;
           });
         });
}

emulation::LaunchLimits limits_of(const EmulatorOptions& o) {
  emulation::LaunchLimits l;
  l.timeout = o.timeout;
  l.stack_bytes = o.stack_bytes;
  return l;
}

}  // namespace

CpuEmulator::CpuEmulator(EmulatorOptions options) : options_(std::move(options)) {}

EmulatedKernel CpuEmulator::load(std::string_view source, const std::string& entry, const std::string& file_name,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::vector<std::string>& pre_includes) const {
  EmulatedKernel k;
  k.entry = entry;
  if (!is_kernel_name(entry)) {
    k.error = "'" + entry + "' is not a kernel name (nor a template's instance, scale<float>)";
    return k;
  }
  std::string unit;
  try {
    unit = emulation::emulation_translation_unit(
        emulation::with_headers_inlined(source, file_name, headers, pre_includes), entry, file_name);
  } catch (const emulation::EmulationError& e) {
    k.error = file_name + ": " + e.what();
    return k;
  }
  emulation::EmulatorCompiler compiler;
  compiler.program = options_.compiler;
  compiler.cache_dir = options_.cache_dir;
  emulation::ModuleBuild build = emulation::build_emulated_module(unit, compiler);
  if (!build.module && build.error.find("section type conflict") != std::string::npos) {
    // __shared__ in an inline function or template: shared memory without
    // the NaN start (fitness/emulation/cuda_on_cpu.hpp).
    build = emulation::build_emulated_module("#define GI_EMU_PLAIN_SHARED 1\n" + unit, compiler);
  }
  k.module = std::move(build.module);
  k.error = std::move(build.error);
  return k;
}

EmulatedRun CpuEmulator::run(const EmulatedKernel& kernel, const LaunchPlan& plan, const std::string& counter_symbol,
                             std::size_t counters) const {
  EmulatedRun r;
  if (!kernel.ok()) {
    r.status = RunStatus::LoadError;
    r.message = kernel.error.empty() ? "no emulated kernel" : kernel.error;
    return r;
  }
  emulation::HostBuffers buffers(plan);
  emulation::LaunchOutcome outcome =
      emulation::run_emulated_launch(*kernel.module, plan, buffers, limits_of(options_), counter_symbol, counters);
  r.status = outcome.status;
  r.message = std::move(outcome.message);
  r.counters = std::move(outcome.counters);
  if (r.status == RunStatus::Ok)
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      const auto bytes = buffers.bytes(b);
      r.buffers.emplace_back(bytes.begin(), bytes.end());
    }
  return r;
}

CountedRun CpuEmulator::checked(const EmulatedKernel& kernel, const LaunchPlan& plan,
                                const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance,
                                const std::string& counter_symbol, std::size_t counters,
                                std::vector<std::vector<std::byte>>* outputs) const {
  // The reference must name output buffers of this plan (as on the GPU).
  const std::vector<std::size_t> indices = expected_buffer_indices(plan, expected);
  CountedRun result;
  CheckReport& report = result.check;
  if (!kernel.ok()) {
    report.status = RunStatus::LoadError;
    report.message = kernel.error.empty() ? "no emulated kernel" : kernel.error;
    return result;
  }
  emulation::HostBuffers buffers(plan);
  emulation::LaunchOutcome outcome =
      emulation::run_emulated_launch(*kernel.module, plan, buffers, limits_of(options_), counter_symbol, counters);
  if (outcome.status != RunStatus::Ok) {
    report.status = outcome.status;
    report.message = std::move(outcome.message);
    return result;
  }
  result.counts = std::move(outcome.counters);
  if (auto guard = buffers.check_guards()) {
    report.status = RunStatus::GuardViolation;
    report.message = *guard;
    return result;
  }
  if (auto input = buffers.check_inputs(plan)) {
    report.status = RunStatus::InputModified;
    report.message = *input;
    return result;
  }
  OutputChecker checker(tolerance);
  OutputDigest digest;
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    const ParamRole role = plan.buffers[b].role;
    if (role != ParamRole::Out && role != ParamRole::InOut) continue;
    const std::span<const std::byte> got = buffers.bytes(b);
    digest.add(got);
    if (outputs) outputs->emplace_back(got.begin(), got.end());
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (indices[i] == b) checker.check(plan.buffers[b], got, expected[i]);
  }
  report = checker.report();
  report.output_digest = digest.hex();
  return result;
}

CheckReport CpuEmulator::run_checked(const EmulatedKernel& kernel, const LaunchPlan& plan,
                                     const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance) const {
  return checked(kernel, plan, expected, tolerance, "", 0).check;
}

CheckReport CpuEmulator::run_for_outputs(const EmulatedKernel& kernel, const LaunchPlan& plan,
                                         std::vector<std::vector<std::byte>>& outputs) const {
  outputs.clear();
  CheckReport report = checked(kernel, plan, {}, Tolerance{}, "", 0, &outputs).check;
  if (!report.ok()) outputs.clear();
  return report;
}

CountedRun CpuEmulator::run_counted(const EmulatedKernel& kernel, const LaunchPlan& plan,
                                    const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance,
                                    const std::string& counter_symbol, std::size_t counters) const {
  return checked(kernel, plan, expected, tolerance, counter_symbol, counters);
}

}  // namespace gi::fitness
