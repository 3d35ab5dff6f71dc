// Strict base64 (RFC 4648 §4, the standard alphabet with '=' padding), as Twilio Media Streams and
// other telephony WebSockets carry audio.
//
// Decoding is strict because the input is untrusted: the length must be a multiple of 4, only the
// alphabet and 1-2 trailing '=' are allowed, no whitespace or line breaks, and the unused bits of
// the last group must be zero (so every byte string has exactly one accepted encoding). Errors
// name the offending offset.
//
// Thread-safety: pure functions. Base64DecodeInto reuses the caller's buffer, so a steady stream
// of same-sized payloads (20 ms of audio) allocates nothing after the first.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::transport {

// Bytes a decode of `encoded_size` characters produces at most.
inline size_t Base64DecodedSizeBound(size_t encoded_size) { return encoded_size / 4 * 3; }

std::string Base64Encode(std::string_view bytes);
// Appends the encoding of `bytes` to `out`.
void Base64EncodeAppend(std::string_view bytes, std::string& out);

// Decodes `text` into `out` (replacing its contents). InvalidArgument for malformed input,
// ResourceExhausted when the result would exceed `max_bytes`.
Status Base64DecodeInto(std::string_view text, std::string& out,
                        size_t max_bytes = static_cast<size_t>(-1));
Result<std::string> Base64Decode(std::string_view text, size_t max_bytes = static_cast<size_t>(-1));

}  // namespace hotline::transport
