#pragma once
// A stand-in for the GPU worker (the protocol of fitness/process/worker.hpp) that
// runs without a GPU, for tests of the parent side: WorkerProcess slots and
// restarts, and the GpuEvaluator's training set. Started as
// `gi_test_worker --fake DIR`, it
//   - appends every request line to DIR/requests.jsonl;
//   - loads plan files for real (fitness::load_plan: a damaged or missing
//     file is refused) into named slots, and unloads them;
//   - answers eval after validating it as the real worker does
//     (eval_request_from_json, every slot loaded). Every slot checked passes
//     and the timed slot takes 1 ms, unless DIR/script.json says
//       {"fail_slot": S, "status": "wrong_output", "message": M}
//     (the check of slot S fails; later slots are not checked),
//       {"time_ms": T, "delay_ms": D}
//     (the timed slot takes T ms; each eval answers after D ms), and a file
//     DIR/crash_next_eval makes it remove that file and die without a reply.
#include <filesystem>

namespace gi::test {

int run_fake_worker(const std::filesystem::path& dir);

}  // namespace gi::test
