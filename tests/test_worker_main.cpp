// The evaluation worker as the isolation tests start it: `gi_test_worker
// [device]` serves fitness/process/worker.hpp requests on stdin/stdout;
// `gi_test_worker --fake DIR` is the stand-in of tests/fake_worker.hpp,
// which needs no GPU.
#include <cstdlib>
#include <cstring>

#include "fake_worker.hpp"
#include "fitness/gpu/worker_loop.hpp"
#include "fitness/process/worker.hpp"

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--fake") == 0) return gi::test::run_fake_worker(argv[2]);
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  return gi::fitness::run_worker_stdio(device);
}
