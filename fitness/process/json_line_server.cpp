#include "fitness/process/json_line_server.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <streambuf>
#include <thread>

namespace gi::fitness {

using json = nlohmann::json;

namespace {

// An output stream buffer over a file descriptor, unbuffered: every reply is
// written with one write() per flush.
class FdOutBuf : public std::streambuf {
 public:
  explicit FdOutBuf(int fd) : fd_(fd) {}

 protected:
  int_type overflow(int_type ch) override {
    if (ch == traits_type::eof()) return traits_type::not_eof(ch);
    const char c = static_cast<char>(ch);
    return write_all(&c, 1) ? ch : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return write_all(s, static_cast<std::size_t>(n)) ? n : 0;
  }

 private:
  bool write_all(const char* s, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, s, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      s += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }
  int fd_;
};

}  // namespace

json error_reply(const std::string& message) { return {{"status", "error"}, {"message", message}}; }

std::string json_line(const json& value) {
  // Logs and sources may hold bytes that are not UTF-8: replace them rather
  // than throw, which would end the server.
  return value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

int serve_json_lines(std::istream& in, std::ostream& out, const JsonRequestHandler& handle) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json request;
    try {
      request = json::parse(line);
    } catch (const json::exception& e) {
      out << json_line(error_reply(std::string("request is not JSON: ") + e.what())) << std::flush;
      continue;
    }
    if (!request.is_object()) {
      out << json_line(error_reply("request must be a JSON object")) << std::flush;
      continue;
    }
    if (request.value("cmd", "") == "quit") {
      out << json_line(json{{"status", "ok"}}) << std::flush;
      return 0;
    }
    json reply;
    try {
      reply = handle(request);
    } catch (const std::exception& e) {
      reply = error_reply(e.what());
    }
    out << json_line(reply) << std::flush;
    if (reply.value("fatal", false)) std::_Exit(kWorkerContextLostExit);
  }
  return 0;
}

namespace {

// Polls rather than PR_SET_PDEATHSIG, which follows the starter's forking
// thread, not its process (see WorkerProcess::start).
void exit_when_starter_dies() {
  const char* value = std::getenv(kParentPidVariable);
  if (!value) return;
  const pid_t starter = static_cast<pid_t>(std::atol(value));
  if (::getppid() != starter) ::_exit(1);  // it died before this line
  std::thread([starter] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (::getppid() != starter) ::_exit(1);
    }
  }).detach();
}

}  // namespace

int serve_on_stdio(const std::function<int(std::istream& in, std::ostream& out)>& loop, const char* who) {
  exit_when_starter_dies();
  std::cout.flush();
  const int protocol_fd = ::dup(STDOUT_FILENO);
  if (protocol_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::cerr << who << ": cannot set up its output: " << std::strerror(errno) << "\n";
    return 2;
  }
  FdOutBuf buffer(protocol_fd);
  std::ostream out(&buffer);
  return loop(std::cin, out);
}

}  // namespace gi::fitness
