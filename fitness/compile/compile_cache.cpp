#include "fitness/compile/compile_cache.hpp"

#include "fitness/process/atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "grammar/source_hash.hpp"

namespace gi::fitness {

namespace fs = std::filesystem;

namespace {

// Bumped when the entry format changes, so old entries read as misses.
constexpr int kFormat = 1;

bool valid_key(const std::string& key) {
  if (key.size() < 2) return false;
  for (char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool read_file(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

CompileCache::CompileCache(fs::path dir) : dir_(std::move(dir)) {}

fs::path CompileCache::json_path(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".json");
}

fs::path CompileCache::binary_path(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".cubin");
}

CacheLookup CompileCache::get(const std::string& key) const {
  CacheLookup lookup;
  if (!valid_key(key)) {
    lookup.corrupt = true;
    lookup.problem = "invalid cache key '" + key + "' (expected lowercase hex)";
    return lookup;
  }
  const fs::path meta_path = json_path(key);
  std::string text;
  if (!read_file(meta_path, text)) return lookup;  // a plain miss

  auto corrupt = [&](const std::string& why) {
    lookup.corrupt = true;
    lookup.problem = meta_path.string() + ": " + why;
    return lookup;
  };
  try {
    const auto meta = nlohmann::json::parse(text);
    if (meta.at("format").get<int>() != kFormat) return corrupt("unknown format");
    if (meta.at("key").get<std::string>() != key) return corrupt("entry is for another key");
    CompileResult r;
    r.key = key;
    r.cache_hit = true;
    r.ok = meta.at("ok").get<bool>();
    r.log = meta.at("log").get<std::string>();
    r.error = meta.at("error").get<std::string>();
    r.is_ptx = meta.at("is_ptx").get<bool>();
    r.registers = meta.at("registers").get<int>();
    r.spill_store_bytes = meta.at("spill_store_bytes").get<int>();
    r.spill_load_bytes = meta.at("spill_load_bytes").get<int>();
    r.stack_frame_bytes = meta.at("stack_frame_bytes").get<int>();
    r.compile_seconds = meta.at("compile_seconds").get<double>();
    if (r.ok) {
      std::string binary;
      if (!read_file(binary_path(key), binary)) return corrupt("binary file missing");
      // The metadata is renamed into place after the binary, so a mismatch
      // means damage, not a write in progress.
      if (binary.size() != meta.at("binary_bytes").get<std::size_t>() ||
          grammar::sha256_hex(binary) != meta.at("binary_sha256").get<std::string>()) {
        return corrupt("binary does not match its recorded size/hash");
      }
      r.cubin.assign(binary.begin(), binary.end());
    }
    lookup.result = std::move(r);
  } catch (const std::exception& e) {
    return corrupt(std::string("unreadable entry: ") + e.what());
  }
  return lookup;
}

bool CompileCache::put(const std::string& key, const CompileRequest& request,
                       const CompileResult& result, std::string* error) const {
  std::string why;
  auto fail = [&](const std::string& message) {
    if (error) *error = message;
    return false;
  };
  if (!valid_key(key)) return fail("invalid cache key '" + key + "' (expected lowercase hex)");
  try {
    std::error_code ec;
    fs::create_directories(json_path(key).parent_path(), ec);
    if (ec) return fail("cannot create " + json_path(key).parent_path().string() + ": " + ec.message());

    const std::string_view binary(result.cubin.data(), result.ok ? result.cubin.size() : 0);
    if (result.ok && !write_file_atomically(binary_path(key), std::string_view(binary.data(), binary.size()), why)) {
      return fail(why);
    }
    const nlohmann::json meta = {
        {"format", kFormat},
        {"key", key},
        {"ok", result.ok},
        {"log", result.log},
        {"error", result.error},
        {"is_ptx", result.is_ptx},
        {"registers", result.registers},
        {"spill_store_bytes", result.spill_store_bytes},
        {"spill_load_bytes", result.spill_load_bytes},
        {"stack_frame_bytes", result.stack_frame_bytes},
        {"compile_seconds", result.compile_seconds},
        {"file_name", request.file_name},
        {"options", request.options},
        {"arch", request.arch},
        {"binary_bytes", binary.size()},
        {"binary_sha256", grammar::sha256_hex(binary)},
    };
    // The log may hold arbitrary bytes; replace invalid UTF-8 rather than throw.
    const std::string text = meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (!write_file_atomically(json_path(key), text, why)) return fail(why);
  } catch (const std::exception& e) {
    return fail(std::string("cannot write cache entry ") + key + ": " + e.what());
  }
  return true;
}

}  // namespace gi::fitness
