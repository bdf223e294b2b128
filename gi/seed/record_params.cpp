// Structs among a kernel's parameters (gi/seed/record_params.hpp).
#include "gi/seed/record_params.hpp"

#include "analysis/parameter_use.hpp"

namespace gi {

std::vector<std::string> record_variables(const std::string& param, const grammar::RecordType& record) {
  std::vector<std::string> out;
  for (const std::string& c : grammar::component_names(record)) out.push_back(analysis::record_member_name(param, c));
  return out;
}

std::optional<grammar::RecordType> by_value_record(const std::vector<grammar::Token>& tokens,
                                                   const std::vector<grammar::SourceFile>* headers, const std::string& type,
                                                   const grammar::TypeAliases* aliases) {
  std::string why;
  auto r = grammar::find_record_type(tokens, headers, type, why, aliases);
  if (!r || !grammar::record_fields(r->layout).refusal.empty()) return std::nullopt;
  return r;
}

nlohmann::ordered_json by_value_parameter(const std::string& param, const grammar::RecordType& record,
                                          std::vector<std::string>& inferred) {
  const std::vector<std::string> values = record_variables(param, record);
  std::string members;
  for (std::size_t m = 0; m < record.layout.size(); ++m)
    members += (members.empty() ? "" : ", ") + record.layout[m] + " " + record.members[m];
  inferred.push_back("'" + param + "': struct " + record.name + " by value (" + record.where() + ": " + members + "), one workload variable per component (" + values.front() +
                     (values.size() > 1 ? ", ..." : "") + ")");
  return {{"name", param}, {"type", record.name}, {"layout", record.layout}, {"role", "scalar"}, {"value", values}};
}

std::optional<grammar::RecordType> buffer_record(const std::vector<grammar::Token>& tokens,
                                                 const std::vector<grammar::SourceFile>* headers, const std::string& type,
                                                 std::string& why, const grammar::TypeAliases* aliases) {
  auto record = grammar::find_record_type(tokens, headers, type, why, aliases);
  if (record && !record->words.refusal.empty()) {
    why = "struct '" + type + "' (" + record->where() + "): " + record->words.refusal;
    return std::nullopt;
  }
  return record;
}

std::string buffer_record_evidence(const grammar::RecordType& record) {
  std::string members;
  for (const std::string& m : record.layout) members += (members.empty() ? "" : ", ") + m;
  const int n = record.words.words;
  return "records of struct " + record.name + " (" + record.where() + ": " + members + "), " +
         std::to_string(n) + " " + record.words.word + (n == 1 ? "" : "s") + " each";
}

}  // namespace gi
