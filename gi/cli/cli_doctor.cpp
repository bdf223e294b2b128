// `gi doctor`: what this build of gi can use on this machine (compiler, CUDA
// headers, NVRTC, driver, GPUs). It succeeds without a GPU, so it is the first
// thing to run on a new host and its output goes into bug reports.
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/library/library_root.hpp"
#include "gi/library/seed_library.hpp"
#include "gi/publish/versions.hpp"

namespace gi::cli {

namespace {

std::string compiler_id() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown compiler";
#endif
}

// CMake does not pass its build type to the code; what matters for timing
// and checks is optimisation and assertions, which the compiler does tell us.
std::string build_type() {
#if defined(GI_BUILD_TYPE)
  return GI_BUILD_TYPE;
#else
  std::string type;
#if defined(__OPTIMIZE__)
  type = "optimised";
#else
  type = "not optimised";
#endif
#if defined(NDEBUG)
  type += ", assertions off";
#else
  type += ", assertions on";
#endif
  return type;
#endif
}

// A real compile proves NVRTC and its builtins library load, not just link.
nlohmann::json nvrtc_self_test() {
  fitness::CompileRequest request;
  request.source = "extern \"C\" __global__ void gi_doctor(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  request.file_name = "gi_doctor.cu";
  fitness::Compiler compiler(std::nullopt);
  const fitness::CompileResult r = compiler.compile(request);
  return {{"ok", r.ok},
          {"arch", request.arch},
          {"seconds", r.compile_seconds},
          {"registers", r.registers},
          {"error", r.error}};
}

// Where the seeds, evolved kernels and report scripts come from, or why none
// was found (doctor still exits 0: it is how a user finds out).
nlohmann::json library_json() {
  try {
    const Library& l = library();
    return {{"root", l.root.string()}, {"found_by", l.found_by}, {"seeds", find_seed_dirs(l.seeds()).size()}};
  } catch (const std::exception& e) {
    return {{"root", nullptr}, {"problem", e.what()}};
  }
}

nlohmann::json collect() {
  const fitness::CudaEnvironment env = fitness::probe_cuda();
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : env.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"pci_bus_id", g.pci_bus_id},
                    {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                    {"memory_bytes", g.memory_bytes},
                    {"sm_count", g.sm_count},
                    {"l2_bytes", g.l2_bytes},
                    {"clock_khz", g.clock_khz},
                    {"memory_clock_khz", g.memory_clock_khz},
                    {"memory_bus_bits", g.memory_bus_bits}});
  }
  return {{"gi", {{"compiler", compiler_id()}, {"cplusplus", __cplusplus}, {"build", build_type()}}},
          {"library", library_json()},
          {"cuda_headers", fitness::cuda_version_string(env.toolkit_version)},
          {"nvrtc",
           {{"version", fitness::nvrtc_version()},
            {"archs", fitness::nvrtc_supported_archs()},
            {"self_test", nvrtc_self_test()}}},
          {"ptxas",
           {{"available", fitness::ptx_assembler_available()}, {"path", fitness::ptx_assembler_path()},
            {"problem", fitness::ptx_assembler_problem()}}},
          {"cuda",
           {{"driver_ok", env.driver_ok},
            {"message", env.message},
            {"driver_version", fitness::cuda_version_string(env.driver_version)},
            {"driver_release", kernel_driver_release()},
            {"runtime_version", fitness::cuda_version_string(env.runtime_version)},
            {"gpus", gpus}}}};
}

void print_text(const nlohmann::json& r, std::ostream& out) {
  const auto& nvrtc = r["nvrtc"];
  const auto& test = nvrtc["self_test"];
  const auto& cuda = r["cuda"];
  std::string archs;
  for (const auto& a : nvrtc["archs"]) archs += (archs.empty() ? "" : " ") + a.get<std::string>();

  out << "gi build:      " << r["gi"]["compiler"].get<std::string>() << ", C++ "
      << r["gi"]["cplusplus"].get<long>() << ", " << r["gi"]["build"].get<std::string>() << "\n";
  const auto& library = r["library"];
  out << "library:       "
      << (library["root"].is_string()
              ? library["root"].get<std::string>() + " (" + library["found_by"].get<std::string>() + ", " +
                    std::to_string(library["seeds"].get<int>()) + " seeds)"
              : library["problem"].get<std::string>())
      << "\n";
  out << "CUDA headers:  " << r["cuda_headers"].get<std::string>() << "\n";
  out << "NVRTC:         " << nvrtc["version"].get<std::string>() << "\n";
  out << "NVRTC archs:   " << (archs.empty() ? "(none reported)" : archs) << "\n";
  out << "NVRTC test:    ";
  if (test["ok"].get<bool>()) {
    out << "ok, " << test["arch"].get<std::string>() << " cubin in " << std::fixed
        << std::setprecision(3) << test["seconds"].get<double>() << " s, "
        << test["registers"].get<int>() << " registers\n";
  } else {
    out << "FAILED: " << test["error"].get<std::string>() << "\n";
  }
  out << "ptxas:         "
      << (r["ptxas"]["available"].get<bool>()
              ? r["ptxas"]["path"].get<std::string>() + " (two-stage compiles: ptxas once per distinct PTX)"
              : "unavailable, one-stage compiles: " + r["ptxas"]["problem"].get<std::string>())
      << "\n";
  const std::string release = cuda["driver_release"].get<std::string>();
  out << "CUDA driver:   " << cuda["driver_version"].get<std::string>()
      << (release.empty() ? "" : ", release " + release) << " (runtime " << cuda["runtime_version"].get<std::string>() << ", static)\n";
  if (!cuda["driver_ok"].get<bool>()) {
    out << "GPUs:          " << cuda["message"].get<std::string>() << "\n";
    return;
  }
  for (const auto& g : cuda["gpus"]) {
    out << "GPU " << g["index"].get<int>() << ":         " << g["name"].get<std::string>()
        << ", compute capability " << g["compute_capability"].get<std::string>() << ", " << std::fixed
        << std::setprecision(1) << g["memory_bytes"].get<double>() / (1 << 30) << " GiB, "
        << g["sm_count"].get<int>() << " SMs, L2 " << g["l2_bytes"].get<int>() / 1024
        << " KiB, bus " << g["pci_bus_id"].get<std::string>() << "\n";
  }
}

}  // namespace

void add_doctor(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "doctor",
      "Report what gi can use here: build, the library it uses (seeds, evolved kernels), CUDA headers, NVRTC (version, architectures, a test "
      "compile), driver and runtime versions and every GPU, or why there is no CUDA device. "
      "Always exits 0.");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the report as one JSON object");
  cmd->callback([json] {
    const nlohmann::json report = collect();
    if (*json) {
      std::cout << report.dump(2) << "\n";
    } else {
      print_text(report, std::cout);
    }
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("doctor", gi::cli::add_doctor)
