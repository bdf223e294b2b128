#include "seeds/common/volume.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

namespace gi::seeds {

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  constexpr std::size_t kMinChunk = 16384;  // below this a thread costs more than it saves
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min(hw, std::max<std::size_t>(1, n / kMinChunk));
  if (threads <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  const std::size_t chunk = (n + threads - 1) / threads;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin >= end) break;
    pool.emplace_back([&, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace gi::seeds
