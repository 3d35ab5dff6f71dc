#include "transport/base64.h"

#include <array>
#include <cstdint>

namespace hotline::transport {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeReverse() {
  std::array<int8_t, 256> r{};
  for (auto& v : r) v = -1;
  for (int i = 0; i < 64; ++i) r[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return r;
}
constexpr std::array<int8_t, 256> kReverse = MakeReverse();

std::string Describe(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  snprintf(buf, sizeof(buf), "0x%02x", u);
  return buf;
}

}  // namespace

void Base64EncodeAppend(std::string_view bytes, std::string& out) {
  out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = uint32_t{p[i]} << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  Base64EncodeAppend(bytes, out);
  return out;
}

Status Base64DecodeInto(std::string_view text, std::string& out, size_t max_bytes) {
  out.clear();
  if (text.size() % 4 != 0) {
    return InvalidArgumentError("base64: length " + std::to_string(text.size()) +
                                " is not a multiple of 4 (truncated or unpadded)");
  }
  if (text.empty()) return Status::Ok();
  size_t pad = 0;
  if (text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  const size_t decoded = text.size() / 4 * 3 - pad;
  if (decoded > max_bytes) {
    return ResourceExhaustedError("base64: payload of " + std::to_string(decoded) +
                                  " bytes exceeds the limit of " + std::to_string(max_bytes));
  }
  out.resize(decoded);
  const size_t data_chars = text.size() - pad;
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < data_chars; ++i) {
    int8_t v = kReverse[static_cast<uint8_t>(text[i])];
    if (v < 0) {
      out.clear();
      return InvalidArgumentError("base64: invalid character " + Describe(text[i]) +
                                  " at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits of the last group must be zero: "QR==" and "QQ==" must not both mean "A".
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) {
    out.clear();
    return InvalidArgumentError("base64: non-zero padding bits in the last group (non-canonical)");
  }
  return Status::Ok();
}

Result<std::string> Base64Decode(std::string_view text, size_t max_bytes) {
  std::string out;
  RETURN_IF_ERROR(Base64DecodeInto(text, out, max_bytes));
  return out;
}

}  // namespace hotline::transport
