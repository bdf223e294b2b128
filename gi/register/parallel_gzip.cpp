#include "gi/register/parallel_gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gi::reg {
namespace fs = std::filesystem;

namespace {

// One complete gzip member of `size` bytes at `data`; empty on a zlib error.
std::string gzip_member(const unsigned char* data, std::size_t size, int level) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&z, static_cast<uLong>(size)) + 32, '\0');
  z.next_in = const_cast<unsigned char*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<unsigned char*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return result == Z_STREAM_END ? out : std::string();
}

}  // namespace

std::size_t gzip_file_parallel(const fs::path& in, const fs::path& out, int level, unsigned threads) {
  std::ifstream input(in, std::ios::binary);
  std::vector<unsigned char> data((std::istreambuf_iterator<char>(input)), std::istreambuf_iterator<char>());
  if (!input.eof() && input.fail()) throw std::runtime_error(in.string() + ": cannot read it to compress it");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Pieces of at least 1 MiB (smaller ones lose compression to their own
  // headers and fresh dictionaries) and under 1 GiB (zlib's 32-bit counts).
  const std::size_t min_piece = std::size_t(1) << 20, max_piece = std::size_t(1) << 30;
  const std::size_t by_threads = std::min<std::size_t>(threads, data.size() / min_piece);
  const std::size_t by_zlib = (data.size() + max_piece - 1) / max_piece;
  const std::size_t pieces = std::max<std::size_t>({1, by_threads, by_zlib});
  const std::size_t piece = (data.size() + pieces - 1) / pieces;
  std::vector<std::string> members(pieces);
  {
    std::vector<std::thread> workers;
    for (std::size_t p = 0; p < pieces; ++p)
      workers.emplace_back([&, p] {
        const std::size_t begin = std::min(data.size(), p * piece), end = std::min(data.size(), begin + piece);
        members[p] = gzip_member(data.data() + begin, end - begin, level);
      });
    for (std::thread& w : workers) w.join();
  }
  std::ofstream output(out, std::ios::binary | std::ios::trunc);
  std::size_t written = 0;
  for (const std::string& m : members) {
    if (m.empty()) throw std::runtime_error(out.string() + ": zlib could not compress " + in.string());
    output.write(m.data(), static_cast<std::streamsize>(m.size()));
    written += m.size();
  }
  output.close();
  std::error_code ec;
  if (!output || fs::file_size(out, ec) != written || ec)
    throw std::runtime_error(out.string() + ": writing the compressed file failed (disk full or not writable?)");
  return written;
}

}  // namespace gi::reg
