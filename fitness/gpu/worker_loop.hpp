#pragma once
// The GPU side of process isolation: `gi worker` answers the JSON-line
// protocol of fitness/process/worker.hpp (load plans into slots, check and
// time variants) on one GPU. The parent side, WorkerProcess, lives with the
// protocol in fitness/process/ and knows nothing of CUDA, so the compile
// servers can reuse it.
#include <iosfwd>

namespace gi::fitness {

// Serves requests from `in` until EOF or "quit" (returns 0). After a reply
// with "fatal":true (Timeout, IllegalAddress, Trap) it ends the process at
// once with _Exit: the lost context cannot be torn down cleanly, and a
// kernel may still be spinning.
int run_worker_loop(std::istream& in, std::ostream& out, int device);

// run_worker_loop on stdin, with replies on the original stdout, while fd 1
// itself is pointed at stderr: device printf or a library writing to stdout
// cannot corrupt the protocol. For `gi worker` and test helpers.
int run_worker_stdio(int device);

}  // namespace gi::fitness
