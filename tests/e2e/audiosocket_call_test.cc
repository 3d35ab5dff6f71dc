// End to end over real sockets: Asterisk's side of AudioSocket calls (own TCP client, real-time
// 8 kHz PCM16) talks to an AudioSocketServer on loopback backed by the real call stack —
// pocketsphinx with a domain model built from the demo knowledge base, flite, the knowledge base
// in SQLite and the answer caches.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "answer/kb/knowledge_base.h"
#include "asr/lm_builder.h"
#include "caller_speech.h"
#include "common/build_paths.h"
#include "pipeline/call_stack.h"
#include "server/calls/audiosocket_server.h"
#include "server/calls/call_registry.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/testing/audiosocket_caller.h"
#include "server/testing/twilio_caller.h"
#include "transport/audiosocket/packet.h"

namespace hotline {
namespace {

using server::testing::AudioSocketCaller;
using Ms = std::chrono::milliseconds;
namespace as = transport::audiosocket;

const std::string kKbCsv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";

std::string Scratch(const std::string& name) {
  return "/tmp/hotline_e2e_as_" + std::to_string(getpid()) + "_" + name;
}

int64_t MetricValue(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::atoll(text.c_str() + at + key.size());
}

class AudioSocketCallTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("HOTLINE_E2E_DEBUG")) spdlog::set_level(spdlog::level::debug);
    auto questions = asr::ReadTrainingTexts(kKbCsv, "questions");
    ASSERT_TRUE(questions.ok()) << questions.status();
    auto bodies = asr::ReadTrainingTexts(kKbCsv, "body");
    ASSERT_TRUE(bodies.ok()) << bodies.status();
    std::vector<std::string> texts = *bodies;  // answers too, to transcribe the agent's reply
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
    o.answer.kb_direct_min_score = 4.0;
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

  void StartServer(int max_calls = 8, const pipeline::CallResources* resources = nullptr,
                   server::AudioSocketConfig c = {}) {
    registry_ = std::make_shared<server::CallRegistry>(max_calls);
    c.port = 0;
    auto srv = server::AudioSocketServer::Create(resources ? *resources : stack_->resources(), c,
                                                 &metrics_, registry_);
    ASSERT_TRUE(srv.ok()) << srv.status();
    server_ = std::move(*srv);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  // Connects, sends the UUID, lets the greeting play out.
  std::unique_ptr<AudioSocketCaller> Call(const std::string& uuid) {
    auto caller = std::make_unique<AudioSocketCaller>();
    EXPECT_TRUE(caller->Connect(server_->port())) << caller->error();
    EXPECT_TRUE(caller->SendUuid(uuid)) << caller->error();
    EXPECT_TRUE(caller->WaitForAudio(AudioSocketCaller::Clock::now() - Ms(1), 15000).has_value())
        << "no greeting";
    EXPECT_TRUE(caller->WaitForQuiet(700, 20000));
    return caller;
  }

  std::string Transcribe(const std::vector<int16_t>& pcm, size_t from) {
    auto stream = stack_->resources().recognizer->CreateStream(8000);
    EXPECT_TRUE(stream.ok());
    std::vector<int16_t> part(pcm.begin() + static_cast<long>(std::min(from, pcm.size())),
                              pcm.end());
    EXPECT_TRUE((*stream)->AcceptFrames(audio::AudioView(part, 8000)).ok());
    auto r = (*stream)->Finish();
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->text : "";
  }

  static inline pipeline::CallStack* stack_ = nullptr;
  static inline std::string lm_path_;
  MetricsRegistry metrics_;
  std::shared_ptr<server::CallRegistry> registry_;
  std::unique_ptr<server::AudioSocketServer> server_;
};

TEST_F(AudioSocketCallTest, AnswersASpokenQuestionInRealTimeFramesAndHandlesTheCallersHangup) {
  StartServer();
  auto caller = Call("0b5a2f6e-8c1d-4e7a-9f00-1234567890ab");
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->List()[0].id, "0b5a2f6e-8c1d-4e7a-9f00-1234567890ab");
  const size_t before = caller->ReceivedAudio().size();
  const size_t frames_before = caller->FrameTimes().size();
  auto end = caller->SendAudio(e2e::CallerSaysPcm("how can i cancel my order"));
  auto first = caller->WaitForAudio(end, 15000);
  ASSERT_TRUE(first.has_value()) << "no reply";
  ASSERT_TRUE(caller->WaitForQuiet(800, 30000));
  std::printf("caller-side latency, end of speech to first audible reply: %.0f ms\n",
              std::chrono::duration<double, std::milli>(*first - end).count());
  const std::string heard = Transcribe(caller->ReceivedAudio(), before);
  std::printf("reply as the caller heard it: %s\n", heard.c_str());
  EXPECT_TRUE(heard.find("order") != std::string::npos || heard.find("cancel") != std::string::npos)
      << heard;
  EXPECT_EQ(caller->malformed_reply(), "");

  // Every reply packet is one 20 ms frame, and they come in real time: no 25 frames (500 ms of
  // audio) in under 400 ms — a burst; the pacer may catch up after a short stall of the loaded
  // machine, hence the margin — and the reply's frames span about their own duration (no drift).
  const auto times = caller->FrameTimes();
  for (size_t size : caller->FrameSizes()) ASSERT_EQ(size, as::kFrameBytes);
  ASSERT_GT(times.size(), frames_before + 50);
  for (size_t i = frames_before + 25; i < times.size(); ++i) {
    EXPECT_GE(times[i] - times[i - 25], Ms(400)) << "burst at frame " << i;
  }
  // The first sentence's frames: find the longest run without a gap over 100 ms.
  size_t run_start = frames_before, best_start = frames_before, best_len = 1;
  for (size_t i = frames_before + 1; i <= times.size(); ++i) {
    if (i == times.size() || times[i] - times[i - 1] > Ms(100)) {
      if (i - run_start > best_len) {
        best_len = i - run_start;
        best_start = run_start;
      }
      run_start = i;
    }
  }
  ASSERT_GE(best_len, 50u);
  const double span_ms = std::chrono::duration<double, std::milli>(
                             times[best_start + best_len - 1] - times[best_start])
                             .count();
  const double expected_ms = 20.0 * static_cast<double>(best_len - 1);
  std::printf("pacing: %zu frames over %.0f ms (%.0f ms of audio)\n", best_len, span_ms,
              expected_ms);
  EXPECT_NEAR(span_ms, expected_ms, expected_ms * 0.05 + 40);

  // The caller hangs up: the session ends, its place is given back.
  ASSERT_TRUE(caller->SendHangup());
  EXPECT_TRUE(caller->WaitClosed(5000));
  const auto deadline = std::chrono::steady_clock::now() + Ms(3000);
  while (server_->active_calls() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(Ms(10));
  }
  EXPECT_EQ(server_->active_calls(), 0);
  EXPECT_EQ(registry_->active(), 0);
  EXPECT_EQ(MetricValue(metrics_.ExposeText(), "hotline_audiosocket_calls_total"), 1);
}

TEST_F(AudioSocketCallTest, BargeInDropsTheQueuedReply) {
  StartServer();
  auto caller = Call("88888888-2222-3333-4444-555555555555");
  auto end = caller->SendAudio(e2e::CallerSaysPcm("i want to subscribe to the newsletter"));
  auto first = caller->WaitForAudio(end, 15000);
  ASSERT_TRUE(first.has_value());
  caller->SendSilence(300);
  // The caller talks over the answer; the reply's queued frames stop coming. With AudioSocket the
  // server paces the audio itself, so the stop shows as the first gap in the agent's frames.
  Counter& barge_ins = MetricsRegistry::Global().GetCounter("hotline_pipeline_barge_ins_total", "");
  const uint64_t barge_ins_before = barge_ins.value();
  const auto interrupt = AudioSocketCaller::Clock::now();
  caller->SendAudio(e2e::CallerSaysPcm("i want to speak to someone about my refund please"));
  const auto times = caller->FrameTimes();
  std::optional<AudioSocketCaller::Clock::time_point> stopped;
  for (size_t i = 1; i < times.size(); ++i) {
    if (times[i - 1] > interrupt && times[i] - times[i - 1] > Ms(200)) {
      stopped = times[i - 1];
      break;
    }
  }
  if (!stopped && !times.empty() && AudioSocketCaller::Clock::now() - times.back() > Ms(200)) {
    stopped = times.back();
  }
  ASSERT_TRUE(stopped.has_value()) << "the reply played on through the interruption";
  // The reply must have been playing when the caller spoke (else a gap proves nothing).
  ASSERT_GT(*stopped, interrupt) << "the reply had ended before the interruption";
  const double ms = std::chrono::duration<double, std::milli>(*stopped - interrupt).count();
  const int confirm_ms = stack_->resources().barge_in.min_speech_ms;
  std::printf("barge-in: agent frames stopped %.0f ms after the interruption began\n", ms);
  EXPECT_LT(ms, confirm_ms + 2500);  // the synthesizer's lead-in, confirmation and reaction
  EXPECT_GT(MetricValue(metrics_.ExposeText(), "hotline_audiosocket_frames_out_total"), 0);
  // And it was the barge-in that stopped it (confirmed: the answer was cancelled).
  for (int i = 0; i < 300 && barge_ins.value() == barge_ins_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(barge_ins.value(), barge_ins_before);
}

TEST_F(AudioSocketCallTest, KeypadDigitsAreAnsweredAsAPin) {
  StartServer();
  auto caller = Call("cdcdcdcd-2222-3333-4444-555555555555");
  const auto sent = AudioSocketCaller::Clock::now();
  for (char d : std::string("1234#")) ASSERT_TRUE(caller->SendDtmf(d));
  // The digits make a turn of their own: the agent answers it (the PIN is checked against the
  // demo accounts; the reply says whether it matched).
  ASSERT_TRUE(caller->WaitForAudio(sent, 15000).has_value()) << "no answer to the keypad PIN";
  EXPECT_FALSE(caller->closed());
  // A digit outside the keypad is refused by the codec: the connection is closed with an error.
  ASSERT_TRUE(caller->SendRaw(std::string("\x03\x00\x01x", 4)));
  ASSERT_TRUE(caller->WaitClosed(5000));
  EXPECT_EQ(caller->errors_received(), 1);
}

TEST_F(AudioSocketCallTest, AgentHangsUpWithAHangupPacketAfterItsGoodbye) {
  // The caller says nothing: with no re-prompts allowed, the first silence ends in goodbye.
  static pipeline::CallResources resources = stack_->resources();
  resources.call.reprompt_after_ms = 1500;
  resources.call.reprompt_max = 0;
  StartServer(8, &resources);
  AudioSocketCaller caller;
  ASSERT_TRUE(caller.Connect(server_->port()));
  ASSERT_TRUE(caller.SendUuid("11111111-2222-3333-4444-555555555555"));
  const auto start = AudioSocketCaller::Clock::now();
  ASSERT_TRUE(caller.WaitClosed(30000));
  EXPECT_TRUE(caller.hangup_received());
  EXPECT_EQ(caller.errors_received(), 0);
  // The goodbye was heard before the hang-up.
  EXPECT_TRUE(caller.FirstAudibleAfter(start).has_value());
  const std::string heard = Transcribe(caller.ReceivedAudio(), 0);
  std::printf("agent before hanging up: %s\n", heard.c_str());
}

TEST_F(AudioSocketCallTest, EndingACallThroughTheRegistrySendsAHangup) {
  StartServer();
  auto caller = Call("22222222-2222-3333-4444-555555555555");
  EXPECT_EQ(registry_->End("no-such-call", "test"), 0u);
  EXPECT_EQ(registry_->End("22222222-2222-3333-4444-555555555555", "test"), 1u);
  ASSERT_TRUE(caller->WaitClosed(5000));
  EXPECT_TRUE(caller->hangup_received());
}

TEST_F(AudioSocketCallTest, MalformedStreamsGetAnErrorAndDoNotDisturbAParallelCall) {
  StartServer();
  auto good = Call("33333333-2222-3333-4444-555555555555");
  const std::string uuid = as::EncodeUuid(*as::ParseUuid("44444444-2222-3333-4444-555555555555"));
  struct Bad {
    const char* what;
    std::string bytes;
  };
  const std::vector<Bad> bads = {
      {"audio before the uuid", as::EncodeAudio(std::vector<uint8_t>(320))},
      {"unknown type", uuid + std::string("\x05\x00\x02xx", 5)},
      {"oversized audio", uuid + std::string("\x10\xff\xfe", 3)},
      {"odd audio length", uuid + std::string("\x10\x00\x03"
                                              "abc",
                                              6)},
      {"second uuid", uuid + uuid},
  };
  for (const auto& bad : bads) {
    AudioSocketCaller c;
    ASSERT_TRUE(c.Connect(server_->port()));
    ASSERT_TRUE(c.SendRaw(bad.bytes));
    ASSERT_TRUE(c.WaitClosed(5000)) << bad.what;
    EXPECT_EQ(c.errors_received(), 1) << bad.what;
    EXPECT_EQ(c.malformed_reply(), "") << bad.what;
  }
  {  // Cut off mid-packet, then gone.
    AudioSocketCaller c;
    ASSERT_TRUE(c.Connect(server_->port()));
    ASSERT_TRUE(c.SendRaw(uuid + std::string("\x10\x01", 2)));
    std::this_thread::sleep_for(Ms(100));
    c.Abort();
  }
  // The good call still answers.
  auto end = good->SendAudio(e2e::CallerSaysPcm("how can i cancel my order"));
  ASSERT_TRUE(good->WaitForAudio(end, 15000).has_value());
  EXPECT_FALSE(good->closed());
  EXPECT_EQ(MetricValue(metrics_.ExposeText(), "hotline_audiosocket_protocol_errors_total"),
            static_cast<int64_t>(bads.size()));
  EXPECT_EQ(registry_->active(), 1);
}

TEST_F(AudioSocketCallTest, OverCapacityCallerHearsBusyMessageThenHangup) {
  StartServer(/*max_calls=*/1);
  auto first = Call("55555555-2222-3333-4444-555555555555");
  AudioSocketCaller second;
  ASSERT_TRUE(second.Connect(server_->port()));
  ASSERT_TRUE(second.SendUuid("66666666-2222-3333-4444-555555555555"));
  ASSERT_TRUE(second.WaitClosed(20000));
  EXPECT_TRUE(second.hangup_received());
  EXPECT_TRUE(second.FirstAudibleAfter({}).has_value());
  EXPECT_FALSE(first->closed());
  EXPECT_EQ(server_->active_calls(), 1);
  EXPECT_EQ(MetricValue(metrics_.ExposeText(), "hotline_audiosocket_over_capacity_total"), 1);
}

TEST_F(AudioSocketCallTest, KnowledgeBaseReloadAndCacheFlushDuringACall) {
  StartServer();
  auto caller = Call("77777777-2222-3333-4444-555555555555");
  auto end = caller->SendAudio(e2e::CallerSaysPcm("how can i cancel my order"));
  ASSERT_TRUE(caller->WaitForAudio(end, 15000).has_value());
  ASSERT_TRUE(caller->WaitForQuiet(800, 30000));

  auto reloaded = stack_->ReloadKnowledgeBase();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ(static_cast<size_t>(reloaded->records), stack_->kb_articles());
  EXPECT_EQ(reloaded->changed, 0u);  // the same file: nothing to invalidate
  EXPECT_EQ(reloaded->unchanged, reloaded->records);
  auto flushed = stack_->FlushAnswerCaches();
  ASSERT_TRUE(flushed.ok()) << flushed.status();
  EXPECT_EQ(flushed->stamps_bumped, stack_->kb_articles());

  // The call goes on and is answered again, from the knowledge base rather than a cache.
  const size_t before = caller->ReceivedAudio().size();
  end = caller->SendAudio(e2e::CallerSaysPcm("how can i cancel my order"));
  ASSERT_TRUE(caller->WaitForAudio(end, 15000).has_value());
  ASSERT_TRUE(caller->WaitForQuiet(800, 30000));
  const std::string heard = Transcribe(caller->ReceivedAudio(), before);
  EXPECT_TRUE(heard.find("order") != std::string::npos || heard.find("cancel") != std::string::npos)
      << heard;
}

TEST_F(AudioSocketCallTest, SilentPeersAndExtraConnectionsAreClosed) {
  server::AudioSocketConfig c;
  c.uuid_timeout_ms = 300;
  c.idle_timeout_ms = 600;
  c.max_connections = 2;
  StartServer(8, nullptr, c);
  AudioSocketCaller mute;  // connects, never sends its UUID
  ASSERT_TRUE(mute.Connect(server_->port()));
  AudioSocketCaller idle;  // sends its UUID, then nothing
  ASSERT_TRUE(idle.Connect(server_->port()));
  ASSERT_TRUE(idle.SendUuid("99999999-2222-3333-4444-555555555555"));
  AudioSocketCaller extra;  // over max_connections
  ASSERT_TRUE(extra.Connect(server_->port()));
  const auto deadline = std::chrono::steady_clock::now() + Ms(5000);
  while (!(mute.closed() && idle.closed() && extra.closed()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(Ms(20));
  }
  EXPECT_TRUE(extra.closed());
  EXPECT_EQ(extra.errors_received(), 1);
  EXPECT_TRUE(mute.closed());
  EXPECT_EQ(mute.errors_received(), 1);  // no UUID in time is a protocol error
  EXPECT_TRUE(idle.closed());            // no packet for idle_timeout_ms
  const std::string text = metrics_.ExposeText();
  EXPECT_EQ(MetricValue(text, "hotline_audiosocket_refused_total"), 1);
  EXPECT_EQ(MetricValue(text, "hotline_audiosocket_protocol_errors_total"), 1);
  EXPECT_EQ(server_->active_calls(), 0);
}

// Only the PBXs in audiosocket.allowed_peers may place calls: a peer outside the list is closed
// before a call exists (nothing admitted, no audio), a listed one is answered.
TEST_F(AudioSocketCallTest, PeersOutsideTheAllowListAreClosedBeforeACallExists) {
  server::AudioSocketConfig c;
  c.allowed_peers = {"10.0.0.0/8", "fd00::/8"};
  StartServer(8, nullptr, c);
  AudioSocketCaller stranger;
  ASSERT_TRUE(stranger.Connect(server_->port()));
  (void)stranger.SendUuid("77777777-2222-3333-4444-555555555555");  // may already be closed
  const auto deadline = std::chrono::steady_clock::now() + Ms(5000);
  while (!stranger.closed() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(Ms(20));
  }
  EXPECT_TRUE(stranger.closed());
  EXPECT_TRUE(stranger.ReceivedAudio().empty());
  EXPECT_EQ(MetricValue(metrics_.ExposeText(), "hotline_audiosocket_peers_refused_total"), 1);
  EXPECT_EQ(registry_->active(), 0);
  server_->Stop();

  c.allowed_peers = {"10.0.0.0/8", "127.0.0.0/8"};
  StartServer(8, nullptr, c);
  auto listed = Call("88888888-2222-3333-4444-555555555555");  // answered: the greeting plays
  EXPECT_FALSE(listed->closed());
  EXPECT_EQ(MetricValue(metrics_.ExposeText(), "hotline_audiosocket_peers_refused_total"), 1);
}

TEST_F(AudioSocketCallTest, TheCallCapIsSharedWithTwilio) {
  StartServer(/*max_calls=*/1);
  server::ServerConfig sc;
  sc.port = 0;
  auto http = server::HttpServer::Create(sc);
  ASSERT_TRUE(http.ok()) << http.status();
  auto twilio = server::TwilioEndpoint::Create(stack_->resources(), server::TwilioConfig{},
                                               &metrics_, registry_);
  ASSERT_TRUE(twilio.ok()) << twilio.status();
  ASSERT_TRUE((*http)->HandleWebSocket("/twilio", (*twilio)->Factory()).ok());
  ASSERT_TRUE((*http)->Start().ok());

  auto first = Call("abababab-2222-3333-4444-555555555555");  // takes the only place
  server::testing::TwilioCaller second;
  ASSERT_TRUE(second.Connect((*http)->port(), "/twilio")) << second.error();
  ASSERT_TRUE(second.Start("CA-over"));
  const auto deadline = std::chrono::steady_clock::now() + Ms(20000);
  while (!second.closed() && std::chrono::steady_clock::now() < deadline) second.SendSilence(100);
  EXPECT_EQ(second.close_reason(), "over capacity");
  EXPECT_EQ(MetricValue(metrics_.ExposeText(), "hotline_twilio_over_capacity_total"), 1);
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->List()[0].transport, "audiosocket");

  // The AudioSocket call ends; its place goes to a Twilio call, which the registry can end too.
  ASSERT_TRUE(first->SendHangup());
  ASSERT_TRUE(first->WaitClosed(5000));
  const auto freed = std::chrono::steady_clock::now() + Ms(3000);
  while (registry_->active() > 0 && std::chrono::steady_clock::now() < freed) {
    std::this_thread::sleep_for(Ms(10));
  }
  server::testing::TwilioCaller third;
  ASSERT_TRUE(third.Connect((*http)->port(), "/twilio")) << third.error();
  ASSERT_TRUE(third.Start("CA-third"));
  ASSERT_TRUE(third.WaitForAudio(server::testing::TwilioCaller::Clock::now(), 15000).has_value());
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->List()[0].transport, "twilio");
  EXPECT_EQ(registry_->End("CA-third", "ended by the test"), 1u);
  ASSERT_TRUE(third.WaitClosed(5000));
  EXPECT_EQ(third.close_code(), 1000);
  EXPECT_EQ(third.close_reason(), "ended: ended by the test");
  (*http)->Stop();
}

}  // namespace
}  // namespace hotline
