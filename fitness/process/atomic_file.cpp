#include "fitness/process/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gi::fitness {
namespace fs = std::filesystem;

namespace {
// Unique among hosts that share the folder (evolve-all shards over NFS): the
// host name, the pid for other processes, a counter for our threads.
fs::path temp_name(const fs::path& target) {
  static std::atomic<unsigned long> counter{0};
  static const std::string host = [] {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return std::string("host");
    std::string h = name;
    for (char& c : h)
      if (c == '/' || c == '\0') c = '_';
    return h;
  }();
  return target.parent_path() / (target.filename().string() + ".tmp." + host + "." + std::to_string(::getpid()) + "." +
                                 std::to_string(counter++));
}
}  // namespace

bool write_file_atomically(const fs::path& target, std::string_view data, std::string& error) {
  const fs::path tmp = temp_name(target);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create " + tmp.string() + ": " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  bool ok = true;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  // fsync before rename: after a crash the new name never points at lost data.
  if (ok && ::fsync(fd) != 0) ok = false;
  if (::close(fd) != 0) ok = false;
  if (!ok) {
    error = "cannot write " + tmp.string() + ": " + std::strerror(errno);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return false;
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    error = "cannot rename " + tmp.string() + " to " + target.string() + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

void write_file_atomically(const fs::path& target, std::string_view data) {
  std::string error;
  if (!write_file_atomically(target, data, error)) throw std::runtime_error(error);
}

}  // namespace gi::fitness
