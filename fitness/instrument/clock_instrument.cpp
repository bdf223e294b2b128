#include "fitness/instrument/clock_instrument.hpp"

#include <stdexcept>

#include "grammar/kernel_structure.hpp"

namespace gi::fitness {

std::string instrument_clock_ticks(std::string_view source, const std::string& entry, const std::string& file_name) {
  const grammar::ParsedKernel k = grammar::parse_kernel(source, file_name);
  const grammar::Function* f = nullptr;
  for (const grammar::Function& candidate : k.functions)
    if (candidate.is_kernel && candidate.name == entry) f = &candidate;
  if (f == nullptr) throw std::invalid_argument(file_name + ": no __global__ function '" + entry + "' to instrument");

  // The header's qualifiers (extern "C" __global__ __launch_bounds__(...)
  // void) move to the wrapper; the body keeps the rest under a new name.
  const grammar::Element& header = k.elements[static_cast<std::size_t>(f->header_element)];
  const std::size_t header_begin = k.tokens[header.tokens.first].offset;
  const std::size_t name_begin = k.tokens[f->name_token].offset;
  std::string launch_bounds;
  for (std::size_t t = header.tokens.first; t < f->name_token; ++t) {
    if (!k.tokens[t].is("__launch_bounds__")) continue;
    std::size_t close = t + 1;
    for (int depth = 0; close < f->name_token; ++close) {
      if (k.tokens[close].is("(")) ++depth;
      if (k.tokens[close].is(")") && --depth == 0) break;
    }
    const std::size_t begin = k.tokens[t].offset, end = k.tokens[close].offset + 1;
    launch_bounds = std::string(source.substr(begin, end - begin));
  }
  std::string params, args;
  for (const grammar::Param& p : f->params) {
    const std::size_t begin = k.tokens[p.tokens.first].offset;
    const std::size_t end = k.tokens[p.tokens.last].offset + k.tokens[p.tokens.last].text.size();
    params += std::string(source.substr(begin, end - begin)) + ", ";
    args += (args.empty() ? "" : ", ") + p.name;
  }
  const std::string body_name = "gi_clock_body_" + entry;

  std::string out;
  out += source.substr(0, header_begin);
  out += "static __device__ __forceinline__ void " + body_name;
  out += source.substr(name_begin + entry.size());
  out += "\n\n// gi: clock-tick instrumentation (fitness/instrument/clock_instrument.hpp)\n";
  out += "extern \"C\" __global__ void " + (launch_bounds.empty() ? "" : launch_bounds + " ") + entry + "(" + params +
         "unsigned long long* gi_clock) {\n";
  out += R"(  const bool gi_first_thread = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  unsigned long long gi_ticks = 0;
  unsigned long long gi_start = 0;
  __syncthreads();
  if (gi_first_thread) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gi_start));
    gi_ticks = clock64();
  }
)";
  out += "  " + body_name + "(" + args + ");\n";
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
  return out;
}

}  // namespace gi::fitness
