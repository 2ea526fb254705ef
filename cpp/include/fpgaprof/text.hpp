// Text checks for bytes that came from outside (trace files, CUPTI, NVTX, HLO text): every
// string the core hands to Python must be UTF-8, and every error message must be printable.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fpgaprof {

// The byte offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or npos when all of `s` is.
std::size_t invalid_utf8_at(std::string_view s) noexcept;
inline bool is_utf8(std::string_view s) noexcept { return invalid_utf8_at(s) == std::string_view::npos; }

// `s` with every ill-formed byte replaced by U+FFFD, for names that arrive from native code
// (NVTX, CUPTI) and are stored as they are otherwise.
std::string to_utf8(std::string_view s);

// `s` for an error message: printable ASCII kept, every other byte as \xNN, cut after
// max_bytes bytes with "..." (so a hostile name can neither break the message's encoding nor
// make it longer than a line).
std::string printable(std::string_view s, std::size_t max_bytes = 80);

}  // namespace fpgaprof
