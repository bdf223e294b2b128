#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

std::size_t component_bytes(ElementType t) {
  switch (t) {
    case ElementType::F64:
    case ElementType::I64:
    case ElementType::U64:
    case ElementType::I64x2:
    case ElementType::U64x2: return 8;
    case ElementType::Bool:
    case ElementType::U8:
    case ElementType::I8:
    case ElementType::U8x4: return 1;
    case ElementType::U16:
    case ElementType::I16: return 2;
    default: return 4;
  }
}

std::size_t element_bytes(ElementType t) { return component_bytes(t) * element_components(t); }

bool element_is_sub_word(ElementType t) { return element_is_buffer_type(t) && element_bytes(t) < 4; }

IntegerRange narrow_integer_range(ElementType t) {
  const bool is_signed = element_is_signed_int(t);
  if (component_bytes(t) == 1) return is_signed ? IntegerRange{-128.0, 127.0} : IntegerRange{0.0, 255.0};
  return is_signed ? IntegerRange{-32768.0, 32767.0} : IntegerRange{0.0, 65535.0};
}

std::size_t element_components(ElementType t) {
  switch (t) {
    case ElementType::F32:
    case ElementType::F64:
    case ElementType::I32:
    case ElementType::U32:
    case ElementType::Bool:
    case ElementType::I64:
    case ElementType::U64:
    case ElementType::U8:
    case ElementType::I8:
    case ElementType::U16:
    case ElementType::I16: return 1;
    case ElementType::F32x2:
    case ElementType::I32x2:
    case ElementType::U32x2:
    case ElementType::I64x2:
    case ElementType::U64x2: return 2;
    case ElementType::F32x3:
    case ElementType::I32x3:
    case ElementType::U32x3: return 3;
    case ElementType::F32x4:
    case ElementType::I32x4:
    case ElementType::U32x4:
    case ElementType::U8x4: return 4;
  }
  return 0;
}

bool element_is_float(ElementType t) {
  switch (t) {
    case ElementType::F32:
    case ElementType::F64:
    case ElementType::F32x2:
    case ElementType::F32x3:
    case ElementType::F32x4: return true;
    default: return false;
  }
}

bool element_is_signed_int(ElementType t) {
  return t == ElementType::I32 || t == ElementType::I32x2 || t == ElementType::I32x3 || t == ElementType::I32x4 ||
         t == ElementType::I8 || t == ElementType::I16;
}

bool fits_linear_texture(ElementType t) {
  return element_is_buffer_type(t) && component_bytes(t) == 4 && element_components(t) != 3;
}

bool filters_linearly(ElementType t) {
  return t == ElementType::F32 || t == ElementType::F32x2 || t == ElementType::F32x4;
}

bool element_is_buffer_type(ElementType t) { return static_cast<int>(t) < static_cast<int>(ElementType::Bool); }

bool element_is_unsigned_int(ElementType t) {
  return t == ElementType::U32 || t == ElementType::U32x2 || t == ElementType::U32x3 || t == ElementType::U32x4 ||
         t == ElementType::U8 || t == ElementType::U16 || t == ElementType::U8x4;
}

std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::Ok: return "ok";
    case RunStatus::WrongOutput: return "wrong_output";
    case RunStatus::LaunchError: return "launch_error";
    case RunStatus::Timeout: return "timeout";
    case RunStatus::IllegalAddress: return "illegal_address";
    case RunStatus::Trap: return "trap";
    case RunStatus::GuardViolation: return "guard_violation";
    case RunStatus::InputModified: return "input_modified";
    case RunStatus::LoadError: return "load_error";
  }
  return "unknown";
}

}  // namespace gi::fitness
