#include "audio/g711.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace hotline::audio {
namespace {

// Independent statement of the G.711 decoder output (ITU-T G.711 tables 1a/2a): μ-law segment e,
// mantissa m decodes to ((2m + 33) << e) - 33 in 14-bit units; A-law to 2m + 1 (e = 0) or
// (2m + 33) << (e - 1) in 12-bit magnitude units. Scaled to 16 bits (×4 and ×8).
int MulawExpected(uint8_t code) {
  const int inverted = (~code) & 0xFF;
  const int sign = (inverted & 0x80) ? -1 : 1;
  const int e = (inverted >> 4) & 7;
  const int m = inverted & 15;
  return sign * 4 * (((2 * m + 33) << e) - 33);
}

int AlawExpected(uint8_t code) {
  const int v = code ^ 0x55;
  const int sign = (v & 0x80) ? 1 : -1;
  const int e = (v >> 4) & 7;
  const int m = v & 15;
  const int magnitude = e == 0 ? 2 * m + 1 : (2 * m + 33) << (e - 1);
  return sign * 8 * magnitude;
}

TEST(G711, MulawDecodesAll256CodesAsInTheStandard) {
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(MulawToLinear(static_cast<uint8_t>(c)), MulawExpected(static_cast<uint8_t>(c)))
        << "code " << c;
  }
}

TEST(G711, AlawDecodesAll256CodesAsInTheStandard) {
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(AlawToLinear(static_cast<uint8_t>(c)), AlawExpected(static_cast<uint8_t>(c)))
        << "code " << c;
  }
}

TEST(G711, KnownCodePoints) {
  // μ-law: zero is 0xFF, -1 lands on "negative zero" 0x7F, full scale 0x80 / 0x00.
  EXPECT_EQ(LinearToMulaw(0), 0xFF);
  EXPECT_EQ(LinearToMulaw(-1), 0x7F);
  EXPECT_EQ(LinearToMulaw(32767), 0x80);
  EXPECT_EQ(LinearToMulaw(-32768), 0x00);
  EXPECT_EQ(MulawToLinear(0x80), 32124);
  EXPECT_EQ(MulawToLinear(0x00), -32124);
  EXPECT_EQ(MulawToLinear(0xFF), 0);
  EXPECT_EQ(MulawToLinear(0x7F), 0);
  // First segment boundary: 14-bit magnitude 30 is the top of the first step group (code 0xF0).
  EXPECT_EQ(LinearToMulaw(4 * 30), 0xF0);
  EXPECT_EQ(LinearToMulaw(4 * 31), 0xEF);
  // A-law: positive zero 0xD5, negative 0x55, full scale 0xAA / 0x2A.
  EXPECT_EQ(LinearToAlaw(0), 0xD5);
  EXPECT_EQ(LinearToAlaw(-1), 0x55);
  EXPECT_EQ(LinearToAlaw(32767), 0xAA);
  EXPECT_EQ(LinearToAlaw(-32768), 0x2A);
  EXPECT_EQ(AlawToLinear(0xD5), 8);
  EXPECT_EQ(AlawToLinear(0x55), -8);
  EXPECT_EQ(AlawToLinear(0xAA), 32256);
  EXPECT_EQ(AlawToLinear(0x2A), -32256);
  // A-law segment boundaries (codes before the even-bit XOR): 16-bit 256 starts segment 1,
  // 512 segment 2; 264 is segment 1's first level.
  EXPECT_EQ(LinearToAlaw(255), 0x8F ^ 0x55);
  EXPECT_EQ(LinearToAlaw(256), 0x90 ^ 0x55);
  EXPECT_EQ(LinearToAlaw(512), 0xA0 ^ 0x55);
  EXPECT_EQ(AlawToLinear(0x90 ^ 0x55), 264);
}

TEST(G711, DecodeThenEncodeIsIdentityForEveryCode) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    // μ-law 0x7F is "negative zero": it decodes to 0, which encodes as positive zero 0xFF.
    const uint8_t mu_expected = code == 0x7F ? 0xFF : code;
    EXPECT_EQ(LinearToMulaw(MulawToLinear(code)), mu_expected) << "code " << c;
    EXPECT_EQ(LinearToAlaw(AlawToLinear(code)), code) << "code " << c;
  }
}

// Quantization step (16-bit units) of the segment a code belongs to.
int MulawStep(uint8_t code) { return 8 << (((~code) >> 4) & 7); }
int AlawStep(uint8_t code) {
  const int e = ((code ^ 0x55) >> 4) & 7;
  return e == 0 ? 16 : 16 << (e - 1);
}

TEST(G711, EncoderErrorIsWithinHalfAStepAndMonotonic) {
  // Every 16-bit input decodes back to within half its segment's step (plus the bits G.711
  // drops below 14 / 13 bits), away from the clipping ends; encoding is monotonic.
  int prev_mu = MulawToLinear(LinearToMulaw(-32768));
  int prev_a = AlawToLinear(LinearToAlaw(-32768));
  for (int x = -32768; x <= 32767; ++x) {
    const int16_t s = static_cast<int16_t>(x);
    const uint8_t mu_code = LinearToMulaw(s);
    const uint8_t a_code = LinearToAlaw(s);
    const int mu = MulawToLinear(mu_code);
    const int a = AlawToLinear(a_code);
    ASSERT_GE(mu, prev_mu) << x;
    ASSERT_GE(a, prev_a) << x;
    prev_mu = mu;
    prev_a = a;
    if (x > -32000 && x < 32000) {
      ASSERT_LE(std::abs(mu - x), MulawStep(mu_code) / 2 + 4) << x;
      ASSERT_LE(std::abs(a - x), AlawStep(a_code) / 2) << x;
    }
  }
}

TEST(G711, TablesMatchTheArithmeticReferenceForAllInputs) {
  for (int x = -32768; x <= 32767; ++x) {
    const int16_t s = static_cast<int16_t>(x);
    ASSERT_EQ(LinearToMulaw(s), LinearToMulawReference(s)) << x;
    ASSERT_EQ(LinearToAlaw(s), LinearToAlawReference(s)) << x;
  }
  for (int c = 0; c < 256; ++c) {
    ASSERT_EQ(MulawToLinear(static_cast<uint8_t>(c)), MulawToLinearReference(static_cast<uint8_t>(c)));
    ASSERT_EQ(AlawToLinear(static_cast<uint8_t>(c)), AlawToLinearReference(static_cast<uint8_t>(c)));
  }
}

TEST(G711, SpanFunctionsMatchPerSampleFunctions) {
  std::vector<int16_t> pcm;
  for (int x = -32768; x <= 32767; x += 37) pcm.push_back(static_cast<int16_t>(x));
  std::vector<uint8_t> mu(pcm.size()), a(pcm.size());
  EncodeMulaw(pcm, mu);
  EncodeAlaw(pcm, a);
  std::vector<int16_t> mu_back(pcm.size()), a_back(pcm.size());
  DecodeMulaw(mu, mu_back);
  DecodeAlaw(a, a_back);
  for (size_t i = 0; i < pcm.size(); ++i) {
    ASSERT_EQ(mu[i], LinearToMulaw(pcm[i]));
    ASSERT_EQ(a[i], LinearToAlaw(pcm[i]));
    ASSERT_EQ(mu_back[i], MulawToLinear(mu[i]));
    ASSERT_EQ(a_back[i], AlawToLinear(a[i]));
  }
}

}  // namespace
}  // namespace hotline::audio
