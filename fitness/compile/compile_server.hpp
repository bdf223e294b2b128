#pragma once
// A pool of long-lived compile servers: `gi nvrtc-serve` child processes that
// each make NVRTC calls on request, one at a time. NVRTC serialises much of
// its work across the threads of one process, so parallel compiles need
// processes; keeping them alive saves a process start (and NVRTC's own
// start-up) per variant.
//
// Protocol (fitness/process/json_line_server.hpp), one JSON line each way:
//   {"cmd":"compile","source":S,"file_name":N,"arch":A,"options":[...],"out":F}
//       -> {"status":"ok","compiled":bool,"nvrtc_result":int,"log":L,"error":E}
//          with the PTX or cubin written to file F when compiled
//   {"cmd":"ping"} -> {"status":"ok","pid":N};  {"cmd":"quit"}
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fitness/compile/nvrtc_compiler.hpp"

namespace gi::fitness {

class WorkerProcess;

// The server side: answers compile requests from `in` until EOF or quit.
int run_compile_server_loop(std::istream& in, std::ostream& out);

class CompileServerPool {
 public:
  // `executable` is the gi binary; servers start on first use. A compile
  // that takes longer than `timeout` is killed and reported as failed.
  CompileServerPool(std::filesystem::path executable, int servers,
                    std::chrono::milliseconds timeout = std::chrono::minutes(5));
  ~CompileServerPool();  // stops the servers and removes their scratch files
  CompileServerPool(const CompileServerPool&) = delete;
  CompileServerPool& operator=(const CompileServerPool&) = delete;

  // Waits for an idle server and compiles on it. Never throws: a server that
  // cannot start, dies or times out gives ok=false with the reason (it is
  // replaced on its next use).
  NvrtcOutput compile(const CompileRequest& request, const std::string& arch, const std::vector<std::string>& options);

  // Servers replaced after dying or timing out.
  int restarts() const;
  // Process ids of the running servers (for tests).
  std::vector<int> pids() const;

 private:
  struct Attempt {
    NvrtcOutput output;
    bool worth_retrying = false;  // the server was found dead (not timed out): a new one may succeed
  };
  Attempt compile_on(WorkerProcess& server, const CompileRequest& request, const std::string& arch,
                         const std::vector<std::string>& options, const std::filesystem::path& out_file);

  std::vector<std::unique_ptr<WorkerProcess>> servers_;
  std::chrono::milliseconds timeout_;
  std::filesystem::path scratch_;  // binaries the servers hand back
  mutable std::mutex mutex_;
  std::condition_variable idle_changed_;
  std::vector<std::size_t> idle_;
  long next_file_ = 0;
};

}  // namespace gi::fitness
