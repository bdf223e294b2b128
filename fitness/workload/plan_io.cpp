#include "fitness/workload/plan_io.hpp"

#include <cstring>
#include <fstream>
#include <random>

namespace gi::fitness {

namespace {

// "GIPLAN", then CR LF: a file that went through a text-mode copy fails here.
constexpr char kMagic[8] = {'G', 'I', 'P', 'L', 'A', 'N', '\r', '\n'};
constexpr std::uint32_t kByteOrderMark = 0x01020304u;
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8;

// A 64-bit checksum of the payload, eight bytes at a time (a byte-wise hash
// would take most of a second on a plan of a few hundred MB).
std::uint64_t checksum(std::span<const std::byte> bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull ^ bytes.size();
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001B3ull;
    h ^= h >> 32;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<std::uint64_t>(bytes[i])) * 0x100000001B3ull;
  return h;
}

class Writer {
 public:
  template <typename T>
  void pod(const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void u8(unsigned v) { pod(static_cast<std::uint8_t>(v)); }
  void u64(std::size_t v) { pod(static_cast<std::uint64_t>(v)); }
  void raw(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::byte*>(data);
    out.insert(out.end(), p, p + bytes);
  }
  void string(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  std::vector<std::byte> out;
};

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, std::size_t base, const std::string& origin)
      : bytes_(bytes), base_(base), origin_(origin) {}

  [[noreturn]] void error(const std::string& what) const {
    throw PlanIoError("plan file " + origin_ + ": " + what + " (at byte " +
                      std::to_string(base_ + offset_) + ")");
  }
  void need(std::size_t n, const char* what) const {
    if (n > bytes_.size() - offset_)
      error(std::string("truncated while reading ") + what + ": need " + std::to_string(n) +
            " bytes, " + std::to_string(bytes_.size() - offset_) + " left");
  }
  template <typename T>
  T pod(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  std::uint8_t u8(const char* what) { return pod<std::uint8_t>(what); }
  std::uint64_t u64(const char* what) { return pod<std::uint64_t>(what); }
  // A count of items of `item_bytes` each that must still fit in the file, so
  // a damaged length never turns into a huge allocation.
  std::size_t count(std::size_t item_bytes, const char* what) {
    const std::uint64_t n = u64(what);
    const std::size_t left = bytes_.size() - offset_;
    if (item_bytes > 0 && n > left / item_bytes)
      error(std::string("truncated or corrupt: ") + what + " says " + std::to_string(n) +
            " items of " + std::to_string(item_bytes) + " bytes, only " + std::to_string(left) +
            " bytes left");
    return static_cast<std::size_t>(n);
  }
  void raw(void* destination, std::size_t n, const char* what) {
    need(n, what);
    if (n) std::memcpy(destination, bytes_.data() + offset_, n);
    offset_ += n;
  }
  std::string string(const char* what) {
    std::string s(count(1, what), '\0');
    raw(s.data(), s.size(), what);
    return s;
  }
  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  std::span<const std::byte> bytes_;
  std::size_t base_;
  std::string origin_;
  std::size_t offset_ = 0;
};

// Named values (scalar arguments, constants): a count, then each one's name and bytes.
void write_values(Writer& w, const std::vector<ScalarArg>& values) {
  w.u64(values.size());
  for (const ScalarArg& v : values) {
    w.string(v.name);
    w.u64(v.bytes.size());
    w.raw(v.bytes.data(), v.bytes.size());
  }
}

std::vector<ScalarArg> read_values(Reader& r, const std::string& what) {
  std::vector<ScalarArg> out(r.count(8 + 8, (what + " count").c_str()));
  for (ScalarArg& v : out) {
    v.name = r.string((what + " name").c_str());
    v.bytes.resize(r.count(1, (what + " byte count").c_str()));
    r.raw(v.bytes.data(), v.bytes.size(), (what + " bytes").c_str());
  }
  return out;
}

void write_payload(Writer& w, const LaunchPlan& plan, const std::vector<ExpectedOutput>& expected,
                   const Tolerance& tolerance) {
  w.string(plan.entry);
  w.u64(plan.buffers.size());
  for (const BufferArg& b : plan.buffers) {
    w.string(b.name);
    w.u8(static_cast<unsigned>(b.role));
    w.u8(static_cast<unsigned>(b.type));
    w.u8(b.texture ? 1 : 0);
    w.u8(b.array.dimensions);
    for (const std::size_t e : b.array.extent) w.u64(e);
    w.u8(static_cast<unsigned>(b.array.filter));
    w.u8(static_cast<unsigned>(b.array.address));
    w.u8(b.array.normalized ? 1 : 0);
    w.u64(b.count);
    w.u64(b.initial.size());
    w.raw(b.initial.data(), b.initial.size());
  }
  write_values(w, plan.scalars);
  w.u64(plan.params.size());
  for (const auto& [is_buffer, index] : plan.params) {
    w.u8(is_buffer ? 1 : 0);
    w.u64(index);
  }
  write_values(w, plan.constants);
  for (unsigned g : plan.grid) w.pod(static_cast<std::uint32_t>(g));
  for (unsigned b : plan.block) w.pod(static_cast<std::uint32_t>(b));
  w.u64(plan.dynamic_shared_bytes);
  w.pod(plan.min_bytes_moved);
  w.u64(expected.size());
  for (const ExpectedOutput& e : expected) {
    w.string(e.buffer);
    w.u64(e.values.size());
    w.raw(e.values.data(), e.values.size() * sizeof(double));
    w.u8(e.written_elements ? 1 : 0);
    if (e.written_elements) {
      w.u64(e.written_elements->size());
      w.raw(e.written_elements->data(), e.written_elements->size() * sizeof(std::uint32_t));
    }
    w.u64(e.checked_components.size());
    for (int c : e.checked_components) w.pod(static_cast<std::int32_t>(c));
  }
  w.pod(tolerance.abs);
  w.pod(tolerance.rel);
}

// A texture buffer's CUDA array (TextureArray), as write_payload writes it.
void read_texture_array(Reader& r, BufferArg& b) {
  TextureArray& a = b.array;
  a.dimensions = r.u8("texture array dimensions");
  if (a.dimensions > 3) r.error("buffer '" + b.name + "': a texture array of " + std::to_string(a.dimensions) + " dimensions");
  if (a.dimensions > 0 && !b.texture) r.error("buffer '" + b.name + "': an array but no texture");
  for (std::size_t& e : a.extent) e = r.u64("texture array extent");
  const unsigned filter = r.u8("texture filter");
  const unsigned address = r.u8("texture address mode");
  const unsigned normalized = r.u8("texture normalized flag");
  if (filter > 1 || address > 1 || normalized > 1)
    r.error("buffer '" + b.name + "': texture filter " + std::to_string(filter) + ", address " +
            std::to_string(address) + ", normalized " + std::to_string(normalized) + ": each must be 0 or 1");
  a.filter = static_cast<TextureFilter>(filter);
  a.address = static_cast<TextureAddress>(address);
  a.normalized = normalized == 1;
}

PlanBundle read_payload(Reader& r) {
  PlanBundle bundle;
  LaunchPlan& plan = bundle.plan;
  plan.entry = r.string("entry name");
  const std::size_t buffers = r.count(1 + 1 + 1 + 1 + 8 + 8 + 8, "buffer count");
  for (std::size_t i = 0; i < buffers; ++i) {
    BufferArg b;
    b.name = r.string("buffer name");
    const unsigned role = r.u8("buffer role");
    if (role > static_cast<unsigned>(ParamRole::Scalar))
      r.error("buffer '" + b.name + "': role " + std::to_string(role) + " is not a ParamRole");
    b.role = static_cast<ParamRole>(role);
    const unsigned type = r.u8("buffer element type");
    if (type >= static_cast<unsigned>(ElementType::Bool))
      r.error("buffer '" + b.name + "': element type " + std::to_string(type) +
              " is not the element type of a buffer");
    b.type = static_cast<ElementType>(type);
    const unsigned texture = r.u8("buffer texture flag");
    if (texture > 1) r.error("buffer '" + b.name + "': texture flag " + std::to_string(texture) + " is neither 0 nor 1");
    b.texture = texture == 1;
    read_texture_array(r, b);
    b.count = r.u64("buffer element count");
    b.initial.resize(r.count(1, "buffer initial byte count"));
    r.raw(b.initial.data(), b.initial.size(), "buffer initial bytes");
    if (!b.initial.empty() && b.initial.size() != b.count * element_bytes(b.type))
      r.error("buffer '" + b.name + "': " + std::to_string(b.initial.size()) +
              " initial bytes for " + std::to_string(b.count) + " elements of " +
              std::to_string(element_bytes(b.type)) + " bytes");
    plan.buffers.push_back(std::move(b));
  }
  plan.scalars = read_values(r, "scalar");
  const std::size_t params = r.count(1 + 8, "parameter count");
  for (std::size_t i = 0; i < params; ++i) {
    const unsigned is_buffer = r.u8("parameter kind");
    const std::size_t index = r.u64("parameter index");
    if (is_buffer > 1) r.error("parameter " + std::to_string(i) + ": kind " + std::to_string(is_buffer) + " is neither 0 nor 1");
    const std::size_t limit = is_buffer ? plan.buffers.size() : plan.scalars.size();
    if (index >= limit)
      r.error("parameter " + std::to_string(i) + " refers to " + (is_buffer ? "buffer" : "scalar") +
              " #" + std::to_string(index) + ", there are " + std::to_string(limit));
    plan.params.emplace_back(is_buffer == 1, index);
  }
  plan.constants = read_values(r, "constant");
  for (unsigned& g : plan.grid) g = r.pod<std::uint32_t>("grid");
  for (unsigned& b : plan.block) b = r.pod<std::uint32_t>("block");
  plan.dynamic_shared_bytes = r.u64("dynamic shared bytes");
  plan.min_bytes_moved = r.pod<double>("minimum bytes moved");
  const std::size_t expected = r.count(8 + 8 + 1 + 8, "reference count");
  for (std::size_t i = 0; i < expected; ++i) {
    ExpectedOutput e;
    e.buffer = r.string("reference buffer name");
    e.values.resize(r.count(sizeof(double), "reference value count"));
    r.raw(e.values.data(), e.values.size() * sizeof(double), "reference values");
    const unsigned has_written = r.u8("written-elements flag");
    if (has_written > 1) r.error("reference '" + e.buffer + "': written-elements flag " + std::to_string(has_written));
    if (has_written) {
      std::vector<std::uint32_t> written(r.count(sizeof(std::uint32_t), "written element count"));
      r.raw(written.data(), written.size() * sizeof(std::uint32_t), "written elements");
      e.written_elements = std::move(written);
    }
    e.checked_components.resize(r.count(sizeof(std::int32_t), "checked component count"));
    for (int& c : e.checked_components) c = r.pod<std::int32_t>("checked component");
    bundle.expected.push_back(std::move(e));
  }
  bundle.tolerance.abs = r.pod<double>("absolute tolerance");
  bundle.tolerance.rel = r.pod<double>("relative tolerance");
  if (!r.at_end()) r.error("unexpected bytes after the tolerance");
  return bundle;
}

}  // namespace

std::vector<std::byte> serialize_plan(const LaunchPlan& plan,
                                      const std::vector<ExpectedOutput>& expected,
                                      const Tolerance& tolerance) {
  Writer payload;
  write_payload(payload, plan, expected, tolerance);
  Writer file;
  file.raw(kMagic, sizeof kMagic);
  file.pod(kPlanFormatVersion);
  file.pod(kByteOrderMark);
  file.u64(payload.out.size());
  file.pod(checksum(payload.out));
  file.out.insert(file.out.end(), payload.out.begin(), payload.out.end());
  return std::move(file.out);
}

PlanBundle deserialize_plan(std::span<const std::byte> bytes, const std::string& origin) {
  Reader header(bytes.first(std::min(bytes.size(), kHeaderBytes)), 0, origin);
  char magic[sizeof kMagic];
  header.raw(magic, sizeof magic, "the file signature");
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    header.error("not a gi plan file (bad signature)");
  const auto version = header.pod<std::uint32_t>("format version");
  if (version != kPlanFormatVersion)
    header.error("format version " + std::to_string(version) + ", this gi reads version " +
                 std::to_string(kPlanFormatVersion));
  if (header.pod<std::uint32_t>("byte-order mark") != kByteOrderMark)
    header.error("written on a machine of another byte order");
  const std::uint64_t payload_bytes = header.u64("payload length");
  const std::uint64_t expected_sum = header.u64("payload checksum");
  const std::span<const std::byte> payload = bytes.subspan(kHeaderBytes);
  if (payload.size() != payload_bytes)
    throw PlanIoError("plan file " + origin + ": " +
                      (payload.size() < payload_bytes ? "truncated" : "has trailing bytes") +
                      ": the header announces " + std::to_string(payload_bytes) +
                      " payload bytes, the file holds " + std::to_string(payload.size()));
  if (checksum(payload) != expected_sum)
    throw PlanIoError("plan file " + origin + ": corrupt: the payload checksum does not match");
  Reader reader(payload, kHeaderBytes, origin);
  return read_payload(reader);
}

void save_plan(const std::filesystem::path& path, const LaunchPlan& plan,
               const std::vector<ExpectedOutput>& expected, const Tolerance& tolerance) {
  const std::vector<std::byte> bytes = serialize_plan(plan, expected, tolerance);
  std::random_device rd;
  std::filesystem::path temporary = path;
  temporary += ".tmp-" + std::to_string(rd());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw PlanIoError("cannot write plan file " + temporary.string());
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw PlanIoError("writing plan file " + temporary.string() + " failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw PlanIoError("cannot rename plan file to " + path.string() + ": " + ec.message());
  }
}

PlanBundle load_plan(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PlanIoError("cannot open plan file " + path.string());
  std::vector<std::byte> bytes;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw PlanIoError("cannot read plan file " + path.string());
  in.seekg(0, std::ios::beg);
  bytes.resize(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) throw PlanIoError("reading plan file " + path.string() + " failed");
  return deserialize_plan(bytes, path.string());
}

}  // namespace gi::fitness
