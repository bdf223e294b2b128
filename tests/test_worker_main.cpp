// The evaluation worker as the isolation tests start it: `gi_test_worker
// [device]` serves fitness/worker.hpp requests on stdin/stdout.
#include <cstdlib>

#include "fitness/worker.hpp"

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  return gi::fitness::run_worker_stdio(device);
}
