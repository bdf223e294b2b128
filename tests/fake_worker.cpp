#include "fake_worker.hpp"

#include <unistd.h>

#include <cstdlib>
#include <chrono>
#include <fstream>
#include <thread>
#include <map>
#include <string>

#include "fitness/process/json_line_server.hpp"
#include "fitness/workload/plan_io.hpp"
#include "fitness/process/worker.hpp"

namespace gi::test {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using fitness::error_reply;

class FakeWorker {
 public:
  explicit FakeWorker(fs::path dir) : dir_(std::move(dir)) {}

  json handle(const json& request) {
    std::ofstream(dir_ / "requests.jsonl", std::ios::app) << request.dump() << "\n";
    const std::string cmd = request.value("cmd", "");
    if (cmd == "ping") return {{"status", "ok"}, {"pid", static_cast<long>(::getpid())}};
    if (cmd == "load_plan") return load_plan(request);
    if (cmd == "unload") return unload(request);
    if (cmd == "eval") return eval(request);
    return error_reply("unknown cmd '" + cmd + "'");
  }

 private:
  json load_plan(const json& request) {
    const std::string slot = request.value("slot", fitness::kDefaultPlanSlot);
    if (const std::string problem = fitness::slot_name_problem(slot); !problem.empty()) return error_reply(problem);
    slots_.erase(slot);
    try {
      const fitness::PlanBundle bundle = fitness::load_plan(request.at("plan_file").get<std::string>());
      slots_[slot] = bundle.expected.size();
    } catch (const std::exception& e) {
      return error_reply(e.what());
    }
    return {{"status", "ok"}, {"slot", slot}, {"references", slots_[slot]}, {"device", "fake"}};
  }

  json unload(const json& request) {
    const std::string slot = request.value("slot", "");
    if (slots_.erase(slot) == 0) return error_reply("unload: slot '" + slot + "' is not loaded");
    return {{"status", "ok"}};
  }

  json eval(const json& request) {
    fitness::EvalRequest r;
    try {
      r = fitness::eval_request_from_json(request);
    } catch (const std::exception& e) {
      return error_reply(e.what());
    }
    const auto runs = fitness::slots_checked(r);
    for (const auto& run : runs)
      if (slots_.count(run.slot) == 0) return error_reply("eval: slot '" + run.slot + "' is not loaded");
    if (fs::exists(dir_ / "crash_next_eval")) {
      fs::remove(dir_ / "crash_next_eval");
      std::_Exit(9);
    }
    json script = json::object();
    if (std::ifstream in(dir_ / "script.json"); in) script = json::parse(in);
    const std::string fail_slot = script.value("fail_slot", "");
    json reply = {{"status", "ok"}, {"fatal", false}, {"checks", json::array()}};
    for (const auto& run : runs) {
      const bool fails = run.slot == fail_slot;
      const std::string status = fails ? script.value("status", "wrong_output") : "ok";
      const std::string message = fails ? script.value("message", "element 0 is wrong") : "";
      reply["checks"].push_back({{"slot", run.slot}, {"status", status}, {"message", message}, {"values_checked", 10}});
      if (fails) {
        reply["status"] = status;
        reply["message"] = message;
        reply["failed_slot"] = run.slot;
        return reply;
      }
    }
    reply["values_checked"] = 10 * runs.size();
    // A slower GPU, and a measurement that takes a while (the evaluator's
    // several workers then share a batch).
    const double ms = script.value("time_ms", 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(script.value("delay_ms", 0)));
    if (r.time) {
      reply["timed_slot"] = fitness::timed_slot(r);
      reply["median_ms"] = ms;
      reply["relative_spread"] = 0.001;
      reply["min_ms"] = ms;
      reply["max_ms"] = ms;
      reply["converged"] = true;
      reply["samples"] = json::array({ms});
    }
    return reply;
  }

  fs::path dir_;
  std::map<std::string, std::size_t> slots_;  // slot -> references in its plan
};

}  // namespace

int run_fake_worker(const std::filesystem::path& dir) {
  FakeWorker worker(dir);
  return fitness::serve_on_stdio(
      [&worker](std::istream& in, std::ostream& out) {
        return fitness::serve_json_lines(in, out, [&worker](const json& request) { return worker.handle(request); });
      },
      "gi_test_worker --fake");
}

}  // namespace gi::test
