#pragma once
// What NVRTC gets for a C or C++ standard header it does not have, named by
// a seed, its project's headers or the CUDA toolkit's own (cuda.h includes
// <stdlib.h> and <stdint.h>): the host code that needed the header is set
// aside (gi/seed/seed_build.hpp), and device code needs only the types and
// limits (the math functions, printf and malloc are NVRTC's own). Written
// for gi from the C and C++ standards' lists of names, for the LP64 data
// model of the GPUs' hosts.
#include <string>

namespace gi {

// The stand-in text for a standard header `name` ("stdint.h", "climits",
// ...): its types and macros where device code uses them, else only gi's
// set-aside comment.
std::string system_header_stand_in(const std::string& name);
// Whether the stand-in of `name` holds types or macros (not only the comment).
bool stand_in_has_content(const std::string& name);
// <math.h>'s POSIX constants (M_PI, ...), each under #ifndef, for a cut
// whose includes are gone (gi/seed/header_device_code.hpp); whether `name`
// is one of them.
const char* math_constants();
bool is_math_constant(const std::string& name);

}  // namespace gi
