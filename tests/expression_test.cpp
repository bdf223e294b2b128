// The expression language of kernel specs: arithmetic, functions, variables,
// and errors that name the expression and the position.
#include "fitness/workload/expression.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using gi::fitness::evaluate_expression;
using gi::fitness::Expression;
using gi::fitness::Variables;

double eval(const std::string& text, const Variables& v = {}) { return evaluate_expression(text, v); }

// The message of the runtime_error `text` throws (fails the test if none).
std::string error_of(const std::string& text, const Variables& v = {}) {
  try {
    eval(text, v);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return "";
}

TEST(Expression, PrecedenceAndAssociativity) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 4 - 3"), 3);
  EXPECT_EQ(eval("64 / 4 / 2"), 8);
  EXPECT_EQ(eval("2 * 3 % 4"), 2);
  EXPECT_EQ(eval("10 / 4"), 2.5);
}

TEST(Expression, UnarySigns) {
  EXPECT_EQ(eval("-2 * 3"), -6);
  EXPECT_EQ(eval("--2"), 2);
  EXPECT_EQ(eval("+5 - -5"), 10);
  EXPECT_EQ(eval("-(1 + 2)"), -3);
}

TEST(Expression, IntegerAndDecimalLiterals) {
  EXPECT_EQ(eval("0.5 + .25"), 0.75);
  EXPECT_EQ(eval("007"), 7);
  EXPECT_EQ(eval("7.5 * 2"), 15);
}

TEST(Expression, RemainderFollowsTruncatedDivision) {
  EXPECT_EQ(eval("7 % 3"), 1);
  EXPECT_EQ(eval("-7 % 3"), -1);
  EXPECT_EQ(eval("7.5 % 2"), 1.5);
}

TEST(Expression, Functions) {
  EXPECT_EQ(eval("ceil_div(10, 3)"), 4);
  EXPECT_EQ(eval("ceil_div(9, 3)"), 3);
  EXPECT_EQ(eval("ceil_div(2188897, 128)"), 17101);
  EXPECT_EQ(eval("min(3, -4)"), -4);
  EXPECT_EQ(eval("max(3, -4)"), 3);
  EXPECT_EQ(eval("floor(-1.5)"), -2);
  EXPECT_EQ(eval("ceil(1.2)"), 2);
  EXPECT_EQ(eval("floor((217 - 1) / 5) + 4"), 47);
  EXPECT_EQ(eval("max(min(1, 2), ceil_div(7, 2)) * 2"), 8);
}

TEST(Expression, Variables) {
  const Variables v = {{"activeVoxelNumber", 1000}, {"B", 128}, {"cpX", 47}};
  EXPECT_EQ(eval("ceil_div(activeVoxelNumber, B)", v), 8);
  EXPECT_EQ(eval("cpX*cpX*cpX", v), 103823);
  const Expression e = Expression::parse("a * b + a + c_2");
  EXPECT_EQ(e.variables(), (std::vector<std::string>{"a", "b", "c_2"}));
  EXPECT_EQ(e.evaluate({{"a", 2}, {"b", 3}, {"c_2", 1}}), 9);
  EXPECT_EQ(e.text(), "a * b + a + c_2");
}

TEST(Expression, ParseOnceEvaluateMany) {
  const Expression e = Expression::parse("ceil_div(n, B)");
  EXPECT_EQ(e.evaluate({{"n", 1}, {"B", 64}}), 1);
  EXPECT_EQ(e.evaluate({{"n", 65}, {"B", 64}}), 2);
  const Expression copy = e;
  EXPECT_EQ(copy.evaluate({{"n", 129}, {"B", 64}}), 3);
}

TEST(Expression, ConstantsAndDefault) {
  EXPECT_EQ(Expression().evaluate({}), 0);
  EXPECT_EQ(Expression::constant(7.5).evaluate({}), 7.5);
  EXPECT_EQ(Expression::constant(3).text(), "3");
}

TEST(ExpressionErrors, UnknownVariableNamesExpressionPositionAndName) {
  const std::string m = error_of("a + qq", {{"a", 1}});
  EXPECT_NE(m.find("'a + qq'"), std::string::npos) << m;
  EXPECT_NE(m.find("position 5"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown variable 'qq'"), std::string::npos) << m;
  EXPECT_NE(m.find("known: a"), std::string::npos) << m;
}

TEST(ExpressionErrors, DivisionByZero) {
  std::string m = error_of("1 / 0");
  EXPECT_NE(m.find("position 3"), std::string::npos) << m;
  EXPECT_NE(m.find("division by zero"), std::string::npos) << m;
  m = error_of("5 % (a - a)", {{"a", 2}});
  EXPECT_NE(m.find("remainder by zero"), std::string::npos) << m;
  EXPECT_NE(m.find("position 3"), std::string::npos) << m;
  m = error_of("ceil_div(1, 0)");
  EXPECT_NE(m.find("ceil_div by zero"), std::string::npos) << m;
  EXPECT_NE(m.find("position 1"), std::string::npos) << m;
}

TEST(ExpressionErrors, BadSyntax) {
  struct Case {
    const char* text;
    const char* position;
    const char* what;
  };
  const Case cases[] = {
      {"1 +", "position 4", "found the end"},
      {"(1 + 2", "position 7", "expected ')'"},
      {"1 2", "position 3", "unexpected '2'"},
      {"2a", "position 2", "must not run into a name"},
      {"1.", "position 3", "digit after the decimal point"},
      {"", "position 1", "found nothing"},
      {"   ", "position 4", "found nothing"},
      {"3 * $", "position 5", "found '$'"},
      {"min(1, 2", "position 9", "expected ',' or ')'"},
      {"1 + )", "position 5", "found ')'"},
      {"a b", "position 3", "unexpected 'b'"},
  };
  for (const Case& c : cases) {
    const std::string m = error_of(c.text);
    EXPECT_NE(m.find(std::string("'") + c.text + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(c.position), std::string::npos) << c.text << ": " << m;
    EXPECT_NE(m.find(c.what), std::string::npos) << c.text << ": " << m;
  }
}

TEST(ExpressionErrors, UnknownFunctionAndWrongArity) {
  std::string m = error_of("2 * sqrt(4)");
  EXPECT_NE(m.find("unknown function 'sqrt'"), std::string::npos) << m;
  EXPECT_NE(m.find("position 5"), std::string::npos) << m;
  m = error_of("min(1)");
  EXPECT_NE(m.find("min expects 2 arguments, got 1"), std::string::npos) << m;
  m = error_of("floor(1, 2)");
  EXPECT_NE(m.find("floor expects 1 argument, got 2"), std::string::npos) << m;
  m = error_of("ceil()");
  EXPECT_NE(m.find("ceil expects 1 argument, got 0"), std::string::npos) << m;
}

TEST(ExpressionErrors, SyntaxErrorsAreFoundAtParseTimeWithoutVariables) {
  EXPECT_THROW(Expression::parse("a +* b"), std::runtime_error);
  EXPECT_NO_THROW(Expression::parse("a + b"));  // unknown variables only fail when evaluated
}

TEST(ExpressionErrors, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(10000, '(') + "1" + std::string(10000, ')');
  EXPECT_NE(error_of(deep).find("nested deeper than"), std::string::npos);
  const std::string minus = std::string(10000, '-') + "1";
  EXPECT_NE(error_of(minus).find("nested deeper than"), std::string::npos);
  EXPECT_EQ(eval(std::string(50, '(') + "1" + std::string(50, ')')), 1);
}

TEST(ExpressionErrors, NonFiniteValues) {
  EXPECT_NE(error_of(std::string(400, '9')).find("number out of range"), std::string::npos);
  const std::string big = std::string(300, '9');
  EXPECT_NE(error_of(big + " * " + big).find("not a finite number"), std::string::npos);
}

}  // namespace
