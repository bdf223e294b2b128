#pragma once
// What `gi init` is told on its command line about the workloads: the
// sizes (`--size n=4000000`, a vector's components, a size tied to others)
// and the inputs' values (`--like x:uniform(-1,1)`), read into InitSizes for
// the spec drafting (gi/seed/spec_scaffold.hpp).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi {

struct InitSizes {
  std::map<std::string, double> sizes;  // --size NAME=VALUE: a scalar parameter's value on the timed workload
  // --size threads_x=nelr: an exact launch's thread count (a kernel with no
  // guard) is the size nelr on every workload, as the user's host launches it.
  std::map<std::string, std::string> same_as;
  // --size voxelNumber=dims_x*dims_y*dims_z: a scalar whose value is that
  // expression of the other sizes on every workload (a count the host
  // computes from them), not a size of its own.
  std::map<std::string, std::string> tied;
  // --like NAME:DIST: an input's distribution, as the "random" generator
  // reads it (fitness/workload/random_workload.hpp).
  std::map<std::string, nlohmann::ordered_json> like;
};

// Parses `--size NAME=VALUE` and `--like 'NAME:uniform(-1,1)'` (also
// normal(m,s), constant(v), values(v1,v2,...) and values(@FILE), a user's
// own data; a buffer of several fields in pieces, each but the last with its
// length in elements:
// `variables:uniform(1,2)[nelr];uniform(-0.1,0.1)[3*nelr];uniform(5,6)`;
// and pieces that repeat, a record per work item:
// `y:values(@y.txt)[91];constant(0) every (xmax+1)*91`);
// throws std::runtime_error naming the text.
InitSizes parse_init_sizes(const std::vector<std::string>& sizes, const std::vector<std::string>& likes);

// A number as JSON: whole numbers as integers.
nlohmann::ordered_json json_number(double v);

}  // namespace gi
