// Synthesizer factory and configuration: YAML keys, validation messages.
#include "tts/synthesizer.h"

#include <gtest/gtest.h>

#include "common/config.h"
#include "tts/audio_cache.h"
#include "tts/sentence_chunker.h"
#include "tts/text_normalizer.h"

namespace hotline::tts {
namespace {

TEST(TtsConfig, LoadsFromYamlAndValidates) {
  TtsConfig cfg;
  Status s = ParseConfigYaml(
      "backend: espeak-ng\nespeak_ng:\n  voice: cmn\n  rate_wpm: 160\nflite:\n  serialize: true\n"
      "openai:\n  http:\n    idle_timeout_ms: 5000\n",
      "test.yaml", cfg);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(cfg.backend, "espeak-ng");
  EXPECT_EQ(cfg.espeak_ng.voice, "cmn");
  EXPECT_EQ(cfg.espeak_ng.rate_wpm, 160);
  EXPECT_TRUE(cfg.flite.serialize);
  EXPECT_EQ(cfg.openai.http.idle_timeout_ms, 5000);
  EXPECT_TRUE(ValidateConfig(cfg).ok());
  EXPECT_FALSE(ParseConfigYaml("flite:\n  voic: x\n", "test.yaml", cfg).ok());  // typo is an error
}

TEST(TtsConfig, ValidationNamesTheProblem) {
  TtsConfig cfg;
  cfg.backend = "festival";
  EXPECT_NE(cfg.Validate().message().find("festival"), std::string::npos);
  cfg = TtsConfig();
  cfg.flite.rate = 10;
  EXPECT_NE(cfg.Validate().message().find("flite: rate"), std::string::npos) << cfg.Validate();
  cfg = TtsConfig();
  cfg.backend = "espeak-ng";
  cfg.espeak_ng.voice = "en; rm -rf";
  EXPECT_FALSE(cfg.Validate().ok());
  cfg = TtsConfig();
  cfg.backend = "openai";
  cfg.openai.response_format = "mp3";
  EXPECT_NE(cfg.Validate().message().find("pcm or wav"), std::string::npos);
  cfg.openai.response_format = "pcm";
  cfg.openai.url = "ftp://x";
  EXPECT_FALSE(CreateSynthesizer(cfg).ok());
  cfg.openai.url = "https://speech.example.com/v1";
  EXPECT_TRUE(cfg.Validate().ok()) << cfg.Validate();
  cfg.openai.http.ca_file = "/nonexistent/hotline-ca.pem";
  EXPECT_NE(cfg.Validate().message().find("/nonexistent/hotline-ca.pem"), std::string::npos);
  EXPECT_TRUE(AudioCacheConfig().Validate().ok());
  EXPECT_TRUE(SentenceChunkerConfig().Validate().ok());
  EXPECT_TRUE(TextNormalizerConfig().Validate().ok());
}

// The pipeline in miniature: chunk a streamed answer, normalize each chunk, synthesize it with a
// real voice; the first audio comes from the first chunk alone.
TEST(SpeechOut, StreamedAnswerToAudio) {
  TtsConfig cfg;
  cfg.flite.voice = "cmu_us_kal16";
  auto synth = CreateSynthesizer(cfg);
  ASSERT_TRUE(synth.ok()) << synth.status();
  SentenceChunker chunker;
  TextNormalizer normalizer;
  const std::string answer =
      "Thanks for waiting on the line, your order #A12345 shipped on 03/05/2024. It cost $12.50.";
  std::vector<std::string> spoken;
  size_t samples = 0;
  auto speak = [&](const std::string& chunk) {
    spoken.push_back(normalizer.Normalize(chunk));
    auto audio = SynthesizeToBuffer(**synth, spoken.back());
    ASSERT_TRUE(audio.ok()) << audio.status();
    EXPECT_GT(audio->size(), 4000u) << spoken.back();
    samples += audio->size();
  };
  for (size_t at = 0; at < answer.size(); at += 5) {
    for (const auto& c : chunker.Push(answer.substr(at, 5))) speak(c);
  }
  for (const auto& c : chunker.Flush()) speak(c);
  ASSERT_EQ(spoken.size(), 3u);
  EXPECT_EQ(spoken[0], "Thanks for waiting on the line,");
  EXPECT_EQ(spoken[1],
            "your order number A one two three four five shipped on March fifth, twenty "
            "twenty-four.");
  EXPECT_EQ(spoken[2], "It cost twelve dollars and fifty cents.");
  EXPECT_GT(static_cast<double>(samples) / 16000.0, 5.0);
}

}  // namespace
}  // namespace hotline::tts
