#include "fitness/workload/kernel_spec.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "fitness/instrument/branch_coverage.hpp"
#include "fitness/workload/random_workload.hpp"
#include "fitness/workload/reference_registry.hpp"
#include "grammar/constant_variables.hpp"
#include "grammar/grammar.hpp"
#include "grammar/record_type.hpp"
#include "grammar/type_aliases.hpp"
#include "grammar/switches.hpp"
#include "grammar/template_instance.hpp"

namespace gi::fitness {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* json_kind(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "something else";
  }
}

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

// Compile options that change speed, not meaning (beyond rounding): anything
// else (-G, -D..., -lineinfo, include paths) does not belong in a tuning space.
bool is_performance_option(const std::string& o) {
  static const std::vector<std::string> exact = {"--use_fast_math", "-use_fast_math",
                                                 "--extra-device-vectorization", "-extra-device-vectorization",
                                                 "--restrict", "-restrict"};
  static const std::vector<std::string> prefixes = {"--maxrregcount=", "-maxrregcount=", "--ftz=", "-ftz=",
                                                    "--prec-div=", "-prec-div=", "--prec-sqrt=", "-prec-sqrt=",
                                                    "--fmad=", "-fmad="};
  if (std::find(exact.begin(), exact.end(), o) != exact.end()) return true;
  for (const auto& p : prefixes)
    if (o.size() > p.size() && o.compare(0, p.size(), p) == 0) return true;
  return false;
}

}  // namespace

// Every type name a spec may use, for messages.
constexpr const char* kTypeNames = "int, unsigned, float, double, bool, int64, uint64, uint8, int8, uint16, int16, "
                                   "float2, float3, float4, int2, int3, int4, uint2, uint3, uint4, uchar4, long2, ulong2";

bool type_matches(const std::string& spec_type, const std::string& base) {
  if (spec_type == base) return true;
  if (spec_type == "int") return base == "signed" || base == "signed int" || base == "int32_t";
  if (spec_type == "unsigned") return base == "unsigned int" || base == "uint" || base == "uint32_t";
  // 64 bits wide on every platform CUDA runs on (LP64 Linux; `long` is 32 on Windows, which gi does not target).
  static const std::set<std::string> int64 = {"long", "long int", "signed long", "signed long int", "long long",
                                              "long long int", "signed long long", "signed long long int",
                                              "int64_t", "ptrdiff_t", "ssize_t"};
  static const std::set<std::string> uint64 = {"unsigned long", "unsigned long int", "unsigned long long",
                                               "unsigned long long int", "uint64_t", "size_t", "ulong"};
  if (const std::string narrow = grammar::narrow_integer_type(base); !narrow.empty()) return spec_type == narrow;
  if (spec_type == "int64") return int64.count(base) > 0;
  if (spec_type == "uint64") return uint64.count(base) > 0;
  if (spec_type == "long2") return base == "longlong2";
  if (spec_type == "ulong2") return base == "ulonglong2";
  return false;
}

namespace {

class SpecReader {
 public:
  // `pre_included`: the text of the headers the build pre-includes, whose
  // type aliases (`#define fp float`) name the kernel's parameter types too.
  SpecReader(std::string file, SpecCheck check, std::string_view pre_included = {})
      : file_(std::move(file)), check_(check), pre_included_(pre_included) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw std::runtime_error(file_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  void expect_object(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, std::string("expected an object, found ") + json_kind(j));
  }

  // Unknown keys are typos; keys starting with '_' are comments.
  void only_keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) const {
    for (const auto& [key, value] : obj.items()) {
      if (!key.empty() && key[0] == '_') continue;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(path.empty() ? key : path + "." + key, "unknown field (expected one of " + join(allowed) + ")");
    }
  }

  const json& required(const json& obj, const std::string& path, const std::string& key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(child(path, key), "missing required field");
    return *it;
  }

  static std::string child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  std::string string_field(const json& j, const std::string& path, bool non_empty = true) const {
    if (!j.is_string()) fail(path, std::string("expected a string, found ") + json_kind(j));
    std::string s = j.get<std::string>();
    if (non_empty && s.empty()) fail(path, "expected a non-empty string");
    return s;
  }

  double number_field(const json& j, const std::string& path) const {
    if (!j.is_number()) fail(path, std::string("expected a number, found ") + json_kind(j));
    return j.get<double>();
  }

  long long integer_field(const json& j, const std::string& path, long long lo, long long hi) const {
    const std::string expected = "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
    if (!j.is_number_integer()) fail(path, expected + ", found " + json_kind(j));
    // Unsigned values beyond long long would wrap: compare them as unsigned.
    if (j.is_number_unsigned() && j.get<unsigned long long>() > static_cast<unsigned long long>(hi))
      fail(path, expected + ", found " + j.dump());
    const long long v = j.get<long long>();
    if (v < lo || v > hi) fail(path, expected + ", found " + j.dump());
    return v;
  }

  Expression expression_field(const json& j, const std::string& path) const {
    if (j.is_number()) return Expression::constant(j.get<double>());
    if (!j.is_string())
      fail(path, std::string("expected an expression (a string or a number), found ") + json_kind(j));
    try {
      return Expression::parse(j.get<std::string>());
    } catch (const std::runtime_error& e) {
      fail(path, e.what());
    }
  }

  // A scalar's "value": one expression, or for a vector type (int3, float2,
  // ...) an array of one expression per component (x, y, z, w).
  void read_scalar_value(const json& j, const std::string& path, ParamSpec& ps) const {
    if (!ps.record_fields.empty()) {
      const std::size_t n = ps.record_fields.size();
      if (!j.is_array() || j.size() != n)
        fail(path, "struct " + ps.type_name + " takes an array of " + std::to_string(n) +
                       " expressions, one per component of its layout in order, found " + json_kind(j) +
                       (j.is_array() ? " of " + std::to_string(j.size()) : std::string()));
      for (std::size_t c = 0; c < n; ++c) ps.components.push_back(expression_field(j[c], index(path, c)));
      return;
    }
    const std::size_t n = element_components(ps.type);
    if (n == 1) {
      ps.value = expression_field(j, path);
      return;
    }
    if (!j.is_array() || j.size() != n)
      fail(path, ps.type_name + " takes an array of " + std::to_string(n) + " expressions (x, y" +
                     (n > 2 ? ", z" : "") + (n > 3 ? ", w" : "") + "), found " + json_kind(j) +
                     (j.is_array() ? " of " + std::to_string(j.size()) : std::string()));
    for (std::size_t c = 0; c < n; ++c) ps.components.push_back(expression_field(j[c], index(path, c)));
  }

  KernelSpec read(const json& spec, std::string_view kernel_source, const std::string& kernel_name) {
    KernelSpec k;
    k.display_path = file_;
    expect_object(spec, "");
    only_keys(spec, "", {"entry", "family", "work_item", "parameters", "launch", "tolerance", "tolerance_note",
                         "min_bytes", "tunables", "switches", "switch_combinations", "workloads",
                         "coverage_exempt", "include_dirs", "nvrtc_options", "pre_includes", "reference", "constants"});  // include_dirs, nvrtc_options, pre_includes: gi/seed/seed_build.hpp
    k.entry = string_field(required(spec, "", "entry"), "entry");
    k.family = string_field(required(spec, "", "family"), "family");
    k.work_item = string_field(required(spec, "", "work_item"), "work_item");
    read_parameters(required(spec, "", "parameters"), k);
    if (const auto c = spec.find("constants"); c != spec.end()) read_constants(*c, k);
    read_launch(required(spec, "", "launch"), k);
    k.tolerance = read_tolerance(required(spec, "", "tolerance"), "tolerance");
    k.tolerance_note = string_field(required(spec, "", "tolerance_note"), "tolerance_note");
    k.min_bytes = expression_field(required(spec, "", "min_bytes"), "min_bytes");
    read_tunables(required(spec, "", "tunables"), k);
    read_workloads(required(spec, "", "workloads"), k);
    if (const auto c = spec.find("coverage_exempt"); c != spec.end()) read_coverage_exempt(*c, k);
    check_against_kernel(k, kernel_source, kernel_name);
    // A variant is checked by what it writes: with no output every one would pass.
    if (std::none_of(k.parameters.begin(), k.parameters.end(),
                     [](const ParamSpec& p) { return p.role == ParamRole::Out || p.role == ParamRole::InOut; }))
      fail("parameters", "no out or inout buffer: gi checks a kernel by the buffers it writes, and this spec "
                         "names none");
    read_switch_fields(spec, kernel_source, kernel_name, k.switches, k.switch_notes, k.switch_combinations,
                       &k.switch_defaults);
    if (const auto r = spec.find("reference"); r != spec.end()) {
      if (!r->is_string() || r->get<std::string>() != "seed")
        fail("reference", "the only value is \"seed\" (the seed's own GPU outputs are the reference); leave it out "
                          "for a CPU reference registered with GI_REGISTER_REFERENCE");
      k.reference_is_seed = true;
    }
    if (check_.registry && !k.reference_is_seed && !has_reference(k.entry))
      fail("entry", "no CPU reference is registered for '" + k.entry + "' (known: " + join(reference_names()) +
                        "): add one in the seed's reference.cpp with GI_REGISTER_REFERENCE");
    return k;
  }

 private:
  std::string file_;
  SpecCheck check_;
  std::string_view pre_included_;
  std::map<std::string, std::string> aliases_;  // of kernel.cu and its pre-includes

  // Whether the spec's type is the declared one, or the type it names.
  bool declared_as(const std::string& spec_type, const std::string& declared) const {
    return type_matches(spec_type, declared) || type_matches(spec_type, grammar::resolve_type_alias(aliases_, declared));
  }
  // " (an alias of float)" for a declared type that names another.
  std::string alias_note(const std::string& declared) const {
    const std::string t = grammar::resolve_type_alias(aliases_, declared);
    return t == declared ? "" : " (an alias of " + t + ")";
  }

  void read_parameters(const json& params, KernelSpec& k) const {
    if (!params.is_array() || params.empty())
      fail("parameters", std::string("expected a non-empty array, found ") + json_kind(params));
    std::set<std::string> names;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const std::string path = index("parameters", i);
      const json& p = params[i];
      expect_object(p, path);
      only_keys(p, path, {"name", "type", "role", "count", "value", "written", "written_indices",
                          "checked_components", "accumulation_bound", "texture", "layout"});
      ParamSpec ps;
      ps.json_path = path;
      ps.name = string_field(required(p, path, "name"), child(path, "name"));
      if (!names.insert(ps.name).second) fail(child(path, "name"), "duplicate parameter name '" + ps.name + "'");
      ps.type_name = string_field(required(p, path, "type"), child(path, "type"));
      if (const auto layout = p.find("layout"); layout != p.end()) {
        read_record_layout(*layout, child(path, "layout"), ps, p.value("role", "") == "scalar");
      } else {
        const auto type = element_type_from_name(ps.type_name);
        if (!type)
          fail(child(path, "type"), "expected one of " + std::string(kTypeNames) + ", or a struct's name with its " +
                                        "\"layout\", found '" + ps.type_name + "'");
        ps.type = *type;
      }
      const std::string role = string_field(required(p, path, "role"), child(path, "role"), false);
      if (role == "in") ps.role = ParamRole::In;
      else if (role == "out") ps.role = ParamRole::Out;
      else if (role == "inout") ps.role = ParamRole::InOut;
      else if (role == "scalar") ps.role = ParamRole::Scalar;
      else fail(child(path, "role"), "expected one of in, out, inout, scalar, found '" + role + "'");

      if (ps.role == ParamRole::Scalar) {
        for (const char* key : {"count", "written", "written_indices", "checked_components", "accumulation_bound"})
          if (p.contains(key)) fail(child(path, key), "only buffers (in, out, inout) have this field");
        if (p.contains("texture")) fail(child(path, "texture"), "only in buffers are read through a texture");
        read_scalar_value(required(p, path, "value"), child(path, "value"), ps);
      } else {
        if (p.contains("value")) fail(child(path, "value"), "only scalars have a value; buffers have a count");
        if (!element_is_buffer_type(ps.type))
          fail(child(path, "type"), "a buffer of " + ps.type_name + ": gi generates none (" + ps.type_name +
                                        " is for scalars only)");
        ps.count = expression_field(required(p, path, "count"), child(path, "count"));
        if (ps.record_components > 0) {
          // Counted in records; every later step counts the components.
          for (const char* key : {"written", "written_indices", "checked_components", "accumulation_bound", "texture"})
            if (p.contains(key)) fail(child(path, key), "a buffer of records (\"layout\") takes no " + std::string(key));
          ps.record_count = ps.count;
          ps.count = Expression::parse("(" + ps.count.text() + ") * " + std::to_string(ps.record_components));
        }
        read_output_fields(p, path, ps);
        if (const auto t = p.find("texture"); t != p.end()) read_texture(*t, child(path, "texture"), ps);
      }
      k.parameters.push_back(std::move(ps));
    }
    // written_indices must name an int input listed in the spec.
    for (const ParamSpec& ps : k.parameters) {
      if (ps.written_all) continue;
      const std::string path = child(ps.json_path, "written_indices");
      const ParamSpec* idx = k.find_parameter(ps.written_indices);
      if (idx == nullptr) fail(path, "no parameter named '" + ps.written_indices + "' lists the written elements");
      if (idx->role != ParamRole::In || (idx->type != ElementType::I32 && idx->type != ElementType::U32))
        fail(path, "'" + ps.written_indices + "' must be an int or unsigned buffer with role in");
    }
  }

  void read_constants(const json& constants, KernelSpec& k) const {
    if (!constants.is_array()) fail("constants", std::string("expected an array, found ") + json_kind(constants));
    std::set<std::string> names;
    for (const ParamSpec& p : k.parameters) names.insert(p.name);
    for (std::size_t i = 0; i < constants.size(); ++i) {
      const std::string path = index("constants", i);
      const json& c = constants[i];
      expect_object(c, path);
      only_keys(c, path, {"name", "type", "value", "count"});
      ParamSpec ps;
      ps.json_path = path;
      ps.role = ParamRole::Scalar;
      ps.name = string_field(required(c, path, "name"), child(path, "name"));
      if (!names.insert(ps.name).second)
        fail(child(path, "name"), "'" + ps.name + "' is already a parameter or a constant of this spec");
      ps.type_name = string_field(required(c, path, "type"), child(path, "type"));
      const auto type = element_type_from_name(ps.type_name);
      if (!type) fail(child(path, "type"), "a constant must be int, unsigned, float, double, bool or a vector of "
                                           "them (" + std::string(kTypeNames) + "), found '" + ps.type_name + "'");
      ps.type = *type;
      if (c.contains("count") == c.contains("value"))
        fail(path, "give a scalar constant its \"value\", an array constant its \"count\" (one of the two)");
      if (c.contains("count")) {
        if (!element_is_buffer_type(ps.type))
          fail(child(path, "type"), "an array of " + ps.type_name + ": gi generates none (" + ps.type_name +
                                        " is for scalars only)");
        ps.constant_array = true;
        ps.count = expression_field(c["count"], child(path, "count"));
      } else {
        read_scalar_value(c["value"], child(path, "value"), ps);
      }
      k.constants.push_back(std::move(ps));
    }
  }

  // Each spec constant is a scalar __constant__ variable of kernel.cu, of its type.
  void check_constants(const KernelSpec& k, const grammar::ParsedKernel& parsed, const std::string& kernel_name) const {
    if (k.constants.empty()) return;
    const std::vector<grammar::ConstantVariable> declared = grammar::constant_variables(parsed);
    for (const ParamSpec& c : k.constants) {
      const auto d = std::find_if(declared.begin(), declared.end(),
                                  [&](const grammar::ConstantVariable& v) { return v.name == c.name; });
      if (d == declared.end()) {
        std::vector<std::string> there;
        for (const auto& v : declared) there.push_back(v.name);
        fail(child(c.json_path, "name"), "'" + c.name + "' is no __constant__ variable of " + kernel_name +
                                             " (there: " + (there.empty() ? std::string("none") : join(there)) + ")");
      }
      if (d->array != c.constant_array)
        fail(child(c.json_path, d->array ? "value" : "count"),
             "'" + c.name + "' is a __constant__ " + (d->array ? "array" : "scalar") + " (" + kernel_name + " line " +
                 std::to_string(d->line) + "): give it " + (d->array ? "a \"count\" (its elements)" : "a \"value\""));
      if (!declared_as(c.type_name, d->type))
        fail(child(c.json_path, "type"), "'" + c.type_name + "' does not match the type '" + d->type + "'" +
                                             alias_note(d->type) + " of '" +
                                             c.name + "' (" + kernel_name + " line " + std::to_string(d->line) + ")");
    }
  }

  // A buffer of structs: "type" is the struct's name, "layout" its members
  // (grammar/record_type.hpp); the buffer holds record_components values of
  // one type per record.
  // A struct passed by value: any members, at C's offsets, one "value"
  // expression per component (ParamSpec::record_fields).
  void read_record_layout(const json& j, const std::string& path, ParamSpec& ps, bool by_value) const {
    if (!j.is_array() || j.empty())
      fail(path, std::string("expected a non-empty array of member types (\"float3\", \"float[9]\"), found ") +
                     json_kind(j));
    std::vector<std::string> layout;
    for (std::size_t i = 0; i < j.size(); ++i) layout.push_back(string_field(j[i], index(path, i)));
    if (by_value) {
      const grammar::RecordFields fields = grammar::record_fields(layout);
      if (!fields.refusal.empty()) fail(path, fields.refusal);
      for (const auto& [word, offset] : fields.components)
        ps.record_fields.push_back({*element_type_from_name(word), offset});
      ps.record_bytes = fields.bytes;
      ps.type = ps.record_fields.front().type;
      ps.record_components = ps.record_fields.size();
    } else {
      const grammar::RecordWords words = grammar::record_words(layout);
      if (!words.refusal.empty()) fail(path, words.refusal);
      ps.type = *element_type_from_name(words.word);
      ps.record_components = static_cast<std::size_t>(words.words);
    }
    ps.record_layout = std::move(layout);
  }

  // "texture": true: an in buffer the kernel reads through a
  // cudaTextureObject_t parameter (tex1Dfetch<T>); the texture's element is
  // one to four 32-bit words, as a linear CUDA texture allows.
  void read_texture(const json& t, const std::string& path, ParamSpec& ps) const {
    if (!t.is_boolean() && !t.is_object())
      fail(path, std::string("expected true, false or an array texture's object {\"extent\": [...]}, found ") +
                     json_kind(t));
    if (t.is_boolean() && !t.get<bool>()) return;
    if (ps.role != ParamRole::In) fail(path, "only in buffers are read through a texture");
    if (!fits_linear_texture(ps.type))
      fail(path, ps.type == ElementType::F64
                     ? "a texture of double: CUDA's linear textures hold 32-bit words (read it as int2 and convert)"
                 : component_bytes(ps.type) < 4
                     ? "a texture of " + ps.type_name + ": gi's linear textures read 32-bit components; read the buffer "
                       "as a plain pointer"
                     : "a texture of " + ps.type_name + ": CUDA's textures have one, two or four channels");
    ps.texture = true;
    if (t.is_object()) read_texture_array(t, path, ps);
  }

  // {"extent": [w, h, d], "filter": ..., "address": ..., "normalized": ...}:
  // a texture over a CUDA array (fitness/workload/launch_plan.hpp, TextureArray).
  void read_texture_array(const json& t, const std::string& path, ParamSpec& ps) const {
    only_keys(t, path, {"extent", "filter", "address", "normalized"});
    const json& extent = required(t, path, "extent");
    const std::string extent_path = child(path, "extent");
    if (!extent.is_array() || extent.empty() || extent.size() > 3)
      fail(extent_path, std::string("expected an array of one to three expressions (width, height, depth), found ") +
                            (extent.is_array() ? std::to_string(extent.size()) + " of them" : json_kind(extent)));
    for (std::size_t d = 0; d < extent.size(); ++d) ps.texture_extent.push_back(expression_field(extent[d], index(extent_path, d)));
    ps.sampler.dimensions = static_cast<unsigned>(extent.size());
    if (const auto f = t.find("filter"); f != t.end()) {
      const std::string filter = string_field(*f, child(path, "filter"));
      if (filter == "linear") ps.sampler.filter = TextureFilter::Linear;
      else if (filter != "point") fail(child(path, "filter"), "expected point or linear, found '" + filter + "'");
    }
    if (ps.sampler.filter == TextureFilter::Linear && !filters_linearly(ps.type))
      fail(child(path, "filter"), "linear filtering of " + ps.type_name +
                                      ": CUDA filters float, float2 and float4 textures only (use point)");
    if (const auto a = t.find("address"); a != t.end()) {
      const std::string address = string_field(*a, child(path, "address"));
      if (address == "border") ps.sampler.address = TextureAddress::Border;
      else if (address != "clamp")
        fail(child(path, "address"), "expected clamp or border, found '" + address +
                                         "' (wrap and mirror are not drawn by gi)");
    }
    if (const auto n = t.find("normalized"); n != t.end()) {
      if (!n->is_boolean()) fail(child(path, "normalized"), std::string("expected true or false, found ") + json_kind(*n));
      ps.sampler.normalized = n->get<bool>();
    }
  }

  void read_output_fields(const json& p, const std::string& path, ParamSpec& ps) const {
    const bool output = ps.role == ParamRole::Out || ps.role == ParamRole::InOut;
    const std::size_t components = element_components(ps.type);
    if (const auto w = p.find("written"); w != p.end()) {
      if (!output) fail(child(path, "written"), "only out and inout buffers have this field");
      const std::string written = string_field(*w, child(path, "written"), false);
      if (written == "all") ps.written_all = true;
      else if (written == "active_voxels") ps.written_all = false;
      else fail(child(path, "written"), "expected one of all, active_voxels, found '" + written + "'");
    }
    if (const auto w = p.find("written_indices"); w != p.end()) {
      if (ps.written_all) fail(child(path, "written_indices"), "only with \"written\": \"active_voxels\"");
      ps.written_indices = string_field(*w, child(path, "written_indices"));
    } else if (!ps.written_all) {
      ps.written_indices = "activeVoxels";
    }
    if (const auto b = p.find("accumulation_bound"); b != p.end()) {
      const std::string bpath = child(path, "accumulation_bound");
      if (!output || ps.type != ElementType::F32) fail(bpath, "only float out and inout buffers have this field");
      ps.accumulation_bound = number_field(*b, bpath);
      if (!(ps.accumulation_bound > 0) || !std::isfinite(ps.accumulation_bound))
        fail(bpath, "expected a positive finite number: the most one work item adds to one element");
    }
    if (const auto c = p.find("checked_components"); c != p.end()) {
      const std::string cpath = child(path, "checked_components");
      if (!output) fail(cpath, "only out and inout buffers have this field");
      if (!c->is_array() || c->empty()) fail(cpath, std::string("expected a non-empty array, found ") + json_kind(*c));
      std::set<int> seen;
      for (std::size_t i = 0; i < c->size(); ++i) {
        const int v = static_cast<int>(integer_field((*c)[i], index(cpath, i), 0,
                                                     static_cast<long long>(components) - 1));
        if (!seen.insert(v).second) fail(index(cpath, i), "component " + std::to_string(v) + " listed twice");
        ps.checked_components.push_back(v);
      }
    } else if (output) {
      for (std::size_t i = 0; i < components; ++i) ps.checked_components.push_back(static_cast<int>(i));
    }
  }

  void read_launch(const json& launch, KernelSpec& k) const {
    expect_object(launch, "launch");
    only_keys(launch, "launch", {"block", "grid", "shared_bytes"});
    for (const char* key : {"block", "grid"}) {
      const std::string path = child("launch", key);
      const json& dims = required(launch, "launch", key);
      if (!dims.is_array() || dims.size() != 3)
        fail(path, std::string("expected an array of 3 expressions, found ") +
                       (dims.is_array() ? "an array of " + std::to_string(dims.size()) : json_kind(dims)));
      auto& target = std::string(key) == "block" ? k.block : k.grid;
      for (std::size_t i = 0; i < 3; ++i) target[i] = expression_field(dims[i], index(path, i));
    }
    if (const auto s = launch.find("shared_bytes"); s != launch.end())
      k.shared_bytes = expression_field(*s, "launch.shared_bytes");
  }

  Tolerance read_tolerance(const json& t, const std::string& path) const {
    expect_object(t, path);
    only_keys(t, path, {"abs", "rel"});
    Tolerance tolerance;
    tolerance.abs = number_field(required(t, path, "abs"), child(path, "abs"));
    tolerance.rel = number_field(required(t, path, "rel"), child(path, "rel"));
    if (tolerance.abs < 0) fail(child(path, "abs"), "expected a number >= 0");
    if (tolerance.rel < 0) fail(child(path, "rel"), "expected a number >= 0");
    return tolerance;
  }

  void read_tunables(const json& t, KernelSpec& k) const {
    expect_object(t, "tunables");
    only_keys(t, "tunables", {"block_sizes", "default_block_size", "options"});
    const json& sizes = required(t, "tunables", "block_sizes");
    if (!sizes.is_array() || sizes.empty())
      fail("tunables.block_sizes", std::string("expected a non-empty array, found ") + json_kind(sizes));
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::string path = index("tunables.block_sizes", i);
      const auto b = static_cast<unsigned>(integer_field(sizes[i], path, 32, 1024));
      if (b % 32 != 0) fail(path, "expected a multiple of 32 (a whole number of warps), found " + std::to_string(b));
      if (std::find(k.block_sizes.begin(), k.block_sizes.end(), b) != k.block_sizes.end())
        fail(path, "block size " + std::to_string(b) + " listed twice");
      k.block_sizes.push_back(b);
    }
    k.default_block_size = k.block_sizes.front();
    if (const auto d = t.find("default_block_size"); d != t.end()) {
      k.default_block_size = static_cast<unsigned>(integer_field(*d, "tunables.default_block_size", 1, 1024));
      if (std::find(k.block_sizes.begin(), k.block_sizes.end(), k.default_block_size) == k.block_sizes.end())
        fail("tunables.default_block_size", "expected one of tunables.block_sizes");
    }
    const json& options = required(t, "tunables", "options");
    if (!options.is_array() || options.empty())
      fail("tunables.options", std::string("expected a non-empty array of option lists, found ") + json_kind(options));
    for (std::size_t i = 0; i < options.size(); ++i) {
      const std::string path = index("tunables.options", i);
      if (!options[i].is_array()) fail(path, std::string("expected an array of strings, found ") + json_kind(options[i]));
      std::vector<std::string> set;
      for (std::size_t j = 0; j < options[i].size(); ++j) {
        const std::string o = string_field(options[i][j], index(path, j));
        if (!is_performance_option(o))
          fail(index(path, j), "'" + o + "' is not a performance option (expected --use_fast_math, "
                               "--maxrregcount=N, --ftz=, --prec-div=, --prec-sqrt=, --fmad=, "
                               "--extra-device-vectorization or --restrict)");
        set.push_back(o);
      }
      k.option_sets.push_back(std::move(set));
    }
  }

  enum class WorkloadRole { Train, TrainCheck, Validate };

  WorkloadSpec read_workload(const json& w, const std::string& path, WorkloadRole role) const {
    expect_object(w, path);
    std::vector<std::string> keys = {"generator", "variables", "tolerance", "tolerance_note"};
    // The training seed is the run's, fresh every generation; held-out data has its own.
    if (role == WorkloadRole::Validate) keys.push_back("seed");
    if (role == WorkloadRole::TrainCheck) keys.push_back("purpose");
    only_keys(w, path, keys);
    WorkloadSpec ws;
    if (role == WorkloadRole::TrainCheck)
      ws.purpose = string_field(required(w, path, "purpose"), child(path, "purpose"));
    if (const auto t = w.find("tolerance"); t != w.end()) {
      ws.tolerance = read_tolerance(*t, child(path, "tolerance"));
      ws.tolerance_note = string_field(required(w, path, "tolerance_note"), child(path, "tolerance_note"));
    } else if (w.contains("tolerance_note")) {
      fail(child(path, "tolerance_note"), "only with a \"tolerance\" of the workload's own");
    }
    ws.json_path = path;
    ws.generator = string_field(required(w, path, "generator"), child(path, "generator"));
    if (check_.registry && ws.generator != kRandomGenerator && !has_generator(ws.generator))
      fail(child(path, "generator"), "unknown generator '" + ws.generator + "' (known: " + join(generator_names()) + ")");
    if (const auto v = w.find("variables"); v != w.end()) {
      if (!v->is_object()) fail(child(path, "variables"), std::string("expected an object, found ") + json_kind(*v));
      ws.variables = *v;
    }
    if (const auto s = w.find("seed"); s != w.end())
      ws.seed = static_cast<std::uint64_t>(integer_field(*s, child(path, "seed"), 0, (1LL << 53)));
    return ws;
  }

  void read_workloads(const json& w, KernelSpec& k) const {
    expect_object(w, "workloads");
    only_keys(w, "workloads", {"train", "train_checks", "validate"});
    k.train = read_workload(required(w, "workloads", "train"), "workloads.train", WorkloadRole::Train);
    if (const auto c = w.find("train_checks"); c != w.end()) {
      if (!c->is_array()) fail("workloads.train_checks", std::string("expected an array, found ") + json_kind(*c));
      for (std::size_t i = 0; i < c->size(); ++i)
        k.train_checks.push_back(read_workload((*c)[i], index("workloads.train_checks", i), WorkloadRole::TrainCheck));
    }
    const json& v = required(w, "workloads", "validate");
    if (!v.is_array()) fail("workloads.validate", std::string("expected an array, found ") + json_kind(v));
    if (v.size() < 5)
      fail("workloads.validate", "expected at least 5 held-out workloads, found " + std::to_string(v.size()));
    for (std::size_t i = 0; i < v.size(); ++i)
      k.validate.push_back(read_workload(v[i], index("workloads.validate", i), WorkloadRole::Validate));
  }

  void read_coverage_exempt(const json& list, KernelSpec& k) const {
    if (!list.is_array()) fail("coverage_exempt", std::string("expected an array, found ") + json_kind(list));
    std::set<std::pair<std::string, bool>> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = index("coverage_exempt", i);
      const json& e = list[i];
      expect_object(e, path);
      only_keys(e, path, {"branch", "direction", "reason"});
      CoverageExemption x;
      x.json_path = path;
      x.branch = string_field(required(e, path, "branch"), child(path, "branch"));
      if (!parse_branch_key(x.branch))
        fail(child(path, "branch"), "'" + x.branch + "' is not a branch key: expected <kind>@<line>:<column> with "
                                    "kind if, op or ?: and positive numbers (e.g. if@35:13)");
      const json& d = required(e, path, "direction");
      const std::string direction = string_field(d, child(path, "direction"), false);
      if (direction != "true" && direction != "false")
        fail(child(path, "direction"), "expected \"true\" or \"false\", found '" + direction + "'");
      x.direction = direction == "true";
      x.reason = string_field(required(e, path, "reason"), child(path, "reason"));
      if (x.reason.find_first_not_of(" \t\r\n") == std::string::npos)
        fail(child(path, "reason"), "expected a reason, found only whitespace");
      if (!seen.emplace(x.branch, x.direction).second)
        fail(path, x.branch + " " + direction + " is exempted twice");
      k.coverage_exempt.push_back(std::move(x));
    }
  }


  // A switch value as text: integers as integers, strings as they are.
  std::string switch_value(const json& v, const std::string& path) const {
    if (v.is_number_integer()) return std::to_string(v.get<long long>());
    if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
    fail(path, std::string("expected an integer or a non-empty string, found ") + json_kind(v));
  }

 public:
  void read_switch_fields(const json& spec, std::string_view kernel_source, const std::string& kernel_name,
                          std::vector<grammar::SwitchDef>& switches, std::vector<std::string>& notes,
                          grammar::SwitchCombinations& combinations,
                          std::map<std::string, std::string>* default_values = nullptr) const {
    const auto s = spec.find("switches");
    if (s == spec.end()) {
      if (spec.contains("switch_combinations")) fail("switch_combinations", "only with \"switches\"");
      return;
    }
    if (!s->is_array() || s->empty()) fail("switches", std::string("expected a non-empty array, found ") + json_kind(*s));
    grammar::Grammar g;
    try {
      g = grammar::Grammar::from_source(kernel_source, kernel_name);
    } catch (const std::exception& e) {
      fail("switches", std::string("cannot parse the kernel: ") + e.what());
    }
    for (std::size_t i = 0; i < s->size(); ++i) {
      const std::string path = index("switches", i);
      const json& sw = (*s)[i];
      expect_object(sw, path);
      only_keys(sw, path, {"name", "values", "note"});
      grammar::SwitchDef d;
      d.name = string_field(required(sw, path, "name"), child(path, "name"));
      for (const auto& other : switches)
        if (other.name == d.name) fail(child(path, "name"), "switch '" + d.name + "' declared twice");
      const json& values = required(sw, path, "values");
      if (!values.is_array() || values.size() < 2)
        fail(child(path, "values"), "expected an array of at least two values (the default and another)");
      for (std::size_t v = 0; v < values.size(); ++v) {
        const std::string value = switch_value(values[v], index(child(path, "values"), v));
        if (std::find(d.values.begin(), d.values.end(), value) != d.values.end())
          fail(index(child(path, "values"), v), "value " + value + " listed twice");
        d.values.push_back(value);
      }
      const auto line = grammar::find_switch_line(g, d.name);
      if (!line)
        fail(child(path, "name"), "no `#define " + d.name + " VALUE` line at file level in " + kernel_name);
      if (std::find(d.values.begin(), d.values.end(), line->value) == d.values.end())
        fail(child(path, "values"), "the kernel's own value " + line->value + " (its default, " + kernel_name +
                                        " line " + std::to_string(g.rule(line->rule).first_line) + ") is not listed");
      notes.push_back(string_field(required(sw, path, "note"), child(path, "note")));
      if (default_values) (*default_values)[d.name] = line->value;
      switches.push_back(std::move(d));
    }
    const auto c = spec.find("switch_combinations");
    if (c == spec.end()) return;
    if (!c->is_array() || c->empty())
      fail("switch_combinations", std::string("expected a non-empty array, found ") + json_kind(*c));
    for (std::size_t i = 0; i < c->size(); ++i) {
      const std::string path = index("switch_combinations", i);
      expect_object((*c)[i], path);
      std::map<std::string, std::vector<std::string>> entry;
      for (const auto& [name, values] : (*c)[i].items()) {
        const auto def = std::find_if(switches.begin(), switches.end(), [&](const auto& d) { return d.name == name; });
        if (def == switches.end()) fail(child(path, name), "no switch named '" + name + "'");
        if (!values.is_array() || values.empty())
          fail(child(path, name), std::string("expected a non-empty array of values, found ") + json_kind(values));
        for (std::size_t v = 0; v < values.size(); ++v) {
          const std::string value = switch_value(values[v], index(child(path, name), v));
          if (std::find(def->values.begin(), def->values.end(), value) == def->values.end())
            fail(index(child(path, name), v), "'" + value + "' is not a value of switch " + name);
          entry[name].push_back(value);
        }
      }
      combinations.push_back(std::move(entry));
    }
    grammar::EditContext defaults;
    defaults.switches = switches;
    if (!grammar::switch_setting_allowed(combinations, grammar::switch_values(g, defaults)))
      fail("switch_combinations", "the kernel's own setting (every switch at its default) is not allowed");
  }

 private:
  void check_against_kernel(const KernelSpec& k, std::string_view source, const std::string& kernel_name) {
    aliases_ = grammar::type_aliases(std::string(pre_included_) + "\n" + std::string(source));
    grammar::Grammar g;
    try {
      g = grammar::Grammar::from_source(source, kernel_name);
    } catch (const std::exception& e) {
      fail("entry", std::string("cannot parse the kernel: ") + e.what());
    }
    // `reg::cuda::scale<float, 2>` names the source's `scale`: namespaces and
    // template arguments are the compiler's business (fitness/gpu/entry_symbol.hpp).
    const std::string base = grammar::entry_function_name(k.entry);
    const bool instance = k.entry.find('<') != std::string::npos;
    const grammar::Function* f = nullptr;
    std::vector<std::string> kernels;
    for (const auto& fn : g.parsed().functions) {
      if (fn.is_kernel) kernels.push_back(fn.name);
      if (fn.name == base && fn.is_kernel) f = &fn;
    }
    if (f == nullptr)
      fail("entry", "no __global__ function '" + k.entry + "' in " + kernel_name + " (kernels there: " +
                        (kernels.empty() ? std::string("none") : join(kernels)) + ")");
    check_constants(k, g.parsed(), kernel_name);
    const std::size_t n = std::min(f->params.size(), k.parameters.size());
    for (std::size_t i = 0; i < n; ++i) {
      const ParamSpec& ps = k.parameters[i];
      const grammar::Param& kp = f->params[i];
      const std::string where = kernel_name + " parameter " + std::to_string(i + 1) + " of " + k.entry;
      if (ps.name != kp.name)
        fail(child(ps.json_path, "name"), "'" + ps.name + "' does not match " + where + ", '" + kp.name +
                                              "' (parameters must be listed in the kernel's order)");
      // A template instance's parameter types are its arguments' (T* is float*).
      if (ps.texture) {
        if (!kp.texture_object())
          fail(child(ps.json_path, "texture"), "true, but " + where + " is '" + kp.base_type + (kp.pointer ? "*" : "") +
                                                   "', not a cudaTextureObject_t");
        continue;
      }
      if (kp.texture_object())
        fail(ps.json_path, where + " is a cudaTextureObject_t: an in buffer with \"texture\": true and the type "
                                   "its tex1Dfetch<T> reads");
      if (!instance && !declared_as(ps.type_name, kp.base_type))
        fail(child(ps.json_path, "type"), "'" + ps.type_name + "' does not match the type '" + kp.base_type + "'" +
                                              alias_note(kp.base_type) + " of " + where);
      if (ps.is_buffer() != kp.pointer)
        fail(child(ps.json_path, "role"), "'" + to_string(ps.role) + "' does not match " + where + ", which is " +
                                              (kp.pointer ? "a pointer" : "passed by value"));
      if ((ps.role == ParamRole::Out || ps.role == ParamRole::InOut) && kp.const_pointee)
        fail(child(ps.json_path, "role"), "'" + to_string(ps.role) + "' but " + where + " points to const");
    }
    if (f->params.size() != k.parameters.size()) {
      if (f->params.size() > k.parameters.size())
        fail("parameters", "lists " + std::to_string(k.parameters.size()) + " parameters but " + k.entry + " in " +
                               kernel_name + " has " + std::to_string(f->params.size()) + "; missing '" +
                               f->params[k.parameters.size()].name + "'");
      fail(index("parameters", f->params.size()),
           "'" + k.parameters[f->params.size()].name + "' is not a parameter of " + k.entry + " in " + kernel_name +
               ", which has " + std::to_string(f->params.size()));
    }
  }
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The path as the user would write it: relative to the working directory
// when inside it.
std::string display(const fs::path& p) {
  fs::path shown = p.lexically_normal();
  if (shown.is_absolute()) {
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (!ec) {
      const fs::path rel = shown.lexically_relative(cwd);
      if (!rel.empty() && *rel.begin() != "..") shown = rel;
    }
  }
  return shown.generic_string();
}

}  // namespace

const ParamSpec* KernelSpec::find_parameter(std::string_view name) const {
  for (const ParamSpec& p : parameters)
    if (p.name == name) return &p;
  return nullptr;
}

const ParamSpec* KernelSpec::find_constant_array(std::string_view name) const {
  for (const ParamSpec& c : constants)
    if (c.constant_array && c.name == name) return &c;
  return nullptr;
}

namespace {

// N of "prefix:N", or nullopt when `which` is not of that form.
std::optional<std::size_t> numbered(std::string_view which, std::string_view prefix) {
  if (which.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = which.substr(prefix.size());
  if (digits.empty() || digits.size() >= 10 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoul(std::string(digits));
}

}  // namespace

const WorkloadSpec& KernelSpec::workload(std::string_view which) const {
  if (which == "train") return train;
  auto missing = [&](const std::string& what) {
    return std::runtime_error(display_path + ": no workload '" + std::string(which) + "': " + what);
  };
  if (const auto i = numbered(which, "train:")) {
    if (*i == 0) return train;
    if (*i <= train_checks.size()) return train_checks[*i - 1];
    throw missing("workloads.train_checks has " + std::to_string(train_checks.size()) + " entries (train:1..train:" +
                  std::to_string(train_checks.size()) + ")");
  }
  if (const auto i = numbered(which, "validate:")) {
    if (*i < validate.size()) return validate[*i];
    throw missing("workloads.validate has " + std::to_string(validate.size()) + " entries (0.." +
                  std::to_string(validate.size() - 1) + ")");
  }
  throw missing("expected \"train\", \"train:N\" or \"validate:N\"");
}

std::vector<std::string> KernelSpec::training_workloads() const {
  std::vector<std::string> names = {"train"};
  for (std::size_t i = 1; i <= train_checks.size(); ++i) names.push_back("train:" + std::to_string(i));
  return names;
}

std::vector<std::string> KernelSpec::every_workload() const {
  std::vector<std::string> names = training_workloads();
  for (std::size_t i = 0; i < validate.size(); ++i) names.push_back("validate:" + std::to_string(i));
  return names;
}

grammar::EditContext read_switches(const nlohmann::json& spec, const std::string& display_path,
                                   std::string_view kernel_source, const std::string& kernel_name) {
  grammar::EditContext context;
  if (spec.is_object() && spec.contains("entry") && spec["entry"].is_string()) context.entry = spec["entry"].get<std::string>();
  // Checked with the rest of the spec by load_kernel_spec; here only read.
  if (spec.is_object() && spec.contains("parameters") && spec["parameters"].is_array())
    for (const nlohmann::json& p : spec["parameters"])
      if (p.is_object() && p.contains("name") && p["name"].is_string() && p.contains("accumulation_bound") &&
          p["accumulation_bound"].is_number())
        context.accumulation_bounds[p["name"].get<std::string>()] = p["accumulation_bound"].get<double>();
  std::vector<std::string> notes;
  SpecReader(display_path, SpecCheck{false})
      .read_switch_fields(spec, kernel_source, kernel_name, context.switches, notes, context.switch_combinations);
  return context;
}

std::optional<ElementType> element_type_from_name(std::string_view name) {
  if (name == "int") return ElementType::I32;
  if (name == "unsigned") return ElementType::U32;
  if (name == "float") return ElementType::F32;
  if (name == "double") return ElementType::F64;
  if (name == "float2") return ElementType::F32x2;
  if (name == "float4") return ElementType::F32x4;
  if (name == "int4") return ElementType::I32x4;
  if (name == "float3") return ElementType::F32x3;
  if (name == "int2") return ElementType::I32x2;
  if (name == "int3") return ElementType::I32x3;
  if (name == "uint2") return ElementType::U32x2;
  if (name == "uint3") return ElementType::U32x3;
  if (name == "uint4") return ElementType::U32x4;
  if (name == "bool") return ElementType::Bool;
  if (name == "uint8") return ElementType::U8;
  if (name == "int8") return ElementType::I8;
  if (name == "uint16") return ElementType::U16;
  if (name == "int16") return ElementType::I16;
  if (name == "uchar4") return ElementType::U8x4;
  if (name == "int64") return ElementType::I64;
  if (name == "uint64") return ElementType::U64;
  if (name == "long2") return ElementType::I64x2;
  if (name == "ulong2") return ElementType::U64x2;
  return std::nullopt;
}

std::string to_string(ParamRole role) {
  switch (role) {
    case ParamRole::In: return "in";
    case ParamRole::Out: return "out";
    case ParamRole::InOut: return "inout";
    case ParamRole::Scalar: return "scalar";
  }
  return "unknown";
}

KernelSpec parse_kernel_spec(const nlohmann::json& spec, const std::string& display_path,
                             std::string_view kernel_source, const std::string& kernel_name, SpecCheck check,
                             std::string_view pre_included) {
  return SpecReader(display_path, check, pre_included).read(spec, kernel_source, kernel_name);
}

namespace {

// The text of the spec's "pre_includes", each found as the build finds it:
// in the seed folder, then in its "include_dirs" (relative to the folder).
// One found nowhere adds nothing here; the build names it.
std::string pre_included_text(const json& spec, const fs::path& dir) {
  std::string text;
  const auto names = spec.find("pre_includes");
  if (names == spec.end() || !names->is_array()) return text;
  std::vector<fs::path> folders = {dir};
  if (const auto d = spec.find("include_dirs"); d != spec.end() && d->is_array())
    for (const json& f : *d)
      if (f.is_string()) folders.push_back(dir / f.get<std::string>());
  for (const json& n : *names) {
    if (!n.is_string()) continue;
    for (const fs::path& f : folders)
      if (fs::is_regular_file(f / n.get<std::string>())) {
        text += read_file(f / n.get<std::string>()) + "\n";
        break;
      }
  }
  return text;
}

}  // namespace

std::vector<std::string> fields_to_fill(const json& spec) {
  std::vector<std::string> found;
  const std::function<void(const json&, const std::string&)> walk = [&](const json& j, const std::string& path) {
    if (j.is_string()) {
      const std::string& text = j.get_ref<const std::string&>();
      if (text.rfind(kFillMarker, 0) == 0) found.push_back(path + ": " + text);
    } else if (j.is_object()) {
      for (const auto& [key, value] : j.items()) walk(value, path.empty() ? key : path + "." + key);
    } else if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) walk(j[i], path + "[" + std::to_string(i) + "]");
    }
  };
  walk(spec, "");
  return found;
}

KernelSpec load_kernel_spec(const fs::path& path, SpecCheck check) {
  const fs::path spec_file = fs::is_directory(path) ? path / "spec.json" : path;
  const std::string shown = display(spec_file);
  if (!fs::is_regular_file(spec_file))
    throw std::runtime_error(shown + ": no such file: expected a seed folder holding spec.json");
  json j;
  try {
    j = json::parse(read_file(spec_file));
  } catch (const json::parse_error& e) {
    throw std::runtime_error(shown + ": malformed JSON: " + e.what());
  }
  if (const std::vector<std::string> left = fields_to_fill(j); !left.empty()) {
    std::string list;
    for (const std::string& f : left) list += "\n  " + f;
    throw std::runtime_error(shown + ": " + std::to_string(left.size()) + " field" + (left.size() == 1 ? "" : "s") +
                             " still to fill (marked " + kFillMarker + " by gi init):" + list);
  }
  const fs::path dir = spec_file.parent_path().empty() ? fs::path(".") : spec_file.parent_path();
  const fs::path kernel = dir / "kernel.cu";
  if (!fs::is_regular_file(kernel))
    throw std::runtime_error(shown + ": entry: no kernel.cu beside the spec (" + display(kernel) + ")");
  KernelSpec k = parse_kernel_spec(j, shown, read_file(kernel), display(kernel), check, pre_included_text(j, dir));
  k.dir = dir;
  // seeds/<family>/<kernel>/spec.json: the family names the folder.
  const std::string folder_family = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  if (k.family != folder_family)
    throw std::runtime_error(shown + ": family: '" + k.family + "' does not match the seed's family folder '" +
                             folder_family + "'");
  return k;
}

}  // namespace gi::fitness
