#include "fitness/workload/reference_cache.hpp"

#include <atomic>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include <unistd.h>

#include "grammar/source_hash.hpp"

namespace gi::fitness {

namespace {

namespace fs = std::filesystem;

// File layout (little-endian host order; the cache is per machine):
//   "GIREF001" | u64 key size | key | u64 outputs |
//   per output: u64 name size | name | u64 values | values as f64 |
//   u64 checksum of everything before it.
constexpr char kMagic[8] = {'G', 'I', 'R', 'E', 'F', '0', '0', '1'};
// Part of every key, so that a change of what the references compute can
// retire every old entry at once.
constexpr const char* kKeyVersion = "gi-reference-cache-1";

// A fast 64-bit checksum over whole words; it guards against truncated or
// damaged files, not against anyone forging one.
class Checksum {
 public:
  void add(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      pending_ |= static_cast<std::uint64_t>(p[i]) << (8 * filled_);
      if (++filled_ == 8) flush();
    }
  }
  void add_words(const double* values, std::size_t n) {
    if (filled_ != 0) flush();  // both sides pad the same way
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t w;
      std::memcpy(&w, &values[i], 8);
      mix(w);
    }
  }
  void add_bytes(const std::vector<std::byte>& bytes) {
    const std::size_t words = bytes.size() / 8;
    if (filled_ != 0) flush();
    for (std::size_t i = 0; i < words; ++i) {
      std::uint64_t w;
      std::memcpy(&w, bytes.data() + 8 * i, 8);
      mix(w);
    }
    add(bytes.data() + 8 * words, bytes.size() - 8 * words);
  }
  std::uint64_t value() {
    if (filled_ != 0) flush();
    std::uint64_t h = h_ ^ (h_ >> 31);
    return h * 0x94d049bb133111ebULL;
  }

 private:
  void mix(std::uint64_t w) {
    h_ ^= w + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2);
    h_ *= 0xbf58476d1ce4e5b9ULL;
  }
  void flush() {
    mix(pending_);
    pending_ = 0;
    filled_ = 0;
  }
  std::uint64_t h_ = 0x243f6a8885a308d3ULL, pending_ = 0;
  int filled_ = 0;
};

class Writer {
 public:
  explicit Writer(std::ofstream& out) : out_(out) {}
  void bytes(const void* p, std::size_t n) {
    out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    sum_.add(p, n);
  }
  void u64(std::uint64_t v) { bytes(&v, 8); }
  void text(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void values(const std::vector<double>& v) {
    u64(v.size());
    out_.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
    sum_.add_words(v.data(), v.size());
  }
  void finish() {
    const std::uint64_t s = sum_.value();
    out_.write(reinterpret_cast<const char*>(&s), 8);
  }

 private:
  std::ofstream& out_;
  Checksum sum_;
};

class Reader {
 public:
  Reader(std::ifstream& in, std::uint64_t size) : in_(in), left_(size) {}
  bool bytes(void* p, std::size_t n) {
    if (n > left_) return false;
    if (!in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n))) return false;
    left_ -= n;
    sum_.add(p, n);
    return true;
  }
  bool u64(std::uint64_t& v) { return bytes(&v, 8); }
  bool text(std::string& s) {
    std::uint64_t n;
    if (!u64(n) || n > left_) return false;
    s.resize(n);
    return bytes(s.data(), n);
  }
  bool values(std::vector<double>& v) {
    std::uint64_t n;
    if (!u64(n) || n > left_ / sizeof(double)) return false;
    v.resize(n);
    if (!in_.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(double)))) return false;
    left_ -= n * sizeof(double);
    sum_.add_words(v.data(), v.size());
    return true;
  }
  bool finish() {
    std::uint64_t stored;
    if (left_ != 8 || !in_.read(reinterpret_cast<char*>(&stored), 8)) return false;
    return stored == sum_.value();
  }

 private:
  std::ifstream& in_;
  std::uint64_t left_;
  Checksum sum_;
};

}  // namespace

ReferenceCache::ReferenceCache(fs::path dir) : dir_(std::move(dir)) {}

std::string ReferenceCache::key(const std::string& entry, const std::string& generator,
                                const nlohmann::json& variables, std::uint64_t seed, std::uint64_t inputs_digest) {
  // nlohmann::json keeps object keys sorted, so dump() is canonical.
  const std::string text = std::string(kKeyVersion) + "\nentry=" + entry + "\ngenerator=" + generator +
                           "\nvariables=" + variables.dump() + "\nseed=" + std::to_string(seed) +
                           "\ninputs=" + std::to_string(inputs_digest) + "\n";
  return grammar::sha256_hex(text);
}

std::uint64_t workload_digest(const Workload& workload) {
  Checksum sum;
  for (const auto& [name, value] : workload.variables) {
    sum.add(name.data(), name.size());
    sum.add(&value, sizeof value);
  }
  for (const auto& [name, bytes] : workload.inputs) {
    sum.add(name.data(), name.size());
    const std::uint64_t size = bytes.size();
    sum.add(&size, sizeof size);
    sum.add_bytes(bytes);
  }
  return sum.value();
}

fs::path ReferenceCache::file_for(const std::string& key) const { return dir_ / (key + ".ref"); }

std::optional<ReferenceOutputs> ReferenceCache::load(const std::string& key) const {
  const fs::path file = file_for(key);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  Reader r(in, size);
  char magic[8];
  std::string stored_key;
  std::uint64_t n = 0;
  if (!r.bytes(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return std::nullopt;
  if (!r.text(stored_key) || stored_key != key) return std::nullopt;
  if (!r.u64(n) || n > 1024) return std::nullopt;
  ReferenceOutputs out;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string name;
    std::vector<double> values;
    if (!r.text(name) || !r.values(values)) return std::nullopt;
    out.emplace(std::move(name), std::move(values));
  }
  if (!r.finish()) return std::nullopt;
  return out;
}

bool ReferenceCache::store(const std::string& key, const ReferenceOutputs& outputs) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return false;
  static std::atomic<unsigned> counter{0};
  const fs::path final_file = file_for(key);
  const fs::path tmp = dir_ / (key + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
                               std::to_string(std::random_device{}()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    Writer w(out);
    w.bytes(kMagic, 8);
    w.text(key);
    w.u64(outputs.size());
    for (const auto& [name, values] : outputs) {
      w.text(name);
      w.values(values);
    }
    w.finish();
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, final_file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

ReferenceOutputs ReferenceCache::get_or_compute(const std::string& key,
                                                const std::function<ReferenceOutputs()>& compute, bool* hit) const {
  if (auto cached = load(key)) {
    if (hit) *hit = true;
    return std::move(*cached);
  }
  if (hit) *hit = false;
  ReferenceOutputs computed = compute();
  store(key, computed);
  return computed;
}

}  // namespace gi::fitness
