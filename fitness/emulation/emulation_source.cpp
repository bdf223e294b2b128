#include "fitness/emulation/emulation_source.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "grammar/entry_namespace.hpp"

namespace gi::fitness::emulation {

namespace {

// `replacement` followed by as many newlines as `matched` held, so the lines
// after it keep their numbers.
std::string keeping_lines(const std::string& replacement, const std::string& matched) {
  return replacement + std::string(static_cast<std::size_t>(std::count(matched.begin(), matched.end(), '\n')), '\n');
}

int line_of(std::string_view text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// Applies `re` to `text`, replacing each match by what `make` returns for it.
template <class Make>
std::string replace_all(const std::string& text, const std::regex& re, Make make) {
  std::string out;
  std::size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(text, last, static_cast<std::size_t>(m.position(0)) - last);
    out += keeping_lines(make(m), m.str(0));
    last = static_cast<std::size_t>(m.position(0) + m.length(0));
  }
  out.append(text, last, std::string::npos);
  return out;
}

std::string without_alignment(std::string type) {
  static const std::regex align(R"((__align__|alignas)\s*\([^()]*\))");
  type = std::regex_replace(type, align, "");
  const auto first = type.find_first_not_of(" \t\r\n");
  const auto last = type.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? type : type.substr(first, last - first + 1);
}

}  // namespace

std::string rewrite_for_cpu(std::string_view source) {
  std::string text(source);
  // extern __shared__ [__align__(16)] float4 tile[];
  static const std::regex dynamic_shared(R"(\bextern\s+__shared__\s+([^;\[\]{}]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;)");
  text = replace_all(text, dynamic_shared, [](const std::smatch& m) {
    const std::string type = without_alignment(m.str(1));
    return type + "* const " + m.str(2) + " = reinterpret_cast<" + type + "*>(gi_emu::dynamic_shared);";
  });
  static const std::regex laneid(
      R"re(\basm\s*(?:volatile\s*|__volatile__\s*)?\(\s*"mov\.u32\s+%0\s*,\s*%%laneid\s*;?"\s*:\s*"=r"\s*\(\s*([A-Za-z_]\w*)\s*\)\s*\)\s*;)re");
  text = replace_all(text, laneid, [](const std::smatch& m) { return m.str(1) + " = gi_emu_laneid();"; });
  static const std::regex globaltimer(
      R"re(\basm\s*(?:volatile\s*|__volatile__\s*)?\(\s*"mov\.u64\s+%0\s*,\s*%%globaltimer\s*;?"\s*:\s*"=l"\s*\(\s*([A-Za-z_]\w*)\s*\)\s*\)\s*;)re");
  text = replace_all(text, globaltimer, [](const std::smatch& m) { return m.str(1) + " = gi_emu_globaltimer();"; });
  static const std::regex dynamic_smem_size(
      R"re(\basm\s*(?:volatile\s*|__volatile__\s*)?\(\s*"mov\.u32\s+%0\s*,\s*%%dynamic_smem_size\s*;?"\s*:\s*"=r"\s*\(\s*([A-Za-z_]\w*)\s*\)\s*\)\s*;)re");
  text = replace_all(text, dynamic_smem_size, [](const std::smatch& m) { return m.str(1) + " = gi_emu_dynamic_smem_size();"; });
  // The prelude has the cooperative groups gi's donors use (cuda_on_cpu.hpp); the line stays, blank.
  static const std::regex cooperative_groups(R"re(#\s*include\s*<cooperative_groups(/reduce)?\.h>)re");
  text = std::regex_replace(text, cooperative_groups, "// (cooperative groups: the emulator's own)");
  // The CUDA toolkit's runtime headers: what device code needs of them is
  // the prelude's; host code, which needs the rest, is set aside already.
  static const std::regex toolkit_headers(
      R"re(#\s*include\s*[<"](cuda|cuda_runtime|cuda_runtime_api|device_launch_parameters)\.h[>"])re");
  text = std::regex_replace(text, toolkit_headers, "// (CUDA's runtime headers: the emulator's own)");
  static const std::regex other_asm(R"(\b(asm|__asm__)\s*(volatile\s*|__volatile__\s*)?\()");
  std::smatch m;
  if (std::regex_search(text, m, other_asm))
    throw EmulationError("line " + std::to_string(line_of(text, static_cast<std::size_t>(m.position(0)))) +
                         ": inline PTX cannot run on the CPU emulator (only reads of %laneid, %globaltimer and %dynamic_smem_size are "
                         "understood)");
  return text;
}

namespace {

std::string line_directive(int line, std::string file) {
  std::replace(file.begin(), file.end(), '"', '\'');
  std::replace(file.begin(), file.end(), '\\', '/');
  return "#line " + std::to_string(line) + " \"" + file + "\"\n";
}

class HeaderInliner {
 public:
  explicit HeaderInliner(const std::vector<std::pair<std::string, std::string>>& headers) : headers_(headers) {}

  // `text` of `file`, its local includes replaced.
  std::string lines(std::string_view text, const std::string& file, int depth) {
    static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
    std::string out;
    int number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string line(text.substr(start, end - start));
      ++number;
      std::smatch m;
      if (depth < 16 && std::regex_search(line, m, include) && find(m[1].str())) {
        out += header(m[1].str(), depth + 1) + line_directive(number + 1, file);
      } else {
        out += line + "\n";
      }
      if (end == text.size()) break;
      start = end + 1;
    }
    return out;
  }

  // A header's text once, "" after; an include of a name not there stays.
  std::string header(const std::string& name, int depth) {
    const std::string* text = find(name);
    if (text == nullptr) return "#include \"" + name + "\"\n";
    if (!seen_.insert(name).second) return "";
    return line_directive(1, name) + lines(*text, name, depth);
  }

 private:
  const std::string* find(const std::string& name) const {
    for (const auto& [n, text] : headers_)
      if (n == name) return &text;
    return nullptr;
  }
  const std::vector<std::pair<std::string, std::string>>& headers_;
  std::set<std::string> seen_;
};

}  // namespace

std::string with_headers_inlined(std::string_view source, const std::string& file_name,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 const std::vector<std::string>& pre_includes) {
  if (headers.empty() && pre_includes.empty()) return std::string(source);
  HeaderInliner inliner(headers);
  std::string out;
  for (const std::string& p : pre_includes) out += inliner.header(p, 1);
  return out + line_directive(1, file_name) + inliner.lines(source, file_name, 0);
}

std::string emulation_translation_unit(std::string_view source, const std::string& entry,
                                       const std::string& file_name) {
  std::string file = file_name;
  std::replace(file.begin(), file.end(), '"', '\'');
  std::replace(file.begin(), file.end(), '\\', '/');
  std::string tu = "// gi: CPU emulation of '" + entry + "' (fitness/emulation/cpu_emulator.hpp)\n";
  tu += cuda_on_cpu_prelude();
  tu += "\n#line 1 \"" + file + "\"\n";
  tu += rewrite_for_cpu(source);
  // Appended at file scope: a kernel inside a namespace is called by its qualified name.
  tu += "\n#line 1 \"gi-emulator-launcher\"\nGI_EMU_LAUNCHER(" +
        grammar::entry_qualified_from_file_scope(source, entry) + ")\n";
  return tu;
}

}  // namespace gi::fitness::emulation
