#include "gi/seed/system_header_stand_ins.hpp"

#include <map>

#include "gi/seed/seed_build.hpp"

namespace gi {

namespace {

// Each group guards itself: several stand-ins may hold it.
const char* const kSizes =
    "#ifndef GI_STAND_IN_SIZES\n#define GI_STAND_IN_SIZES\n"
    "typedef decltype(sizeof(0)) size_t;\n"
    "typedef decltype((int*)0 - (int*)0) ptrdiff_t;\n"
    "#ifndef NULL\n#define NULL 0\n#endif\n"
    "#define offsetof(type, member) __builtin_offsetof(type, member)\n"
    "#endif\n";

const char* const kIntegers =
    "#ifndef GI_STAND_IN_INTEGERS\n#define GI_STAND_IN_INTEGERS\n"
    "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long long int64_t;\n"
    "typedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
    "typedef unsigned long long uint64_t;\ntypedef long long intptr_t;\ntypedef unsigned long long uintptr_t;\n"
    "typedef long long intmax_t;\ntypedef unsigned long long uintmax_t;\n"
    "#define INT8_MIN (-128)\n#define INT8_MAX 127\n#define UINT8_MAX 255\n"
    "#define INT16_MIN (-32768)\n#define INT16_MAX 32767\n#define UINT16_MAX 65535\n"
    "#define INT32_MIN (-2147483647 - 1)\n#define INT32_MAX 2147483647\n#define UINT32_MAX 4294967295U\n"
    "#define INT64_MIN (-9223372036854775807L - 1)\n#define INT64_MAX 9223372036854775807L\n"
    "#define UINT64_MAX 18446744073709551615UL\n#define SIZE_MAX UINT64_MAX\n"
    "#endif\n";

const char* const kLimits =
    "#ifndef GI_STAND_IN_LIMITS\n#define GI_STAND_IN_LIMITS\n"
    "#define CHAR_BIT 8\n#define SCHAR_MIN (-128)\n#define SCHAR_MAX 127\n#define UCHAR_MAX 255\n"
    "#define CHAR_MIN SCHAR_MIN\n#define CHAR_MAX SCHAR_MAX\n"
    "#define SHRT_MIN (-32768)\n#define SHRT_MAX 32767\n#define USHRT_MAX 65535\n"
    "#define INT_MIN (-2147483647 - 1)\n#define INT_MAX 2147483647\n#define UINT_MAX 4294967295U\n"
    "#define LONG_MIN (-9223372036854775807L - 1)\n#define LONG_MAX 9223372036854775807L\n"
    "#define ULONG_MAX 18446744073709551615UL\n"
    "#define LLONG_MIN (-9223372036854775807LL - 1)\n#define LLONG_MAX 9223372036854775807LL\n"
    "#define ULLONG_MAX 18446744073709551615ULL\n"
    "#endif\n";

const char* const kFloats =
    "#ifndef GI_STAND_IN_FLOATS\n#define GI_STAND_IN_FLOATS\n"
    "#define FLT_RADIX 2\n#define FLT_MANT_DIG 24\n#define DBL_MANT_DIG 53\n"
    "#define FLT_DIG 6\n#define DBL_DIG 15\n"
    "#define FLT_EPSILON 1.19209290e-7F\n#define DBL_EPSILON 2.2204460492503131e-16\n"
    "#define FLT_MIN 1.17549435e-38F\n#define DBL_MIN 2.2250738585072014e-308\n"
    "#define FLT_MAX 3.40282347e+38F\n#define DBL_MAX 1.7976931348623157e+308\n"
    "#endif\n";

// POSIX's constants of <math.h> (M_PI, ...), which glibc defines and NVRTC
// does not: NiftyReg's sinc kernel names M_PI. Each alone, as a project
// may define one of them itself.
const char* const kMathConstants =
    "#ifndef M_E\n#define M_E 2.7182818284590452354\n#endif\n"
    "#ifndef M_LOG2E\n#define M_LOG2E 1.4426950408889634074\n#endif\n"
    "#ifndef M_LOG10E\n#define M_LOG10E 0.43429448190325182765\n#endif\n"
    "#ifndef M_LN2\n#define M_LN2 0.69314718055994530942\n#endif\n"
    "#ifndef M_LN10\n#define M_LN10 2.30258509299404568402\n#endif\n"
    "#ifndef M_PI\n#define M_PI 3.14159265358979323846\n#endif\n"
    "#ifndef M_PI_2\n#define M_PI_2 1.57079632679489661923\n#endif\n"
    "#ifndef M_PI_4\n#define M_PI_4 0.78539816339744830962\n#endif\n"
    "#ifndef M_1_PI\n#define M_1_PI 0.31830988618379067154\n#endif\n"
    "#ifndef M_2_PI\n#define M_2_PI 0.63661977236758134308\n#endif\n"
    "#ifndef M_2_SQRTPI\n#define M_2_SQRTPI 1.12837916709551257390\n#endif\n"
    "#ifndef M_SQRT2\n#define M_SQRT2 1.41421356237309504880\n#endif\n"
    "#ifndef M_SQRT1_2\n#define M_SQRT1_2 0.70710678118654752440\n#endif\n";

// In namespace std too, for the <c...> forms.
const char* const kStdIntegers =
    "namespace std { using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t; using ::uint8_t;\n"
    "using ::uint16_t; using ::uint32_t; using ::uint64_t; using ::intptr_t; using ::uintptr_t; }\n";
const char* const kStdSizes = "namespace std { using ::size_t; using ::ptrdiff_t; }\n";

const std::map<std::string, std::string>& contents() {
  static const std::map<std::string, std::string> contents = {
      {"stddef.h", kSizes},
      {"cstddef", std::string(kSizes) + kStdSizes},
      {"stdlib.h", kSizes},
      {"cstdlib", std::string(kSizes) + kStdSizes},
      {"malloc.h", kSizes},
      {"string.h", kSizes},
      {"cstring", std::string(kSizes) + kStdSizes},
      {"stdint.h", kIntegers},
      {"inttypes.h", kIntegers},
      {"cstdint", std::string(kIntegers) + kStdIntegers},
      {"cinttypes", std::string(kIntegers) + kStdIntegers},
      {"limits.h", kLimits},
      {"climits", kLimits},
      {"float.h", kFloats},
      {"cfloat", kFloats},
      {"math.h", kMathConstants},
      {"cmath", kMathConstants},
      // Host code names FILE in declarations gi cannot blank (prototypes, globals).
      {"stdio.h", std::string(kSizes) + "typedef struct gi_stand_in_file FILE;\n"},
      {"cstdio", std::string(kSizes) + kStdSizes + "typedef struct gi_stand_in_file FILE;\nnamespace std { using ::FILE; }\n"},
      // Host code's structs shared with device code hold pointers to these
      // (Rodinia's streamcluster): incomplete types are enough for a pointer.
      {"pthread.h", "typedef unsigned long pthread_t;\ntypedef struct gi_stand_in_pthread_mutex pthread_mutex_t;\n"
                    "typedef struct gi_stand_in_pthread_cond pthread_cond_t;\n"
                    "typedef struct gi_stand_in_pthread_barrier pthread_barrier_t;\n"
                    "typedef struct gi_stand_in_pthread_attr pthread_attr_t;\n"},
  };
  return contents;
}

}  // namespace

std::string system_header_stand_in(const std::string& name) {
  const auto it = contents().find(name);
  return std::string(kSetAsideHeader) + (it == contents().end() ? "" : it->second);
}

bool stand_in_has_content(const std::string& name) { return contents().count(name) != 0; }

const char* math_constants() { return kMathConstants; }

bool is_math_constant(const std::string& name) {
  return name.rfind("M_", 0) == 0 && std::string(kMathConstants).find("#ifndef " + name + "\n") != std::string::npos;
}

}  // namespace gi
