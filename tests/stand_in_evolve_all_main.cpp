// gi_stand_in_evolve_all SEEDS_ROOT ROOT [I/N]: the stand-in evolve-all of
// tests/stand_in_evolve_all.hpp (no GPU) in ROOT/out, results in
// ROOT/evolved. Its shard comes from the third argument, else from the
// launcher's variables as `gi evolve-all` takes it (gi/run/shard.hpp): run under
// `mpirun -n 2`, each rank takes half of the kernels. The test
// EvolveAllShards.TwoMpiRanksWriteWhatOneProcessWrites compares the two.
#include <exception>
#include <iostream>

#include "stand_in_evolve_all.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: gi_stand_in_evolve_all SEEDS_ROOT ROOT [I/N]\n";
    return 2;
  }
  try {
    gi::EvolveAllOptions o = gi::test::stand_in_options(argv[2], argv[1]);
    o.shard = gi::shard_for_this_process(argc == 4 ? argv[3] : "");
    gi::test::Interrupter never;
    const gi::EvolveAllSummary s = gi::evolve_all(o, [&](const gi::EvolveOptions& run) {
      return gi::test::stand_in_backend(run, never, gi::test::kStandInBroken, gi::test::kStandInRejected);
    });
    std::cout << "shard " << o.shard.index << "/" << o.shard.count << " (" << o.shard.source << "): "
              << s.shard_pending << " of its kernels left\n";
    return s.shard_pending == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "gi_stand_in_evolve_all: " << e.what() << "\n";
    return 1;
  }
}
