#include "gi/seed/texture_port.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "grammar/call_graph.hpp"
#include "grammar/kernel_structure.hpp"
#include "grammar/template_instance.hpp"

namespace gi {

namespace {

using grammar::Token;
using grammar::TokenKind;

// One file-level `texture<T, dim, mode> NAME;`.
struct TextureReference {
  std::string name;
  std::string type;  // T as written ("float4")
  int dimensions = 1;  // 1, 2 or 3
  std::size_t first = 0, last = 0;  // tokens of the whole declaration, `static` and `;` included
  int line = 0;
  std::string problem;  // why it cannot be ported ("" when it can)
};

// Replaces the text of tokens [first, last] by spaces, newlines kept.
void blank(std::string& text, const std::vector<Token>& tokens, std::size_t first, std::size_t last) {
  const std::size_t end = tokens[last].offset + tokens[last].text.size();
  for (std::size_t i = tokens[first].offset; i < end; ++i)
    if (text[i] != '\n') text[i] = ' ';
}

std::vector<TextureReference> texture_references(const grammar::ParsedKernel& k) {
  std::vector<bool> in_function(k.tokens.size(), false);
  for (const grammar::Element& e : k.elements)
    if (e.function >= 0)
      for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < k.tokens.size(); ++t) in_function[t] = true;
  std::vector<TextureReference> out;
  const auto& tk = k.tokens;
  for (std::size_t t = 0; t + 1 < tk.size(); ++t) {
    if (in_function[t] || !tk[t].is("texture") || !tk[t + 1].is("<")) continue;
    TextureReference r;
    r.first = t > 0 && tk[t - 1].is("static") ? t - 1 : t;
    r.line = tk[t].line;
    // The template arguments, split at top-level commas.
    std::vector<std::string> arguments(1);
    std::size_t u = t + 2;
    for (int depth = 0; u < tk.size(); ++u) {
      if (tk[u].kind == TokenKind::Comment) continue;
      if (tk[u].is("<")) ++depth;
      if (tk[u].is(">") && depth-- == 0) break;
      if (tk[u].is(",") && depth == 0) {
        arguments.emplace_back();
        continue;
      }
      arguments.back() += (arguments.back().empty() ? "" : " ") + tk[u].text;
    }
    if (u + 2 >= tk.size() || tk[u + 1].kind != TokenKind::Identifier) continue;
    r.name = tk[u + 1].text;
    r.type = arguments[0];
    r.last = u + 2;
    if (!tk[r.last].is(";")) r.problem = "it declares several names";
    else if (arguments.size() > 1) {
      const std::string& d = arguments[1];
      r.dimensions = d == "1" || d == "cudaTextureType1D" ? 1 : d == "2" || d == "cudaTextureType2D" ? 2
                   : d == "3" || d == "cudaTextureType3D" ? 3 : 0;
      if (r.dimensions == 0) r.problem = "it is of type " + d + " (layered and cubemap textures are not drawn by gi)";
    }
    if (!r.problem.empty()) {
    } else if (arguments.size() > 2 && arguments[2] != "cudaReadModeElementType")
      r.problem = "it reads " + arguments[2] + " (gi makes textures that read the element type)";
    out.push_back(std::move(r));
  }
  return out;
}

// Whether token t is an argument of a texture or surface fetch (`tex2D(r,`
// on a 3-D reference is a fetch of the wrong dimensions, not a helper call).
bool in_fetch_call(const std::vector<Token>& tk, std::size_t t) {
  for (std::size_t u = t, depth = 0; u-- > 0;) {
    if (tk[u].is(")")) ++depth;
    if (tk[u].is("(") && depth-- == 0)
      return u > 0 && (tk[u - 1].text.rfind("tex", 0) == 0 || tk[u - 1].text.rfind("surf", 0) == 0);
  }
  return false;
}

// Text inserted at a byte offset of the source.
struct Edit {
  std::size_t offset;
  std::string insert;
};

std::string names_of(const std::vector<const TextureReference*>& refs, const std::string& each_before) {
  std::string out;
  for (const TextureReference* r : refs) out += (out.empty() ? "" : ", ") + each_before + r->name;
  return out;
}

// A helper the kernel reaches that reads texture references gets each as a
// last parameter (`cudaTextureObject_t NAME`), and every call of it passes
// them on, as NiftyReg's `GetSlidedValues` needs. "" when done, else why not:
// a template helper, overloads that read different references, or a caller
// other than the kernel that does not have them itself.
std::string pass_to_helpers(const grammar::ParsedKernel& k, int kernel,
                            const std::map<int, std::vector<const TextureReference*>>& helper_reads,
                            const std::map<int, std::vector<grammar::TokenRange>>& bodies, std::vector<Edit>& edits) {
  const auto& tk = k.tokens;
  std::map<std::string, std::vector<const TextureReference*>> by_name;
  for (const auto& [f, refs] : helper_reads) {
    const grammar::Function& h = k.functions[static_cast<std::size_t>(f)];
    const grammar::Element& header = k.elements[static_cast<std::size_t>(h.header_element)];
    if (tk[header.tokens.first].is("template"))
      return "texture reference '" + refs[0]->name + "' is read in the template helper '" + h.name +
             "', which gi does not give it as a parameter";
    const auto [it, fresh] = by_name.emplace(h.name, refs);
    if (!fresh && it->second != refs)
      return "the helpers named '" + h.name + "' read different texture references";
  }
  for (const auto& [f, ranges] : bodies)
    if (f != kernel && by_name.count(k.functions[static_cast<std::size_t>(f)].name) && !helper_reads.count(f))
      return "an overload of '" + k.functions[static_cast<std::size_t>(f)].name + "' reads no texture reference, "
             "another does";
  // Each reading helper's parameters.
  for (const auto& [f, refs] : helper_reads) {
    const grammar::Function& h = k.functions[static_cast<std::size_t>(f)];
    std::size_t open = h.name_token + 1;
    while (open < tk.size() && !tk[open].is("(")) ++open;
    if (open >= tk.size()) return "the parameter list of '" + h.name + "' does not end";
    const std::size_t close = grammar::closing_bracket(tk, open);
    if (close == open + 2 && tk[open + 1].is("void")) return "'" + h.name + "(void)' takes no parameters";
    edits.push_back({tk[close].offset, (close == open + 1 ? "" : ", ") + names_of(refs, "cudaTextureObject_t ")});
  }
  // Each call of one: the kernel passes its new parameters, a reading helper its own.
  for (const auto& [g, ranges] : bodies)
    for (const grammar::TokenRange& range : ranges)
      for (std::size_t t = range.first; t + 1 <= range.last && t + 1 < tk.size(); ++t) {
        const auto callee = by_name.find(tk[t].text);
        if (tk[t].kind != TokenKind::Identifier || callee == by_name.end() || !tk[t + 1].is("(") ||
            (t > 0 && (tk[t - 1].is(".") || tk[t - 1].is("->"))))
          continue;
        if (g != kernel) {
          const auto own = helper_reads.find(g);
          for (const TextureReference* r : callee->second)
            if (own == helper_reads.end() || std::find(own->second.begin(), own->second.end(), r) == own->second.end())
              return "'" + k.functions[static_cast<std::size_t>(g)].name + "' calls '" + callee->first +
                     "', which reads texture reference '" + r->name + "', and does not read it itself";
        }
        const std::size_t close = grammar::closing_bracket(tk, t + 1);
        edits.push_back({tk[close].offset, (close == t + 2 ? "" : ", ") + names_of(callee->second, "")});
      }
  return "";
}

}  // namespace

const char* texture_reference_shim() {
  // Written for gi. CUDA 12 dropped the `texture` template; this one holds
  // a texture object, and the fetches take it as the references were taken.
  // Only element-type references are ported, so a fetch returns T.
  return R"(// gi init: texture references, which CUDA 12 removed, as values over a
// texture object, so that helpers written for them (`template <class T,
// enum cudaTextureReadMode mode> float f(texture<T, 2, mode> tex, ...)`)
// build unchanged. kernel.cu passes `texture<T, dim>(object)`.
#pragma once
template <class T, int dim = 1, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct texture {
  cudaTextureObject_t object;
  __host__ __device__ texture(cudaTextureObject_t o) : object(o) {}
};
template <class T, enum cudaTextureReadMode mode>
__device__ T tex1Dfetch(texture<T, 1, mode> t, int i) { return tex1Dfetch<T>(t.object, i); }
template <class T, enum cudaTextureReadMode mode>
__device__ T tex1D(texture<T, 1, mode> t, float x) { return tex1D<T>(t.object, x); }
template <class T, enum cudaTextureReadMode mode>
__device__ T tex2D(texture<T, 2, mode> t, float x, float y) { return tex2D<T>(t.object, x, y); }
template <class T, enum cudaTextureReadMode mode>
__device__ T tex3D(texture<T, 3, mode> t, float x, float y, float z) { return tex3D<T>(t.object, x, y, z); }
)";
}

TexturePort port_texture_references(std::string_view source, const std::string& file_name, const std::string& entry) {
  TexturePort port{std::string(source), {}, {}};
  const grammar::ParsedKernel k = grammar::parse_kernel(source, file_name);
  const std::vector<TextureReference> references = texture_references(k);
  if (references.empty()) return port;
  int kernel = -1;
  int kernels = 0;
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (k.functions[f].is_kernel) {
      ++kernels;
      if (entry.empty() || k.functions[f].name == grammar::entry_function_name(entry)) kernel = static_cast<int>(f);
    }
  if (kernel < 0 || (entry.empty() && kernels > 1)) return port;  // gi init names the problem itself
  const grammar::Function& fn = k.functions[static_cast<std::size_t>(kernel)];
  const auto& tk = k.tokens;

  // The bodies of the entry kernel and of the helpers it reaches, by
  // function; every overload of a helper's name, as the port changes arities.
  const std::vector<bool> reached = grammar::functions_reachable_from(k, fn.name, true);
  std::map<int, std::vector<grammar::TokenRange>> bodies;
  for (const grammar::Element& e : k.elements)
    if (e.function >= 0 && reached[static_cast<std::size_t>(e.function)] && e.kind != grammar::ElementKind::FunctionHeader)
      bodies[e.function].push_back(e.tokens);

  // Which references the kernel and its helpers read, each read checked to
  // be a fetch of the reference's dimensions.
  std::vector<const TextureReference*> used;
  std::vector<std::pair<std::size_t, std::string>> fetches;  // token of the fetch, its template argument
  std::vector<std::pair<std::size_t, const TextureReference*>> arguments;  // a reference passed to a function
  std::map<int, std::vector<const TextureReference*>> helper_reads;  // helper -> the references it reads
  for (const TextureReference& r : references) {
    bool named = false;
    for (const auto& [function, ranges] : bodies) {
      bool here = false;
      for (const grammar::TokenRange& range : ranges)
        for (std::size_t t = range.first; t <= range.last && t < tk.size(); ++t) {
          if (tk[t].kind != TokenKind::Identifier || tk[t].text != r.name) continue;
          if (!r.problem.empty()) {
            port.refusal = "texture reference '" + r.name + "' (line " + std::to_string(r.line) + "): " + r.problem;
            return port;
          }
          // A 1-D reference is read with tex1Dfetch (linear memory) or tex1D
          // (a CUDA array), a 2-D or 3-D one with tex2D or tex3D.
          const std::string fetch_name = r.dimensions == 1 ? "tex1Dfetch" : "tex" + std::to_string(r.dimensions) + "D";
          const bool fetch = t >= 2 && tk[t - 1].is("(") &&
                             (tk[t - 2].is(fetch_name) || (r.dimensions == 1 && tk[t - 2].is("tex1D"))) &&
                             t + 1 < tk.size() && tk[t + 1].is(",");
          // Passed whole to a function (`cubicTex2D(coeffs, x, y)`, a
          // template over `texture<T, 2, mode>` in a header): the argument
          // becomes a `texture<T, dim>` over the object, which the shim
          // below defines, with the fetches such helpers make.
          const bool argument = !fetch && t >= 1 && (tk[t - 1].is("(") || tk[t - 1].is(",")) && t + 1 < tk.size() &&
                                (tk[t + 1].is(",") || tk[t + 1].is(")")) && r.type.find(' ') == std::string::npos &&
                                !in_fetch_call(tk, t);
          if (argument) {
            arguments.push_back({t, &r});
            here = true;
            continue;
          }
          if (!fetch) {
            port.refusal = "texture reference '" + r.name + "' (line " + std::to_string(r.line) + ") is named on line " +
                           std::to_string(tk[t].line) + " other than as " + fetch_name + "(" + r.name + ", ...)";
            return port;
          }
          fetches.emplace_back(t - 2, r.type);
          here = true;
        }
      if (here && function != kernel) helper_reads[function].push_back(&r);
      named = named || here;
    }
    if (named) used.push_back(&r);
  }
  if (used.empty()) return port;
  // Edits are applied from the end of the file backwards, so offsets stay valid.
  std::vector<Edit> edits;
  if (const std::string why = pass_to_helpers(k, kernel, helper_reads, bodies, edits); !why.empty()) {
    port.refusal = why;
    return port;
  }

  // The closing parenthesis of the kernel's parameter list.
  std::size_t open = fn.name_token + 1;
  while (open < tk.size() && !tk[open].is("(")) ++open;
  std::size_t close = open;
  for (int depth = 0; close < tk.size(); ++close) {
    if (tk[close].is("(")) ++depth;
    if (tk[close].is(")") && --depth == 0) break;
  }
  if (close >= tk.size()) throw std::runtime_error(file_name + ": the parameter list of '" + fn.name + "' does not end");

  std::string parameters;
  for (const TextureReference* r : used) parameters += ", cudaTextureObject_t " + r->name;
  const bool empty_list = close == open + 1 || (close == open + 2 && tk[open + 1].is("void"));
  if (empty_list) parameters = parameters.substr(2);
  edits.push_back({tk[close].offset, parameters});
  for (const auto& [t, type] : fetches) edits.push_back({tk[t].offset + tk[t].text.size(), "<" + type + ">"});
  for (const auto& [t, r] : arguments) {
    edits.push_back({tk[t].offset, "texture<" + r->type + ", " + std::to_string(r->dimensions) + ">("});
    edits.push_back({tk[t].offset + tk[t].text.size(), ")"});
  }
  port.wraps_references = !arguments.empty();
  // Stable: of two inserts at one offset the later-pushed lands first (a
  // wrapped argument's `)` before the `, NAME` a helper call gains).
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.offset > b.offset; });
  std::string& text = port.source;
  // Blanking keeps every offset, so it may come first.
  for (const TextureReference* r : used) {
    blank(text, tk, r->first, r->last);
    port.ported.push_back("'" + r->name + "' (texture<" + r->type + ", " + std::to_string(r->dimensions) + ">, line " +
                          std::to_string(r->line) + ")");
  }
  if (empty_list && close == open + 2) blank(text, tk, open + 1, open + 1);  // `(void)`
  for (const Edit& e : edits) text.insert(e.offset, e.insert);
  return port;
}

}  // namespace gi
