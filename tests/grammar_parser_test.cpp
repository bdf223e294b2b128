// The structure parser and grammar builder: rule kinds, multi-line
// statements, comments, preprocessor lines, nested scopes.
#include <gtest/gtest.h>

#include <map>

#include "grammar/grammar.hpp"
#include "grammar/source_error.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

const Rule& rule_at_line(const Grammar& g, int line) {
  for (const auto& r : g.rules())
    if (r.first_line <= line && line <= r.last_line) return r;
  throw std::runtime_error("no rule covers line " + std::to_string(line));
}

std::size_t index_at_line(const Grammar& g, int line) {
  for (std::size_t i = 0; i < g.rules().size(); ++i)
    if (g.rule(i).first_line <= line && line <= g.rule(i).last_line) return i;
  throw std::runtime_error("no rule covers line " + std::to_string(line));
}

TEST(GrammarParser, EveryLineBelongsToExactlyOneRuleAndTheSourceIsReproduced) {
  const std::string src = test::sample_source();
  const Grammar g = Grammar::from_source(src, "sample.cu");
  EXPECT_EQ(g.source(), src);
  int expected_line = 1;
  for (const auto& r : g.rules()) {
    EXPECT_EQ(r.first_line, expected_line);
    expected_line = r.last_line + 1;
  }
}

TEST(GrammarParser, RuleKindsOfTheSample) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  EXPECT_EQ(rule_at_line(g, 1).kind, RuleKind::Fixed);        // comment
  EXPECT_EQ(rule_at_line(g, 3).kind, RuleKind::Fixed);        // #define
  EXPECT_EQ(rule_at_line(g, 14).kind, RuleKind::Declaration); // int tid;
  EXPECT_EQ(rule_at_line(g, 16).kind, RuleKind::Statement);
  EXPECT_EQ(rule_at_line(g, 17).kind, RuleKind::If);
  EXPECT_EQ(rule_at_line(g, 21).kind, RuleKind::Pragma);
  EXPECT_EQ(rule_at_line(g, 22).kind, RuleKind::For);
  EXPECT_EQ(rule_at_line(g, 26).kind, RuleKind::If);          // } else if (...) {
  EXPECT_EQ(rule_at_line(g, 36).kind, RuleKind::Fixed);       // else
  EXPECT_EQ(rule_at_line(g, 39).kind, RuleKind::Fixed);       // closing brace
  EXPECT_EQ(g.rule_name(index_at_line(g, 16)), "<_sample.cu_16>");
  EXPECT_EQ(g.sub_name(index_at_line(g, 17)), "<IF_sample.cu_17>");
  EXPECT_EQ(rule_at_line(g, 17).sub_text(), "(tid >= n)");
  EXPECT_EQ(rule_at_line(g, 14).sub_text(), "int");
}

// `unsigned char g = ...;` declares g: a line edit that deletes it, or
// replaces it by another line, would leave g undefined where it is read.
TEST(GrammarParser, EightBitIntegerLocalsAreDeclarations) {
  for (const char* line : {"unsigned char g = (unsigned char)(v[0]);", "signed char g = 1;", "char g = 1;",
                           "unsigned short g = 2;"}) {
    const Grammar g = Grammar::from_source(
        std::string("__global__ void k(const float* v, float* o) {\n  ") + line + "\n  o[0] = g;\n}\n", "k.cu");
    EXPECT_EQ(rule_at_line(g, 2).kind, RuleKind::Declaration) << line;
  }
}

TEST(GrammarParser, MultiLineStatementIsOneRule) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const Rule& r = rule_at_line(g, 30);
  EXPECT_EQ(r.kind, RuleKind::Statement);
  EXPECT_EQ(r.first_line, 29);
  EXPECT_EQ(r.last_line, 30);
}

TEST(GrammarParser, BlockCommentOverTwoLinesIsOneFixedRule) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const Rule& r = rule_at_line(g, 7);
  EXPECT_EQ(r.first_line, 6);
  EXPECT_EQ(r.last_line, 7);
  EXPECT_EQ(r.kind, RuleKind::Fixed);
}

TEST(GrammarParser, BracelessBodiesAreMarked) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  EXPECT_TRUE(g.context(index_at_line(g, 33)).braceless_body);   // for body
  EXPECT_TRUE(g.context(index_at_line(g, 35)).braceless_body);   // if body
  EXPECT_TRUE(g.context(index_at_line(g, 37)).braceless_body);   // else body
  EXPECT_FALSE(g.context(index_at_line(g, 38)).braceless_body);
}

TEST(GrammarParser, IdentifiersSkipMembersKeywordsAndLiterals) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const auto& ids = g.context(index_at_line(g, 16)).identifiers;
  EXPECT_EQ(ids, (std::vector<std::string>{"tid", "blockIdx", "blockDim", "threadIdx"}));
  const auto& cond = g.context(index_at_line(g, 34)).identifiers;
  EXPECT_EQ(cond, std::vector<std::string>{"sum"});
}

TEST(GrammarParser, NestedScopesVisibleDeclarations) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  auto visible = [&](int line) {
    const auto v = g.visible_declarations(index_at_line(g, line));
    return std::string(" ") + [&] {
      std::string s;
      for (const auto& d : v) s += d + " ";
      return s;
    }();
  };
  // Inside the k-loop: k and idx are visible, with the parameters and globals.
  const std::string in_loop = visible(25);
  EXPECT_NE(in_loop.find(" k@22 "), std::string::npos);
  EXPECT_NE(in_loop.find(" idx@23 "), std::string::npos);
  EXPECT_NE(in_loop.find(" input@12 "), std::string::npos);
  EXPECT_NE(in_loop.find(" c_weights@4 "), std::string::npos);
  EXPECT_NE(in_loop.find(" RADIUS@3 "), std::string::npos);
  // After the loop neither is.
  const std::string after = visible(38);
  EXPECT_EQ(after.find(" k@"), std::string::npos);
  EXPECT_EQ(after.find(" idx@"), std::string::npos);
  EXPECT_NE(after.find(" sum@15 "), std::string::npos);
}

TEST(GrammarParser, KernelParametersAreKnown) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const auto& fns = g.parsed().functions;
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].name, "square");
  EXPECT_FALSE(fns[0].is_kernel);
  EXPECT_EQ(fns[1].name, "sample_kernel");
  EXPECT_TRUE(fns[1].is_kernel);
  ASSERT_EQ(fns[1].params.size(), 4u);
  EXPECT_TRUE(fns[1].params[0].pointer);
  EXPECT_TRUE(fns[1].params[0].const_pointee);
  EXPECT_FALSE(fns[1].params[0].written);
  EXPECT_TRUE(fns[1].params[1].written);  // output
  EXPECT_FALSE(fns[1].params[2].pointer);
  EXPECT_EQ(fns[1].params[3].base_type, "float");
}

TEST(GrammarParser, SharedConstantExternCAndWhile) {
  const std::string src =
      "extern \"C\" {\n"
      "__constant__ int c_n;\n"
      "__global__ void k(float* out) {\n"
      "  __shared__ float tile[32];\n"
      "  int i = threadIdx.x;\n"
      "  tile[i] = 0.f;\n"
      "  while (i < c_n) {\n"
      "    i += 32;\n"
      "    if (i > 100) break;\n"
      "  }\n"
      "  out[i] = tile[0];\n"
      "}\n"
      "}\n";
  const Grammar g = Grammar::from_source(src, "k.cu");
  EXPECT_EQ(g.source(), src);
  EXPECT_EQ(rule_at_line(g, 4).kind, RuleKind::Declaration);
  EXPECT_EQ(rule_at_line(g, 4).sub_kind, SubKind::None);  // __shared__ arrays keep their type
  EXPECT_EQ(rule_at_line(g, 6).kind, RuleKind::Statement);
  EXPECT_EQ(rule_at_line(g, 7).kind, RuleKind::Fixed);    // while header: fixed, so loops terminate
  EXPECT_EQ(rule_at_line(g, 9).kind, RuleKind::If);       // if with a brace-less body on its line
  EXPECT_EQ(rule_at_line(g, 13).kind, RuleKind::Fixed);
}

// `#define real float` makes a type as a typedef does: `real x = ...` is a
// declaration (fixed), never a statement a copy or delete could take.
// Function-like macros and expressions make no type.
TEST(GrammarParser, TypesMadeWithDefineDeclare) {
  const Grammar g = Grammar::from_source(
      "#define real float\n#define IDX unsigned int // an index\n#define N 16\n#define SQ(x) ((x)*(x))\n"
      "__global__ void k(real* o) {\n  real x = o[0];\n  IDX i = threadIdx.x;\n  o[i] = x + SQ(N);\n}\n",
      "def.cu");
  const auto kind_at = [&](int line) {
    for (std::size_t r = 0; r < g.rules().size(); ++r)
      if (g.rule(r).first_line == line) return g.rule(r).kind;
    return RuleKind::Fixed;
  };
  EXPECT_EQ(kind_at(6), RuleKind::Declaration);
  EXPECT_EQ(kind_at(7), RuleKind::Declaration);
  EXPECT_EQ(kind_at(8), RuleKind::Statement);
}

// A header's type names (a pre-included define.c, a project header): macros
// whose body is a type, typedefs (several names after one struct), `using`,
// struct/class/union/enum names; not a function-like macro, an expression
// macro, or a name typedef'd inside a struct. With them the kernel's
// `fp x = ...` is a declaration; without, a statement.
TEST(GrammarParser, HeadersNameTheirTypes) {
  const auto names = header_type_names(
      "#define fp float\n#define N 16\n#define SQ(x) ((x)*(x))\n"
      "typedef struct { int a; } pair_t, *pair_p;\n"
      "typedef unsigned int uint_t;\n"
      "struct knode { int keys[4]; struct inner { int z; } in; };\n"
      "using real = double;\n"
      "int load(char* name);\n",
      "define.c");
  for (const char* t : {"fp", "pair_t", "pair_p", "uint_t", "knode", "real"}) EXPECT_TRUE(names.count(t)) << t;
  for (const char* t : {"N", "SQ", "load", "name", "keys"}) EXPECT_FALSE(names.count(t)) << t;
  EXPECT_TRUE(header_type_names("\"never closed", "bad.h").empty());

  const std::string kernel = "__global__ void k(fp* o) {\n  fp x = o[0];\n  o[0] = x;\n}\n";
  const Grammar with = Grammar::from_source(kernel, "k.cu", names);
  const Grammar without = Grammar::from_source(kernel, "k.cu");
  EXPECT_EQ(rule_at_line(with, 2).kind, RuleKind::Declaration);
  EXPECT_NE(rule_at_line(without, 2).kind, RuleKind::Declaration);
}

// What NVRTC gets of a project header: host functions, host declarations
// and host-only classes blank (line count kept); device code, plain data
// structs, macros and device classes as they are; file-scope constants
// folded as nvcc folds them (constexpr). A header gi cannot parse goes as it is.
TEST(GrammarParser, HeaderDeviceViewSetsHostCodeAside) {
  const std::string header =
      "#include <vector>\n"                                                     // 1
      "#define CTMIN(a, b) ((a) < (b) ? (a) : (b))\n"                           // 2
      "namespace dw {\n"                                                        // 3
      "const float a = 1.5f;\n"                                                 // 4
      "const float b = -a; // undo\n"                                           // 5
      "extern const float e;\n"                                                 // 6
      "struct Pair { float x, y; };\n"                                          // 7
      "struct Add {\n  float s;\n  __device__ Add(float s) : s(s) {}\n};\n"  // 8-11
      "class Timer {\n  std::vector<float> times;\n public:\n"                // 12-14
      "  void add(float t) { times.push_back(t); }\n};\n"                      // 15-16
      "template <typename T> void copy(T* d, const T* s) { d[0] = s[0]; }\n"    // 17
      "int load(const char* name, std::vector<Pair>& out);\n"                   // 18
      "__device__ inline float twice(float x) { return 2.f * x; }\n"            // 19
      "}\n";                                                                    // 20
  const std::string view = header_device_view(header, "common.h", {});
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; at < view.size(); at = end + 1) {
    end = view.find('\n', at);
    lines.push_back(view.substr(at, end - at));
  }
  ASSERT_EQ(lines.size(), 20u);
  EXPECT_EQ(lines[1], "#define CTMIN(a, b) ((a) < (b) ? (a) : (b))");
  EXPECT_EQ(lines[3], "constexpr float a = 1.5f;");
  EXPECT_EQ(lines[4], "constexpr float b = -a; // undo");
  EXPECT_EQ(lines[5], "extern const float e;");
  EXPECT_EQ(lines[6], "struct Pair { float x, y; };");
  EXPECT_EQ(lines[9], "  __device__ Add(float s) : s(s) {}");
  for (int l = 12; l <= 18; ++l) EXPECT_EQ(lines[l - 1], "") << "line " << l;
  EXPECT_EQ(lines[18], "__device__ inline float twice(float x) { return 2.f * x; }");
  EXPECT_EQ(lines[19], "}");
  const std::string broken = "struct S {\n  int a;\n";
  EXPECT_EQ(header_device_view(broken, "broken.h", {}), broken);
}

// A goto target is a line of its own: the statement after it may stand past
// an #endif (Rodinia's mummergpu), and the label is never edited.
TEST(GrammarParser, GotoLabelsStandAlone) {
  const Grammar g = Grammar::from_source(
      "__global__ void k(int* o) {\n"  // 1
      "  int x = o[0];\n"              // 2
      "#if !REORDER\n"                 // 3
      "  goto DONE;\n"                 // 4
      "  x *= 2;\n"                    // 5
      "  DONE:\n"                      // 6
      "#endif\n"                       // 7
      "  o[0] = x;\n"                  // 8
      "}\n",
      "label.cu");
  EXPECT_EQ(rule_at_line(g, 6).kind, RuleKind::Fixed);
  EXPECT_EQ(rule_at_line(g, 6).last_line, 6);
  EXPECT_EQ(rule_at_line(g, 8).kind, RuleKind::Statement);
}

// Modern CUDA C++ from public code: templates (class or typename,
// specialisations, explicit instantiations), nested and anonymous
// namespaces, if constexpr, operator overloads. Each parses, the kernel's
// lines stay editable, and template type parameters make declarations.
TEST(GrammarParser, ModernCppParses) {
  const std::string src =
      "namespace reg::cuda {\n"                                                  // 1
      "namespace {\n"                                                            // 2
      "template <class T>\n"                                                     // 3
      "__device__ T square(T x) { return x * x; }\n"                             // 4
      "}  // namespace\n"                                                        // 5
      "struct V { float x, y; __device__ V operator+(const V& o) const { return {x + o.x, y + o.y}; } };\n"  // 6
      "__device__ inline V operator*(float s, const V& v) { return {s * v.x, s * v.y}; }\n"            // 7
      "template <typename T, int N>\n"                                           // 8
      "__global__ void scale(T* out, const T* in, int n) {\n"                    // 9
      "  T v = in[0];\n"                                                         // 10
      "  if constexpr (N > 1) {\n"                                               // 11
      "    v = square(v) * N;\n"                                                 // 12
      "  }\n"                                                                    // 13
      "  out[0] = v;\n"                                                          // 14
      "}\n"                                                                      // 15
      "template __global__ void scale<float, 2>(float*, const float*, int);\n"   // 16
      "template <> __device__ float square<float>(float x);\n"                   // 17
      "inline namespace v1 { __device__ int one() { return 1; } }\n"             // 18
      "}  // namespace reg::cuda\n";                                             // 19
  const Grammar g = Grammar::from_source(src, "modern.cu");
  const auto kind_at = [&](int line) {
    for (std::size_t r = 0; r < g.rules().size(); ++r)
      if (g.rule(r).first_line == line) return g.rule(r).kind;
    return RuleKind::Fixed;
  };
  EXPECT_EQ(kind_at(10), RuleKind::Declaration);  // T is a type
  EXPECT_EQ(kind_at(11), RuleKind::If);
  EXPECT_EQ(kind_at(12), RuleKind::Statement);
  EXPECT_EQ(kind_at(14), RuleKind::Statement);
  bool kernel = false;
  for (const auto& f : g.parsed().functions) kernel = kernel || (f.is_kernel && f.name == "scale" && f.params.size() == 3);
  EXPECT_TRUE(kernel);
  // The operator and the next line are two rules, not one.
  for (std::size_t r = 0; r < g.rules().size(); ++r)
    if (g.rule(r).first_line == 7) {
      EXPECT_EQ(g.rule(r).last_line, 7);
    }
  EXPECT_EQ(g.source(), src);
}

// Real code hides __global__ in a macro: `#define KERNEL __global__ void`.
TEST(GrammarParser, AMacroThatHoldsGlobalMakesAKernel) {
  const Grammar g = Grammar::from_source(
      "#define KERNEL __global__ void\n#define GLOBALS __global__\n#define NOT_GLOBAL__ 1\n"
      "KERNEL scale(float* o) {\n  o[0] *= 2.f;\n}\nGLOBALS void add(float* o) {\n  o[0] += 1.f;\n}\n"
      "__device__ void helper(float* o) {\n  o[0] = 0.f;\n}\n",
      "mac.cu");
  std::map<std::string, bool> kernel;
  for (const auto& f : g.parsed().functions) kernel[f.name] = f.is_kernel;
  EXPECT_TRUE(kernel.at("scale"));
  EXPECT_TRUE(kernel.at("add"));
  EXPECT_FALSE(kernel.at("helper"));
}

// Host code is never evolved: a host function is one fixed rule, whatever
// its statements (real files call macros as statements without a ';').
// Specialisations of function templates and __device__ hidden in a macro
// are device code whose lines stay editable.
TEST(GrammarParser, HostFunctionsAreFixedAndSpecialisationsParse) {
  const Grammar g = Grammar::from_source(
      "#define DEVICE __device__ inline\n"                                          // 1
      "template<class T> __device__ float Multiplier() { return 1.0f; }\n"         // 2
      "template<> __device__ float Multiplier<unsigned char>() { return 255.0f; }\n"// 3
      "DEVICE float twice(float x) {\n"                                             // 4
      "  return 2.f * x;\n"                                                         // 5
      "}\n"                                                                         // 6
      "__global__ void k(float* o) {\n"                                             // 7
      "  o[0] = twice(Multiplier<unsigned char>());\n"                              // 8
      "}\n"                                                                         // 9
      "void launch(float* o) {\n"                                                   // 10
      "  k<<<1, 1>>>(o);\n"                                                         // 11
      "  CHECK_ERROR(\"k\")\n"                                                    // 12
      "}\n",                                                                        // 13
      "host.cu");
  std::map<int, RuleKind> kind;
  std::map<int, int> last;
  for (std::size_t r = 0; r < g.rules().size(); ++r) {
    kind[g.rule(r).first_line] = g.rule(r).kind;
    last[g.rule(r).first_line] = g.rule(r).last_line;
  }
  EXPECT_EQ(last.at(3), 3);  // the specialisation is its own rule
  EXPECT_EQ(kind.at(5), RuleKind::Statement);
  EXPECT_EQ(kind.at(8), RuleKind::Statement);
  EXPECT_EQ(kind.at(10), RuleKind::Fixed);
  EXPECT_EQ(last.at(10), 13);
  std::vector<std::string> functions;
  for (const auto& f : g.parsed().functions) functions.push_back(f.name);
  EXPECT_EQ(functions, (std::vector<std::string>{"Multiplier", "Multiplier", "twice", "k"}));
}

// What the parser cannot take is named where it starts.
TEST(GrammarParser, AnUnfinishedDefinitionIsNamed) {
  try {
    Grammar::from_source("struct S { int a; }\n__global__ void k(int* o) { o[0] = 1; }\n", "s.cu");
    FAIL() << "accepted a struct without its ';'";
  } catch (const SourceError& e) {
    EXPECT_EQ(e.line(), 1) << e.what();
    EXPECT_NE(std::string(e.what()).find("struct definition"), std::string::npos) << e.what();
  }
}

TEST(GrammarParser, SeedsParse) {
  for (const auto& dir : test::seed_dirs()) {
    SCOPED_TRACE(dir.string());
    const Seed seed = load_seed(dir);
    EXPECT_EQ(seed.grammar.source(), seed.source);
    int statements = 0;
    for (const auto& r : seed.grammar.rules()) statements += r.kind == RuleKind::Statement;
    // A seed is a real kernel with editable statements (the point kernels
    // of the library have a handful, the B-spline ones dozens).
    EXPECT_GE(statements, 3);
  }
}

}  // namespace
}  // namespace gi::grammar
