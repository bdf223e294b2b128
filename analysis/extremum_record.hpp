#pragma once
// The comparison an argmax or argmin keeps its record with:
//   if (SCORE > best.w) { best.x = ...; best.y = ...; best.w = SCORE; }
// (also >=, <, <=; the record several plain variables, `if (v > best) {
// best = v; at = i; }`, or members of one struct). Only the shape is read
// here; whether the record is touched anywhere else is the caller's to
// check (analysis/warp_per_item_sites.cpp shares such loops among lanes).
#include <cstddef>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct RecordField {
  std::string root;    // the variable: "best"
  std::string access;  // what is assigned: "best.x", or "best"
  std::string field;   // "x", or "" for a plain variable
};

struct RecordUpdate {
  std::string why;       // empty: a record update; else why the if is none
  std::string op;        // >, >=, <, <=: SCORE op COMPARED
  RecordField compared;  // the score kept in the record
  std::vector<RecordField> fields;  // every assignment of the body, in order (compared included)
  std::size_t score_statement = 0;  // the element assigning the compared score
  std::size_t body_close = 0;       // the element of the body's closing brace
  std::vector<std::size_t> statements;  // the body's statements
};

// The if whose header is element `h`, read as a record update.
RecordUpdate record_update(const grammar::ParsedKernel& k, std::size_t h);

}  // namespace gi::analysis
