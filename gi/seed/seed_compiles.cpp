#include "gi/seed/seed_compiles.hpp"

#include <sstream>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

std::string seed_compile_problem(const std::filesystem::path& seed_dir, const std::string& arch,
                                 const std::optional<std::filesystem::path>& compile_server) {
  const Seed seed = load_seed(seed_dir);
  Tuning tuning;
  if (seed.spec && seed.spec->contains("tunables")) {
    const auto& t = (*seed.spec)["tunables"];
    if (t.contains("default_block_size")) tuning.block_size = t["default_block_size"].get<unsigned>();
    else if (t.contains("block_sizes") && !t["block_sizes"].empty()) tuning.block_size = t["block_sizes"][0].get<unsigned>();
  }
  const fitness::CompileRequest request =
      variant_request(variant_source(seed, grammar::Patch{}).compile_source, seed, tuning, arch);
  fitness::Compiler compiler(std::nullopt);
  if (compile_server) compiler.set_compile_servers(*compile_server, 1);
  const fitness::CompileResult result = compiler.compile(request);
  if (result.ok) return "";
  std::istringstream log(result.log);
  std::string line, first;
  while (std::getline(log, line))
    if (line.find("error") != std::string::npos) {
      first = line;
      break;
    }
  // A compile server that died answered nothing: NVRTC crashed on the file.
  if (result.error.find("worker died") != std::string::npos) return "NVRTC crashed compiling it (" + result.error + ")";
  return result.error + (first.empty() ? "" : ": " + first);
}

}  // namespace gi
