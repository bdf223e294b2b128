#include "fitness/instrument/clock_instrument.hpp"

#include <stdexcept>

#include "grammar/kernel_structure.hpp"
#include "grammar/template_instance.hpp"

namespace gi::fitness {

namespace {

// The token that closes the bracket opened at `open` (`{` or `<`); tokens.size() for none.
std::size_t closing_token(const grammar::ParsedKernel& k, std::size_t open, const char* opens, const char* closes) {
  int depth = 0;
  for (std::size_t t = open; t < k.tokens.size(); ++t) {
    if (k.tokens[t].is(opens)) ++depth;
    if (k.tokens[t].is(closes) && --depth == 0) return t;
    if (k.tokens[t].is(">>") && std::string(closes) == ">" && (depth -= 2) <= 0) return t;
  }
  return k.tokens.size();
}

}  // namespace

std::string instrument_clock_ticks(std::string_view original, const std::string& entry, const std::string& file_name) {
  const grammar::ParsedKernel k = grammar::parse_kernel(original, file_name);
  // A template instance's entry (`box<double, 3>`) names the template `box`.
  const std::string name = grammar::entry_function_name(entry);
  const grammar::Function* f = nullptr;
  for (const grammar::Function& candidate : k.functions)
    if (candidate.is_kernel && candidate.name == name) f = &candidate;
  if (f == nullptr) throw std::invalid_argument(file_name + ": no __global__ function '" + entry + "' to instrument");

  // The body keeps the definition under a new name, as a __device__
  // function (a template keeps its template header); the wrapper, placed
  // right after it (in the same namespace, so every name it uses means the
  // same), takes the header's qualifiers (extern "C" __global__
  // __launch_bounds__(...) void) and the kernel's name.
  const grammar::Element& header = k.elements[static_cast<std::size_t>(f->header_element)];
  const std::size_t header_begin = k.tokens[header.tokens.first].offset;
  const std::size_t name_begin = k.tokens[f->name_token].offset;
  const std::size_t name_end = name_begin + name.size();
  const std::size_t body_close = closing_token(k, header.tokens.last, "{", "}");
  if (body_close >= k.tokens.size())
    throw std::invalid_argument(file_name + ": the body of '" + name + "' does not close");
  const std::size_t body_end = k.tokens[body_close].offset + 1;
  const std::vector<grammar::TemplateParameter> template_params = grammar::template_parameters(k, *f);
  // The file's explicit instantiations name the kernel's old parameter
  // list: blanked (spaces, lines kept, so every offset holds); NVRTC
  // instantiates the entry from its name expression.
  std::string text(original);
  for (const grammar::ExplicitInstance& e : grammar::explicit_instances(k, name)) {
    const grammar::TokenRange r = k.elements[e.element].tokens;
    const std::size_t end = k.tokens[r.last].offset + k.tokens[r.last].text.size();
    for (std::size_t c = k.tokens[r.first].offset; c < end; ++c)
      if (text[c] != '\n') text[c] = ' ';
  }
  const std::string_view source = text;
  std::string template_header, template_args;
  if (!template_params.empty()) {
    const std::size_t close = closing_token(k, header.tokens.first + 1, "<", ">");
    template_header = std::string(source.substr(header_begin, k.tokens[close].offset + k.tokens[close].text.size() - header_begin)) + "\n";
    for (const grammar::TemplateParameter& p : template_params) template_args += (template_args.empty() ? "" : ", ") + p.name;
    template_args = "<" + template_args + ">";
  }
  std::string qualifiers(source.substr(header_begin, name_begin - header_begin));
  if (template_params.empty() && qualifiers.find("extern \"C\"") == std::string::npos) qualifiers = "extern \"C\" " + qualifiers;
  std::string params, args;
  for (const grammar::Param& p : f->params) {
    const std::size_t begin = k.tokens[p.tokens.first].offset;
    const std::size_t end = k.tokens[p.tokens.last].offset + k.tokens[p.tokens.last].text.size();
    params += std::string(source.substr(begin, end - begin)) + ", ";
    args += (args.empty() ? "" : ", ") + p.name;
  }
  const std::string body_name = "gi_clock_body_" + name;

  std::string out;
  out += source.substr(0, header_begin);
  out += template_header + "static __device__ __forceinline__ void " + body_name;
  out += source.substr(name_end, body_end - name_end);
  out += "\n\n// gi: clock-tick instrumentation (fitness/instrument/clock_instrument.hpp)\n";
  out += qualifiers + name + "(" + params + "unsigned long long* gi_clock) {\n";
  out += R"(  const bool gi_first_thread = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  unsigned long long gi_ticks = 0;
  unsigned long long gi_start = 0;
  __syncthreads();
  if (gi_first_thread) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gi_start));
    gi_ticks = clock64();
  }
)";
  out += "  " + body_name + template_args + "(" + args + ");\n";
  out += R"(  __syncthreads();
  if (gi_first_thread) {
    const unsigned long long gi_ticks_end = clock64();
    unsigned long long gi_end;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gi_end));
    atomicAdd(&gi_clock[0], gi_ticks_end - gi_ticks);
    atomicAdd(&gi_clock[1], gi_end - gi_start);
    atomicMin(&gi_clock[2], gi_start);
    atomicMax(&gi_clock[3], gi_end);
    atomicAdd(&gi_clock[4], 1ull);
  }
}
)";
  out += source.substr(body_end);
  return out;
}

}  // namespace gi::fitness
