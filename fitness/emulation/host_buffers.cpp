#include "fitness/emulation/host_buffers.hpp"

#include <sys/mman.h>

#include <cstring>
#include <stdexcept>

#include "fitness/check/buffer_guards.hpp"
#include "fitness/check/output_check.hpp"

namespace gi::fitness::emulation {

namespace {

constexpr std::size_t kPage = 4096;
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

void fill_words(std::byte* p, std::size_t bytes, std::uint32_t word) {
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) std::memcpy(p + i, &word, 4);
}

}  // namespace

HostBuffers::HostBuffers(const LaunchPlan& plan) {
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  for (const BufferArg& arg : plan.buffers) {
    if (arg.role == ParamRole::Scalar) throw std::invalid_argument("buffer '" + arg.name + "' has the role Scalar");
    const std::size_t bytes = arg.count * element_bytes(arg.type);
    const bool uploads = arg.role == ParamRole::In || arg.role == ParamRole::InOut;
    if (uploads && arg.initial.size() != bytes)
      throw std::invalid_argument("buffer '" + arg.name + "': " + std::to_string(arg.initial.size()) +
                                  " initial bytes, expected " + std::to_string(bytes) + " (" +
                                  std::to_string(arg.count) + " elements)");
    offsets.push_back(total);
    total += round_up(kGuardBytes + bytes + kGuardBytes, kPage);
  }
  mapping_bytes_ = std::max<std::size_t>(total, kPage);
  mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw std::runtime_error("cannot map " + std::to_string(mapping_bytes_) + " bytes for the emulator's buffers");
  }
  auto* base = static_cast<std::byte*>(mapping_);
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferArg& arg = plan.buffers[i];
    Buffer b;
    b.name = arg.name;
    b.role = arg.role;
    b.guard = guard_word(arg.type);
    b.bytes = arg.count * element_bytes(arg.type);
    std::byte* start = base + offsets[i];
    b.data = start + kGuardBytes;
    fill_words(start, kGuardBytes, b.guard);
    fill_words(b.data + b.bytes, kGuardBytes, b.guard);
    if (arg.role == ParamRole::Out) fill_output(b.data, b.bytes, arg.type);
    else if (b.bytes > 0) std::memcpy(b.data, arg.initial.data(), b.bytes);
    if (arg.texture && arg.array.dimensions > 0) {
      b.array = std::make_unique<EmulatedTextureArray>();
      b.array->data = b.data;
      for (std::size_t d = 0; d < 3; ++d) b.array->extent[d] = arg.array.extent[d];
      b.array->dimensions = arg.array.dimensions;
      b.array->filter = static_cast<unsigned>(arg.array.filter);
      b.array->address = static_cast<unsigned>(arg.array.address);
      b.array->normalized = arg.array.normalized ? 1 : 0;
    }
    buffers_.push_back(std::move(b));
  }
}

void* HostBuffers::argument(std::size_t index) const {
  const Buffer& b = buffers_.at(index);
  return b.array ? static_cast<void*>(b.array.get()) : static_cast<void*>(b.data);
}

HostBuffers::~HostBuffers() {
  if (mapping_) munmap(mapping_, mapping_bytes_);
}

std::span<const std::byte> HostBuffers::bytes(std::size_t index) const {
  const Buffer& b = buffers_.at(index);
  return {b.data, b.bytes};
}

std::optional<std::string> HostBuffers::check_guards() const {
  for (const Buffer& b : buffers_)
    if (auto damage = describe_guard_damage(b.name, b.guard, {b.data - kGuardBytes, kGuardBytes},
                                            {b.data + b.bytes, kGuardBytes}))
      return damage;
  return std::nullopt;
}

std::optional<std::string> HostBuffers::check_inputs(const LaunchPlan& plan) const {
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.role != ParamRole::In) continue;
    const BufferArg& arg = plan.buffers.at(i);
    if (auto change = describe_input_change(b.name, arg.type, {b.data, b.bytes}, arg.initial)) return change;
  }
  return std::nullopt;
}

std::optional<std::string> HostBuffers::locate(std::uintptr_t address) const {
  for (const Buffer& b : buffers_) {
    const auto begin = reinterpret_cast<std::uintptr_t>(b.data);
    const std::uintptr_t end = begin + b.bytes;
    if (address >= begin && address < end)
      return "byte " + std::to_string(address - begin) + " of buffer '" + b.name + "'";
    if (address < begin && begin - address <= kGuardBytes)
      return std::to_string(begin - address) + " bytes before buffer '" + b.name + "' (in its guard region)";
    if (address >= end && address - end < kGuardBytes)
      return std::to_string(address - end) + " bytes after the end of buffer '" + b.name + "' (in its guard region)";
  }
  return std::nullopt;
}

}  // namespace gi::fitness::emulation
