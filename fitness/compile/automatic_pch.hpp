#pragma once
// NVRTC's automatic precompiled headers (CUDA 12.8 on) in the compile
// servers: a source that includes headers (the toolkit's cooperative groups
// or CUB, a user's own) has its headers' parse kept after the first compile
// of a server process and reused by the next compiles whose headers are the
// same. Measured on this project's CPU (NVRTC 13.0, sm_90): a kernel
// including cooperative_groups.h compiles in 0.15 s instead of 1.1 s, one
// including cub/block/block_reduce.cuh in 0.22 s instead of 1.15 s; a source
// without an #include is compiled as before (no PCH is made for it).
//
// A server makes one compile at a time, which is what NVRTC's automatic PCH
// needs; compiles on threads of one process (Compiler without servers) do not
// use it. The PCH files live in the folder the server is given (inside the
// pool's scratch folder, which the pool removes), and change no binary: the
// compile server test compares the cubins with and without.
#include <filesystem>
#include <string>
#include <vector>

namespace gi::fitness {

// Turns automatic PCH on for this process's later compiles, its files in
// `dir` (made if missing). Without NVRTC 12.8 or later it stays off.
void use_automatic_pch(const std::filesystem::path& dir);

// The NVRTC options that make a compile of `source` with `options` use
// automatic PCH: none when it is off or nothing is included.
std::vector<std::string> automatic_pch_options(const std::string& source, const std::vector<std::string>& options);

}  // namespace gi::fitness
