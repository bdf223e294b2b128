#pragma once
// The output, input and guard checks of a checked run, done on the GPU: the
// reference stays on the device in double precision, so an evaluation reads
// back a few hundred bytes of partial results instead of every output and
// input (the host check cost 45 ms per B-spline evaluation, over 90% of the
// worker's time). The rules are those of fitness/check/output_check (NaN or Inf
// fails, |got - ref| <= abs + rel |ref|, elements the seed leaves alone must
// keep the NaN fill); messages for the first failure are built on the host
// from that one element, by the same code the host check uses. Results are
// deterministic: a fixed grid, per-block tree reductions merged in block
// order on the host, and an order-free digest (fitness/check/output_digest).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fitness/check/output_check.hpp"

namespace gi::fitness {

class DeviceCheck {
 public:
  // Compiles the check kernels with NVRTC for `arch` ("sm_90") and loads them.
  // Throws std::runtime_error when NVRTC fails and CudaError when loading fails.
  explicit DeviceCheck(const std::string& arch);
  ~DeviceCheck();
  DeviceCheck(const DeviceCheck&) = delete;
  DeviceCheck& operator=(const DeviceCheck&) = delete;

  // Keeps `expected` (the reference values as doubles, and the written flags)
  // on the device for the buffer named expected.buffer of the plan in `slot`
  // (GpuRunner keeps several plans loaded: each slot has its own references,
  // so checks that alternate between plans upload nothing). Synchronous.
  void upload_reference(const std::string& slot, const BufferArg& buffer, const ExpectedOutput& expected,
                        cudaStream_t stream);
  // The references of one slot, or of every slot.
  void clear_references(const std::string& slot);
  void clear_references();
  bool has_reference(const std::string& slot, const std::string& buffer) const;
  // Device address of the reference values of `buffer` in `slot` (0 when
  // none was uploaded): tests damage them to see the damage repaired.
  CUdeviceptr reference_values(const std::string& slot, const std::string& buffer) const;

  // Compares `count` elements at `got` with the reference uploaded for
  // buffer.name in `slot` and adds the buffer's digest sum (ordinal
  // `ordinal`) to `digest_sum`.
  BufferCheck check(const std::string& slot, const BufferArg& buffer, CUdeviceptr got, const Tolerance& tolerance,
                    std::uint64_t ordinal, std::uint64_t& digest_sum, cudaStream_t stream);
  // digest_buffer_sum of `bytes` bytes at `data`, computed on the device.
  std::uint64_t digest_sum(CUdeviceptr data, std::size_t bytes, std::uint64_t ordinal, cudaStream_t stream);
  // Index of the first 4-byte word where a and b differ; nullopt when equal.
  std::optional<std::size_t> first_difference(CUdeviceptr a, CUdeviceptr b, std::size_t words, cudaStream_t stream);
  // Index of the first 4-byte word that is not `word`; nullopt when all are.
  std::optional<std::size_t> first_other_word(CUdeviceptr a, std::size_t words, std::uint32_t word,
                                              cudaStream_t stream);

 private:
  struct Reference {
    std::string slot;
    std::string buffer;
    CUdeviceptr values = 0;   // count * components doubles
    CUdeviceptr written = 0;  // count bytes, or 0 when every element is written
    unsigned component_mask = 0;
    std::size_t count = 0;
  };
  const Reference& reference(const std::string& slot, const std::string& buffer) const;
  std::optional<std::size_t> first_word(CUfunction f, CUdeviceptr a, CUdeviceptr b, std::size_t words,
                                        std::uint32_t word, cudaStream_t stream);

  CUmodule module_ = nullptr;
  CUfunction check_output_ = nullptr, digest_ = nullptr, compare_ = nullptr, compare_word_ = nullptr;
  std::vector<Reference> references_;
  CUdeviceptr partials_ = 0;  // per-block results
  CUdeviceptr first_ = 0;     // one unsigned long long
};

}  // namespace gi::fitness
