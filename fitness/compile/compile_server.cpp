#include "fitness/compile/compile_server.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "fitness/process/json_line_server.hpp"
#include "fitness/process/subprocess.hpp"
#include "fitness/process/worker.hpp"

namespace gi::fitness {

using json = nlohmann::json;

namespace {

json handle_compile(const json& request) {
  const std::string cmd = request.value("cmd", "");
  if (cmd == "ping") return {{"status", "ok"}, {"pid", static_cast<long>(::getpid())}};
  if (cmd != "compile") return error_reply("unknown cmd '" + cmd + "' (ping, compile, quit)");
  for (const char* field : {"source", "file_name", "arch", "out"})
    if (!request.contains(field) || !request[field].is_string())
      return error_reply(std::string("compile needs \"") + field + "\": a string");
  if (!request.contains("options") || !request["options"].is_array())
    return error_reply("compile needs \"options\": an array of strings");
  CompileRequest r;
  if (request.contains("headers")) {
    if (!request["headers"].is_array()) return error_reply("compile: \"headers\" must be an array of [name, text] pairs");
    for (const auto& h : request["headers"]) {
      if (!h.is_array() || h.size() != 2 || !h[0].is_string() || !h[1].is_string())
        return error_reply("compile: each header must be a [name, text] pair of strings");
      r.headers.emplace_back(h[0].get<std::string>(), h[1].get<std::string>());
    }
  }
  if (request.contains("name_expressions")) {
    if (!request["name_expressions"].is_array()) return error_reply("compile: \"name_expressions\" must be an array of strings");
    for (const auto& n : request["name_expressions"]) {
      if (!n.is_string()) return error_reply("compile: each name expression must be a string");
      r.name_expressions.push_back(n.get<std::string>());
    }
  }
  r.source = request["source"].get<std::string>();
  r.file_name = request["file_name"].get<std::string>();
  const std::string arch = request["arch"].get<std::string>();
  const auto options = request["options"].get<std::vector<std::string>>();
  const NvrtcOutput result = nvrtc_compile_once(r, arch, options);
  json reply = {{"status", "ok"}, {"compiled", result.ok}, {"nvrtc_result", static_cast<int>(result.last)},
                {"log", result.log}, {"error", result.error}};
  if (result.ok) {
    const std::string out_file = request["out"].get<std::string>();
    std::ofstream out(out_file, std::ios::binary);
    out.write(result.binary.data(), static_cast<std::streamsize>(result.binary.size()));
    out.close();
    if (!out) return error_reply("cannot write the binary to " + out_file);
  }
  return reply;
}

}  // namespace

int run_compile_server_loop(std::istream& in, std::ostream& out) { return serve_json_lines(in, out, handle_compile); }

CompileServerPool::CompileServerPool(std::filesystem::path executable, int servers, std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  static std::atomic<long> pools{0};
  scratch_ = std::filesystem::temp_directory_path() /
             ("gi-compile-" + std::to_string(::getpid()) + "-" + std::to_string(pools++));
  std::error_code ignored;  // a folder that cannot be made shows up as a server's write error
  std::filesystem::create_directories(scratch_, ignored);
  // GI_AUTOMATIC_PCH=0 turns NVRTC's automatic precompiled headers off (for
  // the comparison in bench/throughput/pch_compare.sh).
  const char* pch_setting = std::getenv("GI_AUTOMATIC_PCH");
  const bool pch = pch_setting == nullptr || std::string(pch_setting) != "0";
  for (int i = 0; i < std::max(1, servers); ++i) {
    // Each server's precompiled headers in a folder of its own, removed with the scratch folder.
    std::vector<std::string> args = {"nvrtc-serve"};
    if (pch) args.insert(args.end(), {"--pch-dir", (scratch_ / ("pch-" + std::to_string(i))).string()});
    servers_.push_back(std::make_unique<WorkerProcess>(executable.string(), args));
    idle_.push_back(static_cast<std::size_t>(i));
  }
}

CompileServerPool::~CompileServerPool() {
  for (auto& s : servers_) {
    try {
      if (s->running()) s->stop();
    } catch (...) {
      // Shutting down: the WorkerProcess destructor kills what will not stop.
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(scratch_, ignored);
}

int CompileServerPool::restarts() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& s : servers_) n += s->restarts();
  return n;
}

std::vector<int> CompileServerPool::pids() const {
  std::lock_guard lock(mutex_);
  std::vector<int> out;
  for (const auto& s : servers_)
    if (s->running()) out.push_back(static_cast<int>(s->pid()));
  return out;
}

NvrtcOutput CompileServerPool::compile(const CompileRequest& request, const std::string& arch,
                                       const std::vector<std::string>& options) {
  std::size_t slot;
  std::filesystem::path out_file;
  {
    std::unique_lock lock(mutex_);
    idle_changed_.wait(lock, [this] { return !idle_.empty(); });
    slot = idle_.back();
    idle_.pop_back();
    out_file = scratch_ / ("c" + std::to_string(next_file_++) + ".bin");
  }
  // A server found dead (killed, or crashed by an earlier request) is
  // replaced and the compile tried once more on the new one; a time-out is
  // not retried, it would only time out again.
  Attempt attempt = compile_on(*servers_[slot], request, arch, options, out_file);
  if (attempt.worth_retrying) attempt = compile_on(*servers_[slot], request, arch, options, out_file);
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(slot);
  }
  idle_changed_.notify_one();
  return std::move(attempt.output);
}

CompileServerPool::Attempt CompileServerPool::compile_on(WorkerProcess& server, const CompileRequest& request,
                                          const std::string& arch, const std::vector<std::string>& options,
                                          const std::filesystem::path& out_file) {
  Attempt attempt;
  NvrtcOutput& out = attempt.output;
  out.last = NVRTC_ERROR_INTERNAL_ERROR;  // until the server says otherwise
  json call = {{"cmd", "compile"}, {"source", request.source}, {"file_name", request.file_name},
               {"arch", arch}, {"options", options}, {"out", out_file.string()}};
  if (!request.headers.empty()) call["headers"] = request.headers;
  if (!request.name_expressions.empty()) call["name_expressions"] = request.name_expressions;
  WorkerReply reply;
  try {
    reply = server.call(call, timeout_);
  } catch (const std::exception& e) {
    out.error = std::string("compile server could not start: ") + e.what();
    return attempt;
  }
  if (reply.worker_died) {
    attempt.worth_retrying = reply.status != RunStatus::Timeout;
    out.error = "compile server lost: " + reply.message;
    return attempt;
  }
  if (reply.request_failed) {
    out.error = "compile server refused the request: " + reply.message;
    return attempt;
  }
  out.ok = reply.body.value("compiled", false);
  out.last = static_cast<nvrtcResult>(reply.body.value("nvrtc_result", static_cast<int>(NVRTC_ERROR_INTERNAL_ERROR)));
  out.log = reply.body.value("log", "");
  out.error = reply.body.value("error", "");
  if (out.ok) {
    const std::string bytes = read_text_file(out_file);
    out.binary.assign(bytes.begin(), bytes.end());
    std::error_code ignored;
    std::filesystem::remove(out_file, ignored);
    if (out.binary.empty()) {
      out.ok = false;
      out.last = NVRTC_ERROR_INTERNAL_ERROR;
      out.error = "compile server wrote no binary to " + out_file.string();
    }
  }
  return attempt;
}

}  // namespace gi::fitness
