#pragma once
// Loading a compiled kernel into the current CUDA context: a cubin or PTX
// image and its entry function, found by its source name when the symbol is
// mangled (fitness/gpu/entry_symbol.hpp). Shared by the GPU runner and
// gi register's device.
#include <cuda.h>

#include <span>
#include <string>

namespace gi::fitness {

struct ModuleLoad {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string error;  // empty when loaded; nothing stays loaded otherwise
  bool ok() const { return error.empty(); }
};

// PTX is NUL-terminated here when it is not. Never throws for a bad image;
// throws CudaError when the driver is missing.
ModuleLoad load_module(std::span<const char> image, const std::string& entry);

}  // namespace gi::fitness
