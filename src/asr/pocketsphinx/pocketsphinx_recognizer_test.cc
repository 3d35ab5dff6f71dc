// Real speech through the real pocketsphinx decoder and US English model.
#include "asr/pocketsphinx/pocketsphinx_recognizer.h"

#include <string>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unordered_set>

#include "asr/lm_builder.h"
#include "audio/resampler.h"
#include "audio/wav.h"
#include "common/build_paths.h"

namespace hotline::asr {
namespace {

const char* kGoForward = "/usr/share/pocketsphinx/test/data/goforward.raw";
// Per-process folder: CTest runs each test as its own process, several at once.
const std::string kDir = [] {
  std::string d = std::string(HOTLINE_BINARY_DIR) + "/test-tmp/asr-" + std::to_string(::getpid());
  std::filesystem::create_directories(d);
  return d;
}();

// The full dictionary takes seconds to load into each decoder; tests use the generic model with
// the first 3000 dictionary entries plus the words they need (still thousands of competitors).
std::string SmallDictionary() {
  std::string path = kDir + "/asr_test_small.dict";
  std::ifstream in(PocketsphinxConfig{}.dictionary);
  std::ofstream out(path);
  std::string line;
  for (int i = 0; i < 3000 && std::getline(in, line); ++i) out << line << "\n";
  std::unordered_set<std::string> need = {"go", "forward", "ten", "meters", "back", "five",
                                          "turn", "left", "two", "stop"};
  std::string tmp = kDir + "/asr_test_need.dict";
  EXPECT_TRUE(WriteDictionarySubset(PocketsphinxConfig{}.dictionary, need, tmp).ok());
  std::ifstream extra(tmp);
  while (std::getline(extra, line)) out << line << "\n";
  return path;
}

// A switched domain model with its own dictionary, as `hotline asr build-lm` writes them.
AsrConfig DomainConfig(const std::string& mode = "switched") {
  std::string path = kDir + "/asr_test_domain.lm";
  NgramLmBuilder b(3);
  for (const char* t : {"go forward ten meters", "go back five meters", "turn left",
                        "go forward two meters", "stop"}) {
    b.AddText(t);
  }
  auto arpa = b.ToArpa();
  EXPECT_TRUE(arpa.ok());
  std::ofstream(path) << *arpa;
  EXPECT_TRUE(WriteDictionarySubset(PocketsphinxConfig{}.dictionary, b.vocabulary(), path + ".dict").ok());
  AsrConfig config;
  config.pocketsphinx.domain_lm = path;
  config.pocketsphinx.lm_mode = mode;
  config.pocketsphinx.dictionary = mode == "switched" ? path + ".dict" : SmallDictionary();
  return config;
}

audio::AudioBuffer GoForward() {
  auto d = audio::ReadRawFile(kGoForward, 16000);
  EXPECT_TRUE(d.ok()) << d.status() << " (install pocketsphinx-testdata)";
  return d.ok() ? d->audio : audio::AudioBuffer();
}

Result<AsrResult> Transcribe(Recognizer& r, const audio::AudioBuffer& a, AsrPartial* last = nullptr) {
  ASSIGN_OR_RETURN(auto stream, r.CreateStream(a.sample_rate_hz));
  const size_t frame = audio::SamplesForMs(a.sample_rate_hz, 20);
  for (size_t i = 0; i < a.size(); i += frame) {
    size_t n = std::min(frame, a.size() - i);
    RETURN_IF_ERROR(stream->AcceptFrames(
        audio::AudioView(std::span<const int16_t>(a.samples).subspan(i, n), a.sample_rate_hz)));
  }
  if (last) *last = stream->partial();
  return stream->Finish();
}

TEST(Pocketsphinx, GoForwardTenMetersAt16And8kHz) {
  AsrConfig config;
  config.pocketsphinx.dictionary = SmallDictionary();
  auto r = CreateRecognizer(config);
  ASSERT_TRUE(r.ok()) << r.status();
  auto audio = GoForward();
  AsrPartial partial;
  auto result = Transcribe(**r, audio, &partial);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->text, "go forward ten meters");
  EXPECT_GT(partial.revision, 0u);
  EXPECT_EQ(partial.text.rfind("go forward", 0), 0u) << partial.text;
  ASSERT_EQ(result->words.size(), 4u);
  EXPECT_EQ(result->words[0].word, "go");
  EXPECT_LT(result->words[0].start_ms, result->words[3].end_ms);
  EXPECT_NEAR(result->words[3].end_ms, 2200, 300);
  EXPECT_NEAR(result->audio_ms, 2786, 20);
  EXPECT_GT(result->confidence, 0.0f);

  // Telephone rate: the same decoder (returned to the pool) takes 8 kHz audio.
  auto down = audio::Resampler::Create(16000, 8000);
  ASSERT_TRUE(down.ok());
  audio::AudioBuffer narrow({}, 8000);
  ASSERT_TRUE((*down)->Process(audio.samples, narrow.samples).ok());
  ASSERT_TRUE((*down)->Flush(narrow.samples).ok());
  result = Transcribe(**r, narrow);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->text, "go forward ten meters");
}

// Word confidences are frame posteriors from the lattice (asr/word_confidence.h): a clearly
// spoken utterance gets a high confidence every time its pooled decoder is reused, with the
// generic model alone and with a domain model. Word times count from the stream's start, not
// from the pooled decoder's first utterance.
TEST(Pocketsphinx, ConfidenceIsHighForClearSpeechOnEveryReuse) {
  for (const char* mode : {"generic", "interpolated", "switched"}) {
    AsrConfig config = std::string(mode) == "generic" ? AsrConfig() : DomainConfig(mode);
    if (std::string(mode) == "generic") config.pocketsphinx.dictionary = SmallDictionary();
    config.pocketsphinx.max_streams = 1;
    auto r = CreateRecognizer(config);
    ASSERT_TRUE(r.ok()) << r.status();
    auto audio = GoForward();
    for (int round = 0; round < 3; ++round) {
      auto result = Transcribe(**r, audio);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->text, "go forward ten meters") << mode;
      std::string words;
      for (const AsrWord& w : result->words) words += w.word + "=" + std::to_string(w.confidence) + " ";
      EXPECT_GT(result->confidence, 0.5f) << mode << " round " << round << ": " << words;
      for (const AsrWord& w : result->words) {
        EXPECT_GE(w.confidence, 0.0f);
        EXPECT_LE(w.confidence, 1.0f);
      }
      ASSERT_EQ(result->words.size(), 4u);
      EXPECT_LT(result->words[3].end_ms, result->audio_ms) << mode << " round " << round;
    }
  }
}

TEST(Pocketsphinx, StreamsRunInParallelAndAreBounded) {
  AsrConfig config = DomainConfig();
  config.pocketsphinx.max_streams = 2;
  auto made = PocketsphinxRecognizer::Create(config.pocketsphinx, config.stable_ms);
  ASSERT_TRUE(made.ok()) << made.status();
  auto& r = **made;
  auto audio = GoForward();
  std::string texts[2];
  std::thread t0([&] { auto x = Transcribe(r, audio); texts[0] = x.ok() ? x->text : x.status().ToString(); });
  std::thread t1([&] { auto x = Transcribe(r, audio); texts[1] = x.ok() ? x->text : x.status().ToString(); });
  t0.join();
  t1.join();
  EXPECT_EQ(texts[0], "go forward ten meters");
  EXPECT_EQ(texts[1], "go forward ten meters");
  EXPECT_EQ(r.decoders(), 2);
  auto s1 = r.CreateStream(16000);
  auto s2 = r.CreateStream(16000);
  ASSERT_TRUE(s1.ok() && s2.ok());
  auto s3 = r.CreateStream(16000);
  EXPECT_EQ(s3.status().code(), StatusCode::kResourceExhausted);
  s1->reset();  // returns its decoder
  EXPECT_TRUE(r.CreateStream(16000).ok());
  EXPECT_FALSE(r.CreateStream(44100).ok());
}

TEST(Pocketsphinx, DomainModelSwitchedAndInterpolated) {
  for (const char* mode : {"switched", "interpolated"}) {
    auto r = CreateRecognizer(DomainConfig(mode));
    ASSERT_TRUE(r.ok()) << r.status();
    auto result = Transcribe(**r, GoForward());
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->text, "go forward ten meters") << mode;
  }
}

TEST(Pocketsphinx, ClearErrors) {
  AsrConfig config;
  config.pocketsphinx.acoustic_model = "/nonexistent/model";
  auto r = CreateRecognizer(config);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  config = AsrConfig{};
  config.pocketsphinx.domain_lm = "/nonexistent.lm";
  EXPECT_FALSE(CreateRecognizer(config).ok());
  config = AsrConfig{};
  config.backend = "kaldi";
  EXPECT_EQ(CreateRecognizer(config).status().code(), StatusCode::kInvalidArgument);
  // A file that is not a language model.
  std::string path = kDir + "/asr_test_bad.lm";
  std::ofstream(path) << "this is not an ARPA file\n";
  config = DomainConfig();
  config.pocketsphinx.domain_lm = path;
  EXPECT_FALSE(CreateRecognizer(config).ok());
  std::remove(path.c_str());
}

TEST(Pocketsphinx, FinishedStreamRefusesAudio) {
  auto r = CreateRecognizer(DomainConfig());
  ASSERT_TRUE(r.ok());
  auto s = (*r)->CreateStream(16000);
  ASSERT_TRUE(s.ok());
  auto result = (*s)->Finish();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->text, "");
  std::vector<int16_t> frame(320, 0);
  EXPECT_EQ((*s)->AcceptFrames(audio::AudioView(frame, 16000)).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE((*s)->Finish().ok());
}

}  // namespace
}  // namespace hotline::asr
