#pragma once
// Resource usage reported by `ptxas -v` inside an NVRTC program log.
#include <string_view>

namespace gi::fitness {

struct PtxasInfo {
  // Maximum over every function in the log (the worst one decides occupancy
  // and spilling); -1 when the log has no such line.
  int registers = -1;
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  int stack_frame_bytes = -1;
};

PtxasInfo parse_ptxas_info(std::string_view log);

}  // namespace gi::fitness
