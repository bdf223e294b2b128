#include "gi/seed/spec_scaffold.hpp"

#include <stdexcept>

#include "fitness/workload/kernel_spec.hpp"
#include "grammar/grammar.hpp"

namespace gi {

namespace {

using json = nlohmann::ordered_json;

std::string fill(const std::string& what) { return std::string(fitness::kFillMarker) + ": " + what; }

// The spec's name for a kernel parameter's type; empty when gi cannot
// generate or check it.
std::string spec_type(const std::string& base) {
  for (const char* t : {"float", "double", "int", "unsigned", "float2", "float4", "int4"})
    if (fitness::type_matches(t, base)) return t;
  return "";
}

bool is_float_type(const std::string& t) { return t == "float" || t == "double" || t == "float2" || t == "float4"; }

json input_distribution(const grammar::Param& p, const std::string& type) {
  if (is_float_type(type)) return {{"uniform", json::array({-1, 1})}};
  return {{"uniform", json::array({0, fill("largest value of '" + p.name +
                                              "' (an index into another buffer? its element count minus 1)")})}};
}

}  // namespace

SpecScaffold scaffold_spec(std::string_view source, const std::string& file_name,
                           const std::optional<std::string>& entry, const std::string& family) {
  const grammar::Grammar g = grammar::Grammar::from_source(source, file_name);
  std::vector<const grammar::Function*> kernels;
  for (const auto& f : g.parsed().functions)
    if (f.is_kernel) kernels.push_back(&f);
  std::string names;
  for (const auto* k : kernels) names += (names.empty() ? "" : ", ") + k->name;
  if (kernels.empty()) throw std::runtime_error(file_name + ": no __global__ kernel");
  const grammar::Function* kernel = nullptr;
  if (entry) {
    for (const auto* k : kernels)
      if (k->name == *entry) kernel = k;
    if (kernel == nullptr) throw std::runtime_error(file_name + ": no __global__ kernel '" + *entry + "' (kernels: " + names + ")");
  } else if (kernels.size() > 1) {
    throw std::runtime_error(file_name + ": " + std::to_string(kernels.size()) + " kernels (" + names +
                             "): name the one to evolve with --entry (each can be a seed of its own)");
  } else {
    kernel = kernels.front();
  }

  SpecScaffold s;
  s.entry = kernel->name;
  if (kernels.size() > 1)
    s.notes.push_back("the other kernels of the file (" + names + ") stay as they are; each can be a seed of its own");
  json parameters = json::array(), inputs = json::object(), variables = json::object();
  bool any_float_output = false;
  for (const grammar::Param& p : kernel->params) {
    std::string type = spec_type(p.base_type);
    if (type.empty()) {
      s.notes.push_back("parameter '" + p.name + "' has type '" + p.base_type +
                        "', which gi cannot generate or check (int, unsigned, float, double, float2, float4, int4)");
      type = fill("a type gi supports instead of '" + p.base_type + "'");
    }
    json j = {{"name", p.name}, {"type", type}};
    if (!p.pointer) {
      j["role"] = "scalar";
      j["value"] = p.name;  // the workload variable of the same name
      variables[p.name] = fill("value of '" + p.name + "' on this workload");
    } else {
      // Never written through (the grammar follows the pointer and its
      // copies): an input, even without const.
      const bool input = p.const_pointee || !p.written;
      j["role"] = input ? "in" : "out";
      if (input && !p.const_pointee)
        s.notes.push_back("'" + p.name + "' is not const but the kernel never writes through it: an input");
      j["count"] = fill("elements of '" + p.name + "', an expression over the workload's variables (e.g. n)");
      if (input) inputs[p.name] = input_distribution(p, type);
      any_float_output = any_float_output || (!input && is_float_type(type));
      if (!input)
        s.notes.push_back("'" + p.name + "' is written, so it is an output; make it \"inout\" (and give it an "
                          "input distribution) if the kernel also reads what was there");
    }
    parameters.push_back(std::move(j));
  }
  const auto workload = [&](const char* size_note) {
    json v = variables;
    for (auto& [name, value] : v.items()) value = fill(std::string("value of '") + name + "' " + size_note);
    v["inputs"] = inputs;
    return v;
  };
  // Held-out data the search never sees, of sizes unlike the training's
  // (the spec loader asks for five).
  json validate = json::array();
  for (int i = 1; i <= 5; ++i)
    validate.push_back({{"generator", "random"}, {"seed", 1000 + i},
                        {"variables", workload(("on held-out workload " + std::to_string(i) +
                                                " (never seen by the search; vary the sizes; the five together "
                                                "need 16 M output or input values)").c_str())}});
  s.spec = {
      {"entry", s.entry},
      {"family", family},
      {"work_item", fill("what one thread computes, e.g. one output element")},
      {"reference", "seed"},
      {"parameters", parameters},
      {"launch", {{"block", json::array({"B", 1, 1})},
                  {"grid", json::array({fill("blocks in x over the workload's variables and B, e.g. ceil_div(n, B)"), 1, 1})}}},
      {"tolerance", {{"abs", any_float_output ? 1e-5 : 0.0}, {"rel", any_float_output ? 1e-5 : 0.0}}},
      {"tolerance_note", "gi init's default: float outputs may differ from the seed's by 1e-5 absolute plus 1e-5 "
                         "relative (an edit may reorder float operations); the seed's own run-to-run spread is added "
                         "to the absolute part on every workload"},
      {"min_bytes", fill("bytes the kernel must read and write at least, over the workload's variables (e.g. 8 * n), "
                         "for the memory-floor report")},
      {"tunables", {{"block_sizes", json::array({64, 128, 256, 512, 1024})},
                    {"default_block_size", 256},
                    {"options", json::array({json::array(), json::array({"--use_fast_math"})})}}},
      {"workloads",
       {{"train", {{"generator", "random"}, {"variables", workload("on the timed workload (large: it ranks variants)")}}},
        {"train_checks", json::array({{{"generator", "random"},
                                       {"variables", workload("on a small workload (odd sizes reach the edges)")},
                                       {"purpose", fill("what this workload drives that the timed one does not, "
                                                        "e.g. sizes that are no multiple of the block")}}})},
        {"validate", validate}}}};
  return s;
}

}  // namespace gi
