// The first transformation family and what it stands on: the expression
// view of statements (analysis/expression.hpp), uniformity
// (analysis/uniformity.hpp), aggregate sites with their refusals
// (analysis/aggregate_sites.hpp), and `aggregate` itself
// (grammar/edits/aggregate.cpp): its variants compile with NVRTC and give
// the seed's result in the CPU emulator, on plain kernels written for it and
// on the library's sum_reduction. CPU only.
#include <gtest/gtest.h>

#include "fitness/gpu/cuda_devices.hpp"


#include <filesystem>
#include <fstream>
#include <random>

#include "analysis/aggregate_sites.hpp"
#include "analysis/cas_helpers.hpp"
#include "analysis/expression.hpp"
#include "analysis/uniformity.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "gi/search/edit_operators.hpp"
#include "gi/search/search.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"
#include "tests/family_test_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using gi::analysis::ExprKind;

gi::grammar::ParsedKernel parsed(const std::string& source) { return gi::grammar::parse_kernel(source, "k.cu"); }

// The element whose first code token is on `line`.
std::size_t element_on_line(const gi::grammar::ParsedKernel& k, int line) {
  for (std::size_t i = 0; i < k.elements.size(); ++i)
    if (k.elements[i].kind != gi::grammar::ElementKind::Comment && k.tokens[k.elements[i].tokens.first].line == line)
      return i;
  ADD_FAILURE() << "no element on line " << line;
  return 0;
}

std::optional<gi::analysis::Expr> expression(const std::string& text, std::string* why = nullptr) {
  static std::vector<gi::grammar::Token> tokens;
  tokens = gi::grammar::tokenize(text, "e.cu");
  return gi::analysis::parse_expression(tokens, 0, tokens.size() - 1, why);
}

TEST(KernelExpression, ParsesWhatKernelStatementsHold) {
  auto e = expression("atomicAdd(&out[blockIdx.x * 4 + k], (float)x[i] * 2.0f)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, ExprKind::Call);
  EXPECT_EQ(e->callee(), "atomicAdd");
  ASSERT_EQ(e->children.size(), 3u);
  EXPECT_EQ(e->children[1].kind, ExprKind::Unary);
  EXPECT_EQ(e->children[1].children[0].kind, ExprKind::Index);
  EXPECT_EQ(e->children[2].kind, ExprKind::Binary);
  EXPECT_EQ(e->children[2].children[0].kind, ExprKind::Cast);
  EXPECT_EQ(gi::analysis::names_in(*e),
            (std::vector<std::string>{"atomicAdd", "out", "blockIdx", "k", "x", "i"}));

  e = expression("s += c ? a->v : b.w[j]--");
  ASSERT_TRUE(e);
  EXPECT_TRUE(gi::analysis::is_assignment(*e));
  EXPECT_EQ(e->children[1].kind, ExprKind::Ternary);
  EXPECT_EQ(e->children[1].children[1].kind, ExprKind::Member);
  EXPECT_EQ(e->children[1].children[1].field, "v");

  e = expression("a = b = c + d * e - f");  // right-associative assignment, usual precedence
  ASSERT_TRUE(e);
  EXPECT_EQ(e->children[1].kind, ExprKind::Binary);
  EXPECT_EQ(e->children[1].text, "=");
  EXPECT_EQ(e->children[1].children[1].text, "-");

  // A functional cast (NiftyReg's `int((float)x / spacing.x)`) is a cast.
  e = expression("int((float)x / s.x) + 1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->children[0].kind, ExprKind::Cast);
  EXPECT_EQ(e->children[0].text, "int");
  EXPECT_EQ(e->children[0].children[0].text, "/");
}

// canonical_text is one text for one tree, however it is spelt.
TEST(KernelExpression, CanonicalTextIgnoresSpelling) {
  const auto a = expression("(ante.x) + a"), b = expression("ante . x+a"), c = expression("ante.x + (a * 2)");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(gi::analysis::canonical_text(*a), "ante.x + a");
  EXPECT_EQ(gi::analysis::canonical_text(*a), gi::analysis::canonical_text(*b));
  EXPECT_EQ(gi::analysis::canonical_text(*c), "ante.x + (a * 2)");
  const auto d = expression("f(x, y[i])-- ? (int)v : -w");
  ASSERT_TRUE(d);
  EXPECT_EQ(gi::analysis::canonical_text(*d), "f(x, y[i])-- ? (int)v : -w");
}

TEST(KernelExpression, RefusesWhatItCannotRead) {
  std::string why;
  // A template argument that is no keyword reads as comparisons too: refused.
  EXPECT_FALSE(expression("min<T>(a, b)", &why));
  EXPECT_NE(why.find("template"), std::string::npos) << why;
  // A keyword argument makes the instance the callee (no comparison has a keyword operand).
  const auto instance = expression("min<int>(a, b)", &why);
  ASSERT_TRUE(instance) << why;
  EXPECT_EQ(instance->callee(), "min<int>");
  EXPECT_FALSE(expression("a + ", &why));
  EXPECT_FALSE(expression("a b", &why));
  EXPECT_NE(why.find("unexpected 'b'"), std::string::npos) << why;
}

const char* kUniformityKernel = R"(extern "C" __global__ void k(const float* x, int n, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * n;
    int stride = gridDim.x * blockDim.x;
    float v = x[row];
    int j = 0;
    if (i < n) {
        j = 3;
    }
    for (int k = 0; k < n; k++) {
        row += 1;
    }
    out[i] = v;
}
)";

TEST(Uniformity, TaintsThreadIndicesLoadsAndDivergentAssignments) {
  const auto k = parsed(kUniformityKernel);
  const gi::analysis::Uniformity u(k, 0);
  const std::size_t last = element_on_line(k, 13);
  auto uniform = [&](const std::string& text) { return u.uniform(*expression(text), last); };
  EXPECT_TRUE(uniform("row + stride * 2"));        // blockIdx, gridDim, parameters, a uniform loop
  EXPECT_TRUE(uniform("n"));
  EXPECT_TRUE(uniform("&out[row]"));                // an address: nothing loaded
  EXPECT_FALSE(uniform("i"));                       // threadIdx
  EXPECT_FALSE(uniform("v"));                       // a loaded value
  EXPECT_FALSE(uniform("j"));                       // assigned under if (i < n)
  EXPECT_FALSE(uniform("out[0]"));
  EXPECT_EQ(*u.why_not(*expression("row + i"), last), "'i', assigned a value that differs between threads");
  EXPECT_TRUE(u.uniform_control(element_on_line(k, 11)));   // inside a loop of uniform trip count
  EXPECT_FALSE(u.uniform_control(element_on_line(k, 8)));   // inside if (i < n)
}

TEST(AggregateSites, FindsUniformAtomicsAndSaysWhyOthersAreNot) {
  const auto k = parsed(R"(extern "C" __global__ void k(const int* bins, const float* x, int n, float* total, float* hist, float* seen) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    atomicAdd(total, v);
    atomicAdd(&hist[bins[i]], 1.0f);
    atomicAdd(&total[blockIdx.y], v);
    atomicAdd(seen, v);
    seen[0] = 1.0f;
}
)");
  const auto found = gi::analysis::find_aggregate_sites(k);
  ASSERT_EQ(found.sites.size(), 2u);
  EXPECT_EQ(found.sites[0].address, "total");
  EXPECT_EQ(found.sites[0].value, "v");
  EXPECT_EQ(found.sites[0].type, "float");
  ASSERT_TRUE(found.sites[0].exit);
  EXPECT_EQ(found.sites[0].exit->condition, "i >= n");
  EXPECT_EQ(found.sites[1].address, "&total[blockIdx.y]");
  ASSERT_EQ(found.refusals.size(), 2u);
  EXPECT_NE(found.refusals[0].find("line 6: atomicAdd(&hist[bins[i]], 1.0f): its address differs between threads"),
            std::string::npos)
      << found.refusals[0];
  EXPECT_NE(found.refusals[1].find("the kernel also reads or writes seen at line 9"), std::string::npos) << found.refusals[1];
}

TEST(AggregateSites, ARefusedKernelNamesItsReturnOrItsLocal) {
  auto refusal = [](const std::string& source) {
    const auto found = gi::analysis::find_aggregate_sites(parsed(source));
    EXPECT_TRUE(found.sites.empty());
    return found.refusals.empty() ? std::string() : found.refusals[0];
  };
  EXPECT_NE(refusal(R"(__global__ void k(const float* x, int n, float* t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (x[i] < 0) return;
    atomicAdd(t, x[i]);
}
)").find("the kernel returns in 2 places"),
            std::string::npos);
  EXPECT_NE(refusal(R"(__global__ void k(const float* x, int n, float* t) {
    int b = blockIdx.x;
    atomicAdd(&t[b], x[threadIdx.x]);
}
)").find("its address uses b, which is not a parameter"),
            std::string::npos);
  EXPECT_NE(refusal(R"(__device__ void add(float* t, float v) {
    atomicAdd(t, v);
}
)").find("not in a __global__ kernel"),
            std::string::npos);
}

const fs::path kPlain = fs::path(GI_TEST_DATA) / "user";

class AggregateFamily : public gi::test::FamilyTest {};

TEST_F(AggregateFamily, EveryVariantOfAPlainKernelCompilesAndGivesTheSeedsResult) {
  for (const char* name : {"dot_product", "count_positive", "vector_max"}) {
    const gi::Seed seed = gi::load_seed(kPlain / name);
    const auto& family = gi::grammar::edit_family("aggregate");
    const auto candidates = family.candidates(seed.grammar, seed.context);
    ASSERT_EQ(candidates.size(), 4u) << name;  // one site: warp, block, and both with the toolkit's reduce
    for (const auto& edit : candidates) {
      gi::grammar::Patch patch;
      patch.edits.push_back(edit);
      const std::string text = gi::grammar::to_string(patch);
      const std::string source = gi::grammar::apply_patch(seed.grammar, patch, seed.context);
      EXPECT_NE(source.find("// gi aggregate: one "), std::string::npos) << source;
      compiles(source, std::string(name) + " " + text);
      // The donor (cooperative groups' reduce) runs on the emulator's own
      // cooperative groups (fitness/emulation/cuda_on_cpu.hpp), and on the GPU
      // in the GPU suite (GpuDonorVariants...).
      const bool donor = edit.literal.find("_cg") != std::string::npos;
      EXPECT_EQ(source.find("cooperative_groups::reduce(") != std::string::npos, donor) << source;
      EXPECT_EQ(source.rfind("#include <cooperative_groups.h>", 0) == 0, donor) << source;
      const auto run = emulate(kPlain / name, text);
      EXPECT_EQ(run.exit_code, 0) << name << " " << text << "\n" << run.output;
      EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
    }
  }
}

// The toolkit's reduce (cooperative groups) in place of gi's shuffles, at
// warp and block level, on a float sum, an integer count and a float
// maximum through a compare-and-swap helper: each variant passes `gi check`
// on the GPU (skipped without one).
TEST_F(AggregateFamily, GpuDonorVariantsGiveTheSeedsResult) {
  if (gi::fitness::probe_cuda().gpus.empty()) GTEST_SKIP() << "no CUDA device: " << gi::fitness::probe_cuda().message;
  for (const char* name : {"dot_product", "count_positive", "vector_max"}) {
    const gi::Seed seed = gi::load_seed(kPlain / name);
    for (const auto& edit : gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context)) {
      if (edit.literal.find("_cg") == std::string::npos) continue;
      const fs::path patch = dir_ / "donor.gi";
      std::ofstream(patch) << gi::grammar::to_string(edit) << "\n";
      const auto run = gi::test::run_gi("check \"" + (kPlain / name).string() + "\" --patch \"" + patch.string() +
                                        "\" --cache \"" + (dir_ / "cache").string() + "\"");
      EXPECT_EQ(run.exit_code, 0) << name << " " << gi::grammar::to_string(edit) << "\n" << run.output;
    }
  }
}

// The checks that pass the variants above do see a wrong one: the register
// never added to leaves the total at 0.
TEST_F(AggregateFamily, AVariantThatLosesTheValuesFails) {
  const auto run = emulate(kPlain / "dot_product", "aggregate:<_kernel.cu_7>=block <_kernel.cu_7>");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("\"status\": \"wrong_output\""), std::string::npos) << run.output;
}

TEST_F(AggregateFamily, AnEarlyExitBecomesAPredicateAroundTheRestOfTheBody) {
  const gi::Seed seed = gi::load_seed(kPlain / "count_positive");
  const std::string source =
      gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch("aggregate:<_kernel.cu_7>=warp"), seed.context);
  EXPECT_EQ(source.find("return"), std::string::npos) << source;
  EXPECT_NE(source.find("    unsigned int gi_sum_7 = 0;\n    int i = blockIdx.x"), std::string::npos) << source;
  EXPECT_NE(source.find("    if (!(i >= n)) {\n        if (values[i] > threshold) {\n            gi_sum_7 += (unsigned int)(1u);"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("if (gi_lane == 0u && gi_sum_7 != 0) atomicAdd(count, gi_sum_7);"), std::string::npos) << source;
}

// A maximum on a float's bits (atomicMax on int, through a cast of the
// float buffer): the block's maximum, one atomicMax per block, against the
// CPU reference; the other operations of the same kind are refused with
// their reason where they are mixed on one buffer.
TEST_F(AggregateFamily, TheLibrarysMaxVectorLengthPassesItsChecksAggregated) {
  const fs::path dir = gi::test::source_dir() / "seeds/tools/max_vector_length";
  const gi::Seed seed = gi::load_seed(dir);
  const auto candidates = gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 4u);  // warp, block, and both with the toolkit's reduce (GPU suite only)
  for (const auto& e : candidates) {
    if (e.literal.find("_cg") != std::string::npos) continue;
    const auto run = emulate(dir, gi::grammar::to_string(e));
    EXPECT_EQ(run.exit_code, 0) << gi::grammar::to_string(e) << "\n" << run.output;
  }
  const std::string source = gi::grammar::apply_patch(seed.grammar, gi::grammar::Patch{{candidates[1]}}, seed.context);
  EXPECT_NE(source.find("if (gi_tid == 0u && gi_sum != (-0x7fffffff - 1)) atomicMax((int *) maxLength, gi_sum);"), std::string::npos) << source;
}

// A float minimum and maximum made of integer atomics on the float's bits,
// split on its sign (int min and unsigned max make the minimum; int max and
// unsigned min the maximum): the two halves commute, so all four atomics
// are sites, and the library's plain intensity_minmax passes its checks
// with all four aggregated. Without the sign split they are refused.
TEST_F(AggregateFamily, SignSplitFloatMinimaAndMaximaAreSites) {
  const fs::path dir = gi::test::source_dir() / "seeds/tools/intensity_minmax";
  const gi::Seed minmax = gi::load_seed(dir);
  const auto candidates = gi::grammar::edit_family("aggregate").candidates(minmax.grammar, minmax.context);
  ASSERT_EQ(candidates.size(), 20u);  // four atomics and `all`, each at four levels
  gi::grammar::Patch all;
  for (const auto& e : candidates)
    if (e.literal == "block" && e.target != "all") all.edits.push_back(e);
  const auto run = emulate(dir, gi::grammar::to_string(all));
  EXPECT_EQ(run.exit_code, 0) << gi::grammar::to_string(all) << "\n" << run.output;
  // `aggregate:all=block` is the same kernel as the four site edits.
  const std::string every = gi::grammar::apply_patch(minmax.grammar, gi::grammar::parse_patch("aggregate:all=block"), minmax.context);
  EXPECT_EQ(every, gi::grammar::apply_patch(minmax.grammar, all, minmax.context));

  const auto unguarded = gi::analysis::find_aggregate_sites(parsed(R"(__global__ void k(const float* x, int n, float* m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        atomicMin((int*)&m[0], __float_as_int(v));
        atomicMax((unsigned int*)&m[0], __float_as_uint(v));
    }
}
)"));
  EXPECT_TRUE(unguarded.sites.empty());
  ASSERT_EQ(unguarded.refusals.size(), 2u);
  EXPECT_NE(unguarded.refusals[0].find("mixed atomics need not commute"), std::string::npos) << unguarded.refusals[0];
  // The same halves the wrong way round (int max with unsigned max) are no float extremum either.
  const auto wrong = gi::analysis::find_aggregate_sites(parsed(R"(__global__ void k(const float* x, int n, float* m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        if (__float_as_int(v) >= 0) {
            atomicMax((int*)&m[0], __float_as_int(v));
        } else {
            atomicMax((unsigned int*)&m[0], __float_as_uint(v));
        }
    }
}
)"));
  EXPECT_TRUE(wrong.sites.empty());
}

TEST(AggregateSites, OperationsOtherThanAddUseTheirIdentityAndStayUnmixed) {
  const auto found = gi::analysis::find_aggregate_sites(parsed(R"(__global__ void k(const int* x, int n, int* lo, unsigned* flags, float* f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicMin(lo, x[i]);
        atomicOr(flags, 1u << (x[i] & 31));
        atomicMax((int*)f, x[i]);
        atomicExch(lo + 1, x[i]);
    }
}
)"));
  ASSERT_EQ(found.sites.size(), 2u);
  EXPECT_EQ(found.sites[0].operation.kind, "or");
  EXPECT_EQ(found.sites[0].type, "unsigned int");
  EXPECT_EQ(gi::analysis::identity_literal("or", found.sites[0].type), "0");
  EXPECT_EQ(found.sites[1].operation.kind, "max");
  EXPECT_EQ(found.sites[1].type, "int");  // the cast's view of the float buffer
  EXPECT_EQ(gi::analysis::identity_literal("max", "int"), "(-0x7fffffff - 1)");
  EXPECT_EQ(gi::analysis::identity_literal("min", "unsigned int"), "0xffffffffu");
  // lo is also the target of atomicExch, which is no operation that commutes.
  ASSERT_EQ(found.refusals.size(), 1u);
  EXPECT_NE(found.refusals[0].find("atomicMin(lo, x[i]): the kernel also reads or writes lo at line 7"),
            std::string::npos) << found.refusals[0];
}

// The usual compare-and-swap float maximum in a helper is an atomic
// maximum; a helper that also stores, or whose CAS writes something else, is not.
TEST(CasHelpers, TheUsualFloatMaximumIsAnAtomicMaximumAndLookalikesAreNot) {
  const auto helpers = gi::analysis::find_cas_helpers(parsed(R"(__device__ float maxf(float* a, float v) {
    int* bits = (int*)a;
    int old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_int(fmaxf(__int_as_float(assumed), v)));
    } while (assumed != old);
    return __int_as_float(old);
}
__device__ void minf(double* a, double v) {
    unsigned long long* w = (unsigned long long*)a;
    unsigned long long old = *w, assumed;
    do {
        assumed = old;
        old = atomicCAS(w, assumed, __double_as_longlong(fmin(v, __longlong_as_double(assumed))));
    } while (assumed != old);
}
__device__ void logs(float* a, float v, int* log) {
    int* bits = (int*)a;
    int old = *bits, assumed;
    do { assumed = old; old = atomicCAS(bits, assumed, __float_as_int(fmaxf(v, __int_as_float(assumed)))); } while (assumed != old);
}
__device__ void stores(float* a, float v) {
    int* bits = (int*)a;
    int old = *bits, assumed;
    do { assumed = old; old = atomicCAS(bits, assumed, __float_as_int(fmaxf(v, __int_as_float(assumed)))); } while (assumed != old);
    a[1] = v;
}
__device__ void adds(float* a, float v) {
    int* bits = (int*)a;
    int old = *bits, assumed;
    do { assumed = old; old = atomicCAS(bits, assumed, __float_as_int(v + __int_as_float(assumed))); } while (assumed != old);
}
)"));
  ASSERT_EQ(helpers.size(), 2u);
  EXPECT_EQ(helpers.at("maxf").operation.kind, "max");
  EXPECT_EQ(helpers.at("maxf").type, "float");
  EXPECT_EQ(helpers.at("minf").operation.kind, "min");
  EXPECT_EQ(helpers.at("minf").type, "double");
  // logs: three parameters; stores: another store; adds: not a max or min (left for later).
}

// `aggregate:all=LEVEL` makes every site's edit at that level; a site's own
// edit later in the patch takes its place there, and the text form reads back.
TEST_F(AggregateFamily, AllAggregatesEverySiteAndASitesOwnEditOverridesIt) {
  const fs::path dir = gi::test::source_dir() / "seeds/optimiser/cg_dot_products";
  const gi::Seed seed = gi::load_seed(dir);
  const auto& family = gi::grammar::edit_family("aggregate");
  std::vector<std::string> sites;
  for (const auto& e : family.candidates(seed.grammar, seed.context))
    if (e.literal == "warp" && e.target != "all") sites.push_back(e.target);
  ASSERT_EQ(sites.size(), 2u);
  const auto patched = [&](const std::string& text) {
    return gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch(text), seed.context);
  };
  EXPECT_EQ(patched("aggregate:all=warp"), patched("aggregate:" + sites[0] + "=warp aggregate:" + sites[1] + "=warp"));
  EXPECT_EQ(patched("aggregate:all=warp aggregate:" + sites[1] + "=block"),
            patched("aggregate:" + sites[0] + "=warp aggregate:" + sites[1] + "=block"));
  EXPECT_EQ(gi::grammar::to_string(gi::grammar::parse_patch("aggregate:all=block")), "aggregate:all=block");
  const auto run = emulate(dir, "aggregate:all=block");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  // A kernel with no site has no `all` either.
  const gi::Seed row_sum = gi::load_seed(kPlain / "row_sum");
  EXPECT_TRUE(family.problem(row_sum.grammar, row_sum.context,
                             gi::grammar::Edit{"aggregate", "all", "", 0, 0, "block"}).has_value());
}

// The block sites of a kernel wait at one barrier (intensity_minmax's four,
// not four barriers); a 32-bit integer minimum or maximum is one
// __reduce_*_sync, a float sum five shuffles; with no block site left (the
// sites' own warp edits override `all=block`), no barrier.
TEST_F(AggregateFamily, BlockSitesShareOneBarrierAndIntegerWarpsReduceInOneInstruction) {
  // Counted in the reductions gi wrote (the library seeds' switch paths have barriers of their own).
  const auto occurrences = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    const std::size_t from = text.find("// gi aggregate: each thread's values");
    for (std::size_t at = text.find(what, from); at != std::string::npos && from != std::string::npos;
         at = text.find(what, at + 1))
      ++n;
    return n;
  };
  const gi::Seed minmax = gi::load_seed(gi::test::source_dir() / "seeds/tools/intensity_minmax");
  const std::string every =
      gi::grammar::apply_patch(minmax.grammar, gi::grammar::parse_patch("aggregate:all=block"), minmax.context);
  EXPECT_EQ(occurrences(every, "__syncthreads()"), 1u) << every;
  EXPECT_EQ(occurrences(every, "__reduce_min_sync"), 4u) << every;
  EXPECT_EQ(occurrences(every, "__shfl_down_sync"), 0u) << every;
  EXPECT_EQ(occurrences(every, "gi_sum != "), 4u) << "an identity's atomic is left out: " << every;

  const fs::path dir = gi::test::source_dir() / "seeds/optimiser/cg_dot_products";
  const gi::Seed dots = gi::load_seed(dir);
  std::vector<std::string> sites;
  for (const auto& e : gi::grammar::edit_family("aggregate").candidates(dots.grammar, dots.context))
    if (e.literal == "warp" && e.target != "all") sites.push_back(e.target);
  ASSERT_EQ(sites.size(), 2u);
  const std::string both =
      gi::grammar::apply_patch(dots.grammar, gi::grammar::parse_patch("aggregate:all=block"), dots.context);
  EXPECT_EQ(occurrences(both, "__syncthreads()"), 1u) << both;
  EXPECT_GT(occurrences(both, "__shfl_down_sync"), 0u) << "float sums shuffle: " << both;
  const std::string warps = gi::grammar::apply_patch(
      dots.grammar,
      gi::grammar::parse_patch("aggregate:all=block aggregate:" + sites[0] + "=warp aggregate:" + sites[1] + "=warp"),
      dots.context);
  EXPECT_EQ(occurrences(warps, "__syncthreads()"), 0u) << warps;
  const std::string mixed = gi::grammar::apply_patch(
      dots.grammar, gi::grammar::parse_patch("aggregate:all=block aggregate:" + sites[0] + "=warp"), dots.context);
  EXPECT_EQ(occurrences(mixed, "__syncthreads()"), 1u) << mixed;
  for (const std::string& patch : {"aggregate:all=block aggregate:" + sites[0] + "=warp", std::string("aggregate:all=block")}) {
    const auto run = emulate(dir, patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
  }
}

// Two sums, two atomics: both aggregated at once, against the CPU reference.
TEST_F(AggregateFamily, TheLibrarysCgDotProductsPassesItsChecksWithBothSitesAggregated) {
  const fs::path dir = gi::test::source_dir() / "seeds/optimiser/cg_dot_products";
  const gi::Seed seed = gi::load_seed(dir);
  const auto candidates = gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 12u);  // &sums[0] and &sums[1], and all, each at four levels
  std::string patch;
  for (const auto& e : candidates)
    if (e.literal == "warp" && e.target != "all") patch += gi::grammar::to_string(e) + " ";
  const auto run = emulate(dir, patch);
  EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
}

TEST(AggregateSites, AKernelThatUsesGiNamesIsLeftAlone) {
  const auto found = gi::analysis::find_aggregate_sites(parsed(R"(__global__ void k(const float* x, float* t) {
    float gi_sum_3 = x[threadIdx.x];
    atomicAdd(t, gi_sum_3);
}
)"));
  EXPECT_TRUE(found.sites.empty());
  ASSERT_EQ(found.refusals.size(), 1u);
  EXPECT_NE(found.refusals[0].find("already uses a name starting gi_ (gi_sum_3)"), std::string::npos) << found.refusals[0];
}

TEST_F(AggregateFamily, TheLibrarysPlainSumReductionPassesItsChecksAggregated) {
  const fs::path dir = gi::test::source_dir() / "seeds/tools/sum_reduction";
  const gi::Seed seed = gi::load_seed(dir);
  const int line = gi::test::last_rule_line_holding(seed, "atomicAdd(sum, value)");
  const auto& family = gi::grammar::edit_family("aggregate");
  const auto candidates = family.candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 4u);  // the plain path's atomic at four levels; the switch paths' are not compiled by default
  EXPECT_EQ(candidates[0].target, "<_kernel.cu_" + std::to_string(line) + ">");
  const auto run = emulate(dir, "aggregate:<_kernel.cu_" + std::to_string(line) + ">=block");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  // A switch path's atomic is not a site of the default setting.
  std::size_t path_rule = 0;
  while (seed.grammar.rule(path_rule).text.find("atomicAdd(sum, value)") == std::string::npos) ++path_rule;
  ASSERT_LT(seed.grammar.rule(path_rule).first_line, line);
  gi::grammar::Edit other{"aggregate", seed.grammar.rule_name(path_rule), "", 0, 0, "warp"};
  EXPECT_TRUE(family.problem(seed.grammar, seed.context, other).has_value());
}

// The user kernels aggregate cannot help, with the reason it gives: their
// atomics' addresses differ between threads (a histogram, a scatter into a
// coarse grid) or they have no atomic at all (a row sum). The families that
// privatise scatter and spread a row over a warp are to come.
TEST_F(AggregateFamily, KernelsItCannotHelpAreRefusedWithTheirReason) {
  for (const auto& [name, reason] : std::vector<std::pair<std::string, std::string>>{
           {"histogram256", "its address differs between threads (a call of bin_of)"},
           {"grid_scatter", "its address differs between threads ('z', assigned a value that differs between threads)"},
           {"row_sum", ""}}) {
    const gi::Seed seed = gi::load_seed(kPlain / name);
    EXPECT_TRUE(gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context).empty()) << name;
    const auto found = gi::analysis::find_aggregate_sites(seed.grammar.parsed());
    if (reason.empty()) {
      EXPECT_TRUE(found.refusals.empty()) << name;
      continue;
    }
    ASSERT_EQ(found.refusals.size(), 1u) << name;
    EXPECT_NE(found.refusals[0].find(reason), std::string::npos) << found.refusals[0];
  }
}

// Few, large, independent edits: the first generation holds each of them,
// as it holds a seed's switch settings.
TEST_F(AggregateFamily, GpsFirstGenerationHoldsEveryAggregateEdit) {
  const gi::Seed seed = gi::load_seed(kPlain / "dot_product");
  gi::OperatorConfig config;
  config.context = seed.context;
  const gi::EditOperators ops(seed.grammar, config);
  gi::SearchConfig c;
  c.population = 10;
  std::mt19937_64 rng(3);
  const auto first = gi::make_search(c, ops)->propose(gi::SearchState{}, rng);
  ASSERT_EQ(first.size(), 10u);
  for (const auto& e : gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context))
    EXPECT_NE(std::find(first.begin(), first.end(), gi::grammar::Patch{{e}}), first.end()) << e.literal;
}

}  // namespace
