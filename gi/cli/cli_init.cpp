// `gi init KERNEL.cu --size n=4000000 [--like x:uniform(0,1)] [--entry NAME]
// [--out DIR]`: a seed folder for a user's own kernel: kernel.cu (the file as
// it is) and a spec.json inferred from the kernel and the size, each inferred
// field listed with its evidence, FILL left only where the kernel does not
// say (gi/seed/spec_scaffold.hpp).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <unistd.h>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/process/atomic_file.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/seed/coverage_checks.hpp"
#include "gi/seed/header_device_code.hpp"
#include "gi/seed/included_headers.hpp"
#include "gi/seed/kernel_cut.hpp"
#include "gi/seed/seed_compiles.hpp"
#include "gi/seed/texture_port.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "grammar/record_type.hpp"
#include "grammar/template_instance.hpp"

namespace gi::cli {

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// `gi <args>` as a child command, echoed; whether it exited 0. Each step of
// `--check` is this gi run as a command of its own, so its report is
// exactly what the user would see.
bool step(const std::string& args) {
  std::cout << "$ gi " << args << std::endl;
  return std::system((quoted(fs::read_symlink("/proc/self/exe").string()) + " " + args).c_str()) == 0;
}

// The compile and reference cache the steps of one `--check` share: the
// seed is compiled once, not once per workload (a child process each). A
// folder of its own under the temporary folder, gone when the check is.
struct StepCache {
  fs::path dir = fs::temp_directory_path() / ("gi-init-check-" + std::to_string(::getpid()));
  StepCache() { fs::remove_all(dir); }
  ~StepCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string option() const { return " --cache " + quoted(dir.string()); }
};

struct SeedCheck {
  bool workloads = true;  // every workload ran and passed
  bool coverage = true;   // every branch direction taken (or exempt)
};

// `--check`: the new seed run once on each of its workloads (`gi check
// --workload all`, then `gi coverage`) where a GPU is there, else its training checks on the
// CPU emulator (`gi emulate --coverage`, one verdict for both): the spec
// seen working before a search is started.
SeedCheck check_new_seed(const fs::path& dir, const StepCache& cache) {
  SeedCheck c;
  if (fitness::probe_cuda().gpus.empty()) {
    std::cout << "no GPU here: the training checks on the CPU emulator instead" << std::endl;
    c.workloads = step("emulate " + quoted(dir.string()) + " --coverage");
    return c;
  }
  // Every workload in one process: one compile and one CUDA context.
  c.workloads = step("check " + quoted(dir.string()) + " --workload all" + cache.option());
  c.coverage = step("coverage " + quoted(dir.string()) + cache.option());
  return c;
}

// Coverage missed directions though every workload passed: one more small
// check at a time (gi/seed/coverage_checks.hpp), the first with which
// coverage passes kept in spec.json; none: spec.json as it was.
bool add_coverage_check(const fs::path& dir, const nlohmann::ordered_json& spec, const StepCache& cache) {
  const std::size_t k = spec["workloads"]["train_checks"].size() + 1;  // the new check's workload number
  for (const CoverageCheck& c : one_sign_checks(spec)) {
    nlohmann::ordered_json trial = spec;
    trial["workloads"]["train_checks"].push_back(c.check);
    fitness::write_file_atomically(dir / "spec.json", trial.dump(2) + "\n");
    std::cout << "coverage: trying one more small check, " << c.description << std::endl;
    if (step("check " + quoted(dir.string()) + " --workload train:" + std::to_string(k) + cache.option()) &&
        step("coverage " + quoted(dir.string()) + cache.option())) {
      std::cout << "inferred: workloads.train_checks[" << k - 1 << "]: " << c.description
                << " (with it every branch direction is taken)" << std::endl;
      return true;
    }
  }
  fitness::write_file_atomically(dir / "spec.json", spec.dump(2) + "\n");
  return false;
}

}  // namespace

void add_init(CLI::App& app) {
  auto* cmd = app.add_subcommand("init", "Make a seed folder for your own kernel: kernel.cu and a spec.json inferred "
                                         "from the kernel and one problem size (counts, roles, grid, workloads, "
                                         "tolerance), FILL left only where the kernel does not say");
  struct Args {
    std::string kernel, entry, out;
    std::vector<std::string> include_dirs;
    std::vector<std::string> pre_includes;
    std::vector<std::string> sizes, likes;
    bool force = false, check = false, instantiate = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("KERNEL", a->kernel, "the CUDA file holding the kernel")->required();
  cmd->add_option("--entry", a->entry, "the kernel to evolve, when the file has several");
  cmd->add_option("--out", a->out, "the seed folder to make (default: user/<entry>; its parent names the family)");
  cmd->add_option("--include-dir", a->include_dirs, "a folder the kernel's #includes need; repeat for more");
  cmd->add_option("--pre-include", a->pre_includes,
                  "a file your build includes before the kernel file (e.g. the header that defines its types); "
                  "repeat for more");
  cmd->add_option("--size", a->sizes,
                  "NAME=VALUE: a scalar parameter's or __constant__'s value on the timed workload (e.g. n=4000000; a vector's components dim=256,256,64; a bool true or false; for a kernel with no guard, the threads the host launches, threads_x=1048576, or the size it launches one thread per, threads_x=n; a size your host computes from others, voxelNumber=dims_x*dims_y*dims_z, is that on every workload); repeat for more");
  cmd->add_option("--like", a->likes,
                  "NAME:DIST: an input's values, uniform(LO,HI), normal(MEAN,SD), constant(V), or your own data, "
                  "values(V1,V2,...) or values(@FILE) (numbers in order, over again when used up) (default: "
                  "uniform(-1,1) for floats); a buffer of several fields one after another in pieces, each but "
                  "the last with its length in elements: 'v:uniform(1,2)[n];uniform(5,6)'; pieces that repeat, "
                  "a record per work item: 'y:values(@y.txt)[91];constant(0) every (xmax+1)*91'; repeat for more");
  cmd->add_flag("--force", a->force, "replace an existing spec.json and kernel.cu");
  cmd->add_flag("--instantiate", a->instantiate,
                "for a template kernel: kernel.cu is the instance written out (its template parameters replaced), "
                "so the edit families read its types and numbers; the evolved diff then applies to that, not to "
                "the template");
  cmd->add_flag("--check", a->check,
                "then run the seed once on each workload and report its branch coverage (gi check, gi coverage), "
                "adding a small check of one-signed float inputs where that takes directions the others miss; "
                "without a GPU its training checks on the CPU emulator (gi emulate --coverage)");
  cmd->callback([a] {
    const fs::path kernel(a->kernel);
    std::ifstream in(kernel, std::ios::binary);
    if (!in) throw std::runtime_error(a->kernel + ": cannot read the file");
    const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // CUDA 12 removed texture references: the kernel's become texture objects.
    const TexturePort port = port_texture_references(original, kernel.string(), a->entry);
    const std::string& source = port.source;
    std::optional<std::string> entry;
    if (!a->entry.empty()) entry = a->entry;
    // The family is the seed folder's parent: learn the entry first for the default folder.
    const std::string first_family = a->out.empty() ? "user" : fs::absolute(a->out).lexically_normal().parent_path().filename().string();
    const InitSizes sizes = parse_init_sizes(a->sizes, a->likes);
    const analysis::IncludedHeaders headers =
        read_included_headers(source, kernel.string(), a->include_dirs, a->pre_includes);
    SpecScaffold s = scaffold_spec(source, kernel.string(), entry, first_family, sizes, headers);
    // A template's instance (`scale<float>`) is cut, and named as a folder, by its template's name.
    const std::string kernel_name = grammar::entry_function_name(s.entry);
    std::string seed_source = source;  // kernel.cu
    if (a->instantiate) {
      const auto instance = grammar::parse_template_instance(s.entry);
      if (!instance) throw std::runtime_error("--instantiate: '" + s.entry + "' is no template kernel");
      seed_source = grammar::written_out_instance(source, kernel.string(), *instance);
      s.notes.push_back("kernel.cu is " + s.entry + " written out as the kernel '" + kernel_name +
                        "' (--instantiate): the edit families read its types, and its evolved diff applies to it, "
                        "not to your template");
      s.entry = kernel_name;
      s.spec["entry"] = kernel_name;
    }
    const fs::path dir = a->out.empty() ? fs::path("user") / kernel_name : fs::path(a->out);
    if (!a->force && (fs::exists(dir / "spec.json") || fs::exists(dir / "kernel.cu")))
      throw std::runtime_error(dir.string() + " already holds a seed (--force replaces it)");
    fs::create_directories(dir);
    // Includes keep resolving as they did beside the original file.
    nlohmann::ordered_json include_dirs = nlohmann::ordered_json::array();
    if (source.find("#include \"") != std::string::npos || !a->pre_includes.empty())
      include_dirs.push_back(fs::relative(fs::absolute(kernel).parent_path(), fs::absolute(dir)).string());
    for (const auto& d : a->include_dirs) include_dirs.push_back(fs::relative(fs::absolute(d), fs::absolute(dir)).string());
    if (!include_dirs.empty()) s.spec["include_dirs"] = include_dirs;
    // A port that passes references to helpers needs their type first of all
    // (gi/seed/texture_port.hpp); the user's pre-includes follow.
    const std::vector<std::string> shim =
        port.wraps_references ? std::vector<std::string>{kTextureReferenceShimFile} : std::vector<std::string>{};
    const auto after_shim = [&](const std::vector<std::string>& files) {
      std::vector<std::string> all = shim;
      all.insert(all.end(), files.begin(), files.end());
      return all;
    };
    if (port.wraps_references) fitness::write_file_atomically(dir / kTextureReferenceShimFile, texture_reference_shim());
    else fs::remove(dir / kTextureReferenceShimFile);  // an earlier gi init's
    if (const auto pre = after_shim(a->pre_includes); !pre.empty()) s.spec["pre_includes"] = pre;
    fitness::write_file_atomically(dir / "kernel.cu", seed_source);
    fitness::write_file_atomically(dir / "spec.json", s.spec.dump(2) + "\n");
    const std::vector<std::string> left = fitness::fields_to_fill(nlohmann::json::parse(s.spec.dump()));
    std::cout << "made " << (dir / "spec.json").string() << " for kernel '" << s.entry << "' (" << left.size()
              << " fields to fill):\n";
    for (const auto& f : left) std::cout << "  " << f << "\n";
    for (const auto& i : s.inferred) std::cout << "inferred: " << i << "\n";
    for (const auto& n : s.notes) std::cout << "note: " << n << "\n";
    if (!port.ported.empty()) {
      std::cout << "note: CUDA 12 removed texture references; kernel.cu reads these through texture objects, new last "
                   "parameters of '" << s.entry << "' (read with tex1Dfetch<T>, tex2D<T>, ...):";
      for (const std::string& p : port.ported) std::cout << " " << p << ";";
      std::cout << " your host code passes a texture object over the buffer or CUDA array it bound "
                   "(cudaCreateTextureObject, with the reference's filter, address mode and normalisation) "
                   "instead of binding it\n";
      if (port.wraps_references)
        std::cout << "note: kernel.cu passes such a texture to a function as texture<T, dim>(object), a type "
                  << (dir / kTextureReferenceShimFile).string()
                  << " defines with the fetches of it, so helpers written for references build unchanged "
                     "(spec.json's first pre-include)\n";
    }
    if (!port.refusal.empty())
      std::cout << "note: the texture references were left as they are, which no CUDA 12 or later compiler builds: "
                << port.refusal << "\n";
    // NVRTC needs no GPU: a file it cannot build is cut down to the kernel
    // (and, failing that, its includes too) here, not found on the GPU machine.
    const auto self = fs::read_symlink("/proc/self/exe");  // its nvrtc-serve compiles, out of this process
    if (left.empty())
      if (const std::string why = seed_compile_problem(dir, "sm_90", self); !why.empty()) {
        bool fixed = false;
        fs::remove(dir / kHeadersFile);  // an earlier gi init's
        std::string cut_why;              // why the last cut did not compile either
        // Cut down: the kernel and what it uses; then without the includes;
        // then with the device code it needs from them, a file of its own
        // that the build includes first (a pre-include: kernel.cu stays the
        // user's lines).
        // Attempts 1 and 2 share the cut without includes: made once, when first needed.
        std::optional<KernelCut> without_includes;
        // spec.json's pre_includes: the user's (--pre-include) while the
        // cut keeps its includes; blanked with them after (a pre-include
        // is an include the host file writes first), the device code cut
        // out of them standing in their place on attempt 2.
        const auto set_pre_includes = [&](const std::vector<std::string>& files) {
          if (const auto pre = after_shim(files); pre.empty()) s.spec.erase("pre_includes");
          else s.spec["pre_includes"] = pre;
          fitness::write_file_atomically(dir / "spec.json", s.spec.dump(2) + "\n");
        };
        for (const int attempt : {0, 1, 2}) {
          if (attempt == 1) without_includes = cut_kernel(seed_source, kernel.string(), kernel_name, true);
          const KernelCut cut =
              attempt == 0 ? cut_kernel(seed_source, kernel.string(), kernel_name, false) : *without_includes;
          HeaderDeviceCode from_headers;
          if (attempt == 1 && !a->pre_includes.empty()) set_pre_includes({});
          if (attempt == 2) {
            from_headers = header_device_code(cut.source, kernel.string(),
                                              headers.files ? *headers.files : std::vector<grammar::SourceFile>{});
            if (from_headers.kept.empty() && from_headers.known.empty() && !from_headers.math_constants) break;
            fitness::write_file_atomically(dir / kHeadersFile, from_headers.text);
            set_pre_includes({kHeadersFile});
          }
          fitness::write_file_atomically(dir / "kernel.cu", cut.source);
          if (cut_why = seed_compile_problem(dir, "sm_90", self); !cut_why.empty()) continue;
          std::cout << "note: your file does not compile with NVRTC as a whole (" << why << "); kernel.cu keeps '"
                    << s.entry << "' and what it uses, the rest blanked (lines kept):";
          for (const std::string& d : cut.dropped) std::cout << " " << d << ";";
          for (const std::string& p : attempt > 0 ? a->pre_includes : std::vector<std::string>{})
            std::cout << " the pre-include " << p << ";";
          std::cout << "\n";
          if (attempt == 2) {
            std::cout << "note: nor do its headers; " << (dir / kHeadersFile).string()
                      << " holds the device code kernel.cu needs from them (spec.json's pre_includes):";
            for (const std::string& k : from_headers.kept) std::cout << " " << k << ";";
            for (const std::string& k : from_headers.known)
              std::cout << " " << k << " (" << grammar::well_known_records().name << ", no header here defines it);";
            if (from_headers.math_constants) std::cout << " <math.h>'s M_PI and its kin (POSIX constants);";
            std::cout << "\n";
          }
          fixed = true;
          break;
        }
        if (!fixed) {
          fs::remove(dir / kHeadersFile);
          set_pre_includes(a->pre_includes);
          fitness::write_file_atomically(dir / "kernel.cu", seed_source);
          std::cout << "problem: " << (dir / "kernel.cu").string() << " does not compile with NVRTC (" << why
                    << "), nor cut down to '" << s.entry << "' and what it uses (" << cut_why
                    << "): put them in a file of their own that NVRTC builds and run gi init on that\n";
          if (a->check) throw std::runtime_error(dir.string() + ": the seed does not compile (above)");
        }
      }
    if (a->check && left.empty()) {
      const StepCache cache;
      SeedCheck c = check_new_seed(dir, cache);
      if (c.workloads && !c.coverage) c.coverage = add_coverage_check(dir, s.spec, cache);
      if (!c.workloads || !c.coverage)
        throw std::runtime_error(dir.string() + ": the seed did not pass every check (above)");
    } else if (a->check) {
      std::cout << "--check: not run while fields are left to fill\n";
    }
    std::cout << "then: gi check " << dir.string() << "   (runs the seed once on the GPU)\n"
              << "      gi evolve " << dir.string() << "\n";
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("init", gi::cli::add_init)
