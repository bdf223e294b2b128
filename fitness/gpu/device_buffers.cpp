#include "fitness/gpu/device_buffers.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/gpu/cuda_error.hpp"
#include "fitness/gpu/device_check.hpp"
#include "fitness/check/output_check.hpp"

namespace gi::fitness {

namespace {

std::byte* host_pointer(CUdeviceptr p) { return reinterpret_cast<std::byte*>(p); }

void copy_to_host(void* destination, const void* source, std::size_t bytes,
                  cudaStream_t stream) {
  if (bytes == 0) return;
  check_runtime(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToHost, stream),
                "cudaMemcpyAsync(device to host)");
  check_runtime(cudaStreamSynchronize(stream), "cudaStreamSynchronize(after download)");
}

// The channels of a texture of the buffer's element type
// (fits_linear_texture; kernel_spec.cpp refuses the others by name).
cudaChannelFormatDesc texture_channels(const BufferArg& arg) {
  cudaChannelFormatKind kind = cudaChannelFormatKindFloat;
  if (element_is_signed_int(arg.type)) kind = cudaChannelFormatKindSigned;
  else if (element_is_unsigned_int(arg.type)) kind = cudaChannelFormatKindUnsigned;
  if (!fits_linear_texture(arg.type))
    throw std::invalid_argument("buffer '" + arg.name + "': no texture reads its element type");
  const auto words = static_cast<int>(element_components(arg.type));
  return cudaCreateChannelDesc(32, words > 1 ? 32 : 0, words > 2 ? 32 : 0, words > 3 ? 32 : 0, kind);
}

// A CUDA array holding the buffer's data (x fastest), for a texture over it.
cudaArray_t texture_array(const BufferArg& arg, CUdeviceptr data, cudaStream_t stream) {
  const TextureArray& a = arg.array;
  const cudaChannelFormatDesc channels = texture_channels(arg);
  // cudaMalloc3DArray reads a height or depth of 0 as an array of fewer dimensions.
  const cudaExtent extent{a.extent[0], a.dimensions > 1 ? a.extent[1] : 0, a.dimensions > 2 ? a.extent[2] : 0};
  cudaArray_t array = nullptr;
  const std::string call = "cudaMalloc3DArray(buffer '" + arg.name + "', " + std::to_string(a.extent[0]) + " x " +
                           std::to_string(a.extent[1]) + " x " + std::to_string(a.extent[2]) + ")";
  check_runtime(cudaMalloc3DArray(&array, &channels, extent, 0), call.c_str());
  cudaMemcpy3DParms copy{};
  const std::size_t row = a.extent[0] * element_bytes(arg.type);
  copy.srcPtr = cudaPitchedPtr{reinterpret_cast<void*>(data), row, a.extent[0], a.extent[1]};
  copy.dstArray = array;
  copy.extent = cudaExtent{a.extent[0], a.extent[1], a.extent[2]};
  copy.kind = cudaMemcpyDeviceToDevice;
  const cudaError_t copied = cudaMemcpy3DAsync(&copy, stream);
  if (copied != cudaSuccess) cudaFreeArray(array);
  check_runtime(copied, ("cudaMemcpy3DAsync(buffer '" + arg.name + "' into its CUDA array)").c_str());
  return array;
}

// A texture over the buffer's CUDA array, sampled as the spec says.
cudaTextureObject_t array_texture(const BufferArg& arg, cudaArray_t array) {
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaTextureDesc description{};
  description.readMode = cudaReadModeElementType;
  description.filterMode = arg.array.filter == TextureFilter::Linear ? cudaFilterModeLinear : cudaFilterModePoint;
  const cudaTextureAddressMode address =
      arg.array.address == TextureAddress::Border ? cudaAddressModeBorder : cudaAddressModeClamp;
  for (auto& mode : description.addressMode) mode = address;
  description.normalizedCoords = arg.array.normalized ? 1 : 0;
  cudaTextureObject_t texture = 0;
  check_runtime(cudaCreateTextureObject(&texture, &resource, &description, nullptr),
                ("cudaCreateTextureObject(array texture over buffer '" + arg.name + "')").c_str());
  return texture;
}

// A linear texture over a buffer's data, read as the element type.
cudaTextureObject_t linear_texture(const BufferArg& arg, CUdeviceptr data, std::size_t bytes) {
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeLinear;
  resource.res.linear.devPtr = reinterpret_cast<void*>(data);
  resource.res.linear.desc = texture_channels(arg);
  resource.res.linear.sizeInBytes = bytes;
  cudaTextureDesc description{};
  description.readMode = cudaReadModeElementType;
  cudaTextureObject_t texture = 0;
  const std::string call = "cudaCreateTextureObject(linear texture over buffer '" + arg.name + "', " +
                           std::to_string(bytes / element_bytes(arg.type)) + " elements)";
  check_runtime(cudaCreateTextureObject(&texture, &resource, &description, nullptr), call.c_str());
  return texture;
}

}  // namespace

DeviceBuffers::DeviceBuffers(const LaunchPlan& plan, cudaStream_t stream) {
  try {
    for (const BufferArg& arg : plan.buffers) {
      if (arg.role == ParamRole::Scalar)
        throw std::invalid_argument("buffer '" + arg.name + "' has the role Scalar");
      Buffer b;
      b.name = arg.name;
      b.role = arg.role;
      b.guard = guard_word(arg.type);
      b.bytes = arg.count * element_bytes(arg.type);
      // Guards start on a word: 8- and 16-bit elements may end inside one.
      b.padded = (b.bytes + 3) / 4 * 4;
      b.sub_word = element_is_sub_word(arg.type);
      const bool uploads = arg.role == ParamRole::In || arg.role == ParamRole::InOut;
      if (uploads && arg.initial.size() != b.bytes)
        throw std::invalid_argument("buffer '" + arg.name + "': " +
                                    std::to_string(arg.initial.size()) +
                                    " initial bytes, expected " + std::to_string(b.bytes) + " (" +
                                    std::to_string(arg.count) + " elements)");
      buffers_.push_back(b);
      Buffer& added = buffers_.back();
      check_runtime(cudaMalloc(&added.allocation, b.padded + 2 * kGuardBytes),
                    "cudaMalloc(buffer with guards)");
      added.data = reinterpret_cast<CUdeviceptr>(added.allocation) + kGuardBytes;
      // The data is padded to whole words, so the guards start and end on
      // words; the pad (at most 3 bytes) holds the guard's bytes too.
      check_driver(driver_api().memset_d32_async(reinterpret_cast<CUdeviceptr>(added.allocation), added.guard,
                                                 (b.padded + 2 * kGuardBytes) / 4, stream),
                   "cuMemsetD32Async(guards)");
      if (uploads && b.bytes > 0) {
        check_runtime(cudaMemcpyAsync(host_pointer(added.data), arg.initial.data(), b.bytes,
                                      cudaMemcpyHostToDevice, stream),
                      "cudaMemcpyAsync(upload input)");
      }
      if (arg.texture) {
        if (arg.role != ParamRole::In) throw std::invalid_argument("buffer '" + arg.name + "': a texture must be an input");
        if (arg.array.dimensions > 0) {
          added.array = texture_array(arg, added.data, stream);
          added.texture = array_texture(arg, added.array);
        } else {
          added.texture = linear_texture(arg, added.data, std::max<std::size_t>(b.bytes, element_bytes(arg.type)));
        }
      }
      // In: compared with this copy after a run, on the device. InOut: restored from it.
      if (uploads && b.bytes > 0) {
        check_runtime(cudaMalloc(&added.pristine, b.bytes), "cudaMalloc(pristine input copy)");
        check_runtime(cudaMemcpyAsync(added.pristine, arg.initial.data(), b.bytes,
                                      cudaMemcpyHostToDevice, stream),
                      "cudaMemcpyAsync(upload pristine input copy)");
      }
    }
    check_runtime(cudaStreamSynchronize(stream), "cudaStreamSynchronize(after upload)");
  } catch (...) {
    release();
    throw;
  }
}

DeviceBuffers::~DeviceBuffers() { release(); }

void DeviceBuffers::release() {
  for (Buffer& b : buffers_) {
    if (b.texture) cudaDestroyTextureObject(b.texture);
    if (b.array) cudaFreeArray(b.array);
    if (b.allocation) cudaFree(b.allocation);
    if (b.pristine) cudaFree(b.pristine);
  }
  buffers_.clear();
}

void DeviceBuffers::reset_outputs(cudaStream_t stream) {
  for (const Buffer& b : buffers_) {
    if (b.role == ParamRole::Out && b.bytes > 0 && b.sub_word) {
      check_runtime(cudaMemsetAsync(host_pointer(b.data), kSubWordFillByte, b.bytes, stream),
                    "cudaMemsetAsync(sub-word fill)");
    } else if (b.role == ParamRole::Out && b.bytes > 0) {
      check_driver(driver_api().memset_d32_async(b.data, kNanFillWord, b.bytes / 4, stream),
                   "cuMemsetD32Async(NaN fill)");
    }
  }
  restore_inouts(stream);
}

void DeviceBuffers::restore_inouts(cudaStream_t stream) {
  for (const Buffer& b : buffers_) {
    if (b.role == ParamRole::InOut && b.bytes > 0) {
      check_runtime(cudaMemcpyAsync(host_pointer(b.data), b.pristine, b.bytes,
                                    cudaMemcpyDeviceToDevice, stream),
                    "cudaMemcpyAsync(restore InOut)");
    }
  }
}

std::optional<std::string> DeviceBuffers::check_guards(cudaStream_t stream, DeviceCheck* device) const {
  if (device != nullptr) {
    // Fast path: a kernel on the device looks for any changed guard word;
    // only when it finds one does the host read the guards for the message.
    bool intact = true;
    for (const Buffer& b : buffers_) {
      const auto base = reinterpret_cast<CUdeviceptr>(b.allocation);
      if (device->first_other_word(base, kGuardBytes / 4, b.guard, stream) ||
          device->first_other_word(base + kGuardBytes + b.padded, kGuardBytes / 4, b.guard, stream) ||
          b.padded != b.bytes) {  // the pad's bytes are read on the host
        intact = false;
        break;
      }
    }
    if (intact) return std::nullopt;
  }
  for (const Buffer& b : buffers_) {
    const auto* base = static_cast<const std::byte*>(b.allocation);
    // The region after the data starts at its last element's end, inside
    // the pad where there is one: its byte i is byte (bytes + i) % 4 of the
    // guard word, which describe_guard_damage, counting from a word's start,
    // reads from the word rotated by that much.
    std::vector<std::byte> before(kGuardBytes), after(b.padded - b.bytes + kGuardBytes);
    copy_to_host(before.data(), base, kGuardBytes, stream);
    copy_to_host(after.data(), base + kGuardBytes + b.bytes, after.size(), stream);
    const std::uint32_t after_guard = std::rotr(b.guard, static_cast<int>(8 * (b.bytes % 4)));
    if (auto damage = describe_guard_damage(b.name, b.guard, before, {})) return damage;
    if (auto damage = describe_guard_damage(b.name, after_guard, {}, after)) return damage;
  }
  return std::nullopt;
}

std::optional<std::string> DeviceBuffers::check_inputs(const LaunchPlan& plan, cudaStream_t stream,
                                                        DeviceCheck* device) const {
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.role != ParamRole::In) continue;
    // Fast path: compare with the pristine copy on the device; the host
    // reads the buffer back only to describe a change.
    if (device != nullptr && b.bytes % 4 == 0 &&
        !device->first_difference(b.data, reinterpret_cast<CUdeviceptr>(b.pristine), b.bytes / 4, stream))
      continue;
    const std::vector<std::byte> now = download(i, stream);
    const BufferArg& arg = plan.buffers.at(i);
    if (auto change = describe_input_change(b.name, arg.type, now, arg.initial)) return change;
  }
  return std::nullopt;
}

std::vector<std::byte> DeviceBuffers::download(std::size_t index, cudaStream_t stream) const {
  const Buffer& b = buffers_.at(index);
  std::vector<std::byte> bytes(b.bytes);
  copy_to_host(bytes.data(), host_pointer(b.data), b.bytes, stream);
  return bytes;
}

}  // namespace gi::fitness
