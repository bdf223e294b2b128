#pragma once
// An edit family is one kind of edit (delete, unroll, coarsen, define, ...):
// its text form, which edits of it are legal on a grammar, every edit a
// mutation may draw, and what it does to the patched source and the launch.
// Each family is one file in grammar/edits/ that registers itself with
// GI_REGISTER_EDIT_FAMILY, the way seeds register their references: adding
// a family is adding a file, never editing the engine (Magpie's edit classes
// are the model). Families are grouped by the raw material they give the
// search, so ablation studies can switch whole groups off.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"

namespace gi::grammar {

class ArgumentReader;
struct PatchState;

// The raw-material groups of the search (docs/design.md, "Edits, patches and switches").
enum class EditGroup {
  Line,        // Langdon's delete / replace / insert-a-copy
  Cuda,        // CUDA-aware line and header edits (unroll, __ldg, fast math, ...)
  Structural,  // restructuring without hand-written code (thread coarsening)
  Transform,   // rewrites of a whole pattern an analysis proves legal (analysis/): reduce before an atomic, ...
  Switch,      // choosing a seed's alternative code paths
};
std::string to_string(EditGroup group);

class EditFamily {
 public:
  virtual ~EditFamily() = default;

  // The family's name: its text prefix ("unroll:..."), its ablation switch
  // and its key in reports. Lower case, letters and '_'.
  virtual std::string name() const = 0;
  virtual EditGroup group() const = 0;
  // The text form for messages and help, e.g. "unroll:<for_k.cu_N>=F".
  virtual std::string syntax() const = 0;

  // Reads what follows "name:" into `edit` (family already set); throws
  // ArgumentError through the reader. The three line families have no prefix
  // (their forms <a>, <a><b>, <a>+<b> are read by the patch parser) and keep
  // this default, which refuses.
  virtual void parse(ArgumentReader& reader, Edit& edit) const;
  // The edit's text form, parsed back by parse_patch to the same edit.
  virtual std::string print(const Edit& edit) const = 0;

  // Why `edit` is not legal on `g` (a name that is unknown, a rule of the
  // wrong kind, a copy whose names would mean something else there, a value
  // outside its range, ...), or nullopt.
  virtual std::optional<std::string> problem(const Grammar& g, const EditContext& context,
                                             const Edit& edit) const = 0;

  // Every legal edit of this family on `g` that a mutation may draw (a
  // uniform draw over this list is a uniform draw over the family); empty
  // when the family has no site in this kernel.
  virtual std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const = 0;

  // Why the family has no site where a reader might expect one: one line
  // per place its analysis looked at and refused ("line N: why"), for
  // `gi families SEED`. Empty for families without such an analysis.
  virtual std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const {
    (void)g, (void)context;
    return {};
  }

  // Whether the family's rewrite needs every thread of a block at the
  // barriers and shuffles it adds, which its analysis proved on the seed: a
  // patch with such an edit may not also copy a return, a barrier or a warp
  // collective (grammar/patch_apply.cpp). A transformation family that adds
  // none (registers) says no.
  virtual bool needs_threads_together() const { return group() == EditGroup::Transform; }

  // Records what a legal edit does (validated before); later edits of a patch
  // are applied after earlier ones and may override them.
  virtual void apply(const Grammar& g, const EditContext& context, const Edit& edit, PatchState& state) const = 0;
};

// Registration (static objects in grammar/edits/*.cpp, linked through the
// OBJECT library gi_edits). Names must be unique; registering a second family
// of one name aborts at start-up with a message.
bool register_edit_family(std::unique_ptr<EditFamily> family);

// Every registered family in name order. Throws std::logic_error when none
// is registered (the executable does not link gi_edits).
const std::vector<const EditFamily*>& edit_families();
// The family of that name, or nullptr.
const EditFamily* find_edit_family(std::string_view name);
// The family of that name; throws std::runtime_error listing the known ones.
const EditFamily& edit_family(std::string_view name);

// Family names from a list such as "delete,replace,cuda" (a group name
// stands for its families, "all" for every family, "-name" leaves a family
// or group out: "all,-define"); throws naming an unknown entry and listing
// what is known, or a list whose removals leave nothing.
std::vector<std::string> parse_family_list(const std::string& list);

}  // namespace gi::grammar

#define GI_EDIT_FAMILY_CONCAT2(a, b) a##b
#define GI_EDIT_FAMILY_CONCAT(a, b) GI_EDIT_FAMILY_CONCAT2(a, b)
// In one grammar/edits/<family>.cpp: GI_REGISTER_EDIT_FAMILY(UnrollFamily)
#define GI_REGISTER_EDIT_FAMILY(Class)                                                     \
  namespace {                                                                               \
  [[maybe_unused]] const bool GI_EDIT_FAMILY_CONCAT(gi_edit_family_registered_, __LINE__) = \
      ::gi::grammar::register_edit_family(std::make_unique<Class>());                      \
  }
