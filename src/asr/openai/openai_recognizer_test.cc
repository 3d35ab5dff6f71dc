#include "asr/openai/openai_recognizer.h"

#include <gtest/gtest.h>

#include <mutex>

#include "net/testing/loopback_http_server.h"

namespace hotline::asr {
namespace {

using net::testing::LoopbackHttpServer;
using net::testing::LoopbackRequest;
using net::testing::LoopbackResponder;

std::vector<int16_t> Tone(size_t n) {
  std::vector<int16_t> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<int16_t>((i % 40) * 500 - 10000);
  return x;
}

TEST(OpenAiRecognizer, PostsTheUtteranceAsMultipartWav) {
  std::mutex mu;
  LoopbackRequest seen;
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen = req;
    }
    r.Send(200, "application/json", R"({"text":" Where is my order, please?"})");
  });
  ASSERT_TRUE(server.ok()) << server.status();
  AsrConfig config;
  config.backend = "openai";
  config.openai.url = (*server)->Url("/v1");
  config.openai.model = "whisper-large";
  auto r = CreateRecognizer(config);
  ASSERT_TRUE(r.ok()) << r.status();
  auto s = (*r)->CreateStream(8000);
  ASSERT_TRUE(s.ok());
  auto tone = Tone(8000);
  for (size_t i = 0; i < tone.size(); i += 160) {
    ASSERT_TRUE((*s)->AcceptFrames(audio::AudioView(std::span<const int16_t>(tone).subspan(i, 160), 8000)).ok());
  }
  EXPECT_TRUE((*s)->partial().text.empty());
  auto result = (*s)->Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->text, "where is my order please");
  EXPECT_EQ(result->audio_ms, 1000);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/v1/audio/transcriptions");
  EXPECT_NE(seen.Header("Content-Type").find("multipart/form-data; boundary="), std::string::npos);
  EXPECT_NE(seen.body.find("name=\"model\"\r\n\r\nwhisper-large\r\n"), std::string::npos);
  EXPECT_NE(seen.body.find("name=\"language\"\r\n\r\nen\r\n"), std::string::npos);
  EXPECT_NE(seen.body.find("filename=\"utterance.wav\""), std::string::npos);
  EXPECT_NE(seen.body.find("RIFF"), std::string::npos);
  EXPECT_GT(seen.body.size(), 16000u);  // 1 s of 8 kHz PCM16
}

TEST(OpenAiRecognizer, ServerErrorsBecomeStatuses) {
  int mode = 0;
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    if (mode == 0) r.Send(500, "text/plain", "model not loaded");
    if (mode == 1) r.Send(200, "application/json", "{\"txt\": 1}");
    if (mode == 2) r.Send(200, "application/json", "not json");
  });
  ASSERT_TRUE(server.ok());
  OpenAiAsrConfig config;
  config.url = (*server)->Url("/v1");
  auto r = OpenAiRecognizer::Create(config);
  ASSERT_TRUE(r.ok());
  auto tone = Tone(1600);
  for (int m = 0; m < 3; ++m) {
    mode = m;
    auto s = (*r)->CreateStream(16000);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->AcceptFrames(audio::AudioView(tone, 16000)).ok());
    auto result = (*s)->Finish();
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), m == 0 ? StatusCode::kUnavailable : StatusCode::kDataLoss)
        << result.status();
    if (m == 0) {
      EXPECT_NE(result.status().message().find("model not loaded"), std::string::npos);
    }
  }
}

TEST(OpenAiRecognizer, BoundsAndUnreachableServer) {
  OpenAiAsrConfig config;
  config.url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  config.timeout_ms = 500;
  config.max_utterance_s = 1;
  config.max_streams = 1;
  auto r = OpenAiRecognizer::Create(config);
  ASSERT_TRUE(r.ok());
  auto s = (*r)->CreateStream(8000);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*r)->CreateStream(8000).status().code(), StatusCode::kResourceExhausted);
  auto tone = Tone(8000);
  ASSERT_TRUE((*s)->AcceptFrames(audio::AudioView(tone, 8000)).ok());
  EXPECT_EQ((*s)->AcceptFrames(audio::AudioView(tone, 8000)).code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE((*s)->AcceptFrames(audio::AudioView(tone, 16000)).ok());
  auto result = (*s)->Finish();
  EXPECT_FALSE(result.ok());
  s->reset();
  EXPECT_TRUE((*r)->CreateStream(8000).ok());
  config.url = "ftp://api.example.com/v1";
  EXPECT_FALSE(OpenAiRecognizer::Create(config).ok());
  config.url = "https://api.example.com/v1";
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
  config.ca_file = "/nonexistent/hotline-ca.pem";
  EXPECT_NE(config.Validate().message().find("ca_file: '/nonexistent/hotline-ca.pem'"),
            std::string::npos)
      << config.Validate();
  config.ca_file.clear();
  config.url = "http://127.0.0.1:8000/v1";
  config.api_key_env = "HOTLINE_TEST_SURELY_UNSET_KEY";
  EXPECT_FALSE(OpenAiRecognizer::Create(config).ok());
}

TEST(OpenAiRecognizer, EmptyUtteranceNeedsNoRequest) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.Send(200, "application/json", R"({"text":"x"})");
  });
  ASSERT_TRUE(server.ok());
  OpenAiAsrConfig config;
  config.url = (*server)->Url("/v1");
  auto r = OpenAiRecognizer::Create(config);
  ASSERT_TRUE(r.ok());
  auto s = (*r)->CreateStream(16000);
  ASSERT_TRUE(s.ok());
  auto result = (*s)->Finish();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->text, "");
  EXPECT_EQ((*server)->requests(), 0);
}

}  // namespace
}  // namespace hotline::asr
