#pragma once
// Content addressing of kernel sources: a canonical text form and its SHA-256.
// Variants that differ only in layout must map to the same cache key, so that
// different patches yielding the same code are compiled and evaluated once.
#include <string>
#include <string_view>

namespace gi::grammar {

// Canonical form: CRLF/CR read as LF, each line trimmed, every run of blanks
// inside a line collapsed to one space, empty lines dropped; lines joined with
// '\n' (each followed by one). Comments are kept: they may carry pragmas.
std::string normalise_source(std::string_view src);

// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace gi::grammar
