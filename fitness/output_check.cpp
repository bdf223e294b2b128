#include "fitness/output_check.hpp"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <algorithm>
#include <thread>
#include <vector>

namespace gi::fitness {

namespace {

// Component `c` of element `e` as a double.
double component_value(ElementType type, const std::byte* element, std::size_t c) {
  switch (type) {
    case ElementType::F32:
    case ElementType::F32x2:
    case ElementType::F32x4: {
      float v;
      std::memcpy(&v, element + 4 * c, 4);
      return v;
    }
    case ElementType::F64: {
      double v;
      std::memcpy(&v, element, 8);
      return v;
    }
    case ElementType::I32:
    case ElementType::I32x4: {
      std::int32_t v;
      std::memcpy(&v, element + 4 * c, 4);
      return v;
    }
    case ElementType::U32: {
      std::uint32_t v;
      std::memcpy(&v, element, 4);
      return v;
    }
  }
  return 0;
}

bool is_nan_fill(const std::byte* element, std::size_t bytes) {
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

bool OutputChecker::check(const BufferArg& buffer, std::span<const std::byte> got,
                          const ExpectedOutput& expected) {
  const std::size_t bytes = element_bytes(buffer.type);
  const std::size_t components = element_components(buffer.type);
  const std::string where = "buffer '" + buffer.name + "'";
  if (got.size() != buffer.count * bytes)
    throw std::invalid_argument(where + ": " + std::to_string(got.size()) +
                                " bytes came back, expected " +
                                std::to_string(buffer.count * bytes));
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
  std::vector<bool> written(buffer.count, !expected.written_elements.has_value());
  if (expected.written_elements) {
    for (std::uint32_t e : *expected.written_elements) {
      if (e >= buffer.count)
        throw std::invalid_argument(where + ": written element " + std::to_string(e) +
                                    " out of range (count " + std::to_string(buffer.count) + ")");
      written[e] = true;
    }
  }

  // Elements are checked in parallel slices (a 217^3 float4 field holds
  // 41 M values); each slice keeps its own sums and its first failure, and
  // the slices are merged in element order so the report names the same
  // first failure as a serial pass. Messages are built only on failure.
  struct Slice {
    double max_abs = 0, max_rel = 0, sum_squares = 0;
    std::size_t checked = 0, failures = 0;
    std::string first_failure;
  };
  const bool is_float = element_is_float(buffer.type);
  auto check_range = [&](std::size_t begin, std::size_t end, Slice& out) {
    // Takes a message *maker*: a wrong variant fails millions of values, and
    // only the first one's message is kept, so only it is built.
    auto fail_here = [&](auto&& make_message) {
      if (out.failures++ == 0) out.first_failure = make_message();
    };
    for (std::size_t e = begin; e < end; ++e) {
      const std::byte* element = got.data() + e * bytes;
      if (!written[e]) {
        // A variant writes only where the seed writes.
        if (!is_nan_fill(element, bytes))
          fail_here([&] {
            return where + " element " + std::to_string(e) + ": written, but the reference leaves it untouched (got " +
                   number(component_value(buffer.type, element, 0)) + ")";
          });
        continue;
      }
      for (std::size_t c : compared) {
        const double value = component_value(buffer.type, element, c);
        const double reference = expected.values[e * components + c];
        ++out.checked;
        auto at = [&] {
          return where + " element " + std::to_string(e) + (components > 1 ? " component " + std::to_string(c) : "");
        };
        if (is_float && !std::isfinite(value)) {
          fail_here([&] {
            return at() + ": got " + number(value) + ", expected " + number(reference) +
                   (std::isnan(value) && is_nan_fill(element + (bytes == 8 ? 0 : 4 * c), bytes == 8 ? 8 : 4)
                        ? " (never written: still the NaN fill)"
                        : " (not finite)");
          });
          continue;
        }
        const double diff = std::abs(value - reference);
        // A zero reference has no relative error; the absolute bound decides.
        const double rel = reference != 0 ? diff / std::abs(reference) : 0;
        out.max_abs = std::max(out.max_abs, diff);
        out.max_rel = std::max(out.max_rel, rel);
        out.sum_squares += diff * diff;
        const double allowed = tolerance_.abs + tolerance_.rel * std::abs(reference);
        if (!(diff <= allowed))
          fail_here([&] {
            return at() + ": got " + number(value) + ", expected " + number(reference) + " (|diff| " + number(diff) +
                   " > " + number(allowed) + ")";
          });
      }
    }
  };
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t slices = std::min<std::size_t>(std::min<std::size_t>(hardware, 16), std::max<std::size_t>(1, buffer.count / 65536));
  std::vector<Slice> results(slices);
  std::vector<std::thread> threads;
  const std::size_t per = (buffer.count + slices - 1) / slices;
  for (std::size_t k = 1; k < slices; ++k)
    threads.emplace_back(check_range, std::min(buffer.count, k * per), std::min(buffer.count, (k + 1) * per),
                         std::ref(results[k]));
  check_range(0, std::min(buffer.count, per), results[0]);
  for (auto& t : threads) t.join();

  const std::size_t failures_before = failures_;
  for (const Slice& r : results) {
    max_abs_ = std::max(max_abs_, r.max_abs);
    max_rel_ = std::max(max_rel_, r.max_rel);
    sum_squares_ += r.sum_squares;
    values_checked_ += r.checked;
    if (r.failures > 0) {
      if (failures_ == 0) first_failure_ = r.first_failure;
      failures_ += r.failures;
    }
  }
  return failures_ == failures_before;
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
