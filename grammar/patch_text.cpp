// Text form of patches, parsed with Boost.Spirit X3.
#include <algorithm>
#include <boost/fusion/include/adapt_struct.hpp>
#include <boost/spirit/home/x3.hpp>
#include <cstddef>

#include "grammar/patch.hpp"
#include "grammar/source_error.hpp"

namespace gi::grammar {
namespace x3 = boost::spirit::x3;

std::string edit_family(EditType type) {
  switch (type) {
    case EditType::Delete: return "delete";
    case EditType::Replace: return "replace";
    case EditType::Insert: return "insert";
    case EditType::Unroll: return "unroll";
    case EditType::Ldg: return "ldg";
    case EditType::FastMath: return "fastmath";
    case EditType::Restrict: return "restrict";
    case EditType::LaunchBounds: return "launch_bounds";
    case EditType::Const: return "const";
  }
  return "?";
}

const std::vector<EditType>& all_edit_types() {
  static const std::vector<EditType> types = {EditType::Delete, EditType::Replace, EditType::Insert,
                                              EditType::Unroll, EditType::Ldg, EditType::FastMath,
                                              EditType::Restrict, EditType::LaunchBounds, EditType::Const};
  return types;
}

std::string to_string(const Edit& e) {
  switch (e.type) {
    case EditType::Delete: return e.target;
    case EditType::Replace: return e.target + e.source;
    case EditType::Insert: return e.target + "+" + e.source;
    case EditType::Unroll: return "unroll:" + e.target + "=" + std::to_string(e.value);
    case EditType::Ldg: return "ldg:" + e.target;
    case EditType::FastMath: return "fastmath:" + e.target;
    case EditType::Restrict: return "restrict:" + e.target;
    case EditType::LaunchBounds:
      // Any min-blocks but 0 (absent) is printed, so a parsed negative value
      // (which validation rejects) prints back to itself. Found by fuzzing.
      return "launch_bounds:" + std::to_string(e.value) + (e.value2 != 0 ? "," + std::to_string(e.value2) : "");
    case EditType::Const: return "const:" + e.target + "=" + e.literal;
  }
  return "?";
}

std::string to_string(const Patch& patch) {
  std::string out;
  for (const auto& e : patch.edits) {
    if (!out.empty()) out += ' ';
    out += to_string(e);
  }
  return out;
}

namespace {

using Iterator = std::string_view::const_iterator;

const x3::rule<struct rule_ref_, std::string> rule_ref = "rule name like <_kernel.cu_42>";
const x3::rule<struct ident_, std::string> ident = "parameter name";
const x3::rule<struct literal_, std::string> literal = "number";

const auto rule_ref_def = x3::raw[x3::lit('<') > +(x3::alnum | x3::char_("_.-")) > x3::lit('>')];
const auto ident_def = x3::raw[(x3::alpha | x3::char_('_')) >> *(x3::alnum | x3::char_('_'))];
const auto literal_def = x3::raw[-x3::char_("+-") >> +(x3::alnum | x3::char_(".+-"))];
BOOST_SPIRIT_DEFINE(rule_ref, ident, literal)

}  // namespace

Patch parse_patch(std::string_view text, const std::string& origin) {
  Patch patch;
  Iterator it = text.begin();
  const Iterator end = text.end();
  auto position = [&](Iterator at, int& line, int& column) {
    line = 1;
    column = 1;
    for (Iterator p = text.begin(); p != at; ++p) {
      if (*p == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  };
  auto fail = [&](Iterator at, const std::string& message) {
    int line, column;
    position(at, line, column);
    throw SourceError(origin, line, column, message);
  };

  const auto space = x3::space;
  while (true) {
    x3::parse(it, end, *space);
    if (it == end) break;
    if (*it == '#') {  // comment to end of line: lets patch files carry notes
      while (it != end && *it != '\n') ++it;
      continue;
    }
    const Iterator start = it;
    Edit e;
    try {
      // After a family prefix every piece is expected (>): a missing piece is
      // reported where it should have been.
      auto expect = [&](const auto& parser, auto& attribute) {
        x3::parse(it, end, x3::eps > parser, attribute);
      };
      auto expect_lit = [&](char c) { x3::parse(it, end, x3::eps > x3::lit(c)); };
      auto prefix = [&](const char* p) { return x3::parse(it, end, x3::lit(p)); };
      if (prefix("unroll:")) {
        e.type = EditType::Unroll;
        expect(rule_ref, e.target);
        expect_lit('=');
        expect(x3::int_, e.value);
      } else if (prefix("ldg:")) {
        e.type = EditType::Ldg;
        expect(rule_ref, e.target);
      } else if (prefix("fastmath:")) {
        e.type = EditType::FastMath;
        expect(rule_ref, e.target);
      } else if (prefix("restrict:")) {
        e.type = EditType::Restrict;
        expect(ident, e.target);
      } else if (prefix("launch_bounds:")) {
        e.type = EditType::LaunchBounds;
        expect(x3::int_, e.value);
        if (x3::parse(it, end, x3::lit(','))) expect(x3::int_, e.value2);
      } else if (prefix("const:")) {
        e.type = EditType::Const;
        expect(ident, e.target);
        expect_lit('=');
        expect(literal, e.literal);
      } else if (it != end && *it == '<') {
        expect(rule_ref, e.target);
        if (x3::parse(it, end, x3::lit('+'))) {
          e.type = EditType::Insert;
          expect(rule_ref, e.source);
        } else if (it != end && *it == '<') {
          e.type = EditType::Replace;
          expect(rule_ref, e.source);
        } else {
          e.type = EditType::Delete;
        }
      } else {
        fail(start, "expected an edit: <rule>, <rule><rule>, <rule>+<rule>, or unroll:/ldg:/fastmath:/"
                    "restrict:/launch_bounds:/const:");
      }
    } catch (const x3::expectation_failure<Iterator>& ex) {
      // `start + 40` past the end would be undefined even if never read.
      fail(ex.where(), "expected " + ex.which() + " in edit starting '" +
                           std::string(start, start + std::min<std::ptrdiff_t>(end - start, 40)) + "'");
    }
    if (it != end && !std::isspace(static_cast<unsigned char>(*it)))
      fail(it, "expected a space between edits, found '" + std::string(1, *it) + "'");
    patch.edits.push_back(std::move(e));
  }
  return patch;
}

}  // namespace gi::grammar
