#include "grammar/unified_diff.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gi::grammar {
namespace {

// Lines keep their '\n' (the last one may lack it), so that a change of the
// final newline alone is a change of the last line.
std::vector<std::string_view> split_lines(std::string_view text, std::string_view label) {
  std::vector<std::string_view> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t newline = text.find('\n', begin);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(begin, end - begin));
    begin = end;
    if (lines.size() > kMaxDiffLines) {
      throw std::length_error("unified_diff: " + std::string(label) + " has more than " +
                              std::to_string(kMaxDiffLines) + " lines");
    }
  }
  return lines;
}

// Myers' O(ND) difference algorithm in linear space (divide and conquer on
// the middle snake). Lines are compared as small integers. The result is a
// flag per old line (deleted) and per new line (inserted); the unflagged
// lines of both texts pair up in order as the longest common subsequence.
class LineDiff {
 public:
  LineDiff(const std::vector<int>& a, const std::vector<int>& b)
      : a_(a), b_(b), deleted_(a.size(), 0), inserted_(b.size(), 0) {
    const int max_d = (static_cast<int>(a.size() + b.size()) + 1) / 2;
    offset_ = max_d + 1;
    forward_.assign(2 * static_cast<std::size_t>(max_d) + 3, -1);
    backward_.assign(forward_.size(), -1);
    compare(0, static_cast<int>(a.size()), 0, static_cast<int>(b.size()));
  }

  const std::vector<char>& deleted() const { return deleted_; }
  const std::vector<char>& inserted() const { return inserted_; }

 private:
  void compare(int a_lo, int a_hi, int b_lo, int b_hi) {
    while (a_lo < a_hi && b_lo < b_hi && a_[a_lo] == b_[b_lo]) {
      ++a_lo;
      ++b_lo;
    }
    while (a_lo < a_hi && b_lo < b_hi && a_[a_hi - 1] == b_[b_hi - 1]) {
      --a_hi;
      --b_hi;
    }
    if (a_lo == a_hi) {
      std::fill(inserted_.begin() + b_lo, inserted_.begin() + b_hi, 1);
      return;
    }
    if (b_lo == b_hi) {
      std::fill(deleted_.begin() + a_lo, deleted_.begin() + a_hi, 1);
      return;
    }
    // Both sides are non-empty and differ at both ends, so at least two edits
    // are needed and the split point lies strictly inside: both halves shrink.
    const auto [x, y] = middle_snake(a_lo, a_hi, b_lo, b_hi);
    compare(a_lo, x, b_lo, y);
    compare(x, a_hi, y, b_hi);
  }

  // Furthest x reached on diagonal k (x - y) with d edits, or -1 when every
  // d-path to that diagonal leaves the n x m grid. Only points inside the grid
  // are kept, so the split point returned is always a valid one.
  static int extend(const std::vector<int>& v, int offset, int d, int k, int n, int m) {
    if (d == 0) {
      return 0;
    }
    int best = -1;
    if (k + 1 <= d - 1) {
      const int down = v[offset + k + 1];  // from diagonal k + 1, one more line of b
      if (down >= 0 && down - (k + 1) < m) {
        best = down;
      }
    }
    if (k - 1 >= -(d - 1)) {
      const int right = v[offset + k - 1];  // from diagonal k - 1, one more line of a
      if (right >= 0 && right < n) {
        best = std::max(best, right + 1);
      }
    }
    return best;
  }

  // A point (absolute indices) on an optimal edit path from (a_lo, b_lo) to
  // (a_hi, b_hi), found where the forward search from the start and the
  // backward search from the end first overlap on a diagonal.
  std::pair<int, int> middle_snake(int a_lo, int a_hi, int b_lo, int b_hi) {
    const int n = a_hi - a_lo;
    const int m = b_hi - b_lo;
    const int delta = n - m;
    const bool odd = (delta % 2) != 0;
    const int max_d = (n + m + 1) / 2;
    for (int d = 0; d <= max_d; ++d) {
      for (int k = -d; k <= d; k += 2) {
        int x = extend(forward_, offset_, d, k, n, m);
        if (x < 0) {
          forward_[offset_ + k] = -1;
          continue;
        }
        int y = x - k;
        while (x < n && y < m && a_[a_lo + x] == b_[b_lo + y]) {
          ++x;
          ++y;
        }
        forward_[offset_ + k] = x;
        const int back_k = delta - k;  // the same diagonal seen from the end
        if (odd && back_k >= -(d - 1) && back_k <= d - 1) {
          const int u = backward_[offset_ + back_k];
          if (u >= 0 && x + u >= n) {
            return {a_lo + x, b_lo + y};
          }
        }
      }
      // Backward search in reversed coordinates u = n - x, v = m - y.
      for (int k = -d; k <= d; k += 2) {
        int u = extend(backward_, offset_, d, k, n, m);
        if (u < 0) {
          backward_[offset_ + k] = -1;
          continue;
        }
        int v = u - k;
        while (u < n && v < m && a_[a_hi - 1 - u] == b_[b_hi - 1 - v]) {
          ++u;
          ++v;
        }
        backward_[offset_ + k] = u;
        const int front_k = delta - k;
        if (!odd && front_k >= -d && front_k <= d) {
          const int x = forward_[offset_ + front_k];
          if (x >= 0 && x + u >= n) {
            return {a_hi - u, b_hi - v};
          }
        }
      }
    }
    throw std::logic_error("unified_diff: no middle snake found");
  }

  const std::vector<int>& a_;
  const std::vector<int>& b_;
  std::vector<char> deleted_;
  std::vector<char> inserted_;
  std::vector<int> forward_;
  std::vector<int> backward_;
  int offset_ = 0;
};

struct Op {
  char kind;      // ' ' kept, '-' deleted, '+' inserted
  int old_index;  // old lines before this op
  int new_index;  // new lines before this op
};

// "l,s" as GNU diff writes it: "l" alone when s == 1; for an empty range l is
// the line before it.
std::string range_text(int before, int count) {
  if (count == 1) {
    return std::to_string(before + 1);
  }
  return std::to_string(count == 0 ? before : before + 1) + "," + std::to_string(count);
}

void append_line(std::string& out, char kind, std::string_view line) {
  out += kind;
  out += line;
  if (line.empty() || line.back() != '\n') {
    out += "\n\\ No newline at end of file\n";
  }
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_label, std::string_view new_label, int context) {
  if (context < 0) {
    throw std::invalid_argument("unified_diff: context must be >= 0, got " +
                                std::to_string(context));
  }
  if (old_text == new_text) {
    return {};
  }
  const std::vector<std::string_view> old_lines = split_lines(old_text, old_label);
  const std::vector<std::string_view> new_lines = split_lines(new_text, new_label);

  std::unordered_map<std::string_view, int> ids;
  auto intern = [&ids](const std::vector<std::string_view>& lines) {
    std::vector<int> out;
    out.reserve(lines.size());
    for (std::string_view line : lines) {
      out.push_back(ids.emplace(line, static_cast<int>(ids.size())).first->second);
    }
    return out;
  };
  const std::vector<int> old_ids = intern(old_lines);
  const std::vector<int> new_ids = intern(new_lines);
  const LineDiff diff(old_ids, new_ids);

  // Edit script, deletions before insertions within a change.
  std::vector<Op> ops;
  std::vector<std::size_t> changes;
  const int n = static_cast<int>(old_lines.size());
  const int m = static_cast<int>(new_lines.size());
  int i = 0;
  int j = 0;
  while (i < n || j < m) {
    if (i < n && diff.deleted()[i]) {
      changes.push_back(ops.size());
      ops.push_back({'-', i++, j});
    } else if (j < m && diff.inserted()[j]) {
      changes.push_back(ops.size());
      ops.push_back({'+', i, j++});
    } else {
      if (i >= n || j >= m) {
        throw std::logic_error("unified_diff: unbalanced line pairing");
      }
      ops.push_back({' ', i++, j++});
    }
  }

  std::string out;
  out += "--- ";
  out += old_label;
  out += "\n+++ ";
  out += new_label;
  out += '\n';
  const std::size_t ctx = static_cast<std::size_t>(context);
  std::size_t c = 0;
  while (c < changes.size()) {
    // Merge the following changes while the kept lines between two of them
    // are at most 2 * context (their contexts would touch or overlap).
    std::size_t last = c;
    while (last + 1 < changes.size() && changes[last + 1] - changes[last] - 1 <= 2 * ctx) {
      ++last;
    }
    const std::size_t begin = changes[c] >= ctx ? changes[c] - ctx : 0;
    const std::size_t end = std::min(ops.size(), changes[last] + 1 + ctx);
    int old_count = 0;
    int new_count = 0;
    for (std::size_t p = begin; p < end; ++p) {
      old_count += ops[p].kind != '+' ? 1 : 0;
      new_count += ops[p].kind != '-' ? 1 : 0;
    }
    out += "@@ -" + range_text(ops[begin].old_index, old_count) + " +" +
           range_text(ops[begin].new_index, new_count) + " @@\n";
    for (std::size_t p = begin; p < end; ++p) {
      const Op& op = ops[p];
      append_line(out, op.kind, op.kind == '+' ? new_lines[op.new_index] : old_lines[op.old_index]);
    }
    c = last + 1;
  }
  return out;
}

}  // namespace gi::grammar
