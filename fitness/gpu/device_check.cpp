#include "fitness/gpu/device_check.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/gpu/cuda_error.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/check/output_digest.hpp"

namespace gi::fitness {

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 1024;
constexpr std::size_t kPartialWords = 8;  // unsigned long longs per block

// gi_word_hash must stay equal to digest_word in fitness/check/output_digest.hpp
// (tested on a GPU: DeviceCheck.DigestEqualsTheHostDigest).
const char* kCheckSource = R"(
typedef unsigned long long ull;
#define GI_THREADS 256

__device__ ull gi_mix(ull x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ ull gi_word_hash(ull ordinal, ull index, unsigned word) {
  return gi_mix(gi_mix(ordinal * 0xd1b54a32d192ed03ull + index) ^ (ull)word);
}

// Tree reduction in a fixed order, then one row of 8 words per block.
__device__ void gi_store_partials(ull failures, ull first, ull checked, ull digest, double max_abs,
                                  double max_rel, double sum_sq, ull* partials) {
  __shared__ ull s_failures[GI_THREADS], s_first[GI_THREADS], s_checked[GI_THREADS], s_digest[GI_THREADS];
  __shared__ double s_abs[GI_THREADS], s_rel[GI_THREADS], s_sq[GI_THREADS];
  const unsigned t = threadIdx.x;
  s_failures[t] = failures; s_first[t] = first; s_checked[t] = checked; s_digest[t] = digest;
  s_abs[t] = max_abs; s_rel[t] = max_rel; s_sq[t] = sum_sq;
  __syncthreads();
  for (unsigned step = GI_THREADS / 2; step > 0; step >>= 1) {
    if (t < step) {
      s_failures[t] += s_failures[t + step];
      s_first[t] = min(s_first[t], s_first[t + step]);
      s_checked[t] += s_checked[t + step];
      s_digest[t] += s_digest[t + step];
      s_abs[t] = fmax(s_abs[t], s_abs[t + step]);
      s_rel[t] = fmax(s_rel[t], s_rel[t + step]);
      s_sq[t] = s_sq[t] + s_sq[t + step];
    }
    __syncthreads();
  }
  if (t == 0) {
    ull* p = partials + 8ull * blockIdx.x;
    p[0] = s_failures[0]; p[1] = s_first[0]; p[2] = s_checked[0]; p[3] = s_digest[0];
    p[4] = (ull)__double_as_longlong(s_abs[0]); p[5] = (ull)__double_as_longlong(s_rel[0]);
    p[6] = (ull)__double_as_longlong(s_sq[0]); p[7] = 0;
  }
}

// kind: 0 float (1, 2 or 4 components), 1 double, 2 int (1 or 4), 3 unsigned.
extern "C" __global__ void gi_check_output(const unsigned* got, int kind, int words_per_element, int components,
                                           unsigned component_mask, const double* reference,
                                           const unsigned char* written, ull count, double abs_tol,
                                           double rel_tol, ull ordinal, ull* partials) {
  ull failures = 0, first = ~0ull, checked = 0, digest = 0;
  double max_abs = 0.0, max_rel = 0.0, sum_sq = 0.0;
  for (ull e = blockIdx.x * (ull)blockDim.x + threadIdx.x; e < count; e += (ull)gridDim.x * blockDim.x) {
    const unsigned* element = got + e * words_per_element;
    bool still_fill = true;
    for (int w = 0; w < words_per_element; w++) {
      const unsigned word = element[w];
      digest += gi_word_hash(ordinal, e * words_per_element + w, word);
      still_fill = still_fill && word == 0x7FC00000u;
    }
    if (written != 0 && written[e] == 0) {
      if (!still_fill) { failures++; first = min(first, e); }
      continue;
    }
    for (int c = 0; c < components; c++) {
      if (((component_mask >> c) & 1u) == 0) continue;
      double value;
      if (kind == 0) value = (double)__int_as_float((int)element[c]);
      else if (kind == 1) value = __hiloint2double((int)element[1], (int)element[0]);
      else if (kind == 2) value = (double)(int)element[c];
      else value = (double)element[c];
      const double expected = reference[e * components + c];
      checked++;
      // As the host's check (fitness/check/output_check.cpp): the same
      // infinity passes, any other value against an infinity fails.
      if (kind <= 1 && isinf(expected) && value == expected) continue;
      if (kind <= 1 && (!isfinite(value) || !isfinite(expected))) { failures++; first = min(first, e); continue; }
      const double diff = fabs(value - expected);
      max_abs = fmax(max_abs, diff);
      max_rel = fmax(max_rel, expected != 0.0 ? diff / fabs(expected) : 0.0);
      sum_sq += diff * diff;
      if (!(diff <= abs_tol + rel_tol * fabs(expected))) { failures++; first = min(first, e); }
    }
  }
  gi_store_partials(failures, first, checked, digest, max_abs, max_rel, sum_sq, partials);
}

extern "C" __global__ void gi_digest(const unsigned* data, ull words, ull ordinal, ull* partials) {
  ull digest = 0;
  for (ull i = blockIdx.x * (ull)blockDim.x + threadIdx.x; i < words; i += (ull)gridDim.x * blockDim.x)
    digest += gi_word_hash(ordinal, i, data[i]);
  gi_store_partials(0, ~0ull, 0, digest, 0.0, 0.0, 0.0, partials);
}

extern "C" __global__ void gi_first_difference(const unsigned* a, const unsigned* b, ull words, ull* first) {
  for (ull i = blockIdx.x * (ull)blockDim.x + threadIdx.x; i < words; i += (ull)gridDim.x * blockDim.x)
    if (a[i] != b[i]) { atomicMin(first, i); return; }
}

extern "C" __global__ void gi_first_other_word(const unsigned* a, ull words, unsigned word, ull* first) {
  for (ull i = blockIdx.x * (ull)blockDim.x + threadIdx.x; i < words; i += (ull)gridDim.x * blockDim.x)
    if (a[i] != word) { atomicMin(first, i); return; }
}
)";

int kind_of(ElementType t) {
  if (t == ElementType::F64) return 1;
  if (element_is_float(t)) return 0;
  if (element_is_signed_int(t)) return 2;
  return 3;  // unsigned (no buffer is bool: kernel_spec.cpp refuses one)
}

unsigned blocks_for(std::size_t items) {
  return static_cast<unsigned>(std::clamp<std::size_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

}  // namespace

DeviceCheck::DeviceCheck(const std::string& arch) {
  Compiler compiler(std::nullopt);
  CompileRequest request;
  request.source = kCheckSource;
  request.file_name = "gi_check.cu";
  request.arch = arch;
  // No fused multiply-adds: abs + rel * |ref| must round as on the host.
  request.options = {"--fmad=false"};
  const CompileResult compiled = compiler.compile(request);
  if (!compiled.ok) throw std::runtime_error("device check kernels: " + compiled.error + "\n" + compiled.log);
  const DriverApi& api = driver_api();
  check_driver(api.module_load_data(&module_, compiled.cubin.data()), "cuModuleLoadData(device check)");
  const std::pair<CUfunction*, const char*> functions[] = {{&check_output_, "gi_check_output"},
                                                           {&digest_, "gi_digest"},
                                                           {&compare_, "gi_first_difference"},
                                                           {&compare_word_, "gi_first_other_word"}};
  for (const auto& [f, name] : functions) {
    const CUresult status = api.module_get_function(f, module_, name);
    if (status != CUDA_SUCCESS) {
      api.module_unload(module_);
      module_ = nullptr;
      check_driver(status, (std::string("cuModuleGetFunction(") + name + ")").c_str());
    }
  }
  void* p = nullptr;
  check_runtime(cudaMalloc(&p, kMaxBlocks * kPartialWords * 8), "cudaMalloc(device check partials)");
  partials_ = reinterpret_cast<CUdeviceptr>(p);
  check_runtime(cudaMalloc(&p, 8), "cudaMalloc(device check first index)");
  first_ = reinterpret_cast<CUdeviceptr>(p);
}

DeviceCheck::~DeviceCheck() {
  clear_references();
  if (partials_) cudaFree(ptr(partials_));
  if (first_) cudaFree(ptr(first_));
  if (module_) driver_api().module_unload(module_);
}

void DeviceCheck::clear_references() {
  for (Reference& r : references_) {
    if (r.values) cudaFree(ptr(r.values));
    if (r.written) cudaFree(ptr(r.written));
  }
  references_.clear();
}

void DeviceCheck::clear_references(const std::string& slot) {
  std::erase_if(references_, [&](const Reference& r) {
    if (r.slot != slot) return false;
    if (r.values) cudaFree(ptr(r.values));
    if (r.written) cudaFree(ptr(r.written));
    return true;
  });
}

bool DeviceCheck::has_reference(const std::string& slot, const std::string& buffer) const {
  return std::any_of(references_.begin(), references_.end(),
                     [&](const Reference& r) { return r.slot == slot && r.buffer == buffer; });
}

CUdeviceptr DeviceCheck::reference_values(const std::string& slot, const std::string& buffer) const {
  return has_reference(slot, buffer) ? reference(slot, buffer).values : 0;
}

const DeviceCheck::Reference& DeviceCheck::reference(const std::string& slot, const std::string& buffer) const {
  for (const Reference& r : references_)
    if (r.slot == slot && r.buffer == buffer) return r;
  throw std::logic_error("device check: no reference uploaded for buffer '" + buffer + "' of slot '" + slot + "'");
}

void DeviceCheck::upload_reference(const std::string& slot, const BufferArg& buffer, const ExpectedOutput& expected,
                                   cudaStream_t stream) {
  Reference r;
  r.slot = slot;
  r.buffer = buffer.name;
  r.count = buffer.count;
  for (std::size_t c : compared_components(buffer, expected)) r.component_mask |= 1u << c;
  const std::vector<unsigned char> written = written_flags(buffer, expected);
  try {
    void* p = nullptr;
    const std::size_t value_bytes = expected.values.size() * sizeof(double);
    check_runtime(cudaMalloc(&p, std::max<std::size_t>(value_bytes, 8)), "cudaMalloc(reference values)");
    r.values = reinterpret_cast<CUdeviceptr>(p);
    if (value_bytes > 0)
      check_runtime(cudaMemcpyAsync(p, expected.values.data(), value_bytes, cudaMemcpyHostToDevice, stream),
                    "cudaMemcpyAsync(reference values)");
    if (expected.written_elements) {
      check_runtime(cudaMalloc(&p, std::max<std::size_t>(written.size(), 1)), "cudaMalloc(written flags)");
      r.written = reinterpret_cast<CUdeviceptr>(p);
      if (!written.empty())
        check_runtime(cudaMemcpyAsync(p, written.data(), written.size(), cudaMemcpyHostToDevice, stream),
                      "cudaMemcpyAsync(written flags)");
    }
    check_runtime(cudaStreamSynchronize(stream), "cudaStreamSynchronize(after reference upload)");
  } catch (...) {
    if (r.values) cudaFree(ptr(r.values));
    if (r.written) cudaFree(ptr(r.written));
    throw;
  }
  std::erase_if(references_, [&](const Reference& old) {
    if (old.slot != r.slot || old.buffer != r.buffer) return false;
    if (old.values) cudaFree(ptr(old.values));
    if (old.written) cudaFree(ptr(old.written));
    return true;
  });
  references_.push_back(r);
}

namespace {

struct Merged {
  BufferCheck check;
  std::uint64_t digest = 0;
};

// Row b of the partials, merged in block order (deterministic).
Merged merge_partials(const std::vector<std::uint64_t>& rows, unsigned blocks) {
  Merged m;
  std::uint64_t first = ~0ull;
  for (unsigned b = 0; b < blocks; ++b) {
    const std::uint64_t* p = rows.data() + b * kPartialWords;
    m.check.failures += p[0];
    first = std::min(first, p[1]);
    m.check.checked += p[2];
    m.digest += p[3];
    m.check.max_abs = std::max(m.check.max_abs, std::bit_cast<double>(p[4]));
    m.check.max_rel = std::max(m.check.max_rel, std::bit_cast<double>(p[5]));
    m.check.sum_squares += std::bit_cast<double>(p[6]);
  }
  if (m.check.failures > 0) m.check.first_failing_element = first;
  return m;
}

std::vector<std::uint64_t> read_partials(CUdeviceptr partials, unsigned blocks, cudaStream_t stream) {
  std::vector<std::uint64_t> rows(blocks * kPartialWords);
  check_runtime(cudaMemcpyAsync(rows.data(), reinterpret_cast<void*>(partials), rows.size() * 8,
                                cudaMemcpyDeviceToHost, stream),
                "cudaMemcpyAsync(device check partials)");
  check_runtime(cudaStreamSynchronize(stream), "cudaStreamSynchronize(device check)");
  return rows;
}

void launch(CUfunction f, unsigned blocks, void** args, cudaStream_t stream, const char* what) {
  check_driver(driver_api().launch_kernel(f, blocks, 1, 1, kThreads, 1, 1, 0, stream, args, nullptr), what);
}

}  // namespace

BufferCheck DeviceCheck::check(const std::string& slot, const BufferArg& buffer, CUdeviceptr got,
                               const Tolerance& tolerance, std::uint64_t ordinal, std::uint64_t& digest_sum,
                               cudaStream_t stream) {
  const Reference& r = reference(slot, buffer.name);
  if (r.count != buffer.count)
    throw std::invalid_argument("buffer '" + buffer.name + "': reference uploaded for " + std::to_string(r.count) +
                                " elements, the buffer has " + std::to_string(buffer.count));
  int kind = kind_of(buffer.type);
  int words = static_cast<int>(element_bytes(buffer.type) / 4);
  int components = static_cast<int>(element_components(buffer.type));
  unsigned mask = r.component_mask;
  CUdeviceptr values = r.values, written = r.written, out = partials_;
  unsigned long long count = buffer.count, ord = ordinal;
  double abs_tol = tolerance.abs, rel_tol = tolerance.rel;
  const unsigned blocks = blocks_for(buffer.count);
  void* args[] = {&got, &kind, &words, &components, &mask, &values, &written, &count, &abs_tol, &rel_tol, &ord, &out};
  launch(check_output_, blocks, args, stream, "cuLaunchKernel(gi_check_output)");
  const Merged m = merge_partials(read_partials(partials_, blocks, stream), blocks);
  digest_sum = m.digest;
  return m.check;
}

std::uint64_t DeviceCheck::digest_sum(CUdeviceptr data, std::size_t bytes, std::uint64_t ordinal,
                                      cudaStream_t stream) {
  if (bytes % 4 != 0) throw std::invalid_argument("device digest: " + std::to_string(bytes) + " bytes is not whole words");
  unsigned long long words = bytes / 4, ord = ordinal;
  CUdeviceptr out = partials_;
  const unsigned blocks = blocks_for(words);
  void* args[] = {&data, &words, &ord, &out};
  launch(digest_, blocks, args, stream, "cuLaunchKernel(gi_digest)");
  return merge_partials(read_partials(partials_, blocks, stream), blocks).digest;
}

std::optional<std::size_t> DeviceCheck::first_word(CUfunction f, CUdeviceptr a, CUdeviceptr b, std::size_t words,
                                                   std::uint32_t word, cudaStream_t stream) {
  if (words == 0) return std::nullopt;
  const std::uint64_t none = ~0ull;
  check_runtime(cudaMemcpyAsync(ptr(first_), &none, 8, cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync(device check first index)");
  unsigned long long n = words;
  unsigned w = word;
  CUdeviceptr out = first_;
  const unsigned blocks = blocks_for(words);
  if (f == compare_) {
    void* args[] = {&a, &b, &n, &out};
    launch(f, blocks, args, stream, "cuLaunchKernel(gi_first_difference)");
  } else {
    void* args[] = {&a, &n, &w, &out};
    launch(f, blocks, args, stream, "cuLaunchKernel(gi_first_other_word)");
  }
  std::uint64_t first = none;
  check_runtime(cudaMemcpyAsync(&first, ptr(first_), 8, cudaMemcpyDeviceToHost, stream),
                "cudaMemcpyAsync(device check first index)");
  check_runtime(cudaStreamSynchronize(stream), "cudaStreamSynchronize(device compare)");
  if (first == none) return std::nullopt;
  return static_cast<std::size_t>(first);
}

std::optional<std::size_t> DeviceCheck::first_difference(CUdeviceptr a, CUdeviceptr b, std::size_t words,
                                                         cudaStream_t stream) {
  return first_word(compare_, a, b, words, 0, stream);
}

std::optional<std::size_t> DeviceCheck::first_other_word(CUdeviceptr a, std::size_t words, std::uint32_t word,
                                                         cudaStream_t stream) {
  return first_word(compare_word_, a, 0, words, word, stream);
}

}  // namespace gi::fitness
