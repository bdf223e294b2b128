// `gi families [SEED_DIR] [--json]`: the edit families gi knows (grammar/edits/),
// their group and text form, and with a seed how many legal edits each has
// there: what a search on that seed can draw, and what ablation can switch off;
// for the transformation families, their edits and where their analysis looked and refused, and why.
#include <iostream>

#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/search/mutant_survey.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/patch.hpp"

namespace gi::cli {
namespace {
constexpr std::size_t kEditsListed = 12;  // a transformation family's edits listed in the text form, when no more
}  // namespace

void add_families(CLI::App& app) {
  auto* cmd = app.add_subcommand("families", "List the edit families (name, group, text form); with a seed, how many "
                                             "legal edits each has in it, and where a transformation family's analysis "
                                             "refused and why");
  struct Args {
    std::string seed;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seed, "seed folder (kernel.cu and its spec.json) or a .cu file; or a library seed: family/kernel")
      ->transform(library_seed());
  cmd->add_flag("--json", a->json, "print JSON");
  cmd->callback([a] {
    std::optional<Seed> seed;
    grammar::EditContext context;
    if (!a->seed.empty()) {
      seed = load_seed(a->seed);
      context = seed->context;
      context.constants = mutant_constants(*seed, nullptr);
    }
    nlohmann::json out = nlohmann::json::array();
    for (const grammar::EditFamily* f : grammar::edit_families()) {
      nlohmann::json row = {{"family", f->name()}, {"group", grammar::to_string(f->group())}, {"syntax", f->syntax()}};
      if (seed) {
        const std::vector<grammar::Edit> legal = f->candidates(seed->grammar, context);
        row["legal_edits"] = legal.size();
        // A transformation family's edits, as a patch writes them: few, and what a user tries first.
        if (f->group() == grammar::EditGroup::Transform) {
          row["edits"] = nlohmann::json::array();
          for (const grammar::Edit& e : legal) row["edits"].push_back(grammar::to_string(e));
        }
        // Why a transformation family has no site, or fewer than one might expect.
        const std::vector<std::string> refused = f->refusals(seed->grammar, context);
        if (!refused.empty()) row["refusals"] = refused;
      }
      out.push_back(row);
    }
    if (a->json) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    for (const auto& row : out) {
      std::printf("%-14s %-11s %-52s", row["family"].get<std::string>().c_str(), row["group"].get<std::string>().c_str(),
                  row["syntax"].get<std::string>().c_str());
      if (row.contains("legal_edits")) std::printf(" %6zu legal edits", row["legal_edits"].get<std::size_t>());
      std::printf("\n");
      if (row.contains("edits") && row["edits"].size() <= kEditsListed)
        for (const auto& edit : row["edits"]) std::printf("    %s\n", edit.get<std::string>().c_str());
      if (row.contains("refusals"))
        for (const auto& why : row["refusals"]) std::printf("    refused at %s\n", why.get<std::string>().c_str());
    }
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("families", gi::cli::add_families)
