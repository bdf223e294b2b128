// Switches: alternative code paths behind `#define NAME VALUE` (docs/design.md,
// "Edits, patches and switches"): the parser makes each #if branch a scope of its own, the
// define family sets a switch, the published kernel has the chosen path
// resolved and the dead ones removed, and the plain seed stays the baseline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/search/edit_operators.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/seed/switch_settings.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "grammar/switches.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "test_support.hpp"
#include "training_checks.hpp"

namespace gi::grammar {
namespace {

std::size_t at_line(const Grammar& g, int line) {
  for (std::size_t i = 0; i < g.rules().size(); ++i)
    if (g.rule(i).first_line <= line && g.rule(i).last_line >= line) return i;
  throw std::runtime_error("no rule at line " + std::to_string(line));
}

const Seed& bspline() {
  static const Seed seed = load_seed(test::source_dir() / "seeds/bspline/deformation_field");
  return seed;
}

// The requirement: kernel.cu with every switch at its default,
// resolved, is exactly the seed as it was before the switches.
TEST(Switches, BsplineSeedAtItsDefaultsIsThePlainSeed) {
  const std::string plain = read_text_file(std::filesystem::path(GI_TEST_DATA) / "plain/bspline_deformation_field.cu");
  EXPECT_EQ(resolve_switches(bspline().source, {{"BSPLINE_PATH", "0"}, {"BSPLINE_ITEMS", "1"}, {"BSPLINE_TABLE", "0"}}),
            plain);
  EXPECT_EQ(variant_source(bspline(), Patch{}).source, plain);
  EXPECT_EQ(variant_source(bspline(), Patch{}).launch.switches.at("BSPLINE_PATH"), "0");
}

// The same for every seed with switches: tests/data/plain/<family>_<kernel>.cu
// holds its kernel.cu as it was before its switch paths were written, and
// the seed resolved at its defaults (what gi compiles for the plain seed,
// the baseline of every speed-up) must equal it byte for byte.
TEST(Switches, EverySeedAtItsDefaultsIsItsPlainSeed) {
  std::size_t with_switches = 0;
  for (const auto& dir : test::seed_dirs()) {
    const Seed seed = load_seed(dir);
    if (seed.context.switches.empty()) continue;
    ++with_switches;
    std::string name = test::seed_name(dir);
    std::replace(name.begin(), name.end(), '/', '_');
    const auto plain_path = std::filesystem::path(GI_TEST_DATA) / "plain" / (name + ".cu");
    ASSERT_TRUE(std::filesystem::exists(plain_path)) << test::seed_name(dir) << " has switches but no " << plain_path;
    const std::string plain = read_text_file(plain_path);
    EXPECT_EQ(resolve_switches(seed.source, switch_values(seed.grammar, seed.context)), plain) << test::seed_name(dir);
    EXPECT_EQ(variant_source(seed, Patch{}).source, plain) << test::seed_name(dir);
  }
  EXPECT_GE(with_switches, 1u);
}

TEST(Switches, ThePublishedWarpPathHoldsNoDeadCode) {
  const Patch p = parse_patch("define:BSPLINE_PATH=1");
  const VariantSource v = variant_source(bspline(), p);
  EXPECT_EQ(v.launch.switches.at("BSPLINE_PATH"), "1");
  EXPECT_EQ(v.source.find("#if"), std::string::npos);
  EXPECT_EQ(v.source.find("#else"), std::string::npos);
  EXPECT_EQ(v.source.find("BSPLINE_PATH"), std::string::npos);
  EXPECT_NE(v.source.find("__ballot_sync"), std::string::npos);
  EXPECT_EQ(v.source.find("if (tid < activeVoxelNumber) {"), std::string::npos);  // the plain path is gone
  EXPECT_NO_THROW(Grammar::from_source(v.source, "kernel.cu"));
  // The raw patched source keeps both paths and sets the define.
  const std::string raw = apply_patch(bspline().grammar, p, bspline().context);
  EXPECT_NE(raw.find("#define BSPLINE_PATH 1  // switch:"), std::string::npos);
  EXPECT_NE(raw.find("if (tid < activeVoxelNumber) {"), std::string::npos);
}

TEST(Switches, LiveLinesTellDeadPathsFromLivingOnes) {
  const Grammar& g = bspline().grammar;
  int lane = 0, guard = 0, shared = 0, directive = 0;
  for (const Rule& r : g.rules()) {
    if (r.text.find("lane = threadIdx.x & 31;") != std::string::npos && !lane) lane = r.first_line;  // path 1's
    if (r.text.find("if (tid < activeVoxelNumber) {") != std::string::npos) guard = r.first_line;
    if (r.text.find("__device__ void bspline_basis") != std::string::npos) shared = r.first_line;
    if (r.text.rfind("#if BSPLINE_PATH", 0) == 0) directive = r.first_line;
  }
  const auto plain = live_lines(bspline().source, {{"BSPLINE_PATH", "0"}});
  const auto warp = live_lines(bspline().source, {{"BSPLINE_PATH", "1"}});
  EXPECT_FALSE(plain.at(lane));
  EXPECT_TRUE(warp.at(lane));
  EXPECT_TRUE(plain.at(guard));
  EXPECT_FALSE(warp.at(guard));
  EXPECT_TRUE(plain.at(shared) && warp.at(shared));
  EXPECT_FALSE(plain.at(directive) || warp.at(directive));
}

// The warp-cooperative path's branches need data the registration-like
// workload never has; its training check is checked here for what it must
// drive (the coverage run on the GPU confirms the counts).
TEST(Switches, WarpPathCheckDrivesEveryWarpCase) {
  const fitness::KernelSpec spec = fitness::load_kernel_spec(test::source_dir() / "seeds/bspline/deformation_field");
  const fitness::WorkloadSpec& ws = test::training_check(spec, {{"dim", {40, 1, 7}}});
  const fitness::Workload w = fitness::generate_workload(spec, ws, 3);
  std::vector<std::int32_t> active(w.inputs.at("activeVoxels").size() / 4);
  std::memcpy(active.data(), w.inputs.at("activeVoxels").data(), active.size() * 4);
  const int dx = static_cast<int>(w.variables.at("imageDimX")), dy = static_cast<int>(w.variables.at("imageDimY"));
  const double sx = w.variables.at("spacingX");
  bool same_row_other_slice = false, wide_row = false;
  for (std::size_t first = 0; first < active.size(); first += 32) {
    const std::size_t last = std::min(active.size(), first + 32) - 1;
    auto y = [&](std::size_t i) { return active[i] / dx % dy; };
    auto z = [&](std::size_t i) { return active[i] / (dx * dy); };
    auto x_pre = [&](std::size_t i) { return static_cast<int>(std::floor((active[i] % dx) / sx)); };
    bool one_row = true, same_y = true;
    int lo = x_pre(first), hi = lo;
    for (std::size_t i = first; i <= last; ++i) {
      same_y = same_y && y(i) == y(first);
      one_row = one_row && y(i) == y(first) && z(i) == z(first);
      lo = std::min(lo, x_pre(i));
      hi = std::max(hi, x_pre(i));
    }
    same_row_other_slice = same_row_other_slice || (same_y && !one_row);
    wide_row = wide_row || (one_row && hi - lo + 4 > 32);
  }
  EXPECT_TRUE(same_row_other_slice) << "op `z == zLeader` false";
  EXPECT_TRUE(wide_row) << "op `xMax - xMin + 4 <= 32` false";
  const std::size_t in_last_block = active.size() % spec.default_block_size;
  EXPECT_NE(in_last_block % 32, 0u) << "a partly active warp: `active` false";
  EXPECT_LE(in_last_block, spec.default_block_size - 32u) << "a warp with no active lane: `activeMask == 0u`";
  EXPECT_GT(in_last_block, 0u);
}

TEST(Switches, LineEditsReachEveryPathAndStayScopeSafe) {
  const Grammar& g = bspline().grammar;
  // `lane = threadIdx.x & 31;` (warp path) uses a name declared in that path only.
  std::size_t lane_line = 0, plain_guard = 0, shared_line = 0;
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    if (g.rule(i).text.find("lane = threadIdx.x & 31;") != std::string::npos) lane_line = i;
    if (g.rule(i).text.find("if (tid < activeVoxelNumber) {") != std::string::npos) plain_guard = i;
    if (g.rule(i).text.find("displacementX = 0.0f;") != std::string::npos && shared_line == 0) shared_line = i;
  }
  ASSERT_GT(lane_line, 0u);
  ASSERT_GT(plain_guard, 0u);
  EXPECT_EQ(g.rule(lane_line).kind, RuleKind::Statement);  // editable
  // It may not go into the plain path, where `lane` is not declared ...
  EXPECT_FALSE(can_insert_after(g, plain_guard, lane_line));
  // ... but a line using only shared declarations travels between the paths.
  EXPECT_TRUE(can_insert_after(g, plain_guard, shared_line));
}

TEST(Switches, EachBranchMustCloseItsBraces) {
  const std::string bad =
      "__global__ void k(float* a, int n) {\n"
      "#if X == 1\n"
      "  if (n > 0) {\n"
      "#else\n"
      "  if (n > 1) {\n"
      "#endif\n"
      "    a[0] = 1.f;\n"
      "  }\n"
      "}\n";
  try {
    Grammar::from_source(bad, "k.cu");
    FAIL() << "parsed";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_NE(std::string(e.what()).find("#else without a matching #if"), std::string::npos) << e.what();
  }
  const std::string unclosed = "__global__ void k(float* a) {\n#if X\n  a[0] = 1.f;\n}\n";
  EXPECT_THROW(Grammar::from_source(unclosed, "k.cu"), SourceError);
}

TEST(Switches, ResolutionKeepsOtherConditionalsAndNestedOnes) {
  const std::string src =
      "#define P 2\n"
      "#define ITEMS 4\n"
      "#ifdef __CUDA_ARCH__\n"
      "int arch;\n"
      "#endif\n"
      "#if P == 1\n"
      "int one;\n"
      "#elif P == 2 && ITEMS > 2\n"
      "#if defined(OTHER)\n"
      "int other;\n"
      "#else\n"
      "int two_not_other;\n"
      "#endif\n"
      "int two[ITEMS];\n"
      "#else\n"
      "int three;\n"
      "#endif\n";
  const std::string out = resolve_switches(src, {{"P", "2"}, {"ITEMS", "4"}});
  EXPECT_EQ(out,
            "#define ITEMS 4\n"
            "#ifdef __CUDA_ARCH__\n"
            "int arch;\n"
            "#endif\n"
            "#if defined(OTHER)\n"
            "int other;\n"
            "#else\n"
            "int two_not_other;\n"
            "#endif\n"
            "int two[ITEMS];\n");
  EXPECT_THROW(resolve_switches("#else\n", {{"P", "1"}}), SourceError);
  EXPECT_THROW(resolve_switches("#if P\nint a;\n", {{"P", "1"}}), SourceError);
  EXPECT_EQ(resolve_switches("#if P\nint a;\n#endif\n", {}), "#if P\nint a;\n#endif\n");  // no switches: as is
}

TEST(Switches, NothingIsInsertedBetweenAHeaderAndABraceOnTheNextLine) {
  const std::string src =
      "__global__ void k(float* a, int n)\n"
      "{\n"
      "    int i;\n"
      "    i = 0;\n"
      "    if (n > 0)\n"
      "    {\n"
      "        a[0] = 1.f;\n"
      "    }\n"
      "    for (i = 0; i < n; i++)\n"
      "    {\n"
      "        a[i] = 2.f;\n"
      "    }\n"
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  EXPECT_FALSE(g.context(at_line(g, 5)).anchor_ok);  // if header
  EXPECT_FALSE(g.context(at_line(g, 9)).anchor_ok);  // for header
  EXPECT_TRUE(g.context(at_line(g, 6)).anchor_ok);   // inside the braces
  EXPECT_NE(edit_problem(g, parse_patch("<if_k.cu_5>+<_k.cu_4>").edits[0]), std::nullopt);
}

TEST(DefineEdits, TextChecksAndCandidates) {
  const Seed& seed = bspline();
  const Patch p = parse_patch("define:BSPLINE_PATH=1");
  ASSERT_EQ(p.edits.size(), 1u);
  EXPECT_EQ(p.edits[0].family, "define");
  EXPECT_EQ(to_string(p), "define:BSPLINE_PATH=1");
  EXPECT_EQ(edit_problem(seed.grammar, seed.context, p.edits[0]), std::nullopt);
  auto problem = [&](const std::string& text) {
    return edit_problem(seed.grammar, seed.context, parse_patch(text).edits[0]).value_or("legal");
  };
  EXPECT_NE(problem("define:BSPLINE_PATH=7").find("not a value of switch BSPLINE_PATH (values: 0, 1, 2, 3)"), std::string::npos);
  EXPECT_NE(problem("define:NOPE=1").find("no switch named NOPE (the seed's spec declares BSPLINE_PATH, BSPLINE_ITEMS, BSPLINE_TABLE)"),
            std::string::npos);
  // Without the spec's context the seed has no switches.
  EXPECT_NE(edit_problem(seed.grammar, p.edits[0]).value_or("legal").find("declares none"), std::string::npos);
  const auto candidates = edit_family("define").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 7u);  // PATH 1, 2, 3; ITEMS 2, 4, 8; TABLE 1: a default is not an edit
  EXPECT_EQ(to_string(candidates[0]), "define:BSPLINE_PATH=1");
}

TEST(DefineEdits, DisallowedSwitchSettingsAreRejected) {
  const std::string src =
      "#define PATH 0\n#define ITEMS 1\n"
      "__global__ void k(float* a) {\n  a[0] = PATH + ITEMS;\n}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  EditContext c;
  c.switches = {{"PATH", {"0", "1"}}, {"ITEMS", {"1", "2", "4"}}};
  c.switch_combinations = {{{"PATH", {"0"}}}, {{"PATH", {"1"}}, {"ITEMS", {"1"}}}};
  EXPECT_NO_THROW(validate_patch(g, parse_patch("define:ITEMS=4"), c));
  EXPECT_NO_THROW(validate_patch(g, parse_patch("define:PATH=1"), c));
  try {
    validate_patch(g, parse_patch("define:PATH=1 define:ITEMS=2"), c);
    FAIL() << "accepted";
  } catch (const PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("switch setting ITEMS=2,PATH=1 is not one the seed's spec allows"),
              std::string::npos)
        << e.what();
  }
  const PatchedKernel k = patch_kernel(g, parse_patch("define:ITEMS=4"), c);
  EXPECT_NE(k.source.find("#define ITEMS 4\n"), std::string::npos);
  EXPECT_EQ(k.launch.switches.at("ITEMS"), "4");
  EXPECT_EQ(k.launch.switches.at("PATH"), "0");
}

TEST(DefineEdits, NearestAllowedSettingKeepsTheDrawnValue) {
  EditContext c;
  c.switches = {{"PATH", {"0", "1", "2"}}, {"ITEMS", {"1", "2", "4"}}, {"TABLE", {"0", "1"}}};
  c.switch_combinations = {{{"PATH", {"0", "1"}}, {"ITEMS", {"1"}}, {"TABLE", {"0"}}},
                           {{"PATH", {"2"}}, {"ITEMS", {"1", "2", "4"}}, {"TABLE", {"0", "1"}}}};
  using Setting = std::map<std::string, std::string>;
  // Items per thread need path 2: the path comes along, nothing else changes.
  EXPECT_EQ(nearest_allowed_setting(c, Setting{{"PATH", "0"}, {"ITEMS", "4"}, {"TABLE", "0"}}, "ITEMS"),
            (Setting{{"PATH", "2"}, {"ITEMS", "4"}, {"TABLE", "0"}}));
  // Leaving path 2 takes its parameters back to the values path 1 allows.
  EXPECT_EQ(nearest_allowed_setting(c, Setting{{"PATH", "1"}, {"ITEMS", "4"}, {"TABLE", "1"}}, "PATH"),
            (Setting{{"PATH", "1"}, {"ITEMS", "1"}, {"TABLE", "0"}}));
  // An allowed setting is its own nearest.
  const Setting allowed{{"PATH", "2"}, {"ITEMS", "2"}, {"TABLE", "1"}};
  EXPECT_EQ(nearest_allowed_setting(c, allowed, "TABLE"), allowed);
  // No allowed setting has ITEMS=8 (not even a value of the switch).
  EXPECT_EQ(nearest_allowed_setting(c, Setting{{"PATH", "0"}, {"ITEMS", "8"}, {"TABLE", "0"}}, "ITEMS"), std::nullopt);
}

// Mutation never wastes an evaluation on a setting the spec rejects: a define
// edit brings the define edits of the nearest allowed setting with it.
TEST(DefineEdits, RandomDefineEditsAlwaysNameAnAllowedSetting) {
  const Seed& seed = bspline();
  ASSERT_FALSE(seed.context.switch_combinations.empty());
  OperatorConfig config;
  config.enabled = {"define"};
  config.context = seed.context;
  const EditOperators ops(seed.grammar, config);
  std::mt19937_64 rng(7);
  std::set<std::string> settings;
  Patch growing;
  for (int i = 0; i < 200; ++i) {
    Patch fresh;
    ops.append_random_edit(fresh, rng);
    ops.append_random_edit(growing, rng);
    for (const Patch* p : {&fresh, &growing}) {
      VariantSource v;
      ASSERT_NO_THROW(v = variant_source(seed, *p)) << to_string(*p);
      settings.insert(to_string(v.launch));
    }
  }
  // Every allowed setting but the default is one define edit away.
  EXPECT_GE(settings.size(), gi::switch_settings(seed).size() - 1);
}

TEST(SwitchSpec, SwitchesAreCheckedAgainstTheKernel) {
  const std::string kernel = bspline().source;
  nlohmann::json spec = *bspline().spec;
  auto error = [&](const nlohmann::json& j) {
    try {
      fitness::parse_kernel_spec(j, "s.json", kernel, "kernel.cu", fitness::SpecCheck{false});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_EQ(error(spec), "loaded");
  const fitness::KernelSpec k = fitness::parse_kernel_spec(spec, "s.json", kernel, "kernel.cu", fitness::SpecCheck{false});
  ASSERT_EQ(k.switches.size(), 3u);
  EXPECT_EQ(k.switches[0].values, (std::vector<std::string>{"0", "1", "2", "3"}));
  // The kernel's own values, which launch expressions read by default.
  EXPECT_EQ(k.switch_defaults,
            (std::map<std::string, std::string>{{"BSPLINE_PATH", "0"}, {"BSPLINE_ITEMS", "1"}, {"BSPLINE_TABLE", "0"}}));
  nlohmann::json bad = spec;
  bad["switches"][0]["name"] = "NO_SUCH";
  EXPECT_NE(error(bad).find("s.json: switches[0].name: no `#define NO_SUCH VALUE` line"), std::string::npos) << error(bad);
  bad = spec;
  bad["switches"][0]["values"] = {1, 2};
  EXPECT_NE(error(bad).find("switches[0].values: the kernel's own value 0"), std::string::npos) << error(bad);
  bad = spec;
  bad["switch_combinations"] = {{{"BSPLINE_PATH", {1}}}};
  EXPECT_NE(error(bad).find("switch_combinations: the kernel's own setting"), std::string::npos) << error(bad);
  bad["switch_combinations"] = {{{"OTHER", {1}}}};
  EXPECT_NE(error(bad).find("switch_combinations[0].OTHER: no switch named 'OTHER'"), std::string::npos) << error(bad);
}

TEST(SeedPin, PatchFilesArePinnedToTheirSeed) {
  const Seed& seed = bspline();
  const Patch p = parse_patch("define:BSPLINE_PATH=1");
  const std::string text = patch_file_for(seed, p);
  EXPECT_EQ(text.rfind("@seed=" + seed.sha256 + "\n", 0), 0u);
  EXPECT_EQ(parse_patch_for(seed, text, "p.gi"), p);
  const Seed other = load_seed(test::source_dir() / "seeds/tools/convolution_x");
  try {
    parse_patch_for(other, text, "p.gi");
    FAIL() << "applied to another seed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("p.gi: this patch was made for a seed whose kernel.cu has SHA-256 " + seed.sha256),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(parse_patch_for(other, "<_kernel.cu_30>\n", "hand.gi"));  // unpinned: written by hand
  EXPECT_THROW(parse_patch("<_k.cu_1> @seed=" + seed.sha256), SourceError);  // the pin comes first
  EXPECT_THROW(parse_patch("@seed=12ab"), SourceError);
}

}  // namespace
}  // namespace gi::grammar
