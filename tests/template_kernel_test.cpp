// Template kernels (grammar/template_instance.hpp): gi init drafts one
// instance, the one --entry names or the file's one explicit instantiation,
// reading the kernel with its template parameters written out; the spec's
// entry names the instance, and the CPU emulator runs it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <filesystem>

#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/emulation/emulated_module.hpp"
#include "analysis/remap_sites.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/spec_scaffold.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/grammar.hpp"
#include "grammar/template_instance.hpp"
#include "tests/plan_helpers.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

using json = nlohmann::json;

// A sum over R consecutive elements of `in` per output: the instance's value
// parameter R sizes `in`.
const std::string kBox =
    "// box sums\n"
    "template <typename T, int R = 2>\n"
    "__global__ void box(T* out, const T* in, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) {\n"
    "        T s = 0;\n"
    "        for (int k = 0; k < R; ++k) s += in[R * i + k];\n"
    "        out[i] = s;\n"
    "    }\n"
    "}\n";

const std::string kScale =
    "template <class T>\n"
    "__global__ void scale(T* y, const T* x, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = x[i] + x[i];\n"
    "}\n"
    "template __global__ void scale<unsigned int>(unsigned int*, const unsigned int*, int);\n";

const grammar::Function& only_kernel(const grammar::Grammar& g) {
  for (const auto& f : g.parsed().functions)
    if (f.is_kernel) return f;
  throw std::runtime_error("no kernel");
}

TEST(TemplateInstance, AnEntryNamesTheTemplateAndItsArguments) {
  const auto i = grammar::parse_template_instance("box< double ,  3 >");
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(i->name, "box");
  EXPECT_EQ(i->args, (std::vector<std::string>{"double", "3"}));
  EXPECT_EQ(i->entry(), "box<double, 3>");
  const auto nested = grammar::parse_template_instance("f<pair<int, float>, 4>");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->args, (std::vector<std::string>{"pair<int, float>", "4"}));
  EXPECT_FALSE(grammar::parse_template_instance("box").has_value());
  EXPECT_THROW(grammar::parse_template_instance("box<float"), std::runtime_error);
  EXPECT_THROW(grammar::parse_template_instance("box<float,>"), std::runtime_error);
  EXPECT_THROW(grammar::parse_template_instance("box<float>x"), std::runtime_error);
}

// Every look-up of the entry's function by name (remap's sites, the call
// graph, the texture port) finds the template under its instance's name.
TEST(TemplateInstance, AnInstancesFunctionIsItsTemplates) {
  EXPECT_EQ(grammar::entry_function_name("reg::cuda::scale<float, 2>"), "scale");
  EXPECT_EQ(grammar::entry_function_name("box"), "box");
  const grammar::Grammar g = grammar::Grammar::from_source(kBox, "k.cu");
  for (const std::string& why : analysis::find_remap_sites(g.parsed(), "box<double, 3>").refusals)
    EXPECT_EQ(why.find("no __global__ kernel named"), std::string::npos) << why;
}

TEST(TemplateInstance, ParametersDefaultsAndExplicitInstantiationsAreRead) {
  const grammar::Grammar box = grammar::Grammar::from_source(kBox, "k.cu");
  const auto params = grammar::template_parameters(box.parsed(), only_kernel(box));
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].name, "T");
  EXPECT_TRUE(params[0].type);
  EXPECT_EQ(params[1].name, "R");
  EXPECT_FALSE(params[1].type);
  EXPECT_EQ(params[1].default_value, "2");
  EXPECT_TRUE(grammar::explicit_instances(box.parsed(), "box").empty());

  const grammar::Grammar scale = grammar::Grammar::from_source(kScale, "k.cu");
  const auto made = grammar::explicit_instances(scale.parsed(), "scale");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].instance.entry(), "scale<unsigned int>");
  EXPECT_EQ(made[0].line, 6);
}

TEST(TemplateInstance, TheInstancesTextKeepsItsLinesAndWritesOutTheParameters) {
  const grammar::Grammar g = grammar::Grammar::from_source(kBox, "k.cu");
  const std::string text =
      grammar::instantiated_source(kBox, g.parsed(), only_kernel(g), *grammar::parse_template_instance("box<double>"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), std::count(kBox.begin(), kBox.end(), '\n'));
  EXPECT_EQ(text.find("template"), std::string::npos) << text;
  EXPECT_NE(text.find("__global__ void box(double* out, const double* in, int n)"), std::string::npos) << text;
  EXPECT_NE(text.find("in[2 * i + k]"), std::string::npos) << text;  // R's default
  EXPECT_NE(text.find("// box sums"), std::string::npos);
  EXPECT_THROW(grammar::instantiated_source(kBox, g.parsed(), only_kernel(g),
                                            *grammar::parse_template_instance("box<double, 3, 4>")),
               std::runtime_error);
}

TEST(TemplateInstance, GiInitDraftsTheInstanceTheEntryNames) {
  const SpecScaffold s = scaffold_spec(kBox, "k.cu", std::string("box<double, 3>"), "user",
                                       parse_init_sizes({"n=100000"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(s.entry, "box<double, 3>");
  EXPECT_EQ(spec["entry"], "box<double, 3>");
  EXPECT_EQ(spec["parameters"][0]["type"], "double");
  EXPECT_EQ(spec["parameters"][1]["type"], "double");
  EXPECT_EQ(spec["parameters"][1]["count"], "3 * n");
  EXPECT_EQ(spec["min_bytes"], "32 * n");
  ASSERT_FALSE(s.inferred.empty());
  EXPECT_NE(s.inferred.front().find("entry: box<double, 3> (--entry"), std::string::npos) << s.inferred.front();
  // The spec loads against the template's own text: NVRTC instantiates the entry.
  EXPECT_NO_THROW(fitness::parse_kernel_spec(spec, "spec.json", kBox, "k.cu", {.registry = false}));
}

TEST(TemplateInstance, GiInitTakesTheFilesOneExplicitInstantiation) {
  const SpecScaffold s = scaffold_spec(kScale, "k.cu", std::nullopt, "user", parse_init_sizes({"n=5000"}, {}));
  const json spec = json::parse(s.spec.dump());
  EXPECT_TRUE(fitness::fields_to_fill(spec).empty()) << spec.dump(2);
  EXPECT_EQ(spec["entry"], "scale<unsigned int>");
  EXPECT_EQ(spec["parameters"][0]["type"], "unsigned");
  EXPECT_NE(s.inferred.front().find("explicit instantiation, line 6"), std::string::npos) << s.inferred.front();
}

TEST(TemplateInstance, GiInitSaysWhichInstanceToName) {
  const auto message = [](const std::string& source, const std::optional<std::string>& entry) {
    try {
      scaffold_spec(source, "k.cu", entry, "user", parse_init_sizes({"n=5000"}, {}));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(kBox, std::nullopt).find("instantiates it nowhere: name the instance to evolve, e.g. --entry "
                                             "'box<float, 4>'"),
            std::string::npos)
      << message(kBox, std::nullopt);
  const std::string twice = kScale + "template __global__ void scale<float>(float*, const float*, int);\n";
  EXPECT_NE(message(twice, std::nullopt).find("instantiated 2 times (scale<unsigned int> (line 6), scale<float> (line 7))"),
            std::string::npos)
      << message(twice, std::nullopt);
  const std::string plain = "__global__ void k(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = 0; }\n";
  EXPECT_NE(message(plain, std::string("k<float>")).find("'k' is no template"), std::string::npos);
}

// gi init --instantiate: the instance as a kernel of its own, which the
// edit families read with its types and numbers. A record of R floats per
// thread is a stage site once R is 4, and none while it is a template's R.
TEST(TemplateInstance, WrittenOutTheFamiliesSeeItsTypesAndNumbers) {
  const std::string records =
      "template <typename T, int R>\n"
      "__global__ void rows(const T* in, T* out, int n) {\n"
      "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    if (i < n) {\n"
      "        out[R * i + 0] = in[R * i + 1];\n"
      "        out[R * i + 1] = in[R * i + 2];\n"
      "        out[R * i + 2] = in[R * i + 3];\n"
      "        out[R * i + 3] = in[R * i + 0];\n"
      "    }\n"
      "}\n"
      "template __global__ void rows<float, 4>(const float*, float*, int);\n";
  const std::string out = grammar::written_out_instance(records, "k.cu", *grammar::parse_template_instance("rows<float, 4>"));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(records.begin(), records.end(), '\n'));
  EXPECT_EQ(out.find("template"), std::string::npos) << out;  // the header and the explicit instantiation blanked
  EXPECT_NE(out.find("void rows(const float* in, float* out, int n)"), std::string::npos) << out;
  EXPECT_NE(out.find("out[4 * i + 3] = in[4 * i + 0];"), std::string::npos) << out;
  const auto stage_sites = [](const std::string& source) {
    return grammar::edit_family("stage").candidates(grammar::Grammar::from_source(source, "k.cu"), grammar::EditContext{}).size();
  };
  EXPECT_EQ(stage_sites(records), 0u);
  EXPECT_GT(stage_sites(out), 0u);
  EXPECT_THROW(grammar::written_out_instance(kBox, "k.cu", *grammar::parse_template_instance("nothing<float>")),
               std::runtime_error);
}

// The command as a user runs it: kernel.cu is the template, or with
// --instantiate the instance written out; the spec's entry names each.
TEST(TemplateInstance, GiInitWritesTheTemplateOrWithInstantiateTheInstance) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gi-template-init-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "box.cu") << kBox;
  const auto init = [&](const std::string& out, const std::string& more) {
    return test::run_gi("init \"" + (dir / "box.cu").string() + "\" --out \"" + (dir / out).string() +
                        "\" --size n=5000 --entry 'box<double, 3>'" + more);
  };
  const auto as_template = init("t", "");
  ASSERT_EQ(as_template.exit_code, 0) << as_template.output;
  EXPECT_EQ(read_text_file(dir / "t/kernel.cu"), kBox);
  EXPECT_EQ(json::parse(read_text_file(dir / "t/spec.json"))["entry"], "box<double, 3>");
  const auto written_out = init("i", " --instantiate");
  ASSERT_EQ(written_out.exit_code, 0) << written_out.output;
  EXPECT_NE(written_out.output.find("written out as the kernel 'box'"), std::string::npos) << written_out.output;
  const std::string kernel = read_text_file(dir / "i/kernel.cu");
  EXPECT_NE(kernel.find("void box(double* out, const double* in, int n)"), std::string::npos) << kernel;
  EXPECT_NE(kernel.find("in[3 * i + k]"), std::string::npos) << kernel;
  EXPECT_EQ(json::parse(read_text_file(dir / "i/spec.json"))["entry"], "box");
  std::ofstream(dir / "plain.cu") << "__global__ void k(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = 0; }\n";
  const auto plain = test::run_gi("init \"" + (dir / "plain.cu").string() + "\" --out \"" + (dir / "p").string() +
                                  "\" --size n=5000 --instantiate");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_NE(plain.output.find("--instantiate: 'k' is no template kernel"), std::string::npos) << plain.output;
  std::filesystem::remove_all(dir);
}

TEST(TemplateInstance, TheEmulatorRunsAnInstance) {
  if (fitness::emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  fitness::EmulatorOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
  const fitness::CpuEmulator emulator(o);
  const fitness::EmulatedKernel k = emulator.load(kBox, "box<double, 3>", "k.cu");
  ASSERT_TRUE(k.ok()) << k.error;
  std::vector<double> in(30);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i);
  fitness::LaunchPlan p;
  p.entry = "box<double, 3>";
  p.buffers = {fitness::BufferArg{"out", fitness::ParamRole::Out, fitness::ElementType::F64, 10, {}},
               fitness::BufferArg{"in", fitness::ParamRole::In, fitness::ElementType::F64, in.size(), test::bytes_of(in)}};
  p.scalars = {test::scalar<int>("n", 10)};
  p.params = {{true, 0}, {true, 1}, {false, 0}};
  p.grid = {1, 1, 1};
  p.block = {32, 1, 1};
  std::vector<double> want;
  for (int i = 0; i < 10; ++i) want.push_back(3.0 * (3 * i + 1));  // (3i) + (3i+1) + (3i+2)
  fitness::ExpectedOutput e;
  e.buffer = "out";
  e.values = want;
  const fitness::CheckReport r = emulator.run_checked(k, p, {e}, fitness::Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
  // Anything but a name or an instance is refused before it reaches the emulator's C++.
  EXPECT_FALSE(emulator.load(kBox, "box<double>); int x(", "k.cu").ok());
}

}  // namespace
}  // namespace gi
