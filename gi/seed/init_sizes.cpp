#include "gi/seed/init_sizes.hpp"

#include <cmath>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "analysis/parameter_use.hpp"
#include "fitness/workload/expression.hpp"

namespace gi {

using json = nlohmann::ordered_json;

json json_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<long long>(v);
  return v;
}

namespace {

// The number `text` writes, with nothing after it, if it writes one.
std::optional<double> whole_text_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// More would make spec.json a data file; data this large is for a
// generator of the user's own (DESIGN.md, "Kernel spec": "generator").
constexpr std::size_t kMostValues = 1 << 20;

// values(@PATH): the numbers of a text file, separated by white space or
// commas (Rodinia's y.txt, one a line).
json values_from_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(what + ": cannot read '" + path + "'");
  json values = json::array();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    for (char& c : line)
      if (c == ',') c = ' ';
    std::stringstream words(line);
    for (std::string word; words >> word;) {
      const std::optional<double> v = whole_text_number(word);
      if (!v || !std::isfinite(*v))
        throw std::runtime_error(what + ": " + path + ":" + std::to_string(number) + ": '" + word +
                                 "' is no finite number");
      if (values.size() == kMostValues)
        throw std::runtime_error(what + ": " + path + " holds more than " + std::to_string(kMostValues) +
                                 " values: give a distribution instead");
      values.push_back(json_number(*v));
    }
  }
  if (values.empty()) throw std::runtime_error(what + ": " + path + " holds no numbers");
  return {{"values", std::move(values)}};
}

json parse_distribution(const std::string& text, const std::string& what) {
  static const std::regex form(R"(\s*(uniform|normal|constant|values)\s*\(([^)]*)\)\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, form))
    throw std::runtime_error(what + ": expected uniform(LO,HI), normal(MEAN,SD), constant(V), values(V1,V2,...) or "
                             "values(@FILE), got '" + text + "'");
  const std::string kind = m[1].str();
  if (kind == "values" && std::regex_match(m[2].str(), std::regex(R"(\s*@.*)"))) {
    const std::string path = std::regex_replace(m[2].str(), std::regex(R"(^\s*@\s*|\s+$)"), "");
    return values_from_file(path, what);
  }
  std::vector<double> args;
  std::stringstream ss(m[2].str());
  std::string part;
  while (std::getline(ss, part, ',')) {
    try {
      args.push_back(std::stod(part));
    } catch (const std::exception&) {
      throw std::runtime_error(what + ": '" + part + "' is no number");
    }
  }
  if (kind == "values") {
    if (args.empty()) throw std::runtime_error(what + ": values takes one number or more, or @FILE");
    json values = json::array();
    for (double v : args) {
      if (!std::isfinite(v)) throw std::runtime_error(what + ": values are finite numbers");
      values.push_back(json_number(v));
    }
    return {{"values", std::move(values)}};
  }
  if (args.size() != (kind == "constant" ? 1u : 2u))
    throw std::runtime_error(what + ": " + kind + " takes " + (kind == "constant" ? "one number" : "two numbers"));
  if (kind == "constant") return {{"constant", json_number(args[0])}};
  return {{kind, json::array({json_number(args[0]), json_number(args[1])})}};
}

// A length in elements: a number, or an expression of the sizes.
json parse_length(const std::string& length) {
  const fitness::Expression e = fitness::Expression::parse(length);
  return e.variables().empty() ? json_number(e.evaluate({})) : json(length);
}

// One distribution, or pieces separated by ';', each but the last with its
// length in elements in brackets: `uniform(1,2)[nelr];uniform(5,6)`.
json parse_pieces(const std::string& text, const std::string& what) {
  if (text.find(';') == std::string::npos) return parse_distribution(text, what);
  static const std::regex piece(R"(\s*([^\[]*?)\s*(?:\[([^\]]*)\])?\s*)");
  json pieces = json::array();
  std::stringstream ss(text);
  std::vector<std::string> parts;
  for (std::string part; std::getline(ss, part, ';');) parts.push_back(part);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::smatch m;
    const bool last = i + 1 == parts.size();
    if (!std::regex_match(parts[i], m, piece) || m[2].matched == last)
      throw std::runtime_error(what + ": piece " + std::to_string(i + 1) + " '" + parts[i] + "': " +
                               (last ? "the last piece is the rest of the buffer, with no [LENGTH]"
                                     : "expected DIST[LENGTH], its length in elements (e.g. uniform(1,2)[nelr])"));
    json p = json::object();
    if (!last) {
      const std::string length = m[2].str();
      try {
        p["length"] = parse_length(length);
      } catch (const std::exception& e) {
        throw std::runtime_error(what + ": piece " + std::to_string(i + 1) + ": '" + length +
                                 "' is no length (a number or an expression of the sizes): " + e.what());
      }
    }
    p.update(parse_distribution(m[1].str(), what));
    pieces.push_back(std::move(p));
  }
  return {{"pieces", std::move(pieces)}};
}

// Pieces (parse_pieces), and `every LENGTH` after them where they repeat, a
// record per work item.
json parse_like(const std::string& text, const std::string& what) {
  static const std::regex every(R"(^(.*\S)\s+every\s+(.+?)\s*$)");
  std::smatch m;
  if (std::regex_match(text, m, every)) {
    json layout = parse_pieces(m[1].str(), what);
    if (!layout.contains("pieces")) layout = {{"pieces", json::array({layout})}};
    try {
      layout["every"] = parse_length(m[2].str());
    } catch (const std::exception& e) {
      throw std::runtime_error(what + ": every '" + m[2].str() +
                               "' is no length (a number or an expression of the sizes): " + e.what());
    }
    return layout;
  }
  return parse_pieces(text, what);
}

}  // namespace

InitSizes parse_init_sizes(const std::vector<std::string>& sizes, const std::vector<std::string>& likes) {
  InitSizes out;
  for (const std::string& s : sizes) {
    const std::size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::runtime_error("--size '" + s + "': expected NAME=VALUE, e.g. n=4000000");
    // A vector's components: --size dim=64,64,32 sets dim_x, dim_y, dim_z (a
    // comma inside brackets is a function's: gx=ceil_div(nx,spacing)).
    if (const std::string value = s.substr(eq + 1);
        value.find(',') != std::string::npos && value.find('(') == std::string::npos) {
      std::stringstream parts(value);
      std::string part;
      int c = 0;
      while (std::getline(parts, part, ',')) {
        if (c == 4) throw std::runtime_error("--size '" + s + "': a vector has at most four components (x, y, z, w)");
        const std::optional<double> v = whole_text_number(part);
        if (!v) throw std::runtime_error("--size '" + s + "': '" + part + "' is no number");
        out.sizes[analysis::vector_component_name(s.substr(0, eq), "xyzw"[c++])] = *v;
      }
      continue;
    }
    // An exact launch's thread count named as another size: threads_x=nelr.
    if (std::regex_match(s.substr(eq + 1), std::regex("[A-Za-z_]\\w*")) && s.substr(eq + 1) != "true" &&
        s.substr(eq + 1) != "false" && s.rfind("threads_", 0) == 0) {
      out.same_as[s.substr(0, eq)] = s.substr(eq + 1);
      continue;
    }
    // A size the others give: voxelNumber=dims_x*dims_y*dims_z.
    if (std::regex_search(s.substr(eq + 1), std::regex("[A-Za-z_]")) && s.substr(eq + 1) != "true" &&
        s.substr(eq + 1) != "false") {
      try {
        if (fitness::Expression::parse(s.substr(eq + 1)).variables().empty()) throw std::invalid_argument("no name");
      } catch (const std::exception& e) {
        throw std::runtime_error("--size '" + s + "': '" + s.substr(eq + 1) +
                                 "' is no number, nor an expression of other sizes (" + e.what() + ")");
      }
      out.tied[s.substr(0, eq)] = s.substr(eq + 1);
      continue;
    }
    // A bool parameter's value: true or false (or 1 or 0).
    if (s.substr(eq + 1) == "true" || s.substr(eq + 1) == "false") {
      out.sizes[s.substr(0, eq)] = s.substr(eq + 1) == "true" ? 1 : 0;
      continue;
    }
    const std::optional<double> v = whole_text_number(s.substr(eq + 1));
    if (!v) throw std::runtime_error("--size '" + s + "': '" + s.substr(eq + 1) + "' is no number");
    out.sizes[s.substr(0, eq)] = *v;
  }
  for (const std::string& l : likes) {
    const std::size_t colon = l.find(':');
    if (colon == std::string::npos || colon == 0)
      throw std::runtime_error("--like '" + l + "': expected NAME:DISTRIBUTION, e.g. x:uniform(-1,1)");
    out.like[l.substr(0, colon)] = parse_like(l.substr(colon + 1), "--like '" + l + "'");
  }
  return out;
}

}  // namespace gi
