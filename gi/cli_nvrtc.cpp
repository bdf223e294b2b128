// `gi nvrtc-compile`: one NVRTC call in its own process, for the compile pool
// (fitness::Compiler::set_compile_process). Prints NVRTC's log; writes the
// binary to --out; exit 0 compiled, 1 NVRTC refused the program, 2 other.
#include <fstream>
#include <iostream>
#include <sstream>

#include "fitness/nvrtc_compiler.hpp"
#include "gi/cli.hpp"

namespace gi::cli {

namespace {
struct NvrtcArgs {
  std::string source_file, out, arch = "sm_90", name = "kernel.cu";
  std::vector<std::string> options;
};
}  // namespace

void register_nvrtc(CLI::App& app) {
  auto* cmd = app.add_subcommand("nvrtc-compile", "One NVRTC compile in this process (used by the compile pool; "
                                                  "not meant to be run by hand)");
  auto a = std::make_shared<NvrtcArgs>();
  cmd->add_option("SOURCE", a->source_file, "CUDA source file")->required();
  cmd->add_option("--out", a->out, "where the PTX or cubin goes")->required();
  cmd->add_option("--arch", a->arch, "sm_XX (cubin) or compute_XX (PTX)")->capture_default_str();
  cmd->add_option("--name", a->name, "file name NVRTC reports")->capture_default_str();
  cmd->add_option("--option", a->options, "an NVRTC option (--option=--use_fast_math); repeat for more");
  cmd->callback([a] {
    fitness::CompileRequest request;
    std::ifstream in(a->source_file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      std::cout << fitness::kChildErrorMarker << "cannot read " << a->source_file << "\n";
      std::exit(2);
    }
    request.source = text.str();
    request.file_name = a->name;
    const fitness::NvrtcOutput r = fitness::nvrtc_compile_once(request, a->arch, a->options);
    std::cout << r.log;
    if (!r.ok) {
      std::cout << fitness::kChildErrorMarker << r.error << "\n";
      std::exit(r.last == NVRTC_ERROR_COMPILATION || r.last == NVRTC_ERROR_INVALID_OPTION ? 1 : 2);
    }
    std::ofstream out(a->out, std::ios::binary);
    out.write(r.binary.data(), static_cast<std::streamsize>(r.binary.size()));
    out.close();  // std::exit does not run this scope's destructors: flush now
    std::exit(out ? 0 : 2);
  });
}

}  // namespace gi::cli
