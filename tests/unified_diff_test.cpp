#include "grammar/unified_diff.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using gi::grammar::unified_diff;

std::string numbered_lines(int first, int last) {
  std::string text;
  for (int i = first; i <= last; ++i) {
    text += std::to_string(i) + "\n";
  }
  return text;
}

std::vector<std::string> split_keep_newline(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t nl = text.find('\n', begin);
    const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    text += line;
  }
  return text;
}

// Applies a unified diff strictly: every hunk must sit at exactly the line
// its header names and its counts must match its body, so a wrong header
// fails here even where `patch` would apply it with an offset.
std::string apply_strictly(const std::string& old_text, const std::string& diff) {
  if (diff.empty()) {
    return old_text;
  }
  const std::vector<std::string> old_lines = split_keep_newline(old_text);
  std::vector<std::string> diff_lines;
  std::istringstream in(diff);
  for (std::string line; std::getline(in, line);) {
    diff_lines.push_back(line);
  }
  if (diff_lines.size() < 2 || diff_lines[0].rfind("--- ", 0) != 0 ||
      diff_lines[1].rfind("+++ ", 0) != 0) {
    throw std::runtime_error("bad header");
  }
  std::vector<std::string> result;
  std::size_t copied = 0;  // old lines consumed so far
  std::size_t p = 2;
  auto parse_range = [](const std::string& s, std::size_t& start, std::size_t& count) {
    const std::size_t comma = s.find(',');
    start = std::stoul(s.substr(0, comma));
    count = comma == std::string::npos ? 1 : std::stoul(s.substr(comma + 1));
  };
  while (p < diff_lines.size()) {
    const std::string& header = diff_lines[p++];
    std::size_t old_start = 0;
    std::size_t old_count = 0;
    std::size_t new_start = 0;
    std::size_t new_count = 0;
    if (header.rfind("@@ -", 0) != 0 || header.substr(header.size() - 3) != " @@") {
      throw std::runtime_error("bad hunk header: " + header);
    }
    const std::size_t plus = header.find(" +");
    parse_range(header.substr(4, plus - 4), old_start, old_count);
    parse_range(header.substr(plus + 2, header.size() - 3 - plus - 2), new_start, new_count);
    const std::size_t old_begin = old_count == 0 ? old_start : old_start - 1;
    if (old_begin < copied || old_begin > old_lines.size()) {
      throw std::runtime_error("hunk out of order: " + header);
    }
    while (copied < old_begin) {
      result.push_back(old_lines[copied++]);
    }
    const std::size_t new_begin = new_count == 0 ? new_start : new_start - 1;
    if (new_begin != result.size()) {
      throw std::runtime_error("new start does not match: " + header);
    }
    std::size_t seen_old = 0;
    std::size_t seen_new = 0;
    while (p < diff_lines.size() && diff_lines[p].rfind("@@", 0) != 0) {
      const std::string& body = diff_lines[p++];
      std::string line = body.substr(1);
      if (p < diff_lines.size() && diff_lines[p] == "\\ No newline at end of file") {
        ++p;
      } else {
        line += '\n';
      }
      if (body[0] == ' ' || body[0] == '-') {
        if (copied >= old_lines.size() || old_lines[copied] != line) {
          throw std::runtime_error("old line mismatch in " + header);
        }
        ++copied;
        ++seen_old;
      }
      if (body[0] == ' ' || body[0] == '+') {
        result.push_back(line);
        ++seen_new;
      }
      if (body[0] != ' ' && body[0] != '-' && body[0] != '+') {
        throw std::runtime_error("bad body line: " + body);
      }
    }
    if (seen_old != old_count || seen_new != new_count) {
      throw std::runtime_error("counts do not match body: " + header);
    }
  }
  while (copied < old_lines.size()) {
    result.push_back(old_lines[copied++]);
  }
  return join(result);
}

// Lines removed plus lines added, read from the diff body.
int changed_line_count(const std::string& diff) {
  int count = 0;
  std::istringstream in(diff);
  int line_number = 0;
  for (std::string line; std::getline(in, line); ++line_number) {
    if (line_number >= 2 && !line.empty() && (line[0] == '-' || line[0] == '+')) {
      ++count;
    }
  }
  return count;
}

int lcs_length(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<int>> t(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

// A random edit script: deletions, insertions and replacements of lines.
std::string random_edit(const std::string& text, std::mt19937& rng, int edits) {
  std::vector<std::string> lines = split_keep_newline(text);
  std::uniform_int_distribution<int> kind(0, 2);
  for (int e = 0; e < edits; ++e) {
    const std::string fresh = "edited line " + std::to_string(rng() % 1000) + "\n";
    const int k = kind(rng);
    if (k == 0 && !lines.empty()) {
      lines.erase(lines.begin() + static_cast<long>(rng() % lines.size()));
    } else if (k == 1) {
      lines.insert(lines.begin() + static_cast<long>(rng() % (lines.size() + 1)), fresh);
    } else if (!lines.empty()) {
      lines[rng() % lines.size()] = fresh;
    }
  }
  return join(lines);
}

// 200 lines that look like kernel code, with repeated lines so the diff has
// ambiguous matches to choose from.
std::string kernel_like_text() {
  std::string text;
  for (int i = 0; i < 200; ++i) {
    if (i % 7 == 0) {
      text += "    }\n";
    } else if (i % 5 == 0) {
      text += "\n";
    } else {
      text += "    value" + std::to_string(i % 13) + " += weight * x[" + std::to_string(i) + "];\n";
    }
  }
  return text;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gi_diff_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp failed");
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes old_text as <tmp>/x/k.cu, applies the diff with `patch -p1` and
// returns the file's new contents.
std::string apply_with_patch(const std::string& old_text, const std::string& diff) {
  const TempDir dir;
  std::filesystem::create_directories(dir.path() / "x");
  write_file(dir.path() / "x" / "k.cu", old_text);
  write_file(dir.path() / "change.diff", diff);
  const std::string command = "patch -p1 -s --fuzz=0 --no-backup-if-mismatch -d '" +
                              dir.path().string() + "' < '" +
                              (dir.path() / "change.diff").string() + "'";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("patch failed: " + command);
  }
  return read_file(dir.path() / "x" / "k.cu");
}

TEST(UnifiedDiff, EqualTextsGiveEmptyDiff) {
  EXPECT_EQ(unified_diff("", "", "a/k.cu", "b/k.cu"), "");
  EXPECT_EQ(unified_diff(numbered_lines(1, 9), numbered_lines(1, 9), "a/k.cu", "b/k.cu"), "");
  EXPECT_EQ(unified_diff("x\ny", "x\ny", "a/k.cu", "b/k.cu"), "");
}

TEST(UnifiedDiff, OneLineChange) {
  std::string changed = numbered_lines(1, 4) + "five\n" + numbered_lines(6, 9);
  EXPECT_EQ(unified_diff(numbered_lines(1, 9), changed, "a/seeds/k.cu", "b/seeds/k.cu"),
            "--- a/seeds/k.cu\n"
            "+++ b/seeds/k.cu\n"
            "@@ -2,7 +2,7 @@\n"
            " 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, LabelsAreWrittenVerbatim) {
  const std::string diff = unified_diff("a\n", "b\n", "old label\t2024", "new/label");
  EXPECT_EQ(diff.substr(0, diff.find("@@")), "--- old label\t2024\n+++ new/label\n");
}

TEST(UnifiedDiff, InsertionAtStart) {
  EXPECT_EQ(unified_diff(numbered_lines(1, 9), numbered_lines(0, 9), "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n");
}

TEST(UnifiedDiff, InsertionAtEnd) {
  EXPECT_EQ(unified_diff(numbered_lines(1, 9), numbered_lines(1, 10), "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -7,3 +7,4 @@\n 7\n 8\n 9\n+10\n");
}

TEST(UnifiedDiff, InsertionIntoEmptyFile) {
  EXPECT_EQ(unified_diff("", "x\ny\n", "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -0,0 +1,2 @@\n+x\n+y\n");
}

TEST(UnifiedDiff, Deletion) {
  EXPECT_EQ(unified_diff(numbered_lines(1, 9), numbered_lines(2, 9), "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,4 +1,3 @@\n-1\n 2\n 3\n 4\n");
  EXPECT_EQ(unified_diff("only\n", "", "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1 +0,0 @@\n-only\n");
}

TEST(UnifiedDiff, SeparatedChangesGiveSeparateHunks) {
  const std::string old_text = numbered_lines(1, 20);
  const std::string new_text =
      numbered_lines(1, 2) + "three\n" + numbered_lines(4, 14) + "fifteen\n" + numbered_lines(16, 20);
  EXPECT_EQ(unified_diff(old_text, new_text, "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n"
            "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n"
            "@@ -12,7 +12,7 @@\n 12\n 13\n 14\n-15\n+fifteen\n 16\n 17\n 18\n");
}

TEST(UnifiedDiff, ChangesWhoseContextsTouchShareOneHunk) {
  const std::string old_text = numbered_lines(1, 20);
  // Six kept lines (4..9) between the changes: the contexts touch, one hunk.
  const std::string merged = numbered_lines(1, 2) + "x\n" + numbered_lines(4, 9) + "y\n" +
                             numbered_lines(11, 20);
  EXPECT_EQ(unified_diff(old_text, merged, "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n 7\n 8\n 9\n"
            "-10\n+y\n 11\n 12\n 13\n");
  // Seven kept lines (4..10): two hunks.
  const std::string split = numbered_lines(1, 2) + "x\n" + numbered_lines(4, 10) + "y\n" +
                            numbered_lines(12, 20);
  EXPECT_EQ(unified_diff(old_text, split, "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n"
            "@@ -8,7 +8,7 @@\n 8\n 9\n 10\n-11\n+y\n 12\n 13\n 14\n");
}

TEST(UnifiedDiff, ContextSizeIsAParameter) {
  EXPECT_EQ(unified_diff("1\n2\n3\n", "1\nB\n3\n", "a/k.cu", "b/k.cu", 0),
            "--- a/k.cu\n+++ b/k.cu\n@@ -2 +2 @@\n-2\n+B\n");
  EXPECT_EQ(unified_diff("1\n2\n3\n", "1\n3\n", "a/k.cu", "b/k.cu", 0),
            "--- a/k.cu\n+++ b/k.cu\n@@ -2 +1,0 @@\n-2\n");
  EXPECT_THROW(unified_diff("a\n", "b\n", "a/k.cu", "b/k.cu", -1), std::invalid_argument);
}

TEST(UnifiedDiff, AddingTheFinalNewlineChangesTheLastLine) {
  EXPECT_EQ(unified_diff("a\nb\nc", "a\nb\nc\n", "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n b\n-c\n"
            "\\ No newline at end of file\n+c\n");
  EXPECT_EQ(unified_diff("a\nb\nc\n", "a\nb\nc", "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+c\n"
            "\\ No newline at end of file\n");
}

TEST(UnifiedDiff, LastContextLineWithoutNewlineIsMarked) {
  EXPECT_EQ(unified_diff("a\nb\nc", "a\nB\nc", "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
            "\\ No newline at end of file\n");
  EXPECT_EQ(unified_diff("a\nb", "a\nc", "a/k.cu", "b/k.cu"),
            "--- a/k.cu\n+++ b/k.cu\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
            "+c\n\\ No newline at end of file\n");
}

TEST(UnifiedDiff, RejectsTextsBeyondTheLineLimit) {
  const std::string huge(gi::grammar::kMaxDiffLines + 1, '\n');
  EXPECT_THROW(unified_diff(huge, "x\n", "a/k.cu", "b/k.cu"), std::length_error);
  EXPECT_THROW(unified_diff("x\n", huge, "a/k.cu", "b/k.cu"), std::length_error);
}

TEST(UnifiedDiff, ChangesAreMinimalOnRandomTexts) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 400; ++trial) {
    // Few distinct lines, so many equally long common subsequences exist.
    auto random_text = [&rng](int lines) {
      std::string text;
      for (int i = 0; i < lines; ++i) {
        text += static_cast<char>('a' + rng() % 4);
        text += '\n';
      }
      return text;
    };
    const std::string a = random_text(static_cast<int>(rng() % 30));
    const std::string b = random_text(static_cast<int>(rng() % 30));
    const std::string diff = unified_diff(a, b, "a/k.cu", "b/k.cu");
    const std::vector<std::string> la = split_keep_newline(a);
    const std::vector<std::string> lb = split_keep_newline(b);
    const int minimal = static_cast<int>(la.size() + lb.size()) - 2 * lcs_length(la, lb);
    ASSERT_EQ(changed_line_count(diff), minimal) << "trial " << trial << "\n" << diff;
    ASSERT_EQ(apply_strictly(a, diff), b) << "trial " << trial << "\n" << diff;
  }
}

TEST(UnifiedDiff, RandomEditsApplyExactlyAtTheirHeaders) {
  std::mt19937 rng(2024);
  const std::string base = kernel_like_text();
  for (int trial = 0; trial < 300; ++trial) {
    const std::string changed = random_edit(base, rng, 1 + static_cast<int>(rng() % 12));
    const int context = static_cast<int>(rng() % 5);
    const std::string diff = unified_diff(base, changed, "a/x/k.cu", "b/x/k.cu", context);
    ASSERT_EQ(apply_strictly(base, diff), changed) << "trial " << trial << "\n" << diff;
  }
}

TEST(UnifiedDiff, RoundTripThroughPatch) {
  std::mt19937 rng(7);
  const std::string base = kernel_like_text();
  for (int trial = 0; trial < 12; ++trial) {
    std::string changed = random_edit(base, rng, 1 + static_cast<int>(rng() % 10));
    std::string old_text = base;
    if (trial == 10) {
      changed.pop_back();  // the new file loses its final newline
    }
    if (trial == 11) {
      old_text.pop_back();  // the old file lacks its final newline
    }
    const std::string diff = unified_diff(old_text, changed, "a/x/k.cu", "b/x/k.cu");
    ASSERT_FALSE(diff.empty());
    EXPECT_EQ(apply_with_patch(old_text, diff), changed) << "trial " << trial << "\n" << diff;
  }
}

}  // namespace
