#include "gi/seed/spec_scaffold.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/aggregate_sites.hpp"
#include "analysis/parameter_use.hpp"
#include "analysis/unset_components.hpp"
#include "fitness/workload/expression.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/launch_plan.hpp"
#include "gi/publish/validation.hpp"
#include "gi/seed/block_size_choice.hpp"
#include "gi/seed/init_workloads.hpp"
#include "gi/seed/mode_scalars.hpp"
#include "gi/seed/input_distributions.hpp"
#include "gi/seed/record_params.hpp"
#include "gi/seed/tolerance_draft.hpp"
#include "grammar/call_graph.hpp"
#include "grammar/constant_variables.hpp"
#include "grammar/grammar.hpp"
#include "grammar/template_instance.hpp"
#include "grammar/type_aliases.hpp"

namespace gi {

namespace {

// The block sizes a drafted spec tunes (tunables.block_sizes): an exact
// launch's thread count on x is a multiple of the largest, so of each.
const std::vector<int> kBlockSizes = {64, 128, 256, 512, 1024};
const double kLargestBlock = 1024;

using json = nlohmann::ordered_json;

std::string fill(const std::string& what) { return std::string(fitness::kFillMarker) + ": " + what; }

// The spec's name for a kernel parameter's type; empty when gi cannot
// generate or check it.
std::string spec_type(const std::string& base) {
  for (const char* t : {"float", "double", "int", "unsigned", "bool", "int64", "uint64", "uint8", "int8", "uint16", "int16",
                        "float2", "float3", "float4", "int2", "int3", "int4", "uint2", "uint3", "uint4", "uchar4", "long2", "ulong2"})
    if (fitness::type_matches(t, base)) return t;
  return "";
}

// Whether a buffer or an array __constant__ may hold elements of the spec
// type (bool and the 64-bit integers are for scalars only).
bool buffer_type(const std::string& t) {
  const auto e = fitness::element_type_from_name(t);
  return e && fitness::element_is_buffer_type(*e);
}

bool is_float_type(const std::string& t) {
  return t == "float" || t == "double" || t == "float2" || t == "float3" || t == "float4";
}

// Bytes and values per element of a spec type, as the fitness runtime and
// validation count them; a type gi cannot generate (FILL) counts as one
// 4-byte value.
int type_bytes(const std::string& t) {
  const auto e = fitness::element_type_from_name(t);
  return e ? static_cast<int>(fitness::element_bytes(*e)) : 4;
}

int type_components(const std::string& t) {
  const auto e = fitness::element_type_from_name(t);
  return e ? static_cast<int>(fitness::element_components(*e)) : 1;
}

// The workload variables of a scalar of spec type `type`: its name, or for a
// vector (int3 dim) one per component (dim_x, dim_y, dim_z).
std::vector<std::string> variable_names(const std::string& name, const std::string& type) {
  const int n = type_components(type);
  if (n == 1) return {name};
  std::vector<std::string> out;
  for (int c = 0; c < n; ++c) out.push_back(analysis::vector_component_name(name, "xyzw"[c]));
  return out;
}

// `text` (a spec expression) with each tied size's name replaced by its
// expression in parentheses (--size voxelNumber=dims_x*dims_y*dims_z).
std::string untied(const std::string& text, const std::map<std::string, std::string>& tied) {
  std::string out = text;
  for (const auto& [name, expression] : tied)
    out = std::regex_replace(out, std::regex("\\b" + name + "\\b"), "(" + expression + ")");
  return out;
}

// The names of `expression` where it is a product of names alone
// ("img_m * img_n"); none where it is anything else.
std::vector<std::string> product_names(const std::string& expression) {
  static const std::regex product(R"(\s*[A-Za-z_]\w*\s*(\*\s*[A-Za-z_]\w*\s*)*)"), name(R"([A-Za-z_]\w*)");
  std::vector<std::string> out;
  if (!std::regex_match(expression, product)) return out;
  for (std::sregex_iterator i(expression.begin(), expression.end(), name), e; i != e; ++i) out.push_back(i->str());
  return out;
}

// Every expression field of a drafted spec untied (a FILL mark is left as it is).
void untie_spec(json& spec, const std::map<std::string, std::string>& tied) {
  if (tied.empty()) return;
  const std::function<void(json&)> fix = [&](json& field) {
    if (field.is_string() && field.get<std::string>().rfind(fitness::kFillMarker, 0) != 0)
      field = untied(field.get<std::string>(), tied);
    if (field.is_array())
      for (json& f : field) fix(f);
  };
  for (const char* list : {"parameters", "constants"})
    if (spec.contains(list))
      for (json& p : spec[list])
        for (const char* key : {"count", "value"})
          if (p.contains(key)) fix(p[key]);
  for (const char* key : {"grid", "shared_bytes"})
    if (spec["launch"].contains(key)) fix(spec["launch"][key]);
  fix(spec["min_bytes"]);
}

// A scalar's "value" in the spec: its variable, or the array of its components'.
json value_of(const std::string& name, const std::string& type) {
  const std::vector<std::string> names = variable_names(name, type);
  if (names.size() == 1) return names[0];
  return json(names);
}

// The file's __constant__ variables that `entry` or a function it calls names.
std::vector<grammar::ConstantVariable> constants_read(const grammar::ParsedKernel& k, const std::string& entry) {
  const std::set<std::string> named = grammar::names_used_by(k, grammar::functions_reachable_from(k, entry));
  std::vector<grammar::ConstantVariable> out;
  for (grammar::ConstantVariable& c : grammar::constant_variables(k))
    if (named.count(c.name)) out.push_back(std::move(c));
  return out;
}

// An array __constant__ the kernel reads (`__constant__ float c_Kernel[KERNEL_LENGTH];`):
// its element count from the declaration, macros of the default build
// being their values, and its elements drawn like an input's.
json array_constant(const grammar::ParsedKernel& k, const analysis::IncludedHeaders& headers, std::size_t name_token,
                    const grammar::ConstantVariable& c, const InitSizes& given, SpecScaffold& s) {
  const std::string type = spec_type(c.type);
  json j = {{"name", c.name}, {"type", type}, {"count", 0}};
  const std::string where = "line " + std::to_string(c.line);
  if (!buffer_type(type)) {
    j["type"] = fill("an element type gi generates instead of '" + c.type + "' (" + where + ")");
    s.notes.push_back("the kernel reads the __constant__ " + c.type + " array '" + c.name + "' (" + where +
                      "), whose elements gi cannot generate");
  }
  fitness::Variables macros;
  for (const auto& [name, m] : analysis::file_symbols(k, headers, k.tokens[name_token].line).integer_macros)
    macros[name] = static_cast<double>(m.value);
  try {
    const double n = fitness::Expression::parse(c.length).evaluate(macros);
    if (n < 1 || n != std::floor(n)) throw std::runtime_error("not a count");
    j["count"] = json_number(n);
    s.inferred.push_back("constant '" + c.name + "': " + json_number(n).dump() + " " + type + " (" + where + ": [" +
                         c.length + "]), drawn like an input" + (given.like.count(c.name) ? " (--like)" : "") +
                         " and set before each launch");
  } catch (const std::exception&) {
    j["count"] = fill("elements of the __constant__ array '" + c.name + "' (" + where + ": [" + c.length +
                      "], which gi cannot evaluate)");
  }
  return j;
}

}  // namespace

namespace {

struct KernelChoice {
  const grammar::Function* kernel = nullptr;
  std::size_t kernels = 0;  // in the file
  std::string names;        // theirs, for messages
};

// The kernel `entry` names (a template's instance by its template's name),
// or the file's only one.
KernelChoice choose_kernel(const grammar::ParsedKernel& k, const std::string& file_name,
                           const std::optional<std::string>& entry) {
  KernelChoice c;
  std::vector<const grammar::Function*> kernels;
  for (const auto& f : k.functions)
    if (f.is_kernel) kernels.push_back(&f);
  for (const auto* f : kernels) c.names += (c.names.empty() ? "" : ", ") + f->name;
  c.kernels = kernels.size();
  if (kernels.empty()) throw std::runtime_error(file_name + ": no __global__ kernel");
  if (entry) {
    for (const auto* f : kernels)
      if (f->name == *entry) c.kernel = f;
    if (c.kernel == nullptr)
      throw std::runtime_error(file_name + ": no __global__ kernel '" + *entry + "' (kernels: " + c.names + ")");
  } else if (kernels.size() > 1) {
    throw std::runtime_error(file_name + ": " + std::to_string(kernels.size()) + " kernels (" + c.names +
                             "): name the one to evolve with --entry (each can be a seed of its own)");
  } else {
    c.kernel = kernels.front();
  }
  return c;
}

// The draft for `choice`'s kernel of `g`, the grammar of `source`.
SpecScaffold scaffold_kernel(std::string_view source, const grammar::Grammar& g, const KernelChoice& choice,
                             const std::string& family, const InitSizes& given,
                             const analysis::IncludedHeaders& headers);

}  // namespace

// A template kernel is drafted as one instance: the one --entry names
// (`scale<float>`), else the file's one explicit instantiation. Its text with
// the template's parameters written out is what the analyses read; the
// seed's kernel.cu stays the template, and the spec's entry names the
// instance, which NVRTC instantiates.
SpecScaffold scaffold_spec(std::string_view source, const std::string& file_name,
                           const std::optional<std::string>& entry, const std::string& family, const InitSizes& given,
                           const analysis::IncludedHeaders& headers) {
  std::optional<grammar::TemplateInstance> instance;
  if (entry) instance = grammar::parse_template_instance(*entry);
  const grammar::Grammar g = grammar::Grammar::from_source(source, file_name);
  const std::optional<std::string> name = instance ? std::optional<std::string>(instance->name) : entry;
  const KernelChoice choice = choose_kernel(g.parsed(), file_name, name);
  const grammar::Function& kernel = *choice.kernel;
  const std::vector<grammar::TemplateParameter> params = grammar::template_parameters(g.parsed(), kernel);
  if (params.empty()) {
    if (instance)
      throw std::runtime_error(file_name + ": '" + kernel.name + "' is no template: give --entry " + kernel.name);
    return scaffold_kernel(source, g, choice, family, given, headers);
  }
  std::string evidence = "--entry";
  if (!instance) {
    const std::vector<grammar::ExplicitInstance> made = grammar::explicit_instances(g.parsed(), kernel.name);
    std::string example = kernel.name + "<";
    for (std::size_t i = 0; i < params.size(); ++i)
      example += (i ? ", " : "") + std::string(params[i].type ? "float" : "4");
    example += ">";
    if (made.empty())
      throw std::runtime_error(file_name + ": '" + kernel.name + "' is a template, and the file instantiates it "
                               "nowhere: name the instance to evolve, e.g. --entry '" + example + "'");
    if (made.size() > 1) {
      std::string list;
      for (const auto& m : made) list += (list.empty() ? "" : ", ") + m.instance.entry() + " (line " + std::to_string(m.line) + ")";
      throw std::runtime_error(file_name + ": '" + kernel.name + "' is a template instantiated " +
                               std::to_string(made.size()) + " times (" + list + "): name the one to evolve with --entry");
    }
    instance = made.front().instance;
    evidence = "the file's explicit instantiation, line " + std::to_string(made.front().line);
  }
  const std::string written_out = grammar::instantiated_source(source, g.parsed(), kernel, *instance);
  const grammar::Grammar instance_grammar = grammar::Grammar::from_source(written_out, file_name);
  SpecScaffold s = scaffold_kernel(written_out, instance_grammar, choose_kernel(instance_grammar.parsed(), file_name, kernel.name),
                                   family, given, headers);
  s.entry = instance->entry();
  s.spec["entry"] = s.entry;
  s.inferred.insert(s.inferred.begin(), "entry: " + s.entry + " (" + evidence +
                                            "; its parameter types and indices are read with the template's "
                                            "parameters written out)");
  return s;
}

namespace {

// "texture" of a cudaTextureObject_t parameter: true for a linear texture
// (tex1Dfetch), an array texture's extent and sampler for tex1D/2D/3D.
json texture_field(const std::string& name, const analysis::PointerUse* u, const std::string& type, SpecScaffold& s) {
  if (!u || u->texture_dimensions == 0) return true;
  json t;
  if (u->texture_extent.size() == u->texture_dimensions) {
    t["extent"] = json::array();
    for (const analysis::SymbolicSize& e : u->texture_extent) t["extent"].push_back(e.text());
  } else {
    const char* example = u->texture_dimensions == 1 ? "W" : u->texture_dimensions == 2 ? "W,H" : "W,H,D";
    t["extent"] = fill("the width, height and depth of the CUDA array that texture '" + name + "' reads" +
                       (u->refusal.empty() ? std::string() : ": gi could not infer them: " + u->refusal) +
                       " (or give them: --size " + name + "=" + example + ")");
  }
  // The sampler is set where the host makes the texture, which gi does not see.
  const auto e = fitness::element_type_from_name(type);
  const bool linear = u->texture_real_coordinates && e && fitness::filters_linearly(*e);
  t["filter"] = linear ? "linear" : "point";
  t["address"] = "clamp";
  t["normalized"] = u->texture_normalized;
  if (u->texture_extent.empty()) return t;  // the coordinates unread: the sampler stays the default
  const std::string coordinates = !u->texture_helper.empty() ? "it is read in " + u->texture_helper + ", unseen"
                                  : u->texture_real_coordinates ? "its coordinates are floats"
                                                                : "its coordinates are whole";
  s.inferred.push_back("texture '" + name + "': a CUDA array of " + std::to_string(u->texture_dimensions) +
                       " dimensions, " + (linear ? "linear" : "point") + " filtering (" + coordinates + "), " +
                       (u->texture_normalized ? "normalised" : "plain") + " coordinates, clamped");
  s.notes.push_back("texture '" + name + "': the host sets its sampler, which gi cannot see: check \"filter\", "
                    "\"address\" and \"normalized\" against the cudaTextureDesc your code creates it with");
  return t;
}

SpecScaffold scaffold_kernel(std::string_view source, const grammar::Grammar& g, const KernelChoice& choice,
                             const std::string& family, const InitSizes& given,
                             const analysis::IncludedHeaders& headers) {
  const grammar::Function* kernel = choice.kernel;
  const std::string& names = choice.names;
  std::set<std::string> param_names;
  for (const grammar::Param& p : kernel->params) param_names.insert(p.name);
  // A type the project names once (`#define fp float` in a pre-included
  // header, `typedef double real;`) is the type it names; the spec's check
  // follows the same aliases (grammar/type_aliases.hpp).
  std::string alias_text(source);
  for (const analysis::DirectiveLine& d : headers.lines) alias_text += "\n" + d.text;
  const std::map<std::string, std::string> aliases = grammar::type_aliases(alias_text);
  const auto declared_type = [&](const std::string& base) { return spec_type(grammar::resolve_type_alias(aliases, base)); };
  // The workload's scalar variables: the by-value parameters, then the
  // __constant__ scalars the kernel reads (the launch sets them).
  std::vector<grammar::ConstantVariable> constants = constants_read(g.parsed(), kernel->name);
  for (grammar::ConstantVariable& c : constants) c.type = grammar::resolve_type_alias(aliases, c.type);
  std::vector<std::string> scalar_names;
  std::map<std::string, std::string> vector_types;  // a vector scalar's name -> its type, for messages
  std::set<std::string> bools;                      // they take true or false (1 or 0), nothing else
  std::map<std::string, double> largest;  // a whole-number variable -> the largest value its type holds
  const auto add_scalar = [&](const std::string& name, const std::string& type) {
    const double top = type == "int" || (type.rfind("int", 0) == 0 && type_components(type) > 1) ? 2147483647.0
                       : type == "unsigned" || type.rfind("uint", 0) == 0                         ? 4294967295.0
                                                                                                   : 0;
    for (const std::string& v : variable_names(name, type)) {
      scalar_names.push_back(v);
      if (top > 0) largest[v] = top;
    }
    if (type_components(type) > 1) vector_types[name] = type;
    if (type == "bool") bools.insert(name);
  };
  // A struct passed by value (grammar/record_type.hpp): one variable per component, `p.n` is p_n.
  std::map<std::string, grammar::RecordType> by_value;
  for (const grammar::Param& p : kernel->params) {
    if (p.pointer || p.texture_object()) continue;
    if (declared_type(p.base_type).empty())
      if (auto r = by_value_record(g.parsed().tokens, headers.files.get(), grammar::resolve_type_alias(aliases, p.base_type), &aliases)) {
        for (const std::string& v : record_variables(p.name, *r)) scalar_names.push_back(v);
        by_value.emplace(p.name, std::move(*r));
        continue;
      }
    add_scalar(p.name, declared_type(p.base_type));
  }
  for (const grammar::ConstantVariable& c : constants)
    if (!c.array && !spec_type(c.type).empty() && !param_names.count(c.name)) add_scalar(c.name, spec_type(c.type));
  // An exact launch's thread counts (no guard on an axis) are workload
  // variables too, or the size the user names (--size threads_x=nelr); on x
  // a multiple of every block size, so no block is partial.
  const analysis::ParameterUse unnamed = analysis::analyse_parameter_use(g.parsed(), *kernel, headers);
  std::map<int, std::string> exact_names;
  for (const auto& [name, size] : given.same_as) {
    int axis = -1;
    for (int a = 0; a < 3; ++a)
      if (unnamed.work.exact[a] && name == analysis::exact_launch_variable(a)) axis = a;
    if (axis < 0)
      throw std::runtime_error("--size " + name + "=" + size + ": '" + kernel->name + "' has no exact launch on " +
                               name.substr(8) + " (it has a guard there, or uses no global index " + name.substr(8) + ")");
    if (std::find(scalar_names.begin(), scalar_names.end(), size) == scalar_names.end() || bools.count(size) ||
        vector_types.count(size))
      throw std::runtime_error("--size " + name + "=" + size + ": '" + kernel->name +
                               "' has no integer scalar parameter or __constant__ '" + size + "'");
    exact_names[axis] = size;
  }
  analysis::ParameterUse use =
      exact_names.empty() ? unnamed : analysis::analyse_parameter_use(g.parsed(), *kernel, headers, exact_names);
  // An array texture the kernel passes to a helper gi does not read has an
  // extent only the user knows: `--size coeffs=512,512` makes it workload
  // variables (coeffs_x, coeffs_y), varied like any size.
  for (analysis::PointerUse& u : use.pointers) {
    const std::string type = u.texture_dimensions == 1 ? "int" : u.texture_dimensions == 2 ? "int2" : "int3";
    const std::vector<std::string> extent = variable_names(u.name, type);
    if (u.texture_dimensions == 0 || !u.texture_extent.empty() || !given.sizes.count(extent[0]) ||
        std::find(scalar_names.begin(), scalar_names.end(), extent[0]) != scalar_names.end())
      continue;
    add_scalar(u.name, type);
    analysis::SymbolicSize count = analysis::SymbolicSize::constant(1);
    for (const std::string& e : extent) {
      u.texture_extent.push_back(analysis::SymbolicSize::name(e));
      count = count * u.texture_extent.back();
    }
    u.count = count;
    u.count_evidence = "--size " + u.name + ": the extent of the CUDA array it reads (" + u.refusal + ")";
    u.refusal.clear();
  }
  SizeMultiples multiples;
  for (int a = 0; a < 3; ++a)
    if (use.work.exact[a]) {
      const std::string count = use.work.bound[a]->text();
      if (!exact_names.count(a)) add_scalar(count, "int");
      if (a == 0) multiples[count] = kLargestBlock;
    }
  // A view of a buffer as a wider type (analysis::PointerUse::size_needs):
  // its row pitch a multiple of the view's alignment, and its stores' rows
  // apart. The given sizes must keep both; every drafted workload does.
  std::vector<analysis::PointerUse::SizeNeed> row_facts;
  for (const analysis::PointerUse& u : use.pointers)
    for (const analysis::PointerUse::SizeNeed& need : u.size_needs) {
      if (!need.at_least_zero) {
        double& m = multiples[need.name];
        m = m == 0 ? need.multiple : std::lcm(static_cast<long long>(m), need.multiple);
        if (const auto v = given.sizes.find(need.name); v != given.sizes.end() && std::fmod(v->second, need.multiple) != 0)
          throw std::runtime_error("--size " + need.name + "=" + json_number(v->second).dump() + ": " + need.evidence +
                                   ", so " + need.name + " must be a multiple of " + std::to_string(need.multiple));
        continue;
      }
      row_facts.push_back(need);
    }
  // An index's lowest value that only sizes keep >= 0 binds every memory
  // it reads, not only the parameters' buffers: shared and __constant__
  // arrays' too.
  std::vector<const analysis::PointerUse*> other_memory;
  if (use.dynamic_shared) other_memory.push_back(&use.dynamic_shared->use);
  for (const analysis::StaticShared& st : use.static_shared) other_memory.push_back(&st.use);
  for (const analysis::PointerUse& c : use.constant_arrays) other_memory.push_back(&c);
  for (const analysis::PointerUse* u : other_memory)
    for (const analysis::PointerUse::SizeNeed& need : u->size_needs)
      if (need.lowest_index) row_facts.push_back(need);
  // A size set with the tied sizes' values (--size voxelNumber=dims_x*dims_y*dims_z).
  // Parsed once: the drafting of held-out sizes judges many size sets.
  std::vector<std::pair<std::string, fitness::Expression>> tied;
  for (const auto& [name, expression] : given.tied) tied.emplace_back(name, fitness::Expression::parse(expression));
  const auto with_tied = [&](SizeSet set) {
    for (const auto& [name, expression] : tied) {
      try {
        set[name] = expression.evaluate(set);
      } catch (const std::exception&) {
        // a size it names is not in this set: it stays unknown, as that size does
      }
    }
    return set;
  };
  // The tie that makes rows meet, as --size takes it: "--size pitch=4*threads_x".
  const auto tie_of = [](const analysis::PointerUse::SizeNeed& f) {
    return "--size " + f.name + "=" + std::regex_replace(f.row, std::regex(" "), "");
  };
  // A buffer stored through rows a pitch apart leaves the bytes between
  // them, unless the pitch is tied to the row (--size pitch=4*threads_x):
  // the evidence, "" where no store does.
  const auto rows_leave_gaps = [&](const analysis::PointerUse& u) -> std::string {
    for (const analysis::PointerUse::SizeNeed& f : u.size_needs)
      if (f.at_least_zero && !f.lowest_index) {
        const std::string why = f.evidence + ", and the elements between rows keep their values" +
                                (f.row.empty() ? std::string() : " (" + tie_of(f) + " ties them)");
        // Rows that meet exactly under the ties (pitch=4*threads_x,
        // threads_x=img_m*img_n): 0 at the given sizes and at others apart
        // from them, as on every held-out workload.
        SizeSet at_given(given.sizes.begin(), given.sizes.end()), apart = at_given;
        double factor = 1.3;
        for (auto& [name, v] : apart) v = std::round(v * (factor += 0.17));
        for (const SizeSet& set : {at_given, apart})
          if (const auto v = f.at_least_zero->evaluate(with_tied(set)); !v || *v != 0) return why;
      }
    return "";
  };
  for (const auto& [name, m] : multiples)
    if (const auto v = given.sizes.find(name); v != given.sizes.end() && (v->second < m || std::fmod(v->second, m) != 0))
      throw std::runtime_error("--size " + name + "=" + json_number(v->second).dump() + ": '" + kernel->name +
                               "' has no guard on its global index x, so it runs exactly " + name +
                               " threads, and every block size gi tries must divide that: give a multiple of " +
                               json_number(m).dump());
  // An exact launch tied to a product of sizes (--size threads_x=img_m*img_n,
  // the host launching one thread per pixel): the product must stay a
  // multiple of every block size, so each of its k factors is drafted a
  // multiple of 2^ceil(10 / k) (32 for two: 32 * 32 = 1024).
  for (const auto& [name, expression] : given.tied) {
    const auto m = multiples.find(name);
    if (m == multiples.end()) continue;
    const fitness::Expression product = fitness::Expression::parse(expression);
    SizeSet at_given(given.sizes.begin(), given.sizes.end());
    bool all_given = true;
    for (const std::string& v : product.variables()) all_given = all_given && given.sizes.count(v);
    if (all_given)
      if (const double v = product.evaluate(at_given); std::fmod(v, m->second) != 0)
        throw std::runtime_error("--size " + name + "=" + expression + ": '" + kernel->name +
                                 "' has no guard on its global index x, so it runs exactly " + expression + " = " +
                                 json_number(v).dump() + " threads, and every block size gi tries must divide that: give "
                                 "sizes whose product is a multiple of " + json_number(m->second).dump());
    const std::vector<std::string> factors = product_names(expression);
    const double each = factors.empty() ? 0 : std::pow(2.0, std::ceil(std::log2(m->second) / factors.size()));
    for (const std::string& f : factors) multiples[f] = std::max(multiples[f], each);
    multiples.erase(m);
  }
  // A size the others give is no workload variable of its own.
  for (const auto& [name, expression] : given.tied) {
    const auto at = std::find(scalar_names.begin(), scalar_names.end(), name);
    if (at == scalar_names.end() || bools.count(name) || vector_types.count(name))
      throw std::runtime_error("--size " + name + "=" + expression + ": '" + kernel->name +
                               "' has no integer scalar parameter or __constant__ '" + name + "'");
    if (given.sizes.count(name))
      throw std::runtime_error("--size " + name + ": given both as a number and as '" + expression + "'");
    for (const std::string& v : fitness::Expression::parse(expression).variables())
      if (std::find(scalar_names.begin(), scalar_names.end(), v) == scalar_names.end() || given.tied.count(v))
        throw std::runtime_error("--size " + name + "=" + expression + ": '" + v +
                                 "' is no size of its own of '" + kernel->name + "' (its scalars: the parameters and "
                                 "__constant__ scalars it reads, a vector's components as dims_x)");
    scalar_names.erase(at);
  }
  for (const auto& [name, v] : given.sizes)
    if (std::find(scalar_names.begin(), scalar_names.end(), name) == scalar_names.end()) {
      if (const auto t = vector_types.find(name); t != vector_types.end())
        throw std::runtime_error("--size " + name + ": '" + name + "' is " + (t->second[0] == 'i' ? "an " : "a ") +
                                 t->second + ": give each component, --size " + name + "=X,Y" +
                                 (type_components(t->second) > 2 ? ",Z" : "") +
                                 (type_components(t->second) > 3 ? ",W" : ""));
      throw std::runtime_error("--size " + name + ": '" + kernel->name + "' has no scalar parameter or __constant__ "
                               "scalar '" + name + "'");
    }
  for (const auto& [name, v] : given.sizes)
    if (bools.count(name) && v != 0 && v != 1)
      throw std::runtime_error("--size " + name + "=" + json_number(v).dump() + ": '" + name +
                               "' is a bool: give true or false");
  for (const auto& [name, d] : given.like)
    if (!param_names.count(name) &&
        std::none_of(constants.begin(), constants.end(),
                     [&](const grammar::ConstantVariable& c) { return c.array && c.name == name; }))
      throw std::runtime_error("--like " + name + ": '" + kernel->name + "' has no parameter or __constant__ array '" +
                               name + "'");

  SpecScaffold s;
  for (const auto& [name, expression] : given.tied)
    s.inferred.push_back("size '" + name + "': " + expression + " on every workload (--size)");
  s.entry = kernel->name;
  if (use.work.exact[0] && !exact_names.count(0))
    s.notes.push_back("'" + kernel->name + "' has no guard on its global index x: it runs exactly threads_x threads. "
                      "Where your host launches as many threads as a size of the kernel's (one per element of n), say "
                      "so with --size threads_x=n: the buffers then hold what your host allocates");
  if (choice.kernels > 1)
    s.notes.push_back("the other kernels of the file (" + names + ") stay as they are; each can be a seed of its own");
  const auto unset = analysis::unset_components(g.parsed(), *kernel);
  const auto use_of = [&](const std::string& name) -> const analysis::PointerUse* {
    for (const auto& u : use.pointers)
      if (u.name == name) return &u;
    return nullptr;
  };

  json parameters = json::array();
  json train_inputs = json::object();  // buffer -> distribution on the timed workload
  std::map<std::string, bool> varies;  // buffer -> whether held-out workloads vary its values
  std::map<std::string, std::pair<double, double>> tested;  // buffer -> the values the kernel tests it against
  std::set<std::string> size_vars;     // scalars that size buffers or the grid
  FloatOutputs outputs;  // what the tolerance depends on
  analysis::SymbolicSize min_bytes_total;
  bool min_bytes_known = true;
  // Each buffer's role and values per element, for the held-out sizes below.
  struct RoleOf {
    std::string role;
    int components = 1;
  };
  std::map<std::string, RoleOf> roles;
  for (const grammar::Param& p : kernel->params) {
    if (const auto r = by_value.find(p.name); r != by_value.end()) {
      parameters.push_back(by_value_parameter(p.name, r->second, s.inferred));
      continue;
    }
    std::string type;
    if (p.texture_object()) {
      // A buffer read through the texture: its element type is tex1Dfetch's T.
      const analysis::PointerUse* u = use_of(p.name);
      const std::string fetched = u ? u->texture_type : "";
      type = spec_type(fetched);
      const std::string fetch = u && u->texture_dimensions > 0 ? "tex" + std::to_string(u->texture_dimensions) + "D"
                                                                : "tex1Dfetch";
      if (const auto e = fitness::element_type_from_name(type); e && fitness::fits_linear_texture(*e)) {
        s.inferred.push_back("texture '" + p.name + "': a buffer of " + type +
                             (u->texture_helper.empty() ? " (the kernel reads it with " + fetch + "<" + type + ">"
                                                        : " (the kernel passes it to " + u->texture_helper + " as texture<" +
                                                              type + ", " + std::to_string(u->texture_dimensions) + ">") +
                             ", from line " + std::to_string(u->first_line) + ")");
      } else {
        s.notes.push_back("parameter '" + p.name + "' is a texture object: its buffer's type is the T of the kernel's "
                          "tex1Dfetch<T> calls, of one, two or four 32-bit words (float, float2, float4, int, "
                          "unsigned, int2, int4, uint2, uint4)" +
                          (fetched.empty() ? std::string(" (the kernel makes none gi can read)")
                           : fetched == "?" ? std::string(" (the kernel reads it as two types)")
                                            : " ('" + fetched + "' is none of them)"));
        type = fill("the element type that tex1Dfetch<T> reads from texture '" + p.name + "'");
      }
    } else {
      type = declared_type(p.base_type);
    }
    // A buffer of structs (grammar/record_type.hpp): drawn and checked as
    // per_record values of its one component type per element.
    const std::string base = grammar::resolve_type_alias(aliases, p.base_type);
    std::string record_why;
    const std::optional<grammar::RecordType> record = p.pointer && !p.texture_object() && type.empty()
                                                          ? buffer_record(g.parsed().tokens, headers.files.get(), base, record_why, &aliases)
                                                          : std::nullopt;
    const int per_record = record ? record->words.words : 1;
    if (record) {
      type = record->words.word;
      s.inferred.push_back("type of '" + p.name + "': " + buffer_record_evidence(*record));
    }
    if (p.pointer && !type.empty() && !buffer_type(type)) {
      s.notes.push_back("parameter '" + p.name + "' points to '" + p.base_type +
                        "': gi takes that type by value only (a size, a flag), not as a buffer's elements");
      type = fill("a buffer element type gi supports instead of '" + p.base_type + "'");
    } else if (type.empty()) {
      s.notes.push_back("parameter '" + p.name + "' has type '" + p.base_type +
                        "', which gi cannot generate or check (int, unsigned, float, double, bool, CUDA's vectors "
                        "of them such as int3 or float4, a texture object; a buffer of structs of one of them)" +
                        (record_why.empty() ? std::string() : ": " + record_why));
      type = fill("a type gi supports instead of '" + p.base_type + "'");
    }
    json j = {{"name", p.name}, {"type", record ? base : type}};
    if (record) j["layout"] = record->layout;
    if (!p.pointer && !p.texture_object()) {
      j["role"] = "scalar";
      j["value"] = value_of(p.name, type);  // the workload variable of the same name (one per component)
      parameters.push_back(std::move(j));
      continue;
    }
    const analysis::PointerUse* u = use_of(p.name);
    std::string role = "in";
    json start;  // an inout buffer's initial contents
    if (u && !u->atomic.empty()) {
      role = "inout";
      const std::string kind = u->atomic;
      if (kind == "add" || kind == "sub" || kind == "or" || kind == "xor") start = {{"constant", 0}};
      else if (kind == "and") start = {{"constant", -1}};
      else if (kind == "max") start = {{"constant", is_float_type(type) ? -1e30 : -2147483647.0}};
      else if (kind == "min") start = {{"constant", is_float_type(type) ? 1e30 : 2147483647.0}};
      else start = fill("the initial contents of '" + p.name + "' (its atomics are no sum, minimum or maximum)");
      s.inferred.push_back("role of '" + p.name + "': inout, starting at " +
                           (start.is_object() ? start.dump() : std::string("(FILL)")) + " (" + u->atomic_where +
                           ", an atomic " + kind + ")");
      if (is_float_type(type) && (kind == "add" || kind == "sub")) {
        outputs.atomic_sum = true;
        if (outputs.atomic_sum_where.empty()) outputs.atomic_sum_where = u->atomic_where;
      }
      if (is_float_type(type) && (kind == "max" || kind == "min")) outputs.extremum = true;
    } else if (u && u->written && u->read) {
      role = "inout";
      if (is_float_type(type)) outputs.plain = true;
      s.inferred.push_back("role of '" + p.name + "': inout (the kernel reads and writes it, from line " +
                           std::to_string(u->first_line) + ")");
    } else if (const std::string gap = u && u->written && !p.const_pointee && u->atomic.empty()
                                           ? rows_leave_gaps(*u)
                                           : "";
               !gap.empty()) {
      // Rows a pitch apart: the bytes between them keep what the caller put there.
      role = "inout";
      if (is_float_type(type)) outputs.plain = true;
      s.inferred.push_back("role of '" + p.name + "': inout (" + gap + ")");
    } else if (u && u->written && !p.const_pointee && u->count && !u->store_reaches_zero && u->atomic.empty()) {
      // No store reaches element 0: the elements below the lowest one
      // written keep what the caller put there, so the check must see them.
      role = "inout";
      if (is_float_type(type)) outputs.plain = true;
      s.inferred.push_back("role of '" + p.name + "': inout (written from line " + std::to_string(u->first_line) +
                           ", but no store's index starts at 0: the elements it never writes keep their values)");
    } else if (u && u->written && !p.const_pointee) {
      role = "out";
      if (is_float_type(type)) outputs.plain = true;
      s.inferred.push_back("role of '" + p.name + "': out (written, never read, from line " +
                           std::to_string(u->first_line) + ")");
    } else {
      if (!p.const_pointee && !p.texture_object())
        s.notes.push_back("'" + p.name + "' is not const but the kernel never writes through it: an input");
    }
    j["role"] = role;
    roles[p.name] = {role, type_components(type) * per_record};
    if (u && u->count) {
      j["count"] = u->count->text();
      for (const std::string& n : u->count->names()) size_vars.insert(n);
      s.inferred.push_back("count of '" + p.name + "': " + u->count->text() + " (" + u->count_evidence + ")");
      if (!u->unused)
        min_bytes_total = min_bytes_total +
                          *u->count * analysis::SymbolicSize::constant(type_bytes(type) * per_record * (role == "inout" ? 2 : 1));
    } else {
      j["count"] = fill("elements of '" + p.name + "', an expression over the workload's variables (e.g. n)" +
                        (u && !u->refusal.empty() ? ": gi could not infer it: " + u->refusal : std::string()));
      min_bytes_known = false;
    }
    if (p.texture_object()) j["texture"] = texture_field(p.name, use_of(p.name), type, s);
    if (const auto partial = unset.find(p.name);
        !record && partial != unset.end() && (role == "out" || role == "inout") && !partial->second.set.empty()) {
      j["checked_components"] = partial->second.set;
      std::string fields;
      for (int c : partial->second.set) fields += std::string(fields.empty() ? "" : ", ") + "xyzw"[c];
      s.inferred.push_back("checked_components of '" + p.name + "': " + fields +
                           " (the others are undefined where the kernel stores them: " + partial->second.evidence + ")");
    }
    if (role != "out") {
      json d;
      if (given.like.count(p.name)) d = given.like.at(p.name);
      else if (!start.is_null()) d = start;
      else if (is_float_type(type) && u && u->tested_values) {
        d = tested_distribution(*u->tested_values, -1);
        tested[p.name] = *u->tested_values;
        s.inferred.push_back("inputs of '" + p.name + "': " + d.dump() + " on the timed workload, wider on the small check (" +
                             u->tested_values_evidence + ")");
      } else if (is_float_type(type)) d = default_float_distribution();
      // Bytes read as floats (`(float*)(bytes + y * pitch)`): bytes 32 to
      // 63 make each float a normal number in [2^-63, 2), where any byte
      // would give NaNs, infinities and denormals no real image holds.
      else if (u && type == "uint8" && std::regex_match(u->viewed_as, std::regex("(const )?float[1-4]?"))) {
        d = {{"uniform", json::array({32, 63})}};
        s.inferred.push_back("inputs of '" + p.name + "': " + d.dump() + ", read as " + u->viewed_as +
                             ": each float a normal number in [2^-63, 2)");
      }
      // An 8- or 16-bit unsigned buffer's values index whatever its type
      // holds, which is how gi bounds such an index (hist[img[i]]).
      else if (u && u->values_index && (type == "uint8" || type == "uint16"))
        d = {{"uniform", json::array({0, type == "uint8" ? 255 : 65535})}};
      else if (u && u->values_index)
        d = {{"uniform", json::array({0, fill("largest value of '" + p.name +
                                               "' (its values index another buffer: its element count minus 1)")})}};
      else d = default_integer_distribution(type);
      train_inputs[p.name] = d;
      varies[p.name] = !given.like.count(p.name) && start.is_null() && is_float_type(type);
    }
    parameters.push_back(std::move(j));
  }
  // gi checks a variant by what it writes: with no buffer written every
  // variant, the empty one too, would pass. Where gi sees no store through
  // any parameter (a debugging printer; or stores through a pointer loaded
  // from a buffer, which gi does not follow), the user names the outputs.
  bool no_output = std::none_of(roles.begin(), roles.end(), [](const auto& r) { return r.second.role != "in"; });
  if (no_output) {
    const std::string why = "gi sees no store through any parameter of '" + kernel->name +
                            "' (printf is no output gi reads), and a spec needs an output to check";
    for (json& j : parameters)
      if (j["role"] == "in" && !j.contains("texture"))
        for (const grammar::Param& p : kernel->params)
          if (p.name == j["name"] && !p.const_pointee)
            j["role"] = fill("in, out or inout: " + why);
    no_output = std::none_of(parameters.begin(), parameters.end(), [](const json& j) { return j["role"].is_string() &&
                                                                                            j["role"] != "in" && j["role"] != "scalar"; });
    s.notes.push_back(why + (no_output ? ": it has no pointer it could write through" : ""));
  }

  json constants_json = json::array();
  for (const grammar::ConstantVariable& c : constants) {
    if (param_names.count(c.name)) continue;  // a parameter of that name hides it
    if (c.array) {
      constants_json.push_back(array_constant(g.parsed(), headers, kernel->name_token, c, given, s));
      const json& j = constants_json.back();
      if (j["count"].is_number() && buffer_type(spec_type(c.type))) {
        const bool is_float = is_float_type(j["type"].get<std::string>());
        train_inputs[c.name] = given.like.count(c.name) ? given.like.at(c.name)
                               : is_float               ? default_float_distribution()
                                                        : default_integer_distribution(j["type"].get<std::string>());
        varies[c.name] = !given.like.count(c.name) && is_float;
      }
      continue;
    }
    const std::string type = spec_type(c.type);
    json j = {{"name", c.name}, {"type", type}, {"value", value_of(c.name, type)}};
    if (type.empty()) {
      j["type"] = fill("a scalar type instead of '" + c.type + "' (line " + std::to_string(c.line) +
                       "): a spec sets only int, unsigned, float, double and bool constants");
      s.notes.push_back("the kernel reads the __constant__ " + c.type + " '" + c.name + "' (line " +
                        std::to_string(c.line) + "), which a spec cannot set");
    } else {
      s.inferred.push_back("constant '" + c.name + "': " + type + " (line " + std::to_string(c.line) +
                           "), set before each launch to the workload's '" + c.name + "'");
    }
    constants_json.push_back(std::move(j));
  }

  // The grid and the work item from the guard on the global index.
  json grid = json::array();
  json coverage_exempt = json::array();
  std::string work_item;
  // A flattened 2-D block index is the global index only on a grid of one
  // row, which a kernel that also gives blockIdx.y rows of its own has not.
  const bool rows_clash = use.work.flattened_rows_line > 0 && use.work.bound[1];
  if (use.work.bound[0] && !rows_clash) {
    grid.push_back("ceil_div(" + use.work.bound[0]->text() + ", B)");
    for (int a = 1; a < 3; ++a) grid.push_back(use.work.bound[a] ? json(use.work.bound[a]->text()) : json(1));
    for (int a = 0; a < 3; ++a)
      if (use.work.bound[a]) {
        for (const std::string& n : use.work.bound[a]->names()) size_vars.insert(n);
        work_item += (work_item.empty() ? "one " : " and ") + use.work.variable[a] + " < " + use.work.bound[a]->text();
        if (use.work.exact[a]) {
          s.inferred.push_back(std::string("grid ") + "xyz"[a] + ": " + grid[a].get<std::string>() + " (" +
                               use.work.evidence[a] +
                               (a == 0 ? ", a multiple of " + json_number(kLargestBlock).dump() +
                                             " on every workload, so every block size divides it"
                                       : std::string(", one block of one thread per row")) +
                               ")");
          continue;
        }
        s.inferred.push_back(std::string("grid ") + "xyz"[a] + ": " + grid[a].get<std::string>() + " (" +
                             use.work.evidence[a] + ", the global thread index" +
                             (a == 0 && use.work.flattened_rows_line > 0
                                  ? "; line " + std::to_string(use.work.flattened_rows_line) +
                                        " flattens a 2-D grid's blocks, which on this grid of one row is the "
                                        "global index itself"
                                  : std::string()) +
                             ")");
      }
    s.inferred.push_back("work_item: " + work_item);
    // y and z: the grid is exactly the bound, so the guard's "past the bound"
    // direction is never taken; gi coverage would ask for a workload that
    // takes it.
    for (int a = 1; a < 3; ++a)
      if (use.work.bound[a] && !use.work.guard_branch[a].empty()) {
        const std::string rows = a == 1 ? "rows" : "slices";
        coverage_exempt.push_back(
            {{"branch", use.work.guard_branch[a]},
             {"direction", use.work.guard_past_bound[a]},
             {"reason", "gi init: the grid has exactly " + use.work.bound[a]->text() + " " + rows +
                            " of blocks (launch.grid[" + std::to_string(a) + "]), so no thread has " +
                            use.work.variable[a] + " >= " + use.work.bound[a]->text()}});
        s.inferred.push_back("coverage_exempt: " + use.work.guard_branch[a] + " " + use.work.guard_past_bound[a] +
                             " (" + use.work.variable[a] + " past " + use.work.bound[a]->text() +
                             ": never, with the grid's " + rows + ")");
      }
  } else if (!rows_clash && !use.work.one_block_evidence.empty()) {
    grid = json::array({1, 1, 1});
    work_item = "the whole problem, in one block of B threads";
    s.inferred.push_back("grid: one block (" + use.work.one_block_evidence + ", so one block does it once)");
    s.inferred.push_back("work_item: " + work_item);
  } else {
    const std::string why =
        rows_clash ? "line " + std::to_string(use.work.flattened_rows_line) +
                         " flattens a 2-D grid's blocks into the global index, and blockIdx.y also numbers rows of "
                         "items: gi cannot tell the rows apart"
        : !use.work.refusal.empty() ? use.work.refusal
                                    : "no guard on the global thread index names its bound";
    grid = json::array({fill("blocks in x over the workload's variables and B, e.g. ceil_div(n, B): " + why), 1, 1});
    work_item = fill("what one thread computes, e.g. one output element");
  }
  std::string min_bytes = min_bytes_total.text();
  // Buffers of fixed lengths (a 3 x 3 matrix built from 15 sums): no size varies.
  const bool fixed_lengths = min_bytes_known && size_vars.empty() && min_bytes_total.constant_part() > 0;
  if (fixed_lengths)
    s.inferred.push_back("min_bytes: " + min_bytes + " (every buffer has a fixed length: each input read once, each "
                         "output written once)");
  else if (!min_bytes_known || min_bytes_total.is_constant())
    min_bytes = fill("bytes the kernel must read and write at least, over the workload's variables (e.g. 8 * n), "
                     "for the memory-floor report");
  else
    s.inferred.push_back("min_bytes: " + min_bytes + " (each input read once, each output written once, each "
                         "inout buffer both)");

  // Tolerance: exact for integers and extrema; float sums reorder.
  outputs.loop_sum_where = float_loop_sum(g.parsed(), kernel->name);
  const ToleranceDraft drafted = draft_tolerance(outputs);
  const json& tolerance = drafted.tolerance;
  const std::string& note = drafted.note;
  if (!drafted.inferred.empty()) s.inferred.push_back(drafted.inferred);

  // A global index written for blocks of K threads: the block size is K.
  // One element per block: the block size stays as the user's host has it.
  const int fixed_block = use.work.written_block > 0 ? static_cast<int>(use.work.written_block)
                          : use.work.fixed_block_line > 0 ? analysis::kFixedBlock
                                                          : 0;
  if (use.work.written_block > 0)
    s.inferred.push_back("tunables: block size fixed at " + std::to_string(fixed_block) + " (" +
                         use.work.written_block_evidence + ": another block size would skip or repeat items)");
  else if (use.work.fixed_block_line > 0)
    s.inferred.push_back("tunables: block size fixed at " + std::to_string(analysis::kFixedBlock) + " (line " +
                         std::to_string(use.work.fixed_block_line) +
                         " indexes a buffer by blockIdx.x, blockDim.x or gridDim.x (one element per block, or the grid's "
                         "extent), so the block size sets its length "
                         "and what each element holds; where your host's is another, change tunables.block_sizes and the " +
                         std::to_string(analysis::kFixedBlock) + " in the counts to it)");

  // Block sizes a static __shared__ array of the kernel can hold.
  const BlockSizeChoice blocks =
      choose_block_sizes(use.static_shared, fixed_block > 0 ? std::vector<int>{fixed_block} : kBlockSizes,
                         fixed_block > 0 ? fixed_block : 256);
  for (const std::string& i : blocks.inferred) s.inferred.push_back(i);
  for (const std::string& n : blocks.notes) s.notes.push_back(n);

  // The launch; with dynamic shared memory, its bytes from the indices into it.
  json launch = {{"block", json::array({"B", 1, 1})}, {"grid", grid}};
  if (use.dynamic_shared) {
    const analysis::DynamicShared& d = *use.dynamic_shared;
    const auto element = fitness::element_type_from_name(declared_type(d.type));
    if (element && d.use.count) {
      const analysis::SymbolicSize bytes =
          analysis::SymbolicSize::constant(static_cast<long long>(fitness::element_bytes(*element))) * *d.use.count;
      launch["shared_bytes"] = bytes.text();
      s.inferred.push_back("shared_bytes: " + bytes.text() + " (extern __shared__ " + d.type + " " + d.name + "[]: " +
                           d.use.count_evidence + ", with threadIdx.x < B)");
    } else {
      launch["shared_bytes"] =
          fill("bytes of the dynamic shared memory '" + d.name + "' over the block size B, e.g. 4 * B: " +
               (element ? "gi could not bound its indices: " + d.use.refusal
                        : "gi does not know the size of '" + d.type + "'"));
    }
  }

  // Workloads from the sizes given.
  std::vector<std::string> sizes(size_vars.begin(), size_vars.end());
  std::vector<std::string> missing;
  SizeSet base;
  for (const std::string& name : scalar_names) {
    if (given.sizes.count(name)) base[name] = given.sizes.at(name);
    else missing.push_back(name);
  }
  std::vector<std::string> known_sizes;
  for (const std::string& n : sizes)
    if (base.count(n)) known_sizes.push_back(n);
  // A size tied to others (--size 'nodeNumber=dims_x*dims_y*dims_z') varies
  // through them: they are sizes too, or the small check and the held-out
  // workloads would keep the tied size as given (a grid a multiple of
  // every block, the last block's guard never failing).
  for (const auto& [name, expression] : tied)
    if (std::find(sizes.begin(), sizes.end(), name) != sizes.end())
      for (const std::string& m : expression.variables())
        if (base.count(m) && std::find(known_sizes.begin(), known_sizes.end(), m) == known_sizes.end())
          known_sizes.push_back(m);
  const auto variables = [&](const SizeSet& set, const char* what, int varied) {
    json v = json::object();
    for (const std::string& name : scalar_names) {
      if (set.count(name)) v[name] = json_number(set.at(name));
      else v[name] = fill(std::string("value of '") + name + "' " + what);
    }
    json inputs = train_inputs;
    if (varied >= 0)
      for (auto& [name, d] : inputs.items())
        if (varies[name])
          d = tested.count(name) ? tested_distribution(tested.at(name), varied) : varied_distribution(varied);
    v["inputs"] = inputs;
    return v;
  };
  // What validation counts (gi/publish/validation.cpp): the output values
  // (out and inout buffers) or the input values (in and inout), whichever is
  // more; a sum of both would leave each short of the 16 M it requires.
  const auto in_and_out = [&](const SizeSet& given_set) {
    const SizeSet set = with_tied(given_set);
    double inputs = 0, outputs = 0;
    for (const grammar::Param& p : kernel->params)
      if (p.pointer || p.texture_object())
        if (const auto* u = use_of(p.name); u && u->count)
          if (const auto v = u->count->evaluate(set)) {
            const RoleOf& r = roles.at(p.name);  // every pointer has its role by now
            const double n = *v * r.components;
            if (r.role != "in") outputs += n;
            if (r.role != "out") inputs += n;
          }
    return std::make_pair(inputs, outputs);
  };
  // Validation asks for 16 M input values or 16 M output values over the
  // five held-out workloads together: each workload counts the side that
  // is the larger on the timed one, so that their sum is one side's total
  // (a sum of each workload's larger side can mix sides and fall short:
  // NiftyReg's 2-D resampling had 9 M outputs and 15 M inputs).
  const auto [base_inputs, base_outputs] = in_and_out(base);
  const bool count_inputs = base_inputs >= base_outputs;
  const auto values = [&](const SizeSet& set) {
    const auto [inputs, outputs] = in_and_out(set);
    return count_inputs ? inputs : outputs;
  };
  // An array __constant__ holds what its declaration says: the element its
  // indices reach must lie within (`c_strel[el_i * strel_n + el_j]` needs
  // strel_m * strel_n of STREL_SIZE^2). Sizes that read past it are refused.
  struct ConstantReach {
    std::string name;
    double length;
    analysis::SymbolicSize need;
    std::string evidence;
  };
  std::vector<ConstantReach> reaches;
  for (const json& c : constants_json)
    if (c.contains("count") && c["count"].is_number())
      for (const analysis::PointerUse& u : use.constant_arrays)
        if (u.name == c["name"]) {
          if (u.count) reaches.push_back({u.name, c["count"].get<double>(), *u.count, u.count_evidence});
          else
            s.notes.push_back("gi cannot tell how far the kernel reads the __constant__ array '" + u.name + "' (" +
                              u.refusal + "): keep its indices below its " + c["count"].dump() + " elements");
        }
  const auto within_constants = [&](const SizeSet& given_set) {
    const SizeSet set = with_tied(given_set);
    for (const ConstantReach& r : reaches)
      if (const auto v = r.need.evaluate(set); v && *v > r.length) return false;
    return true;
  };
  // Every grid extent and buffer count at least 1 (`i < Size - t - 1` needs t below Size),
  // and every size within its type (an int below 2^31).
  const auto has_work = [&](const SizeSet& given_set) {
    const SizeSet set = with_tied(given_set);
    for (const auto& [name, top] : largest)
      if (const auto v = set.find(name); v != set.end() && v->second > top) return false;
    for (int a = 0; a < 3; ++a)
      if (use.work.bound[a])
        if (const auto v = use.work.bound[a]->evaluate(set); v && *v < 1) return false;
    for (const grammar::Param& p : kernel->params)
      if (const auto* u = p.pointer || p.texture_object() ? use_of(p.name) : nullptr; u && u->count)
        if (const auto v = u->count->evaluate(set); v && *v < 1) return false;
    return within_constants(set);
  };
  // Rows a store reaches apart, and indices' lowest values
  // (analysis::PointerUse::size_needs): the fact that fails at
  // `given_set`, or null.
  const auto overlapping_rows = [&](const SizeSet& given_set) -> const analysis::PointerUse::SizeNeed* {
    const SizeSet set = with_tied(given_set);
    for (const analysis::PointerUse::SizeNeed& f : row_facts)
      if (const auto v = f.at_least_zero->evaluate(set); v && *v < 0) return &f;
    return nullptr;
  };
  const auto usable = [&](const SizeSet& given_set) { return has_work(given_set) && !overlapping_rows(given_set); };
  const bool sized = missing.empty() && !known_sizes.empty();
  if (missing.empty())
    for (const ConstantReach& r : reaches)
      if (const auto v = r.need.evaluate(with_tied(base)); v && *v > r.length)
        throw std::runtime_error("the sizes given read the __constant__ array '" + r.name + "' up to element " +
                                 json_number(*v - 1).dump() + ", past its " + json_number(r.length).dump() + " elements (" +
                                 r.evidence + "): give sizes within it");
  if (sized)
    if (const auto* f = has_work(base) ? overlapping_rows(base) : nullptr)
      throw std::runtime_error(
          (f->lowest_index ? "the sizes given make an index negative (" : "the sizes given let rows overlap (") +
          f->evidence + "): give sizes where " +
          (f->row.empty() ? f->at_least_zero->text() + " >= 0"
                          : f->name + " >= " + f->row + " (" + tie_of(*f) + " ties the pitch to the row)"));
  if (sized && !has_work(base))
    throw std::runtime_error("the sizes given leave a grid extent or a buffer count below 1 (" + [&] {
      std::string what;
      for (int a = 0; a < 3; ++a)
        if (use.work.bound[a]) what += std::string(what.empty() ? "" : ", ") + "xyz"[a] + " < " + use.work.bound[a]->text();
      return what;
    }() + "): give sizes where the kernel has work");
  // A bool flips on the small check and on every other held-out workload,
  // so training takes both sides of each branch on it and validation checks both.
  const auto flipped = [&](SizeSet set) {
    for (const std::string& b : bools)
      if (set.count(b)) set[b] = 1 - set.at(b);
    return set;
  };
  std::vector<SizeSet> held_out =
      sized ? held_out_sizes(base, known_sizes, values, static_cast<double>(kMinValidationValues), usable, multiples)
            : std::vector<SizeSet>(5, base);
  for (std::size_t i = 1; i < held_out.size(); i += 2) held_out[i] = flipped(held_out[i]);
  // A scalar that picks a mode (`kernelType == 0`, ... : gi/seed/mode_scalars.hpp)
  // and sizes nothing: the held-out workloads go through every value the
  // kernel names and the timed one's, and a small check more runs each
  // value the timed workload does not (so coverage reaches every mode).
  std::set<std::string> mode_candidates;
  for (const std::string& n : scalar_names)
    if (base.count(n) && !bools.count(n) && !size_vars.count(n) && largest.count(n)) mode_candidates.insert(n);
  std::map<std::string, std::set<long long>> modes = mode_values(g.parsed(), *kernel, mode_candidates);
  std::vector<std::pair<std::string, long long>> other_modes;  // a small check each
  for (auto& [name, named] : modes) {
    // One more than the largest it names takes the branch none of them does
    // (the `else` after `== 0`, `== 1`, `== 4`: NiftyReg's cubic).
    named.insert(*named.rbegin() + 1);
    named.insert(static_cast<long long>(base.at(name)));
    // An unsigned scalar takes no negative value (`mode != -1` tests its largest).
    if (largest.at(name) > 2147483647.0) named.erase(named.begin(), named.lower_bound(0));
    const std::vector<long long> all(named.begin(), named.end());
    for (std::size_t i = 0; i < held_out.size(); ++i) held_out[i][name] = static_cast<double>(all[i % all.size()]);
    for (const long long v : all)
      if (v != static_cast<long long>(base.at(name)) && other_modes.size() < 8) other_modes.emplace_back(name, v);
  }
  json validate = json::array();
  for (int i = 0; i < 5; ++i)
    validate.push_back({{"generator", "random"}, {"seed", 1000 + i + 1},
                        {"variables", variables(held_out[i],
                                                "on a held-out workload (never seen by the search; vary the sizes; the "
                                                "five together need 16 M output or input values)",
                                                i)}});
  // A real size (a B-spline grid's spacing) keeps its value on the small
  // check: an odd one as large as the small image would put every voxel in
  // one cell. The held-out workloads vary it with the rest.
  std::vector<std::string> small_sizes;
  for (const std::string& n : known_sizes)
    if (!use.real_sizes.count(n)) small_sizes.push_back(n);
  // A grid bound by one size, its block fixed at K (one element per block,
  // a block written for K threads): below K the small check would run one
  // block, never a full one beside the partial last (srad's reduction
  // takes another path for each).
  std::map<std::string, double> past_blocks;
  if (fixed_block > 0 && use.work.bound[0] && use.work.bound[0]->names().size() == 1 &&
      use.work.bound[0]->text() == use.work.bound[0]->names()[0])
    past_blocks[use.work.bound[0]->text()] = fixed_block;
  const SizeSet small =
      flipped(sized ? small_check_sizes(base, small_sizes, usable, multiples, past_blocks) : base);
  bool has_bool = false;
  for (const std::string& b : bools) has_bool = has_bool || base.count(b);
  std::string exact_sizes;  // "threads_x a multiple of 1024": sizes an exact launch keeps whole
  for (const auto& [name, m] : multiples)
    if (std::find(known_sizes.begin(), known_sizes.end(), name) != known_sizes.end())
      exact_sizes += (exact_sizes.empty() ? "" : ", ") + name + " a multiple of " + json_number(m).dump();
  const bool only_exact = !exact_sizes.empty() && multiples.size() == known_sizes.size();
  std::string tested_text;  // "; values of reference and floating past both ends of what the kernel tests them against"
  for (const auto& [name, range] : tested) tested_text += (tested_text.empty() ? "; values of " : " and ") + name;
  if (!tested_text.empty()) tested_text += " past both ends of what the kernel tests them against";
  json purpose = fixed_lengths && missing.empty()
                     ? json(std::string("other input values (every buffer has a fixed length, so no size varies)") +
                            (has_bool ? "; every bool the other way from the timed workload" : ""))
                 : sized ? json((only_exact ? "small sizes (" + exact_sizes + ": the kernel has no guard)"
                               : !exact_sizes.empty()
                                   ? "sizes that are no multiple of any block size, but " + exact_sizes +
                                         " (the kernel has no guard on x): the guards' edges"
                                   : std::string("sizes that are no multiple of any block size: the last block's guard")) +
                              (has_bool ? "; every bool the other way from the timed workload" : "") +
                              tested_text)
                       : json(fill("what this workload drives that the timed one does not, e.g. sizes that are no "
                                   "multiple of the block"));
  double held_out_values = 0;
  for (const SizeSet& h : held_out) held_out_values += values(h);
  if (sized)
    s.inferred.push_back("workloads: timed at the sizes given, a small check at " + [&] {
      std::string t;
      for (const std::string& n : known_sizes) t += (t.empty() ? "" : ", ") + n + " = " + json_number(small.at(n)).dump();
      return t;
    }() + ", five held-out workloads of other shapes (" + std::to_string(static_cast<long long>(held_out_values)) +
                         " values in all)" + (has_bool ? "; bools flipped on the small check and on held-out 2 and 4" : ""));
  std::set<std::string> lowest_listed;  // one line per fact, though several accesses give it
  for (const analysis::PointerUse::SizeNeed& f : row_facts)
    if (f.lowest_index && lowest_listed.insert(f.at_least_zero->text()).second)
      s.inferred.push_back("sizes: " + f.at_least_zero->text() + " >= 0 on every workload (" + f.evidence +
                           "; below, the kernel would read before the buffer)");
  if (sized && held_out_values < static_cast<double>(kMinValidationValues))
    s.notes.push_back("the five held-out workloads hold " + std::to_string(static_cast<long long>(held_out_values)) +
                      " values, fewer than the " + std::to_string(kMinValidationValues) +
                      " that publishing a result asks for: larger sizes would not fit their types");
  for (const std::string& m : missing)
    s.notes.push_back("give the value of '" + m + "' on the timed workload: --size " + m + "=VALUE" +
                      (multiples.count(m) ? " (the threads your host launches on x, a multiple of " +
                                                json_number(multiples.at(m)).dump() + ")"
                       : m.rfind("threads_", 0) == 0 ? " (the threads your host launches on " + m.substr(8) + ")"
                                                     : ""));

  s.spec = {
      {"entry", s.entry},
      {"family", family},
      {"work_item", no_output ? fill("what the kernel computes: it writes no buffer a spec can name") : work_item},
      {"reference", "seed"},
      {"parameters", parameters},
      {"constants", constants_json},
      {"launch", launch},
      {"tolerance", tolerance},
      {"tolerance_note", note},
      {"min_bytes", min_bytes},
      {"tunables", {{"block_sizes", blocks.sizes.empty() ? json(fill("block sizes the kernel runs correctly with: " +
                                                                     blocks.refusal))
                                                         : json(blocks.sizes)},
                    {"default_block_size", blocks.sizes.empty() ? json(fill("one of tunables.block_sizes"))
                                                                : json(blocks.default_size)},
                    {"options", json::array({json::array(), json::array({"--use_fast_math"})})}}},
      {"workloads",
       {{"train", {{"generator", "random"}, {"variables", variables(base, "on the timed workload (large: it ranks variants)", -1)}}},
        {"train_checks", json::array({{{"generator", "random"},
                                       {"variables", variables(small, "on a small workload (odd sizes reach the edges)", 5)},
                                       {"purpose", purpose}}})},
        {"validate", validate}}}};
  for (const auto& [name, v] : other_modes) {
    SizeSet at = small;
    at[name] = static_cast<double>(v);
    s.spec["workloads"]["train_checks"].push_back(
        {{"generator", "random"},
         {"variables", variables(at, "on a small workload (odd sizes reach the edges)", 5)},
         {"purpose", "the small check's sizes with " + name + " = " + std::to_string(v) +
                         ": the branches the timed workload's " + name + " does not take"}});
  }
  if (!modes.empty()) {
    std::string text;
    for (const auto& [name, named] : modes) {
      text += (text.empty() ? "" : "; ") + name + " in {";
      std::string list;
      for (const long long v : named) list += (list.empty() ? "" : ", ") + std::to_string(v);
      text += list + "}";
    }
    s.inferred.push_back("modes: " + text + " (the values the kernel compares them with, one past the largest, "
                         "and the timed one's): a small check at each value the timed workload does not take, and "
                         "the held-out workloads go through them all");
  }
  if (!coverage_exempt.empty()) s.spec["coverage_exempt"] = coverage_exempt;
  if (constants_json.empty()) s.spec.erase("constants");
  untie_spec(s.spec, given.tied);
  return s;
}

}  // namespace

}  // namespace gi
