#include "fitness/workload/random_workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "fitness/workload/expression.hpp"
#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

namespace {

using json = nlohmann::json;

// splitmix64: a counter-based draw, so element i of a buffer does not depend
// on how many draws came before it.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// In [0, 1): the top 53 bits of a draw.
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

struct Distribution {
  enum class Kind { Uniform, Normal, Constant, Values } kind = Kind::Uniform;
  double a = 0, b = 0;  // uniform: lo, hi; normal: mean, sd; constant: value; values: lowest, highest
  std::vector<double> values;  // values: taken in order from the piece's start, over again when used up
};

// Elements [start, end) of each period of a buffer drawn from `d`.
struct Piece {
  Distribution d;
  double start = 0, end = 0;
};

// How a buffer is drawn: pieces laid out over `period` elements, and again
// over each further period (the whole buffer when no "every" is given).
struct Layout {
  std::vector<Piece> pieces;
  double period = 0;
};

class Reader {
 public:
  Reader(const KernelSpec& spec, const WorkloadSpec& workload) : spec_(spec), workload_(workload) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw std::runtime_error(spec_.display_path + ": " + workload_.json_path + ".variables" + path + ": " + what);
  }

  Variables numbers() const {
    Variables v;
    for (const auto& [name, value] : workload_.variables.items()) {
      if (name == "inputs") continue;
      if (!value.is_number()) fail("." + name, "expected a number (a size or a scalar's value)");
      v[name] = value.get<double>();
    }
    return v;
  }

  double bound(const json& j, const Variables& v, const std::string& path) const {
    if (j.is_number()) return j.get<double>();
    if (!j.is_string()) fail(path, "expected a number or an expression");
    try {
      return evaluate_expression(j.get<std::string>(), v);
    } catch (const std::runtime_error& e) {
      fail(path, e.what());
    }
  }

  // The input's distribution: one for the whole buffer, or pieces (a
  // buffer of several fields laid out one after another, CFD's density,
  // momentum and energy), each but the last with its length in elements;
  // with "every", the pieces fill that many elements and repeat (a record
  // per work item: Rodinia's myocyte reads 91 initial values into the
  // first slot of each workload's (xmax + 1) * 91).
  Layout layout(const ParamSpec& p, const Variables& v, double count) const {
    const std::string path = ".inputs." + p.name;
    const json& inputs = workload_.variables.contains("inputs") ? workload_.variables["inputs"] : json::object();
    if (!inputs.is_object()) fail(".inputs", "expected an object: input parameter -> distribution");
    const auto it = inputs.find(p.name);
    if (it == inputs.end())
      fail(".inputs", "no distribution for input '" + p.name +
                          "': give {\"uniform\": [lo, hi]}, {\"normal\": [mean, sd]} or {\"constant\": v}");
    if (!it->is_object() || !it->contains("pieces")) return {{Piece{distribution(p, *it, v, path), 0, count}}, count};
    const json& list = (*it)["pieces"];
    const bool every = it->contains("every");
    if (it->size() != 1u + every || !list.is_array() || list.empty())
      fail(path, "expected {\"pieces\": [{\"length\": L, \"uniform\": [lo, hi]}, ..., {\"uniform\": [lo, hi]}]}, "
                 "and \"every\": L where they repeat");
    double period = count;
    if (every) {
      period = bound((*it)["every"], v, path + ".every");
      if (period < 1 || period != std::floor(period)) fail(path + ".every", "expected a whole number of elements, 1 or more");
    }
    Layout out{{}, period};
    double end = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = path + ".pieces[" + std::to_string(i) + "]";
      const bool last = i + 1 == list.size();
      if (!list[i].is_object() || list[i].contains("length") == last)
        fail(at, last ? "the last piece is the rest of the buffer: give no length"
                      : "expected {\"length\": L, and one of uniform, normal, constant}");
      json d = list[i];
      if (!last) {
        const double length = bound(d["length"], v, at + ".length");
        if (length < 0 || length != std::floor(length)) fail(at + ".length", "expected a whole number of elements");
        d.erase("length");
        end += length;
        if (end > period)
          fail(at + ".length", "the pieces so far hold " + std::to_string(static_cast<long long>(end)) +
                                   " elements, more than " + (every ? "the period's " : "the buffer's ") +
                                   std::to_string(static_cast<long long>(period)));
      }
      const double start = out.pieces.empty() ? 0 : out.pieces.back().end;
      out.pieces.push_back(Piece{distribution(p, d, v, at), start, last ? period : end});
    }
    return out;
  }

  Distribution distribution(const ParamSpec& p, const json& spec, const Variables& v, const std::string& path) const {
    if (!spec.is_object() || spec.size() != 1) fail(path, "expected one of uniform, normal, constant, values");
    const std::string kind = spec.begin().key();
    const json& args = spec.begin().value();
    Distribution d;
    if (kind == "constant") {
      d.kind = Distribution::Kind::Constant;
      d.a = bound(args, v, path + ".constant");
      return d;
    }
    if (kind == "values") return listed_values(p, args, path + ".values");
    if (kind != "uniform" && kind != "normal")
      fail(path, "unknown distribution '" + kind + "' (uniform, normal, constant, values; or pieces)");
    if (!args.is_array() || args.size() != 2) fail(path + "." + kind, "expected two values");
    d.kind = kind == "uniform" ? Distribution::Kind::Uniform : Distribution::Kind::Normal;
    d.a = bound(args[0], v, path + "." + kind + "[0]");
    d.b = bound(args[1], v, path + "." + kind + "[1]");
    if (d.kind == Distribution::Kind::Uniform && d.b < d.a) fail(path + ".uniform", "the upper bound is below the lower");
    if (d.kind == Distribution::Kind::Normal && (!element_is_float(p.type) || d.b < 0))
      fail(path + ".normal", "a normal distribution needs a float buffer and sd >= 0");
    return d;
  }

  // A user's own data (Rodinia's y.txt): the numbers in order, whole ones
  // for an integer buffer.
  Distribution listed_values(const ParamSpec& p, const json& args, const std::string& path) const {
    if (!args.is_array() || args.empty()) fail(path, "expected a list of numbers, one or more");
    Distribution d;
    d.kind = Distribution::Kind::Values;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      if (!args[i].is_number()) fail(at, "expected a number");
      const double x = args[i].get<double>();
      if (!element_is_float(p.type) && x != std::floor(x)) fail(at, "'" + p.name + "' holds integers: " + args[i].dump() + " is no whole number");
      d.values.push_back(x);
    }
    d.a = *std::min_element(d.values.begin(), d.values.end());
    d.b = *std::max_element(d.values.begin(), d.values.end());
    return d;
  }

  void no_unknown_inputs() const {
    if (!workload_.variables.contains("inputs")) return;
    for (const auto& [name, value] : workload_.variables["inputs"].items()) {
      const ParamSpec* p = spec_.find_parameter(name);
      if ((p == nullptr || (p->role != ParamRole::In && p->role != ParamRole::InOut)) && !spec_.find_constant_array(name))
        fail(".inputs." + name, "'" + name + "' is no in/inout parameter or __constant__ array of the kernel");
    }
  }

 private:
  const KernelSpec& spec_;
  const WorkloadSpec& workload_;
};

// Scalar i of the buffer, the k-th of its piece within the period.
double draw(const Distribution& d, bool integer, std::uint64_t stream, std::uint64_t i, std::uint64_t k) {
  switch (d.kind) {
    case Distribution::Kind::Constant:
      return d.a;
    case Distribution::Kind::Values:
      return d.values[k % d.values.size()];
    case Distribution::Kind::Uniform:
      if (integer) {
        const double lo = std::ceil(d.a), hi = std::floor(d.b);
        return lo + std::floor(unit(mix(stream + i)) * (hi - lo + 1));
      }
      return d.a + (d.b - d.a) * unit(mix(stream + i));
    case Distribution::Kind::Normal: {
      // Box-Muller from two counter-based draws.
      const double u1 = 1.0 - unit(mix(stream + 2 * i)), u2 = unit(mix(stream + 2 * i + 1));
      return d.a + d.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    }
  }
  return 0;
}

void store(ElementType type, std::byte* element, std::size_t component, double value) {
  if (component_bytes(type) == 1) {
    const auto v = static_cast<std::uint8_t>(static_cast<std::int64_t>(value));
    element[component] = static_cast<std::byte>(v);
  } else if (component_bytes(type) == 2) {
    const auto v = static_cast<std::uint16_t>(static_cast<std::int64_t>(value));
    std::memcpy(element + 2 * component, &v, 2);
  } else if (type == ElementType::F64) {
    std::memcpy(element, &value, 8);
  } else if (element_is_signed_int(type)) {
    const auto v = static_cast<std::int32_t>(value);
    std::memcpy(element + 4 * component, &v, 4);
  } else if (element_is_unsigned_int(type)) {
    const auto v = static_cast<std::uint32_t>(value);
    std::memcpy(element + 4 * component, &v, 4);
  } else {
    const auto v = static_cast<float>(value);
    std::memcpy(element + 4 * component, &v, 4);
  }
}

}  // namespace

Workload random_workload(const KernelSpec& spec, const WorkloadSpec& workload, std::uint64_t seed) {
  const Reader reader(spec, workload);
  reader.no_unknown_inputs();
  Workload w;
  w.variables = reader.numbers();
  // The input buffers and the __constant__ arrays, each from its distribution.
  std::vector<const ParamSpec*> drawn;
  for (const ParamSpec& p : spec.parameters)
    if (p.role == ParamRole::In || p.role == ParamRole::InOut) drawn.push_back(&p);
  for (const ParamSpec& c : spec.constants)
    if (c.constant_array) drawn.push_back(&c);
  for (const ParamSpec* drawn_one : drawn) {
    const ParamSpec& p = *drawn_one;
    double count_value;
    try {
      count_value = p.count.evaluate(w.variables);
    } catch (const std::runtime_error& e) {
      reader.fail("", p.json_path + ".count: " + e.what());
    }
    if (count_value < 0 || count_value != std::floor(count_value) || count_value > 17179869184.0)
      reader.fail("", p.json_path + ".count '" + p.count.text() + "' gave " + std::to_string(count_value) +
                          ": expected an element count");
    const auto count = static_cast<std::size_t>(count_value);
    const std::size_t eb = element_bytes(p.type), components = element_components(p.type);
    const bool integer = !element_is_float(p.type);
    const Layout layout = reader.layout(p, w.variables, count_value);
    for (const Piece& piece : layout.pieces) {
      const Distribution& d = piece.d;
      if (integer && element_is_unsigned_int(p.type) && d.kind != Distribution::Kind::Normal && d.a < 0)
        reader.fail(".inputs." + p.name, "an unsigned buffer cannot hold negative values");
      if (component_bytes(p.type) < 4) {
        const auto [lo, hi] = narrow_integer_range(p.type);
        const double top = d.kind == Distribution::Kind::Constant ? d.a : d.b;
        if (d.a < lo || top > hi)
          reader.fail(".inputs." + p.name, "'" + p.name + "' holds " + std::to_string(8 * component_bytes(p.type)) +
                                               "-bit integers, " + std::to_string(static_cast<long long>(lo)) + ".." +
                                               std::to_string(static_cast<long long>(hi)) +
                                               ": give a distribution within them");
      }
    }
    std::vector<std::byte> bytes(count * eb);
    const std::uint64_t stream = mix(seed ^ name_hash(p.name));
    const auto period = static_cast<std::size_t>(layout.period);
    std::size_t piece = 0;
    for (std::size_t e = 0; e < count; ++e) {
      const std::size_t at = e % period;
      if (at == 0) piece = 0;
      while (static_cast<double>(at) >= layout.pieces[piece].end) ++piece;
      const auto in_piece = at - static_cast<std::size_t>(layout.pieces[piece].start);
      for (std::size_t c = 0; c < components; ++c)
        store(p.type, bytes.data() + e * eb, c,
              draw(layout.pieces[piece].d, integer, stream, e * components + c, in_piece * components + c));
    }
    w.inputs[p.name] = std::move(bytes);
  }
  return w;
}

}  // namespace gi::fitness
