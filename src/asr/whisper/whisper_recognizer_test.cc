// The whisper backend over random-weight Whisper models: real vocabulary (whisper.cpp's
// for-tests-ggml-tiny.bin from the shared data; skipped without it), small or real shapes.
// Random weights make the words meaningless: these tests check shapes, bounds, partials, errors
// and timing, not recognition.
#include "asr/whisper/whisper_recognizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "audio/resampler.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "engine/compute_pool.h"
#include "engine/gguf.h"
#include "engine/vocab.h"
#include "engine/whisper_forward.h"
#include "engine/whisper_ggml.h"
#include "engine/whisper_model.h"
#include "engine/whisper_test_util.h"

namespace hotline::asr {
namespace {

using engine::GgmlType;
using engine::WhisperHparams;

const char* kGoForward = "/usr/share/pocketsphinx/test/data/goforward.raw";

std::string TinyBin(bool english) {
  return std::string(HOTLINE_SHARED_DATA_DIR) + "/asr/whisper/" +
         (english ? "for-tests-ggml-tiny.en.bin" : "for-tests-ggml-tiny.bin");
}

// Per-process folder (CTest runs each test as its own process, several at once), removed at exit.
struct TempDir {
  TempDir() {
    path = std::string(HOTLINE_BINARY_DIR) + "/test-tmp/asr-whisper-" + std::to_string(::getpid());
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};
const TempDir& Dir() {
  static TempDir dir;
  return dir;
}

// Small but complete: a real 30 s audio window and 448-token text context, one layer of 64.
WhisperHparams SmallHparams(int n_vocab) {
  WhisperHparams hp = engine::testing::SmallWhisperHparams(64, 2);
  hp.n_vocab = n_vocab;
  hp.n_audio_ctx = 1500;
  hp.n_text_ctx = 448;
  return hp;
}

// Real shapes (whisper.cpp's ggml-tiny / ggml-base): state, heads, layers.
WhisperHparams RealHparams(int state, int heads, int layers) {
  WhisperHparams hp = SmallHparams(51865);
  hp.n_audio_state = hp.n_text_state = state;
  hp.n_audio_head = hp.n_text_head = heads;
  hp.n_audio_layer = hp.n_text_layer = layers;
  return hp;
}

// Writes a random-weight model with the real vocabulary of for-tests-ggml-tiny(.en).bin; "" when
// the shared data is absent. Cached per process.
std::string Model(const std::string& name, bool english, GgmlType type,
                  WhisperHparams hp = SmallHparams(0)) {
  static std::map<std::string, std::string> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  const std::string bin = TinyBin(english);
  if (!std::filesystem::exists(bin)) return cache[name] = "";
  const std::string path = Dir().path + "/" + name + ".gguf";
  Status s = engine::testing::WriteRandomWhisperWithVocab(bin, hp, type, path);
  EXPECT_TRUE(s.ok()) << s;
  return cache[name] = s.ok() ? path : "";
}

#define REQUIRE_MODEL(var, ...)                                            \
  const std::string var = Model(__VA_ARGS__);                              \
  if (var.empty()) {                                                       \
    GTEST_SKIP() << "missing whisper.cpp's for-tests-ggml-tiny.bin under " \
                    "../shared/data/asr/whisper (the shared data sets)";   \
  }

AsrConfig WhisperAsr(const std::string& model) {
  AsrConfig c;
  c.backend = "whisper";
  c.whisper.model_path = model;
  c.whisper.max_tokens = 16;  // random weights rarely stop by themselves
  return c;
}

audio::AudioBuffer GoForward(int rate_hz) {
  auto raw = audio::ReadRawFile(kGoForward, 16000);
  EXPECT_TRUE(raw.ok()) << raw.status();
  if (!raw.ok()) return {};
  if (rate_hz == 16000) return std::move(raw->audio);
  auto r = audio::Resample(raw->audio, rate_hz);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : audio::AudioBuffer{};
}

// Feeds `pcm` in 20 ms frames.
Status Feed(RecognizerStream& stream, const audio::AudioBuffer& pcm,
            size_t max_samples = SIZE_MAX) {
  const size_t frame = audio::SamplesForMs(pcm.sample_rate_hz, 20);
  const size_t n = std::min(pcm.size(), max_samples);
  for (size_t i = 0; i < n; i += frame) {
    RETURN_IF_ERROR(stream.AcceptFrames(
        audio::AudioView(std::span<const int16_t>(pcm.samples).subspan(i, std::min(frame, n - i)),
                         pcm.sample_rate_hz)));
  }
  return Status::Ok();
}

WhisperRecognizer& AsWhisper(Recognizer& r) { return static_cast<WhisperRecognizer&>(r); }

void ExpectWellFormed(const AsrResult& r) {
  EXPECT_GE(r.confidence, 0.0f);
  EXPECT_LE(r.confidence, 1.0f);
  std::string joined;
  for (const AsrWord& w : r.words) {
    EXPECT_FALSE(w.word.empty());
    EXPECT_EQ(w.word.find(' '), std::string::npos);
    EXPECT_GE(w.confidence, 0.0f);
    EXPECT_LE(w.confidence, 1.0f);
    for (char c : w.word) EXPECT_FALSE(c >= 'A' && c <= 'Z') << w.word;
    if (!joined.empty()) joined += ' ';
    joined += w.word;
  }
  EXPECT_EQ(r.text, joined);
}

// ---- config ------------------------------------------------------------------------------------

TEST(WhisperConfig, ValidationNamesTheProblem) {
  // The section alone is valid without a model: another backend may be in use.
  WhisperConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.model_path = "m.gguf";
  EXPECT_TRUE(c.Validate().ok());
  auto bad = [&](auto edit, const char* needle) {
    WhisperConfig b = c;
    edit(b);
    Status st = b.Validate();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << needle;
    EXPECT_NE(st.message().find(needle), std::string::npos) << st;
  };
  bad([](WhisperConfig& b) { b.max_utterance_s = 31; }, "30 s window");
  bad([](WhisperConfig& b) { b.max_utterance_s = 0; }, "max_utterance_s");
  bad([](WhisperConfig& b) { b.partial_interval_ms = 50; }, "0 (no partials)");
  bad([](WhisperConfig& b) { b.max_tokens = 0; }, "max_tokens");
  bad([](WhisperConfig& b) { b.max_tokens = 300; }, "max_tokens");
  bad([](WhisperConfig& b) { b.threads = 0; }, "threads");
  bad([](WhisperConfig& b) { b.max_streams = 0; }, "max_streams");
  bad([](WhisperConfig& b) { b.temperature_fallback = true; }, "not implemented");
  bad([](WhisperConfig& b) { b.no_speech_threshold = 1.5; }, "no_speech_threshold");
  bad([](WhisperConfig& b) { b.language = ""; }, "auto");
  WhisperConfig none = c;
  none.partial_interval_ms = 0;
  EXPECT_TRUE(none.Validate().ok());
}

TEST(WhisperConfig, BackendIsAccepted) {
  AsrConfig c;
  c.backend = "whisper";
  // Chosen, it needs a model, and the error says how to make one.
  Status missing = c.Validate();
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("convert-whisper"), std::string::npos) << missing;
  c.whisper.model_path = "m.gguf";
  EXPECT_TRUE(c.Validate().ok());
  c.backend = "vosk";
  Status s = c.Validate();
  EXPECT_NE(s.message().find("'whisper'"), std::string::npos) << s;
}

TEST(WhisperRecognizer, MissingModelPathSaysHowToMakeOne) {
  AsrConfig c;
  c.backend = "whisper";
  auto r = CreateRecognizer(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("whisper.model_path"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("hotline engine convert-whisper"), std::string::npos);
}

TEST(WhisperRecognizer, BadModelFilesAreNamed) {
  auto absent = CreateRecognizer(WhisperAsr(Dir().path + "/absent.gguf"));
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  EXPECT_NE(absent.status().message().find("absent.gguf"), std::string::npos) << absent.status();
  EXPECT_NE(absent.status().message().find("convert-whisper"), std::string::npos);

  const std::string junk = Dir().path + "/junk.gguf";
  std::ofstream(junk) << "this is not a model file, just some words to fill it up a bit....";
  auto bad = CreateRecognizer(WhisperAsr(junk));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("junk.gguf"), std::string::npos) << bad.status();

  // A Whisper GGUF without a vocabulary (random weights, no tokenizer keys).
  engine::testing::RandomWhisperSpec spec;
  spec.hp = engine::testing::SmallWhisperHparams(64, 2);
  const std::string novocab = Dir().path + "/novocab.gguf";
  ASSERT_TRUE(engine::testing::WriteRandomWhisper(spec, novocab).ok());
  auto nv = CreateRecognizer(WhisperAsr(novocab));
  ASSERT_FALSE(nv.ok());
  EXPECT_NE(nv.status().message().find("tokenizer"), std::string::npos) << nv.status();
}

TEST(WhisperRecognizer, ModelBoundsAreChecked) {
  // 12 audio positions hold 0.24 s: a 30 s utterance bound cannot be met.
  WhisperHparams hp = SmallHparams(51865);
  hp.n_audio_ctx = 12;
  REQUIRE_MODEL(path, "short_ctx", false, GgmlType::F32, hp);
  auto r = CreateRecognizer(WhisperAsr(path));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max_utterance_s"), std::string::npos) << r.status();
}

TEST(WhisperRecognizer, LanguageChecks) {
  REQUIRE_MODEL(multi, "small", false, GgmlType::F32);
  AsrConfig c = WhisperAsr(multi);
  c.whisper.language = "xx";
  auto r = CreateRecognizer(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("asr.whisper.language"), std::string::npos) << r.status();
  for (const char* ok : {"zh", "auto", "en"}) {
    c.whisper.language = ok;
    EXPECT_TRUE(CreateRecognizer(c).ok()) << ok;
  }
  REQUIRE_MODEL(en, "small_en", true, GgmlType::F32);
  c = WhisperAsr(en);
  c.whisper.language = "zh";
  r = CreateRecognizer(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("English-only"), std::string::npos) << r.status();
  c.whisper.language = "auto";
  auto en_ok = CreateRecognizer(c);
  ASSERT_TRUE(en_ok.ok()) << en_ok.status();
  auto stream = (*en_ok)->CreateStream(16000);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(Feed(**stream, GoForward(16000), 16000).ok());
  auto result = (*stream)->Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectWellFormed(*result);
}

// ---- decoding ----------------------------------------------------------------------------------

void TranscribeAt(int rate_hz, const char* language) {
  REQUIRE_MODEL(path, "small", false, GgmlType::F32);
  AsrConfig c = WhisperAsr(path);
  c.whisper.partial_interval_ms = 0;
  c.whisper.language = language;
  auto r = CreateRecognizer(c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->name(), "whisper");
  auto stream = (*r)->CreateStream(rate_hz);
  ASSERT_TRUE(stream.ok()) << stream.status();
  const audio::AudioBuffer pcm = GoForward(rate_hz);
  ASSERT_GT(pcm.size(), 0u);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Feed(**stream, pcm).ok());
  auto result = (*stream)->Finish();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectWellFormed(*result);
  EXPECT_NEAR(static_cast<double>(result->audio_ms), pcm.duration_s() * 1000, 2);
  const WhisperRecognizerStats st = AsWhisper(**r).stats();
  EXPECT_EQ(st.passes_final, 1u);
  EXPECT_EQ(st.passes_partial, 0u);
  EXPECT_GE(st.tokens_decoded, 1u);
  EXPECT_LE(st.tokens_decoded, 16u);
  EXPECT_LE(result->words.size(), 16u);
  std::printf("[ whisper ] %d Hz %s: %.0f ms audio, %.1f ms, %llu tokens, \"%s\"\n", rate_hz,
              language, pcm.duration_s() * 1000, ms,
              static_cast<unsigned long long>(st.tokens_decoded), result->text.c_str());
  // Finished streams take nothing more.
  EXPECT_EQ((*stream)->Finish().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*stream)->AcceptFrames(audio::AudioView(pcm)).code(), StatusCode::kFailedPrecondition);
}

TEST(WhisperRecognizer, TranscribesA16kHzRecording) { TranscribeAt(16000, "en"); }
TEST(WhisperRecognizer, TranscribesAn8kHzRecording) { TranscribeAt(8000, "en"); }
TEST(WhisperRecognizer, DetectsTheLanguage) { TranscribeAt(16000, "auto"); }

TEST(WhisperRecognizer, EmptyStreamGivesEmptyResult) {
  REQUIRE_MODEL(path, "small", false, GgmlType::F32);
  auto r = CreateRecognizer(WhisperAsr(path));
  ASSERT_TRUE(r.ok()) << r.status();
  auto stream = (*r)->CreateStream(8000);
  ASSERT_TRUE(stream.ok());
  auto result = (*stream)->Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->text, "");
  EXPECT_EQ(result->audio_ms, 0);
}

TEST(WhisperRecognizer, RejectsOtherRates) {
  REQUIRE_MODEL(path, "small", false, GgmlType::F32);
  auto r = CreateRecognizer(WhisperAsr(path));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->CreateStream(44100).status().code(), StatusCode::kInvalidArgument);
  auto stream = (*r)->CreateStream(16000);
  ASSERT_TRUE(stream.ok());
  std::vector<int16_t> frame(160);
  EXPECT_EQ((*stream)->AcceptFrames(audio::AudioView(frame, 8000)).code(),
            StatusCode::kInvalidArgument);
}

TEST(WhisperRecognizer, PartialsEveryInterval) {
  REQUIRE_MODEL(path, "small", false, GgmlType::F32);
  AsrConfig c = WhisperAsr(path);
  c.whisper.partial_interval_ms = 500;
  c.whisper.max_tokens = 8;
  auto r = CreateRecognizer(c);
  ASSERT_TRUE(r.ok()) << r.status();
  auto stream = (*r)->CreateStream(8000);
  ASSERT_TRUE(stream.ok());
  const audio::AudioBuffer pcm = GoForward(8000);
  // 2.1 s: passes at 0.5, 1.0, 1.5 and 2.0 s (8 kHz input is counted after resampling, whose
  // look-ahead holds back a few ms).
  ASSERT_TRUE(Feed(**stream, pcm, 8000 * 21 / 10).ok());
  WhisperRecognizerStats st = AsWhisper(**r).stats();
  EXPECT_EQ(st.passes_partial, 4u);
  EXPECT_EQ(st.passes_final, 0u);
  const AsrPartial& p = (*stream)->partial();
  std::printf("[ whisper ] partial after 2.1 s: \"%s\" stable=%d revision=%llu\n", p.text.c_str(),
              p.stable ? 1 : 0, static_cast<unsigned long long>(p.revision));
  for (char ch : p.text) EXPECT_FALSE(ch >= 'A' && ch <= 'Z');
  if (p.stable) {
    EXPECT_FALSE(p.text.empty());
  }
  auto result = (*stream)->Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectWellFormed(*result);
  EXPECT_EQ(AsWhisper(**r).stats().passes_final, 1u);
}

TEST(WhisperRecognizer, MaxUtteranceIsEnforced) {
  REQUIRE_MODEL(path, "small", false, GgmlType::F32);
  AsrConfig c = WhisperAsr(path);
  c.whisper.max_utterance_s = 1;
  c.whisper.partial_interval_ms = 0;
  auto r = CreateRecognizer(c);
  ASSERT_TRUE(r.ok()) << r.status();
  for (int rate : {16000, 8000}) {
    auto stream = (*r)->CreateStream(rate);
    ASSERT_TRUE(stream.ok());
    const audio::AudioBuffer pcm = GoForward(rate);
    ASSERT_TRUE(Feed(**stream, pcm, static_cast<size_t>(rate)).ok());  // exactly 1 s
    Status s = Feed(**stream, pcm, audio::SamplesForMs(rate, 20));
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
    EXPECT_NE(s.message().find("max_utterance_s = 1 s"), std::string::npos) << s;
    auto result = (*stream)->Finish();  // what was accepted is still decoded
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->audio_ms, 1000);
  }
}

TEST(WhisperRecognizer, MaxStreamsIsEnforced) {
  REQUIRE_MODEL(path, "small", false, GgmlType::F32);
  AsrConfig c = WhisperAsr(path);
  c.whisper.max_streams = 2;
  auto r = CreateRecognizer(c);
  ASSERT_TRUE(r.ok()) << r.status();
  auto a = (*r)->CreateStream(16000);
  auto b = (*r)->CreateStream(8000);
  ASSERT_TRUE(a.ok() && b.ok());
  auto third = (*r)->CreateStream(16000);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("asr.whisper.max_streams"), std::string::npos);
  a->reset();
  auto again = (*r)->CreateStream(16000);
  EXPECT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(AsWhisper(**r).slots(), 2);
}

TEST(WhisperRecognizer, QuantizedModelDecodes) {
  REQUIRE_MODEL(path, "small_q8", false, GgmlType::Q8_0);
  AsrConfig c = WhisperAsr(path);
  c.whisper.threads = 2;
  auto r = CreateRecognizer(c);
  ASSERT_TRUE(r.ok()) << r.status();
  auto stream = (*r)->CreateStream(16000);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(Feed(**stream, GoForward(16000)).ok());
  auto result = (*stream)->Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectWellFormed(*result);
}

// ---- text --------------------------------------------------------------------------------------

std::vector<AsrWord> Words(std::string_view text) {
  std::vector<size_t> begin = {0, text.size()};
  std::vector<float> prob = {0.5f};
  return WhisperTextToWords(text, begin, prob);
}

std::string Joined(std::string_view text) {
  std::string out;
  for (const AsrWord& w : Words(text)) out += (out.empty() ? "" : " ") + w.word;
  return out;
}

TEST(WhisperTextToWords, NormalizesLikeTheContract) {
  EXPECT_EQ(Joined(" Hello, World! It's 10 o'clock."), "hello world it's 10 o'clock");
  EXPECT_EQ(Joined(" The dogs' toys - \"quoted\" (aside)"), "the dogs toys quoted aside");
  EXPECT_EQ(Joined(" I’m fine"), "i'm fine");
  EXPECT_EQ(Joined("'cause"), "cause");
  EXPECT_EQ(Joined("你好，我想查一下话费。"), "你好 我想查一下话费");
  EXPECT_EQ(Joined("我的iPhone坏了"), "我的 iphone 坏了");
  EXPECT_EQ(Joined(" Café Zoë"), "café zoë");
  EXPECT_EQ(Joined("  ...  "), "");
  EXPECT_EQ(Joined("bad\xE4\xBD utf"), "bad utf");
}

TEST(WhisperTextToWords, WordConfidenceIsTheMeanOfItsTokens) {
  // " Hel" "lo" "," " world": "hello" = mean(0.2, 0.4), "world" = 0.9; "," belongs to no word.
  const std::string text = " Hello, world";
  std::vector<size_t> begin = {0, 4, 6, 7, text.size()};
  std::vector<float> prob = {0.2f, 0.4f, 0.1f, 0.9f};
  std::vector<AsrWord> w = WhisperTextToWords(text, begin, prob);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].word, "hello");
  EXPECT_NEAR(w[0].confidence, 0.3f, 1e-6);
  EXPECT_EQ(w[1].word, "world");
  EXPECT_NEAR(w[1].confidence, 0.9f, 1e-6);
  // A character split over two tokens: both count.
  const std::string han = "你好";  // 6 bytes; tokens split inside the first character
  std::vector<size_t> hb = {0, 2, 6};
  std::vector<float> hp = {0.2f, 0.6f};
  w = WhisperTextToWords(han, hb, hp);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NEAR(w[0].confidence, 0.4f, 1e-6);
}

TEST(WhisperLoopLength, FindsTheShortestRepeatedTail) {
  using V = std::vector<int32_t>;
  EXPECT_EQ(WhisperLoopLength(V{}), 0);
  EXPECT_EQ(WhisperLoopLength(V{5, 5}), 0);
  EXPECT_EQ(WhisperLoopLength(V{1, 5, 5, 5}), 1);
  EXPECT_EQ(WhisperLoopLength(V{1, 2, 3, 2, 3, 2, 3}), 2);
  EXPECT_EQ(WhisperLoopLength(V{1, 2, 3, 2, 3, 2}), 0);  // the third copy is not complete yet
  EXPECT_EQ(WhisperLoopLength(V{7, 8, 9, 7, 8, 9, 7, 8, 9}), 3);
  V long_loop;
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 33; ++i) long_loop.push_back(i);
  }
  EXPECT_EQ(WhisperLoopLength(long_loop), 0);  // longer n-grams are not searched
}

// ---- measurement (run by hand: --gtest_also_run_disabled_tests) --------------------------------

// Random weights of the real tiny and base shapes, Q8_0: the time of Finish() on 3 s of speech
// with 1 and 2 threads, and streaming with partials every 500 ms. Greedy decoding of random
// weights runs to max_tokens, so the per-token cost is printed to scale to a real model's
// ~10-20 tokens.
TEST(WhisperRecognizer, DISABLED_MeasureRealShapes) {
  struct Shape {
    const char* name;
    int state, heads, layers;
  };
  const audio::AudioBuffer all = GoForward(16000);
  audio::AudioBuffer pcm;
  pcm.sample_rate_hz = 16000;
  pcm.samples.assign(all.samples.begin(),
                     all.samples.begin() + std::min<size_t>(all.size(), 48000));
  for (const Shape& shape : {Shape{"tiny", 384, 6, 4}, Shape{"base", 512, 8, 6}}) {
    const auto w0 = std::chrono::steady_clock::now();
    REQUIRE_MODEL(path, std::string("real_") + shape.name, false, GgmlType::Q8_0,
                  RealHparams(shape.state, shape.heads, shape.layers));
    std::printf("[ measure ] %s: model written in %.1f s\n", shape.name,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    // HOTLINE_WHISPER_KEEP=DIR keeps a copy (DIR/random-tiny.gguf ...) to try the CLI with.
    if (const char* keep = std::getenv("HOTLINE_WHISPER_KEEP"); keep != nullptr && *keep) {
      std::error_code ec;
      std::filesystem::copy_file(path, std::string(keep) + "/random-" + shape.name + ".gguf",
                                 std::filesystem::copy_options::overwrite_existing, ec);
      EXPECT_FALSE(ec) << ec.message();
    }
    // Steady-state cost of one decoder step (50 tokens after the prompt, on 3 s of audio) and
    // of the per-step log-softmax the recognizer adds, straight on the engine.
    {
      auto model = engine::WhisperModel::Load(path);
      ASSERT_TRUE(model.ok()) << model.status();
      for (int threads : {1, 2}) {
        engine::ComputePool pool(threads);
        engine::WhisperEncoder enc(**model, pool);
        engine::WhisperDecoder dec(**model, pool, 448);
        std::vector<float> audio_out, logits;
        const std::vector<float> mel = engine::testing::RandomMel(300, 80, 7);
        ASSERT_TRUE(enc.Encode(mel, 300, &audio_out).ok());
        ASSERT_TRUE(dec.SetAudio(audio_out, 150).ok());
        const std::vector<int32_t> prompt = {50258, 50259, 50359, 50363};
        ASSERT_TRUE(dec.Decode(prompt, &logits).ok());
        const auto t0 = std::chrono::steady_clock::now();
        const int steps = 50;
        for (int i = 0; i < steps; ++i) {
          const int32_t tok = 1000 + i;
          ASSERT_TRUE(dec.Decode(std::span<const int32_t>(&tok, 1), &logits).ok());
        }
        const auto t1 = std::chrono::steady_clock::now();
        double sink = 0;
        for (int i = 0; i < steps; ++i) {
          float m = *std::max_element(logits.begin(), logits.end());
          double sum = 0;
          for (float v : logits) sum += std::exp(static_cast<double>(v - m));
          sink += std::log(sum) + i;
        }
        const auto t2 = std::chrono::steady_clock::now();
        std::printf("[ measure ] %s threads=%d: decoder step %.2f ms, log-softmax %.3f ms (%g)\n",
                    shape.name, threads,
                    std::chrono::duration<double, std::milli>(t1 - t0).count() / steps,
                    std::chrono::duration<double, std::milli>(t2 - t1).count() / steps,
                    sink > 0 ? 1.0 : 0.0);
      }
    }
    for (int threads : {1, 2}) {
      for (int interval : {0, 500}) {
        AsrConfig c = WhisperAsr(path);
        c.whisper.max_tokens = 128;
        c.whisper.threads = threads;
        c.whisper.partial_interval_ms = interval;
        auto r = CreateRecognizer(c);
        ASSERT_TRUE(r.ok()) << r.status();
        for (int round = 0; round < 2; ++round) {  // the first grows the slot's workspaces
          auto stream = (*r)->CreateStream(16000);
          ASSERT_TRUE(stream.ok());
          const WhisperRecognizerStats before = AsWhisper(**r).stats();
          const auto t0 = std::chrono::steady_clock::now();
          ASSERT_TRUE(Feed(**stream, pcm).ok());
          const auto t1 = std::chrono::steady_clock::now();
          auto result = (*stream)->Finish();
          const auto t2 = std::chrono::steady_clock::now();
          ASSERT_TRUE(result.ok()) << result.status();
          const WhisperRecognizerStats st = AsWhisper(**r).stats();
          const double feed_s = std::chrono::duration<double>(t1 - t0).count();
          const double finish_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
          const uint64_t tokens = st.tokens_decoded - before.tokens_decoded;
          const uint64_t passes =
              (st.passes_final - before.passes_final) + (st.passes_partial - before.passes_partial);
          const double enc_ms = (st.encode_us - before.encode_us) / 1000.0;
          const double dec_ms = (st.decode_us - before.decode_us) / 1000.0;
          if (round == 0) continue;
          std::printf(
              "[ measure ] %s threads=%d partial=%d ms: Finish %.0f ms; %llu passes, %llu "
              "tokens, encode %.0f ms, decode %.0f ms (%.2f ms/token); RTF %.2f (feed %.2f s + "
              "finish, 3 s audio)\n",
              shape.name, threads, interval, finish_ms, static_cast<unsigned long long>(passes),
              static_cast<unsigned long long>(tokens), enc_ms, dec_ms,
              tokens > 0 ? dec_ms / static_cast<double>(tokens) : 0.0,
              (feed_s + finish_ms / 1000) / pcm.duration_s(), feed_s);
        }
      }
    }
  }
}

}  // namespace
}  // namespace hotline::asr
