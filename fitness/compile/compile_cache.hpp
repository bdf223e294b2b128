#pragma once
// On-disk cache of compile results, content-addressed by a hex key:
//   <dir>/<first 2 hex digits>/<key>.json   metadata and log (written last)
//   <dir>/<first 2 hex digits>/<key>.cubin  the binary (absent for failures)
// Files are written to a temporary name in the same folder and renamed, so a
// killed run leaves a complete entry or none. Safe for concurrent get/put from
// many threads and processes: nothing is shared but the file system.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fitness/compile/compile_types.hpp"

namespace gi::fitness {

struct CacheLookup {
  std::optional<CompileResult> result;  // set on a hit (cache_hit=true, key set)
  bool corrupt = false;                 // an entry existed but could not be used
  std::string problem;                  // why, when corrupt
};

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }

  // A missing, unreadable or inconsistent entry is a miss, never an exception.
  CacheLookup get(const std::string& key) const;

  // Stores `result` (its cubin only when ok). `request` supplies the options
  // and arch recorded beside it for people reading the cache. Returns false
  // and sets *error when the entry could not be written; never throws.
  bool put(const std::string& key, const CompileRequest& request, const CompileResult& result,
           std::string* error = nullptr) const;

  std::filesystem::path json_path(const std::string& key) const;
  std::filesystem::path binary_path(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace gi::fitness
