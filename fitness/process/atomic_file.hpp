#pragma once
// Writing a file so that a reader (or a run resumed after a kill) sees the
// old content or the new, never half of it: write a temporary file in the
// same folder, flush it to disk, rename it over the target.
#include <filesystem>
#include <string>
#include <string_view>

namespace gi::fitness {

// Returns false and sets `error` (naming the path) on failure; never throws.
bool write_file_atomically(const std::filesystem::path& target, std::string_view data, std::string& error);

// Throws std::runtime_error naming the path on failure.
void write_file_atomically(const std::filesystem::path& target, std::string_view data);

}  // namespace gi::fitness
