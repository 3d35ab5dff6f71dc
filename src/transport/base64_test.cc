#include "transport/base64.h"

#include <gtest/gtest.h>

#include <random>

namespace hotline::transport {
namespace {

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto d = Base64Decode(encoded);
    ASSERT_TRUE(d.ok()) << encoded << ": " << d.status();
    EXPECT_EQ(*d, plain);
  }
}

TEST(Base64, RoundTripsEveryByteValueAndLength) {
  std::mt19937 rng(7);
  std::string out;
  for (size_t len = 0; len < 300; ++len) {
    std::string bytes(len, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
    std::string enc = Base64Encode(bytes);
    EXPECT_EQ(enc.size(), (len + 2) / 3 * 4);
    ASSERT_TRUE(Base64DecodeInto(enc, out).ok());
    EXPECT_EQ(out, bytes);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  EXPECT_EQ(*Base64Decode(Base64Encode(all)), all);
}

TEST(Base64, RejectsMalformedInput) {
  const char* bad[] = {
      "Zg",        // unpadded
      "Zg=",       // wrong length
      "Zm9vY",     // truncated
      "Zm 9v",     // whitespace... and wrong length
      "Zm9v\nYmFy",  // line break
      "Zm9-",      // URL-safe alphabet is not this one
      "Zm9_",
      "Z===",      // too much padding
      "====",
      "Zg==Zm9v",  // padding in the middle
      "Zh==",      // non-zero padding bits (non-canonical "f")
      "Zm9=",      // non-zero padding bits
      "Zm9v\x80\x81\x82\x83",  // bytes outside ASCII
  };
  for (const char* b : bad) {
    auto d = Base64Decode(b);
    EXPECT_FALSE(d.ok()) << "accepted '" << b << "'";
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << b;
    }
  }
  auto d = Base64Decode("Zm9v!mFy");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("'!' at offset 4"), std::string::npos) << d.status();
}

TEST(Base64, EnforcesTheSizeLimitBeforeDecoding) {
  std::string enc = Base64Encode(std::string(161, 'x'));
  EXPECT_TRUE(Base64Decode(enc, 161).ok());
  auto d = Base64Decode(enc, 160);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kResourceExhausted);
}

TEST(Base64, DecodeIntoReusesTheBuffer) {
  std::string out;
  std::string enc = Base64Encode(std::string(160, '\x7f'));
  ASSERT_TRUE(Base64DecodeInto(enc, out).ok());
  const char* data = out.data();
  ASSERT_TRUE(Base64DecodeInto(enc, out).ok());
  EXPECT_EQ(out.data(), data);  // no reallocation for a same-sized payload
  EXPECT_FALSE(Base64DecodeInto("@@@@", out).ok());
  EXPECT_TRUE(out.empty());  // no half-decoded leftovers after an error
}

}  // namespace
}  // namespace hotline::transport
