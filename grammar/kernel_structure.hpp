#pragma once
// The structural view of a kernel file: statements and headers as token
// ranges ("elements"), the block tree, and every declaration with the point
// from which it is visible. The grammar builder groups elements into line
// rules; the scope rules use the blocks and declarations to decide where a
// line may be copied.
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <unordered_map>
#include <vector>

#include "grammar/token.hpp"

namespace gi::grammar {

enum class ElementKind {
  Statement,       // expression, return, break, continue, empty statement
  Declaration,     // local or global variable declaration (fixed structure)
  IfHeader,        // `if (cond)`: the condition is editable
  ElseHeader,      // `else`
  LoopHeader,      // `for (...)`, `while (...)`, `do`, do's `while (...);`
  SwitchHeader,    // `switch (...)`
  CaseLabel,       // `case X:` / `default:`, and a goto target `NAME:`
  BlockOpen,       // `{`
  BlockClose,      // `}`
  Pragma,          // `#pragma unroll [N]` inside a function
  Preprocessor,    // any other preprocessor line
  FunctionHeader,  // from the start of a function definition to its `{`
  TopLevel,        // other file-level items (prototypes, structs, extern "C" {)
  Comment,
};

struct TokenRange {
  std::size_t first = 0, last = 0;  // inclusive token indices
};

struct Element {
  ElementKind kind;
  TokenRange tokens;
  int block = 0;        // block the element stands in
  int pos = 0;          // order in the file; declarations with a smaller pos are visible
  int function = -1;    // -1 at file level
  int block_after = 0;  // block a statement placed right after this element would stand in
  bool braceless_body = false;        // sole body of an if/else/for/while without braces
  bool awaits_braceless_body = false; // a header whose body follows without braces
  bool followed_by_continuation = false;  // next is `else` or do's `while`: nothing may go between
  bool is_for = false;                // a `for` header (target of unroll edits)
  // Preprocessor: an #if/#ifdef/#ifndef/#elif/#else/#endif line inside a
  // function. Each branch of a conditional is a block of its own (a switch
  // path, grammar/switches.hpp): what it declares is visible in it only, so a
  // line copied from one path to another keeps the meaning of its names.
  bool conditional = false;
  std::optional<TokenRange> condition;  // IfHeader: `( ... )`
  std::optional<TokenRange> scalar_type; // Declaration of one scalar: its type keywords
  std::vector<std::string> declares;
  // TopLevel: a host function's whole definition. Never evolved, and set
  // aside (blank lines) in the source NVRTC compiles, which has no host side.
  bool host_code = false;
};

struct Block {
  int parent = -1;
  int function = -1;
  bool loop = false;       // continue/break allowed
  bool breakable = false;  // break allowed (loop or switch)
  bool branch = false;     // one branch of an #if/#elif/#else inside a function
};

struct Declaration {
  std::string name;
  int block = 0;
  int pos = 0;
};

struct Param {
  std::string name;
  std::string base_type;   // e.g. "float4", "unsigned int"
  bool pointer = false;
  bool const_pointee = false;
  bool restrict_qualified = false;
  bool written = false;    // assigned (scalar) or written through / escapes (pointer)
  TokenRange tokens;
  // A texture object passed by value (cudaTextureObject_t): a buffer the
  // kernel reads through tex1Dfetch<T>, not a scalar.
  bool texture_object() const { return !pointer && (base_type == "cudaTextureObject_t" || base_type == "CUtexObject"); }
};

struct Function {
  std::string name;
  bool is_kernel = false;  // __global__
  int header_element = -1;
  int block = -1;
  std::size_t name_token = 0;
  std::vector<Param> params;
};

struct ParsedKernel {
  std::vector<Token> tokens;
  std::vector<Element> elements;
  std::vector<Block> blocks;  // block 0 is the file scope
  std::vector<Declaration> declarations;
  std::vector<Function> functions;
  // The declarations of each block, in file order (indices into
  // declarations): name look-ups walk a block's own list, not the file's,
  // so they stay cheap in files of thousands of kernels.
  std::vector<std::vector<int>> block_declarations;
};

// Throws SourceError naming file, line and what was expected. `known_types`:
// type names the file uses but does not make (its headers'), so that
// `fp x = 0;` is a declaration when a header says `#define fp float`.
ParsedKernel parse_kernel(std::string_view source, const std::string& file_name,
                          const std::unordered_set<std::string>& known_types = {});

// What NVRTC gets of a project header: the lines of its host code (host
// function definitions and declarations, host-only classes) blank, so host
// helpers that need host-only headers (std::vector, pthread, fopen) do not
// stop the kernel's compile, and every other line as it is. A header gi
// cannot parse is returned unchanged: NVRTC's error then names what it lacks.
std::string header_device_view(std::string_view text, const std::string& file_name,
                               const std::unordered_set<std::string>& known_types);

// The type names a header (or pre-included file) makes: object-like macros
// whose body is a type, typedefs, `using X =`, and struct/class/union/enum
// names. Never throws: a header gi cannot read names none.
std::unordered_set<std::string> header_type_names(std::string_view text, const std::string& file_name);

// Of those, each alias of built-in type words (`#define fp float`, `typedef
// unsigned int index_t;`, `using real = double;`) by that spelling
// ("unsigned int"). Never throws, as header_type_names.
std::map<std::string, std::string> header_type_aliases(std::string_view text, const std::string& file_name);

// The declaration `name` refers to at (block, pos), or -1 for a name declared
// nowhere in the file (a builtin such as threadIdx or expf).
int resolve(const ParsedKernel& k, const std::string& name, int block, int pos);

// Whether token t of a range that starts at token `first` names something
// a declaration could: an identifier, not a keyword, not a member name after
// `.`, `->` or `::`.
bool names_something(const ParsedKernel& k, std::size_t t, std::size_t first);

bool in_loop(const ParsedKernel& k, int block);
bool in_breakable(const ParsedKernel& k, int block);

}  // namespace gi::grammar
