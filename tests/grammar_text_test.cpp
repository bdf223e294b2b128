// BNF text and JSON forms of the grammar; the text parses back to the same grammar.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "grammar/grammar_text.hpp"
#include "grammar/source_error.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

TEST(GrammarText, BnfLooksLikeLangdonsStyle) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const std::string bnf = to_bnf(g);
  EXPECT_NE(bnf.find("<IF_sample.cu_17> ::= \"(tid >= n)\"\n"), std::string::npos);
  EXPECT_NE(bnf.find("<if_sample.cu_17> ::= \"  if \" <IF_sample.cu_17> \" {\"\n"), std::string::npos);
  EXPECT_NE(bnf.find("<_sample.cu_16> ::= \"  tid = blockIdx.x * blockDim.x + threadIdx.x;\"\n"), std::string::npos);
  EXPECT_NE(bnf.find("<pragma_sample.cu_21> ::= \"#pragma unroll 4\"\n"), std::string::npos);
}

TEST(GrammarText, RoundTripOnSampleAndEverySeed) {
  std::vector<Grammar> grammars{Grammar::from_source(test::sample_source(), "sample.cu")};
  for (const auto& dir : test::seed_dirs()) grammars.push_back(load_seed(dir).grammar);
  for (const auto& g : grammars) {
    SCOPED_TRACE(g.file_name());
    const Grammar back = from_bnf(to_bnf(g));
    EXPECT_TRUE(back == g);
    EXPECT_EQ(to_bnf(back), to_bnf(g));
  }
}

TEST(GrammarText, RoundTripKeepsMissingFinalNewlineAndEscapes) {
  const std::string src = "__global__ void k(char* s) {\n\ts[0] = '\"';\n  s[1] = '\\\\';\n}";
  const Grammar g = Grammar::from_source(src, "k.cu");
  const Grammar back = from_bnf(to_bnf(g));
  EXPECT_TRUE(back == g);
  EXPECT_EQ(back.source(), src);
}

// The names visible at a rule of the JSON, by the rule the README gives:
// from the rule's block outwards, the declarations before its position; an
// inner block's name hides an outer one, and in a block the latest wins.
std::set<std::string> visible_in_json(const nlohmann::json& j, const nlohmann::json& rule) {
  std::set<std::string> names, out;
  for (int b = rule["scope"]["block"]; b >= 0; b = j["scopes"][b]["parent"]) {
    std::map<std::string, nlohmann::json> latest;
    for (const auto& d : j["scopes"][b]["declarations"])
      if (d["pos"] < rule["scope"]["pos"] && !names.count(d["name"])) latest[d["name"]] = d;
    for (const auto& [name, d] : latest) {
      names.insert(name);
      out.insert(name + "@" + std::to_string(d["line"].get<int>()));
    }
  }
  return out;
}

TEST(GrammarText, JsonHasKindsIdentifiersAndScopes) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  const auto j = to_json(g);
  EXPECT_EQ(j["format"], "gi-grammar-json-2");
  bool found = false;
  for (std::size_t i = 0; i < j["rules"].size(); ++i) {
    const auto& r = j["rules"][i];
    if (!r.contains("scope")) continue;
    // The scope table gives what the grammar itself sees at every rule.
    const auto expected = g.visible_declarations(i);
    EXPECT_EQ(visible_in_json(j, r), std::set<std::string>(expected.begin(), expected.end())) << r["name"];
    if (r["name"] != "<_sample.cu_25>") continue;
    found = true;
    EXPECT_EQ(r["kind"], "statement");
    EXPECT_EQ(r["identifiers"], nlohmann::json::array({"idx"}));
    EXPECT_EQ(r["function"], "sample_kernel");
    EXPECT_TRUE(visible_in_json(j, r).count("k@22"));
  }
  EXPECT_TRUE(found);
}

// Each declaration once: the JSON of many kernels grows with the file, not
// with its square (a 5 MB file of 2,500 kernels did not finish).
TEST(GrammarText, JsonGrowsLinearlyWithTheFile) {
  auto kernels = [](int n) {
    std::string src;
    for (int i = 0; i < n; ++i)
      src += "__global__ void k" + std::to_string(i) +
             "(const float* in, float* out, int n) {\n  int t = threadIdx.x;\n  if (t < n) {\n    float v = in[t];\n"
             "    out[t] = v;\n  }\n}\n";
    return to_json(Grammar::from_source(src, "many.cu")).dump().size();
  };
  const double small = static_cast<double>(kernels(100)), large = static_cast<double>(kernels(400));
  EXPECT_LT(large / small, 4.5) << small << " bytes for 100 kernels, " << large << " for 400";
}

TEST(GrammarText, MalformedBnfNamesTheLine) {
  const Grammar g = Grammar::from_source(test::sample_source(), "sample.cu");
  std::string bnf = to_bnf(g);
  const auto expect_error = [](const std::string& text, int line, const std::string& what) {
    try {
      from_bnf(text, "g.bnf");
      ADD_FAILURE() << "no error for: " << what;
    } catch (const SourceError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error("", 1, "empty grammar");
  expect_error("<start> ::= <_x_1>\n", 1, "header");
  std::string unterminated = bnf;
  const auto cond_at = unterminated.find("<IF_sample.cu_17> ::= \"(tid >= n)\"");
  const int cond_line = static_cast<int>(std::count(bnf.begin(), bnf.begin() + static_cast<long>(cond_at), '\n')) + 1;
  unterminated.erase(unterminated.find("\"(tid >= n)\"", cond_at) + 11, 1);
  expect_error(unterminated, cond_line, "unterminated string");
  std::string unknown = bnf;
  unknown.replace(unknown.find("<IF_sample.cu_17> ::="), 21, "<IF_sample.cu_99> ::=");
  EXPECT_THROW(from_bnf(unknown, "g.bnf"), SourceError);
  std::string wrong_kind = bnf;
  const auto at = wrong_kind.find("<_sample.cu_16>");
  wrong_kind.replace(at, 15, "<fixed_sample.cu_16>");
  EXPECT_THROW(from_bnf(wrong_kind, "g.bnf"), SourceError);
}

}  // namespace
}  // namespace gi::grammar
