#pragma once
// The child side of gi's helper processes (the GPU worker, the compile
// servers): one JSON object per request line in, one JSON reply line out.
// The parent side is fitness::WorkerProcess (fitness/process/worker.hpp).
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>

namespace gi::fitness {

// Exit code of a server that ended itself after a reply with "fatal":true
// (the GPU worker: its CUDA context was lost).
inline constexpr int kWorkerContextLostExit = 3;

using JsonRequestHandler = std::function<nlohmann::json(const nlohmann::json& request)>;

// Serves requests from `in` until EOF or {"cmd":"quit"} (returns 0). A line
// that is not a JSON object, or a handler that throws, is answered
// {"status":"error","message":...}. After a reply with "fatal":true the
// process ends at once with _Exit(kWorkerContextLostExit).
int serve_json_lines(std::istream& in, std::ostream& out, const JsonRequestHandler& handle);

// The process id of the server's starter, set by WorkerProcess in the
// server's environment.
inline constexpr const char* kParentPidVariable = "GI_SERVER_PARENT_PID";

// Runs `loop` on stdin with replies on the original stdout, while fd 1 itself
// is pointed at stderr: a library (or device printf) writing to stdout cannot
// corrupt the protocol. `who` names the server in its start-up error.
// Started by WorkerProcess (kParentPidVariable set), the server ends itself
// within a quarter second of its starter's death: a GPU worker stuck in a
// kernel must not hold the GPU for a run that is gone.
int serve_on_stdio(const std::function<int(std::istream& in, std::ostream& out)>& loop, const char* who);

nlohmann::json error_reply(const std::string& message);
// One protocol line: compact JSON and a newline; bytes that are not UTF-8
// are replaced (U+FFFD), never a reason to throw.
std::string json_line(const nlohmann::json& value);

}  // namespace gi::fitness
