#include "fitness/check/output_check.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <algorithm>
#include <thread>
#include <vector>

namespace gi::fitness {

namespace {

bool is_nan_fill(const std::byte* element, std::size_t bytes) {
  if (bytes < 4) {  // an 8- or 16-bit element: kSubWordFillByte in each byte
    for (std::size_t i = 0; i < bytes; ++i)
      if (std::to_integer<unsigned char>(element[i]) != kSubWordFillByte) return false;
    return true;
  }
  for (std::size_t i = 0; i < bytes; i += 4) {
    std::uint32_t word;
    std::memcpy(&word, element + i, 4);
    if (word != kNanFillWord) return false;
  }
  return true;
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

}  // namespace

void fill_output(std::byte* data, std::size_t bytes, ElementType type) {
  if (element_is_sub_word(type)) {
    std::memset(data, kSubWordFillByte, bytes);
    return;
  }
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) std::memcpy(data + i, &kNanFillWord, 4);
}

double component_value(ElementType type, const std::byte* element, std::size_t c) {
  if (type == ElementType::F64) {
    double v;
    std::memcpy(&v, element, 8);
    return v;
  }
  if (type == ElementType::Bool) return std::to_integer<int>(*element) != 0;
  switch (component_bytes(type)) {  // 8- and 16-bit integers, uchar4's components
    case 1:
      return element_is_signed_int(type) ? static_cast<double>(std::to_integer<std::int8_t>(element[c]))
                                         : static_cast<double>(std::to_integer<std::uint8_t>(element[c]));
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, element + 2 * c, 2);
      return element_is_signed_int(type) ? static_cast<double>(static_cast<std::int16_t>(v)) : static_cast<double>(v);
    }
    default: break;
  }
  if (element_is_signed_int(type)) {
    std::int32_t v;
    std::memcpy(&v, element + 4 * c, 4);
    return v;
  }
  if (element_is_unsigned_int(type)) {
    std::uint32_t v;
    std::memcpy(&v, element + 4 * c, 4);
    return v;
  }
  float v;
  std::memcpy(&v, element + 4 * c, 4);
  return v;
}

double max_difference(const BufferArg& buffer, const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  if (a.size() != b.size()) return INFINITY;
  const std::size_t eb = element_bytes(buffer.type), components = element_components(buffer.type);
  const bool is_float = element_is_float(buffer.type);
  double worst = 0;
  for (std::size_t e = 0; e * eb < a.size(); ++e) {
    const std::byte* x = a.data() + e * eb;
    const std::byte* y = b.data() + e * eb;
    if (std::memcmp(x, y, eb) == 0) continue;
    if (!is_float) return INFINITY;
    const std::size_t cb = eb / components;
    for (std::size_t c = 0; c < components; ++c) {
      if (std::memcmp(x + c * cb, y + c * cb, cb) == 0) continue;  // bit-identical (NaN included)
      const double d = component_value(buffer.type, x, c) - component_value(buffer.type, y, c);
      worst = std::max(worst, std::isfinite(d) ? std::abs(d) : INFINITY);
    }
  }
  return worst;
}

std::vector<std::size_t> expected_buffer_indices(const LaunchPlan& plan, const std::vector<ExpectedOutput>& expected) {
  std::vector<std::size_t> indices;
  for (const ExpectedOutput& e : expected) {
    const auto it = std::find_if(plan.buffers.begin(), plan.buffers.end(),
                                 [&](const BufferArg& b) { return b.name == e.buffer; });
    if (it == plan.buffers.end())
      throw std::invalid_argument("reference for buffer '" + e.buffer + "', which the plan lacks");
    if (it->role != ParamRole::Out && it->role != ParamRole::InOut)
      throw std::invalid_argument("reference for buffer '" + e.buffer + "', which is not an output");
    indices.push_back(static_cast<std::size_t>(it - plan.buffers.begin()));
  }
  return indices;
}

std::vector<std::size_t> compared_components(const BufferArg& buffer, const ExpectedOutput& expected) {
  const std::size_t components = element_components(buffer.type);
  const std::string where = "buffer '" + buffer.name + "'";
  if (expected.values.size() != buffer.count * components)
    throw std::invalid_argument(where + ": the reference has " +
                                std::to_string(expected.values.size()) + " values, expected " +
                                std::to_string(buffer.count * components) + " (" +
                                std::to_string(buffer.count) + " elements x " +
                                std::to_string(components) + " components)");
  std::vector<std::size_t> compared;
  if (expected.checked_components.empty()) {
    for (std::size_t c = 0; c < components; ++c) compared.push_back(c);
  } else {
    for (int c : expected.checked_components) {
      if (c < 0 || static_cast<std::size_t>(c) >= components)
        throw std::invalid_argument(where + ": checked component " + std::to_string(c) +
                                    " out of range (element has " + std::to_string(components) +
                                    ")");
      compared.push_back(static_cast<std::size_t>(c));
    }
  }
  return compared;
}

std::vector<unsigned char> written_flags(const BufferArg& buffer, const ExpectedOutput& expected) {
  std::vector<unsigned char> written(buffer.count, expected.written_elements ? 0 : 1);
  if (expected.written_elements) {
    for (std::uint32_t e : *expected.written_elements) {
      if (e >= buffer.count)
        throw std::invalid_argument("buffer '" + buffer.name + "': written element " + std::to_string(e) +
                                    " out of range (count " + std::to_string(buffer.count) + ")");
      written[e] = 1;
    }
  }
  return written;
}

namespace {

// An infinity where the reference holds the same one: IEEE arithmetic's
// answer to a division by zero or an overflow, which a variant computing
// the same thing gives too (Rodinia's myocyte scales its steps by
// pow(tolerance / err, 1/7), inf where an equation's error is 0). NaN is no
// number and never matches (nor does the NaN fill of an unwritten element).
bool same_infinity(double value, double reference) { return std::isinf(reference) && value == reference; }

// Does value `value` against `reference` pass? (NaN never does for floats,
// an infinity only against the same infinity.)
bool value_passes(bool is_float, double value, double reference, const Tolerance& tolerance) {
  if (is_float && same_infinity(value, reference)) return true;
  // (Else |value - inf| <= rel * inf would let any number match an infinity.)
  if (is_float && (!std::isfinite(value) || !std::isfinite(reference))) return false;
  return std::abs(value - reference) <= tolerance.abs + tolerance.rel * std::abs(reference);
}

}  // namespace

std::optional<std::string> describe_element_failure(const BufferArg& buffer, const std::byte* element, std::size_t e,
                                                    const ExpectedOutput& expected, bool written,
                                                    const Tolerance& tolerance) {
  const std::size_t bytes = element_bytes(buffer.type);
  const std::size_t components = element_components(buffer.type);
  const std::string where = "buffer '" + buffer.name + "' element " + std::to_string(e);
  if (!written) {
    if (is_nan_fill(element, bytes)) return std::nullopt;
    return where + ": written, but the reference leaves it untouched (got " +
           number(component_value(buffer.type, element, 0)) + ")";
  }
  const bool is_float = element_is_float(buffer.type);
  for (std::size_t c : compared_components(buffer, expected)) {
    const double value = component_value(buffer.type, element, c);
    const double reference = expected.values[e * components + c];
    if (value_passes(is_float, value, reference, tolerance)) continue;
    const std::string at = where + (components > 1 ? " component " + std::to_string(c) : "");
    // A reference that is no number: the seed (its own reference) computed
    // none on these inputs, which no variant can match; the inputs say why.
    // An infinite one only the same infinity matches.
    const std::string undefined =
        std::isfinite(reference) ? ""
        : std::isinf(reference)
            ? "; the reference is infinite, which only the same infinity matches: if the kernel overflows on these "
              "inputs, give its inputs a range where it does not (gi init --like NAME:uniform(LO,HI), or the "
              "workload's inputs)"
            : "; the reference is not finite either: the reference kernel's arithmetic gives no "
              "number on these inputs (a square root or logarithm of a negative, a division by "
              "zero): give its inputs a range where it is defined (gi init --like "
              "NAME:uniform(LO,HI), or the workload's inputs)";
    if (is_float && !std::isfinite(value))
      return at + ": got " + number(value) + ", expected " + number(reference) +
             (std::isnan(value) && is_nan_fill(element + (bytes == 8 ? 0 : 4 * c), bytes == 8 ? 8 : 4)
                  ? " (never written: still the NaN fill" + undefined + ")"
                  : " (not finite" + undefined + ")");
    if (!undefined.empty()) return at + ": got " + number(value) + ", expected " + number(reference) + " (" + undefined.substr(2) + ")";
    const double diff = std::abs(value - reference);
    // An 8- or 16-bit element still holding the fill: most likely never written.
    const std::string fill = element_is_sub_word(buffer.type) && is_nan_fill(element, bytes)
                                 ? "; every byte is still the fill 0xA7: never written, or written with that value"
                                 : "";
    return at + ": got " + number(value) + ", expected " + number(reference) + " (|diff| " + number(diff) + " > " +
           number(tolerance.abs + tolerance.rel * std::abs(reference)) + fill + ")";
  }
  return std::nullopt;
}

bool OutputChecker::check(const BufferArg& buffer, std::span<const std::byte> got,
                          const ExpectedOutput& expected) {
  const std::size_t bytes = element_bytes(buffer.type);
  const std::size_t components = element_components(buffer.type);
  if (got.size() != buffer.count * bytes)
    throw std::invalid_argument("buffer '" + buffer.name + "': " + std::to_string(got.size()) +
                                " bytes came back, expected " + std::to_string(buffer.count * bytes));
  const std::vector<std::size_t> compared = compared_components(buffer, expected);
  const std::vector<unsigned char> written = written_flags(buffer, expected);

  // Elements are checked in parallel slices (a 217^3 float4 field holds
  // 41 M values); each slice keeps its own sums and its first failing
  // element, merged in element order, so the report names the same first
  // failure as a serial pass. Only that failure's message is built.
  const bool is_float = element_is_float(buffer.type);
  auto check_range = [&](std::size_t begin, std::size_t end, BufferCheck& out) {
    auto fail_at = [&](std::size_t e) {
      if (out.failures++ == 0) out.first_failing_element = e;
    };
    for (std::size_t e = begin; e < end; ++e) {
      const std::byte* element = got.data() + e * bytes;
      if (!written[e]) {
        // A variant writes only where the seed writes.
        if (!is_nan_fill(element, bytes)) fail_at(e);
        continue;
      }
      for (std::size_t c : compared) {
        const double value = component_value(buffer.type, element, c);
        const double reference = expected.values[e * components + c];
        ++out.checked;
        if (is_float && same_infinity(value, reference)) continue;  // no error to add to the sums
        if (is_float && (!std::isfinite(value) || !std::isfinite(reference))) {
          fail_at(e);
          continue;
        }
        const double diff = std::abs(value - reference);
        // A zero reference has no relative error; the absolute bound decides.
        out.max_abs = std::max(out.max_abs, diff);
        out.max_rel = std::max(out.max_rel, reference != 0 ? diff / std::abs(reference) : 0);
        out.sum_squares += diff * diff;
        if (!value_passes(is_float, value, reference, tolerance_)) fail_at(e);
      }
    }
  };
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t slices = std::min<std::size_t>(std::min<std::size_t>(hardware, 16), std::max<std::size_t>(1, buffer.count / 65536));
  std::vector<BufferCheck> results(slices);
  std::vector<std::thread> threads;
  const std::size_t per = (buffer.count + slices - 1) / slices;
  for (std::size_t k = 1; k < slices; ++k)
    threads.emplace_back(check_range, std::min(buffer.count, k * per), std::min(buffer.count, (k + 1) * per),
                         std::ref(results[k]));
  check_range(0, std::min(buffer.count, per), results[0]);
  for (auto& t : threads) t.join();

  BufferCheck total;
  for (const BufferCheck& r : results) {
    total.max_abs = std::max(total.max_abs, r.max_abs);
    total.max_rel = std::max(total.max_rel, r.max_rel);
    total.sum_squares += r.sum_squares;
    total.checked += r.checked;
    if (r.failures > 0 && total.failures == 0) total.first_failing_element = r.first_failing_element;
    total.failures += r.failures;
  }
  std::string message;
  if (total.failures > 0) {
    const std::size_t e = total.first_failing_element;
    message = describe_element_failure(buffer, got.data() + e * bytes, e, expected, written[e] != 0, tolerance_)
                  .value_or(buffer.name + " element " + std::to_string(e) + ": the check disagrees with itself");
  }
  return add(total, message);
}

bool OutputChecker::add(const BufferCheck& r, const std::string& first_failure) {
  max_abs_ = std::max(max_abs_, r.max_abs);
  max_rel_ = std::max(max_rel_, r.max_rel);
  sum_squares_ += r.sum_squares;
  values_checked_ += r.checked;
  if (r.failures > 0 && failures_ == 0) first_failure_ = first_failure;
  failures_ += r.failures;
  return r.failures == 0;
}

CheckReport OutputChecker::report() const {
  CheckReport r;
  r.max_abs_error = max_abs_;
  r.max_rel_error = max_rel_;
  r.values_checked = values_checked_;
  r.rms_error = values_checked_ ? std::sqrt(sum_squares_ / static_cast<double>(values_checked_)) : 0;
  if (failures_ > 0) {
    r.status = RunStatus::WrongOutput;
    r.message = first_failure_;
    if (failures_ > 1) r.message += "; " + std::to_string(failures_) + " failures in all";
  }
  return r;
}

}  // namespace gi::fitness
