// Real espeak-ng synthesis: English and Mandarin, streaming chunks, cancellation.
#include "tts/espeak/espeak_synthesizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace hotline::tts {
namespace {

std::unique_ptr<Synthesizer> Make(const std::string& voice) {
  TtsConfig cfg;
  cfg.backend = "espeak-ng";
  cfg.espeak_ng.voice = voice;
  auto s = CreateSynthesizer(cfg);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : nullptr;
}

double Rms(std::span<const int16_t> s) {
  double sum = 0;
  for (int16_t v : s) sum += static_cast<double>(v) * v;
  return s.empty() ? 0 : std::sqrt(sum / static_cast<double>(s.size()));
}

TEST(EspeakSynthesizer, SpeaksEnglish) {
  auto synth = Make("en-us");
  ASSERT_NE(synth, nullptr);
  EXPECT_EQ(synth->voice_id(), "espeak-ng/en-us@175");
  EXPECT_EQ(synth->sample_rate_hz(), 22050);
  auto audio = SynthesizeToBuffer(*synth, "Your order has shipped and should arrive on Tuesday.");
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_GT(audio->duration_s(), 1.5);
  EXPECT_LT(audio->duration_s(), 6.0);
  EXPECT_GT(Rms(audio->samples), 300.0);
}

TEST(EspeakSynthesizer, SpeaksMandarin) {
  auto synth = Make("cmn");
  ASSERT_NE(synth, nullptr);
  auto audio = SynthesizeToBuffer(*synth, "您的订单已经发货了。");
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_GT(audio->duration_s(), 0.8);
  EXPECT_GT(Rms(audio->samples), 300.0);
}

TEST(EspeakSynthesizer, UnknownVoiceIsAnError) {
  TtsConfig cfg;
  cfg.backend = "espeak-ng";
  cfg.espeak_ng.voice = "xx-nowhere";
  EXPECT_EQ(CreateSynthesizer(cfg).status().code(), StatusCode::kNotFound);
}

TEST(EspeakSynthesizer, CancelStopsWithinOneChunk) {
  auto synth = Make("en-us");
  ASSERT_NE(synth, nullptr);
  CancelToken cancel;
  int chunks = 0;
  Status s = synth->Synthesize(
      "This is a long sentence that would take several seconds to speak in full, so we stop it.",
      [&](std::span<const int16_t> c) {
        EXPECT_EQ(c.size(), 882u);  // 40 ms at 22050 Hz
        if (++chunks == 2) cancel.Cancel();
        return Status::Ok();
      },
      &cancel);
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_EQ(chunks, 2);
  // The library is usable again after an abort.
  auto again = SynthesizeToBuffer(*synth, "Hello again.");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_GT(again->duration_s(), 0.4);
}

TEST(EspeakSynthesizer, ConcurrentCallsAreSerializedSafely) {
  auto reference = SynthesizeToBuffer(*Make("en-us"), "One two three.");
  ASSERT_TRUE(reference.ok());
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto synth = Make(i == 1 ? "de" : "en-us");  // voice switches between calls
      for (int r = 0; r < 2; ++r) {
        auto a = SynthesizeToBuffer(*synth, "One two three.");
        if (!a.ok()) mismatches.fetch_add(1);
        // espeak-ng jitters a few samples run to run; a voice mix-up changes far more.
        else if (i != 1 && std::abs(static_cast<double>(a->size()) -
                                    static_cast<double>(reference->size())) >
                               0.02 * static_cast<double>(reference->size())) {
          mismatches.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace hotline::tts
