// End to end over real sockets: a Twilio Media Streams caller (own WebSocket client, real-time
// 8 kHz μ-law) talks to `/twilio` on a loopback HttpServer backed by the real call stack —
// pocketsphinx with a domain model built from the demo knowledge base, flite, the knowledge base
// in SQLite and the answer caches.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "answer/kb/knowledge_base.h"
#include "asr/lm_builder.h"
#include "asr/wer.h"
#include "audio/g711.h"
#include "caller_speech.h"
#include "common/build_paths.h"
#include "pipeline/call_stack.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/testing/twilio_caller.h"

namespace hotline {
namespace {

using server::testing::TwilioCaller;
using Ms = std::chrono::milliseconds;

const std::string kKbCsv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";

std::string Scratch(const std::string& name) {
  return "/tmp/hotline_e2e_" + std::to_string(getpid()) + "_" + name;
}

class TwilioCallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("HOTLINE_E2E_DEBUG")) spdlog::set_level(spdlog::level::debug);
    // Domain language model from the knowledge base's question phrasings and answers (the
    // answers so that the test can transcribe the agent's reply with the same recognizer).
    auto questions = asr::ReadTrainingTexts(kKbCsv, "questions");
    ASSERT_TRUE(questions.ok()) << questions.status();
    auto bodies = asr::ReadTrainingTexts(kKbCsv, "body");
    ASSERT_TRUE(bodies.ok()) << bodies.status();
    std::vector<std::string> texts = *bodies;
    for (const auto& q : *questions) {
      for (std::string& one : answer::SplitQuestions(q)) texts.push_back(std::move(one));
    }
    lm_path_ = Scratch("domain.lm");
    asr::PocketsphinxConfig ps;
    auto built = asr::WriteDomainLm(texts, ps.dictionary, lm_path_);
    ASSERT_TRUE(built.ok()) << built.status();

    pipeline::CallStackOptions o;
    o.asr.pocketsphinx.domain_lm = lm_path_;
    o.asr.pocketsphinx.dictionary = lm_path_ + ".dict";
    o.asr.pocketsphinx.lm_mode = "switched";
    o.kb_db = Scratch("kb.sqlite");
    o.kb_csv = kKbCsv;
    o.answer.kb_direct_min_score = 4.0;  // as config/hotline.yaml
    o.call.reprompt_after_ms = 60000;  // no re-prompts while a test waits
    auto stack = pipeline::CallStack::Build(o);
    ASSERT_TRUE(stack.ok()) << stack.status();
    stack_ = std::move(*stack).release();
  }
  static void TearDownTestSuite() {
    delete stack_;
    stack_ = nullptr;
    for (const auto& p : {lm_path_, lm_path_ + ".dict", Scratch("kb.sqlite")}) {
      std::filesystem::remove(p);
    }
  }

  void StartServer(int max_calls = 8) {
    server::ServerConfig sc;
    sc.port = 0;
    sc.max_ws_message_bytes = 64 << 10;
    auto srv = server::HttpServer::Create(sc);
    ASSERT_TRUE(srv.ok()) << srv.status();
    server_ = std::move(*srv);
    auto registry = std::make_shared<server::CallRegistry>(server::CallsConfig{.max_calls = max_calls});
    auto twilio =
        server::TwilioEndpoint::Create(stack_->resources(), server::TwilioConfig{}, &metrics_, registry);
    ASSERT_TRUE(twilio.ok()) << twilio.status();
    twilio_ = std::move(*twilio);
    ASSERT_TRUE(server_->HandleWebSocket("/twilio", twilio_->Factory()).ok());
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  // Connects, starts, and lets the greeting play out.
  std::unique_ptr<TwilioCaller> Call(const std::string& sid) {
    auto caller = std::make_unique<TwilioCaller>();
    EXPECT_TRUE(caller->Connect(server_->port(), "/twilio")) << caller->error();
    EXPECT_TRUE(caller->Start(sid, {{"caller", "+15550100"}}));
    EXPECT_TRUE(caller->WaitForAudio(TwilioCaller::Clock::now() - Ms(1), 15000).has_value())
        << "no greeting";
    EXPECT_TRUE(caller->WaitForQuiet(700, 20000));
    return caller;
  }

  // Transcribes the agent audio received after sample `from` (8 kHz).
  std::string Transcribe(const std::vector<int16_t>& pcm, size_t from) {
    auto stream = stack_->resources().recognizer->CreateStream(8000);
    EXPECT_TRUE(stream.ok());
    std::vector<int16_t> part(pcm.begin() + static_cast<long>(std::min(from, pcm.size())), pcm.end());
    EXPECT_TRUE((*stream)->AcceptFrames(audio::AudioView(part, 8000)).ok());
    auto r = (*stream)->Finish();
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->text : "";
  }

  static inline pipeline::CallStack* stack_ = nullptr;
  static inline std::string lm_path_;
  MetricsRegistry metrics_;
  std::unique_ptr<server::HttpServer> server_;
  std::unique_ptr<server::TwilioEndpoint> twilio_;
};

TEST_F(TwilioCallTest, AnswersASpokenQuestionAndTheReplyAnswersIt) {
  StartServer();
  auto caller = Call("CA1");
  const size_t before = caller->ReceivedAudio().size();
  auto end = caller->SendAudio(e2e::CallerSaysMulaw("how can i cancel my order"));
  auto first = caller->WaitForAudio(end, 15000);
  ASSERT_TRUE(first.has_value()) << "no reply";
  ASSERT_TRUE(caller->WaitForQuiet(800, 30000));
  const double latency_ms = std::chrono::duration<double, std::milli>(*first - end).count();
  std::printf("caller-side latency, end of speech to first audible reply: %.0f ms\n", latency_ms);
  const std::string heard = Transcribe(caller->ReceivedAudio(), before);
  std::printf("reply as the caller heard it: %s\n", heard.c_str());
  EXPECT_TRUE(heard.find("order") != std::string::npos || heard.find("cancel") != std::string::npos)
      << heard;
  EXPECT_GT(caller->marks_echoed(), 0);
  EXPECT_FALSE(caller->closed());
  caller->SendStop();
  EXPECT_TRUE(caller->WaitClosed(5000));
  EXPECT_EQ(caller->close_code(), 1000);
}

TEST_F(TwilioCallTest, BargeInClearsTheQueuedAudio) {
  StartServer();
  auto caller = Call("CA2");
  auto end = caller->SendAudio(e2e::CallerSaysMulaw("i want to subscribe to the newsletter"));
  auto first = caller->WaitForAudio(end, 15000);
  ASSERT_TRUE(first.has_value());
  // The caller talks over the answer.
  caller->SendSilence(300);
  const std::string words =
      e2e::CallerSaysMulaw("i want to speak to someone about my refund please");
  Counter& barge_ins = MetricsRegistry::Global().GetCounter("hotline_pipeline_barge_ins_total", "");
  const uint64_t barge_ins_before = barge_ins.value();
  const auto interrupt = TwilioCaller::Clock::now();
  caller->SendAudio(words);
  auto cleared = caller->FirstClearAfter(interrupt);
  if (std::getenv("HOTLINE_E2E_DEBUG")) {
    std::string m = MetricsRegistry::Global().ExposeText();
    for (size_t at = m.find("\nhotline_pipeline"); at != std::string::npos;
         at = m.find("\nhotline_pipeline", at + 1)) {
      std::printf("%s\n", m.substr(at + 1, m.find('\n', at + 1) - at - 1).c_str());
    }
  }
  ASSERT_TRUE(cleared.has_value()) << "no clear after barge-in";
  // From the first audible frame of the interruption (the synthesizer leaves a short lead-in).
  std::vector<int16_t> pcm(words.size());
  audio::DecodeMulaw(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(words.data()), words.size()), pcm);
  int lead_ms = 0;
  for (size_t i = 0; i + 160 <= pcm.size(); i += 160, lead_ms += 20) {
    double power = 0;
    for (size_t k = i; k < i + 160; ++k) power += static_cast<double>(pcm[k]) * pcm[k];
    if (std::sqrt(power / 160) > 300) break;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(*cleared - interrupt).count() - lead_ms;
  // The clear comes with the pause stage (pause_after_ms of speech), before the confirmation.
  const int confirm_ms = stack_->resources().barge_in.min_speech_ms;
  const int pause_ms = stack_->resources().barge_in.pause_after_ms;
  std::printf("barge-in: clear %.0f ms after the caller's speech began over the agent "
              "(%d ms of it pause the agent, so %.0f ms of reaction)\n",
              ms, pause_ms, ms - pause_ms);
  // A generous bound: the listen worker shares two cores with the recognizer and, in CI, with
  // other tests and the sanitizers; the call benchmark reports the figure on a quiet machine.
  EXPECT_LT(ms, confirm_ms + 2500);
  // The caller kept talking: the pause became a barge-in, which cancels the answer.
  for (int i = 0; i < 300 && barge_ins.value() == barge_ins_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(barge_ins.value(), barge_ins_before);
}

// A caller who stops to think inside a question ("... the status of my ... order") is answered
// once, for the whole question, not once for the fragment and again for the rest.
TEST_F(TwilioCallTest, AQuestionWithAPauseInsideIsAnsweredOnce) {
  StartServer();
  auto caller = Call("CA5");
  Counter& turns = MetricsRegistry::Global().GetCounter("hotline_pipeline_turns_total", "");
  const uint64_t before = turns.value();
  caller->SendAudio(e2e::CallerSaysMulaw("i want to check the status of my"));
  caller->SendSilence(500);
  auto end = caller->SendAudio(e2e::CallerSaysMulaw("order please"));
  ASSERT_TRUE(caller->WaitForAudio(end, 15000).has_value());
  caller->SendSilence(2000);
  EXPECT_EQ(turns.value() - before, 1u);
}

// "Okay" over the agent's answer: the agent falls silent for a moment at most, and its answer
// goes on (the audio held by the pause is sent again); nothing is cancelled.
TEST_F(TwilioCallTest, ABackchannelOverTheAnswerDoesNotStopIt) {
  StartServer();
  auto caller = Call("CA6");
  auto end = caller->SendAudio(e2e::CallerSaysMulaw("i want to subscribe to the newsletter"));
  ASSERT_TRUE(caller->WaitForAudio(end, 15000).has_value());
  caller->SendSilence(300);
  Counter& barge_ins = MetricsRegistry::Global().GetCounter("hotline_pipeline_barge_ins_total", "");
  const uint64_t barge_ins_before = barge_ins.value();
  const int clears_before = caller->clears();
  const auto said = TwilioCaller::Clock::now();
  caller->SendAudio(e2e::CallerSaysMulaw("okay"));
  caller->SendSilence(1500);
  EXPECT_EQ(barge_ins.value(), barge_ins_before);
  std::printf("backchannel: %d pause(s) of the agent\n", caller->clears() - clears_before);
  if (caller->clears() > clears_before) {
    // Paused while the words were heard, then resumed: the held audio came again.
    auto cleared = caller->FirstClearAfter(said);
    ASSERT_TRUE(cleared.has_value());
    EXPECT_TRUE(caller->WaitForAudio(*cleared, 3000).has_value());
  }
}

TEST_F(TwilioCallTest, MalformedInputClosesOnlyThatCall) {
  StartServer();
  auto good = Call("CA3");

  struct Bad {
    const char* what;
    std::string message;
    bool binary;
    int code;
  };
  const std::string media_prefix =
      R"({"event":"media","streamSid":"MZCA9","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"0","payload":)";
  std::vector<Bad> bads = {
      {"bad JSON", "{\"event\":\"media\",", false, 1008},
      {"wrong type", R"({"event":42})", false, 1008},
      {"bad base64", media_prefix + R"("@@@notbase64@@@"}})", false, 1008},
      {"binary frame", std::string("\x01\x02\x03", 3), true, 1008},
      {"oversized", std::string(70000, 'x'), false, 1009},
  };
  for (const auto& bad : bads) {
    TwilioCaller c;
    ASSERT_TRUE(c.Connect(server_->port(), "/twilio")) << c.error();
    ASSERT_TRUE(c.Start("CA9"));
    if (bad.binary) {
      c.SendRawBinary(bad.message);
    } else {
      c.SendRawText(bad.message);
    }
    ASSERT_TRUE(c.WaitClosed(5000)) << bad.what;
    EXPECT_EQ(c.close_code(), bad.code) << bad.what << ": " << c.close_reason();
    EXPECT_FALSE(c.close_reason().empty()) << bad.what;
  }
  {  // Abrupt disconnect mid-call.
    TwilioCaller c;
    ASSERT_TRUE(c.Connect(server_->port(), "/twilio"));
    ASSERT_TRUE(c.Start("CA10"));
    c.SendSilence(200);
    c.Abort();
  }
  // The good call is unaffected and still answers.
  auto end = good->SendAudio(e2e::CallerSaysMulaw("how can i cancel my order"));
  ASSERT_TRUE(good->WaitForAudio(end, 15000).has_value());
  EXPECT_FALSE(good->closed());
  // Every bad stream the endpoint saw was counted (the oversized frame is refused by the server
  // itself, before the endpoint).
  const std::string text = metrics_.ExposeText();
  const std::string name = "\nhotline_twilio_protocol_errors_total ";
  const size_t at = text.find(name);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::atoi(text.c_str() + at + name.size()), 4) << text.substr(at, 80);
}

TEST_F(TwilioCallTest, OverCapacityCallerHearsBusyMessageAndIsLetGo) {
  StartServer(/*max_calls=*/1);
  auto first = Call("CA20");
  TwilioCaller second;
  ASSERT_TRUE(second.Connect(server_->port(), "/twilio"));
  ASSERT_TRUE(second.Start("CA21"));
  ASSERT_TRUE(second.WaitForAudio(TwilioCaller::Clock::now() - Ms(1), 10000).has_value());
  // The busy message plays out, its mark comes back, the stream is closed.
  const auto deadline = TwilioCaller::Clock::now() + Ms(20000);
  while (!second.closed() && TwilioCaller::Clock::now() < deadline) second.SendSilence(100);
  EXPECT_TRUE(second.closed());
  EXPECT_EQ(second.close_reason(), "over capacity");
  EXPECT_FALSE(first->closed());
  EXPECT_EQ(twilio_->active_calls(), 1);
}

}  // namespace
}  // namespace hotline
