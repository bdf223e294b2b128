#pragma once
// gzip compression on every core, as pigz does it: the data is cut into
// pieces, each compressed on its own thread into a complete gzip member, and
// the members are written one after another. A file of several members is a
// valid .gz file (RFC 1952, section 2.2): zlib's gzread, gunzip, nibabel and
// ITK read it as the whole. A single-threaded gzip of a Colin27 warped image
// (28 MB of float data, which hardly shrinks) took a second, longer than the
// registration that made it.
#include <cstddef>
#include <filesystem>
#include <string>

namespace gi::reg {

// Compresses the file `in` into `out` (created or replaced) at zlib `level`
// with up to `threads` threads (0: every core). Throws std::runtime_error
// naming the file when reading, compressing or writing fails (a write the
// disk cuts short included). Returns the bytes written.
std::size_t gzip_file_parallel(const std::filesystem::path& in, const std::filesystem::path& out, int level,
                               unsigned threads = 0);

}  // namespace gi::reg
