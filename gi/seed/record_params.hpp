#pragma once
// The structs among a kernel's parameters, as gi init drafts them
// (grammar/record_type.hpp): a struct passed by value becomes one workload
// variable per component (`ScaleParams p` gives p_n, p_bias, p_gain); a
// pointer to a struct of one component type with no padding becomes a
// buffer of records.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/record_type.hpp"

namespace gi {

// The workload variables of a struct passed by value as `param`, one per
// component in layout order (p_n, p_pos_x, p_m_0).
std::vector<std::string> record_variables(const std::string& param, const grammar::RecordType& record);

// The struct named `type` (aliases already followed) where the kernel's
// file (its parsed tokens), a local header it includes (`headers`, may be
// null) or gi's well-known types define one gi can pass by value: any
// members, C's padding. nullopt otherwise.
std::optional<grammar::RecordType> by_value_record(const std::vector<grammar::Token>& tokens,
                                                   const std::vector<grammar::SourceFile>* headers, const std::string& type,
                                                   const grammar::TypeAliases* aliases = nullptr);

// The spec's parameter for `param`, a struct by value, and the inferred
// line that says so.
nlohmann::ordered_json by_value_parameter(const std::string& param, const grammar::RecordType& record,
                                          std::vector<std::string>& inferred);

// The struct named `type` where a buffer of it is records of one component
// type; else nullopt, and `why` names what gi could not read or generate.
std::optional<grammar::RecordType> buffer_record(const std::vector<grammar::Token>& tokens,
                                                 const std::vector<grammar::SourceFile>* headers, const std::string& type,
                                                 std::string& why, const grammar::TypeAliases* aliases = nullptr);

// "records of struct Particle (line 1: float3, float3, float), 7 floats each"
std::string buffer_record_evidence(const grammar::RecordType& record);

}  // namespace gi
