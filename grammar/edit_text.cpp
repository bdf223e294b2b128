#include "grammar/edit_text.hpp"

#include <boost/spirit/home/x3.hpp>

namespace gi::grammar {
namespace x3 = boost::spirit::x3;

namespace {

using Iterator = std::string_view::const_iterator;

const x3::rule<struct rule_ref_, std::string> rule_ref_p = "rule name like <_kernel.cu_42>";
const x3::rule<struct ident_, std::string> ident_p = "a name";
const x3::rule<struct literal_, std::string> literal_p = "a number";

const auto rule_ref_p_def = x3::raw[x3::lit('<') > +(x3::alnum | x3::char_("_.-")) > x3::lit('>')];
const auto ident_p_def = x3::raw[(x3::alpha | x3::char_('_')) >> *(x3::alnum | x3::char_('_'))];
const auto literal_p_def = x3::raw[-x3::char_("+-") >> +(x3::alnum | x3::char_(".+-"))];
BOOST_SPIRIT_DEFINE(rule_ref_p, ident_p, literal_p)

// Runs `parser` at `at`, advancing it; throws ArgumentError where it failed.
template <class Parser, class Attribute>
void read(std::string_view text, std::size_t& at, const Parser& parser, Attribute& attribute,
          const std::string& expected) {
  Iterator it = text.begin() + static_cast<std::ptrdiff_t>(at);
  try {
    if (!x3::parse(it, text.end(), parser, attribute)) throw ArgumentError(at, expected);
  } catch (const x3::expectation_failure<Iterator>& e) {
    throw ArgumentError(static_cast<std::size_t>(e.where() - text.begin()), e.which());
  }
  at = static_cast<std::size_t>(it - text.begin());
}

}  // namespace

std::string ArgumentReader::rule_ref() {
  std::string out;
  read(text_, at_, rule_ref_p, out, "rule name like <_kernel.cu_42>");
  return out;
}

std::string ArgumentReader::identifier() {
  std::string out;
  read(text_, at_, ident_p, out, "a name");
  return out;
}

std::string ArgumentReader::literal() {
  std::string out;
  read(text_, at_, literal_p, out, "a number");
  return out;
}

int ArgumentReader::integer() {
  int out = 0;
  read(text_, at_, x3::int_, out, "an integer");
  return out;
}

void ArgumentReader::expect(char c) {
  if (!accept(c)) throw ArgumentError(at_, std::string("'") + c + "'");
}

bool ArgumentReader::accept(char c) {
  if (at_ < text_.size() && text_[at_] == c) {
    ++at_;
    return true;
  }
  return false;
}

bool ArgumentReader::accept_word(std::string_view word) {
  if (text_.substr(at_, word.size()) != word) return false;
  at_ += word.size();
  return true;
}

std::string ArgumentReader::one_of(std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (text_.substr(at_, w.size()) == w) {
      at_ += w.size();
      return std::string(w);
    }
  std::string list;
  for (std::string_view w : words) list += (list.empty() ? "" : " or ") + std::string(w);
  throw ArgumentError(at_, list);
}

void ArgumentReader::end() {
  if (at_ < text_.size()) throw ArgumentError(at_, "the end of the edit, found '" + std::string(1, text_[at_]) + "'");
}

}  // namespace gi::grammar
