// The openai backend against a loopback server speaking /v1/audio/speech.
#include "tts/openai/openai_synthesizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <thread>

#include "net/testing/loopback_http_server.h"

namespace hotline::tts {
namespace {

using net::testing::LoopbackHttpServer;
using net::testing::LoopbackRequest;
using net::testing::LoopbackResponder;

// A 440 Hz tone as the server's "speech", 24 kHz PCM16 little-endian.
std::string TonePcm(int samples) {
  std::string out;
  for (int i = 0; i < samples; ++i) {
    auto v = static_cast<int16_t>(8000 * std::sin(2 * M_PI * 440 * i / 24000.0));
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>((v >> 8) & 0xff));
  }
  return out;
}

std::string WavHeader(int rate, uint32_t data_bytes) {
  auto le32 = [](uint32_t v) {
    return std::string{static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 24)};
  };
  auto le16 = [](uint16_t v) { return std::string{static_cast<char>(v), static_cast<char>(v >> 8)}; };
  return "RIFF" + le32(36 + data_bytes) + "WAVE" + "fmt " + le32(16) + le16(1) + le16(1) +
         le32(rate) + le32(rate * 2) + le16(2) + le16(16) + "LIST" + le32(4) + "INFO" + "data" +
         le32(data_bytes);
}

struct Server {
  std::unique_ptr<LoopbackHttpServer> http;
  nlohmann::json last_request;
  std::string last_auth;
};

std::unique_ptr<Synthesizer> Make(const std::string& url, const std::string& format = "pcm") {
  TtsConfig cfg;
  cfg.backend = "openai";
  cfg.openai.url = url;
  cfg.openai.response_format = format;
  cfg.openai.api_key_env = "HOTLINE_TEST_TTS_KEY";
  auto s = CreateSynthesizer(cfg);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

TEST(OpenAiSynthesizer, StreamsPcmInFixedChunksAndSendsTheRightRequest) {
  setenv("HOTLINE_TEST_TTS_KEY", "sk-test", 1);
  nlohmann::json seen;
  std::string target, auth;
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    seen = nlohmann::json::parse(req.body, nullptr, false);
    target = req.target;
    auth = req.Header("Authorization");
    r.BeginChunked(200, "audio/pcm");
    std::string pcm = TonePcm(24000);  // 1 s, sent in odd-sized pieces
    for (size_t at = 0; at < pcm.size(); at += 1001) r.WriteChunk(pcm.substr(at, 1001));
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  auto synth = Make((*server)->Url("/v1"));
  EXPECT_EQ(synth->voice_id(), "openai/tts-1/alloy");
  EXPECT_EQ(synth->sample_rate_hz(), 24000);
  std::vector<int16_t> all;
  std::vector<size_t> sizes;
  Status s = synth->Synthesize("Hello there.", [&](std::span<const int16_t> c) {
    sizes.push_back(c.size());
    all.insert(all.end(), c.begin(), c.end());
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(target, "/v1/audio/speech");
  EXPECT_EQ(auth, "Bearer sk-test");
  EXPECT_EQ(seen["model"], "tts-1");
  EXPECT_EQ(seen["input"], "Hello there.");
  EXPECT_EQ(seen["voice"], "alloy");
  EXPECT_EQ(seen["response_format"], "pcm");
  ASSERT_EQ(all.size(), 24000u);
  EXPECT_EQ(all[6], static_cast<int16_t>(8000 * std::sin(2 * M_PI * 440 * 6 / 24000.0)));
  for (size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_EQ(sizes[i], 960u);  // 40 ms at 24 kHz
  unsetenv("HOTLINE_TEST_TTS_KEY");
}

TEST(OpenAiSynthesizer, ParsesStreamingWavAndChecksItsRate) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    int rate = req.body.find("wrong-rate") != std::string::npos ? 22050 : 24000;
    std::string wav = WavHeader(rate, 0xFFFFFFFF) + TonePcm(4800);  // open-ended data size
    r.BeginChunked(200, "audio/wav");
    for (size_t at = 0; at < wav.size(); at += 7) r.WriteChunk(wav.substr(at, 7));
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  auto synth = Make((*server)->Url("/v1"), "wav");
  auto audio = SynthesizeToBuffer(*synth, "Short.");
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->size(), 4800u);
  auto wrong = SynthesizeToBuffer(*synth, "wrong-rate");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("pcm_sample_rate_hz=22050"), std::string::npos)
      << wrong.status();
}

TEST(OpenAiSynthesizer, ServerErrorsAndGarbage) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    if (req.body.find("busy") != std::string::npos) {
      r.Send(503, "application/json", "{\"error\":\"overloaded\"}");
    } else if (req.body.find("bad") != std::string::npos) {
      r.Send(400, "application/json", "{\"error\":\"unknown voice\"}");
    } else {
      r.Send(200, "audio/wav", "this is not a wav file at all");
    }
  });
  ASSERT_TRUE(server.ok());
  auto synth = Make((*server)->Url("/v1"), "wav");
  auto busy = SynthesizeToBuffer(*synth, "busy");
  EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(busy.status().message().find("overloaded"), std::string::npos);
  EXPECT_EQ(SynthesizeToBuffer(*synth, "bad").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SynthesizeToBuffer(*synth, "garbage").status().code(), StatusCode::kDataLoss);
}

TEST(OpenAiSynthesizer, CancelStopsMidStream) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "audio/pcm");
    std::string piece = TonePcm(960);
    for (int i = 0; i < 300; ++i) {  // 12 s of audio, 40 ms every 5 ms
      if (!r.WriteChunk(piece)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  auto synth = Make((*server)->Url("/v1"));
  CancelToken cancel;
  int chunks = 0;
  Status s = synth->Synthesize(
      "long answer",
      [&](std::span<const int16_t>) {
        if (++chunks == 4) cancel.Cancel();
        return Status::Ok();
      },
      &cancel);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s;
  EXPECT_EQ(chunks, 4);
}

TEST(OpenAiSynthesizer, UnreachableServer) {
  TtsConfig cfg;
  cfg.backend = "openai";
  cfg.openai.url = "http://127.0.0.1:1/v1";
  auto synth = CreateSynthesizer(cfg);
  ASSERT_TRUE(synth.ok());
  EXPECT_EQ(SynthesizeToBuffer(**synth, "hello").status().code(), StatusCode::kUnavailable);
  cfg.openai.url = "ftp://api.openai.com/v1";
  EXPECT_FALSE(CreateSynthesizer(cfg).ok());
}

}  // namespace
}  // namespace hotline::tts
