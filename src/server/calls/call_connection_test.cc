#include "server/calls/call_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/calls/audiosocket_server.h"

namespace hotline::server {
namespace {

ActiveCall Call(const std::string& id) {
  ActiveCall c;
  c.id = id;
  c.transport = "twilio";
  return c;
}

TEST(CallConnection, AdmitsUpToTheSharedCapAndCountsEachTransport) {
  MetricsRegistry metrics;
  auto registry = std::make_shared<CallRegistry>(2);
  CallTransport twilio("twilio", "Twilio", registry, metrics);
  CallTransport audiosocket("audiosocket", "AudioSocket", registry, metrics);

  auto a = std::make_unique<CallConnection>(twilio);
  CallConnection b(audiosocket);
  CallConnection c(twilio);
  EXPECT_TRUE(a->Admit(Call("CA1"), nullptr));
  EXPECT_TRUE(b.Admit(Call("uuid-2"), nullptr));
  EXPECT_FALSE(c.Admit(Call("CA3"), nullptr));  // the cap is the registry's, across transports
  EXPECT_TRUE(a->admitted());
  EXPECT_FALSE(c.admitted());
  EXPECT_EQ(registry->active(), 2);
  EXPECT_EQ(twilio.active(), 1);
  EXPECT_EQ(audiosocket.active(), 1);
  EXPECT_EQ(metrics.GetCounter("hotline_twilio_calls_total", "").value(), 1u);
  EXPECT_EQ(metrics.GetCounter("hotline_twilio_over_capacity_total", "").value(), 1u);
  EXPECT_EQ(metrics.GetCounter("hotline_audiosocket_over_capacity_total", "").value(), 0u);
  EXPECT_EQ(metrics.GetGauge("hotline_twilio_active_calls", "").value(), 1.0);

  // Ending gives the place back and uncounts once, however often it is called.
  b.End();
  b.End();
  EXPECT_EQ(registry->active(), 1);
  EXPECT_EQ(audiosocket.active(), 0);
  EXPECT_EQ(metrics.GetGauge("hotline_audiosocket_active_calls", "").value(), 0.0);
  EXPECT_EQ(b.session(), nullptr);

  // The destructor ends a call still in progress.
  a.reset();
  EXPECT_EQ(registry->active(), 0);
  EXPECT_EQ(twilio.active(), 0);
  EXPECT_EQ(metrics.GetGauge("hotline_twilio_active_calls", "").value(), 0.0);
}

TEST(CallConnection, TheRegistryEndsAnAdmittedCallThroughItsEndFunction) {
  MetricsRegistry metrics;
  auto registry = std::make_shared<CallRegistry>(4);
  CallTransport softphone("softphone", "Softphone", registry, metrics);
  CallConnection call(softphone);
  std::vector<std::string> asked;
  ASSERT_TRUE(
      call.Admit(Call("web-1"), [&asked](std::string_view reason) { asked.emplace_back(reason); }));
  EXPECT_EQ(registry->End("web-1", "by the admin"), 1u);
  EXPECT_EQ(asked, std::vector<std::string>{"by the admin"});
  call.End();
  EXPECT_EQ(registry->End("web-1", "again"), 0u);
}

TEST(CallRegistry, TimersEndSilentAndOverlongCallsAndFreeTheirPlaceAtOnce) {
  MetricsRegistry metrics;
  CallsConfig config;
  config.max_calls = 2;
  config.no_audio_timeout_ms = 10000;
  config.max_call_ms = 60000;
  auto registry = std::make_shared<CallRegistry>(config, &metrics, /*watchdog=*/false);
  CallTransport twilio("twilio", "Twilio", registry, metrics);
  std::vector<std::string> ended;
  auto end = [&ended](std::string_view why) { ended.emplace_back(why); };
  CallConnection silent(twilio);
  CallConnection talking(twilio);
  ASSERT_TRUE(silent.Admit(Call("CA-silent"), end));
  ASSERT_TRUE(talking.Admit(Call("CA-talking"), end));
  const auto start = std::chrono::steady_clock::now();
  using std::chrono::milliseconds;
  EXPECT_EQ(registry->Sweep(start + milliseconds(9000)), 0);
  std::this_thread::sleep_for(milliseconds(50));
  talking.NoteAudio();  // audio resets the timer; nothing else does
  EXPECT_EQ(registry->Sweep(start + milliseconds(10020)), 1);
  EXPECT_EQ(ended, std::vector<std::string>{"no_audio"});
  // The place is free before the transport has closed anything.
  EXPECT_EQ(registry->active(), 1);
  CallConnection next(twilio);
  EXPECT_TRUE(next.Admit(Call("CA-next"), end));
  // The longest call: audio or not.
  talking.NoteAudio();
  next.NoteAudio();
  ended.clear();
  EXPECT_EQ(registry->Sweep(start + milliseconds(60000 + CallRegistry::kMaxCallBackstopMs + 500)),
            2);
  EXPECT_EQ(ended, (std::vector<std::string>{"max_duration", "max_duration"}));
  EXPECT_EQ(metrics.GetCounter("hotline_calls_ended_total", "", {{"reason", "no_audio"}}).value(),
            1u);
  EXPECT_EQ(
      metrics.GetCounter("hotline_calls_ended_total", "", {{"reason", "max_duration"}}).value(),
      2u);
  // Ending the connections afterwards is harmless (their places are already given back).
  silent.End();
  talking.End();
  next.End();
  EXPECT_EQ(registry->active(), 0);
}

// At calls.max_call_ms the call's session says goodbye and hangs up (CallSessionTest covers it);
// the registry ends a call only kMaxCallBackstopMs later, for a session that could not.
TEST(CallRegistry, LongestCallBackstopComesAfterTheSessionsGoodbye) {
  MetricsRegistry metrics;
  CallsConfig config;
  config.no_audio_timeout_ms = 0;
  config.max_call_ms = 60000;
  auto registry = std::make_shared<CallRegistry>(config, &metrics, /*watchdog=*/false);
  CallTransport twilio("twilio", "Twilio", registry, metrics);
  std::vector<std::string> ended;
  CallConnection call(twilio);
  ASSERT_TRUE(call.Admit(Call("CA-long"), [&ended](std::string_view why) {
    ended.emplace_back(why);
  }));
  const auto start = std::chrono::steady_clock::now();
  using std::chrono::milliseconds;
  EXPECT_EQ(registry->Sweep(start + milliseconds(60000 + 100)), 0);
  EXPECT_EQ(registry->Sweep(start + milliseconds(60000 + CallRegistry::kMaxCallBackstopMs - 100)),
            0);
  EXPECT_EQ(registry->Sweep(start + milliseconds(60000 + CallRegistry::kMaxCallBackstopMs + 100)),
            1);
  EXPECT_EQ(ended, std::vector<std::string>{"max_duration"});
}

TEST(CallRegistry, RejectsTimersOutOfRange) {
  CallsConfig c;
  c.no_audio_timeout_ms = 10;
  EXPECT_NE(c.Validate().message().find("no_audio_timeout_ms"), std::string::npos);
  c = CallsConfig{};
  c.max_call_ms = 5;
  EXPECT_NE(c.Validate().message().find("max_call_ms"), std::string::npos);
  c = CallsConfig{};
  c.no_audio_timeout_ms = 0;
  c.max_call_ms = 0;
  EXPECT_TRUE(c.Validate().ok());
}

TEST(AudioSocketPeers, AllowListTakesAddressesAndCidrBlocks) {
  const std::vector<std::string> allowed = {"10.1.0.0/16", "192.0.2.7", "::1", "fd00::/8"};
  EXPECT_TRUE(AudioSocketPeerAllowed("10.1.200.3", allowed));
  EXPECT_FALSE(AudioSocketPeerAllowed("10.2.0.1", allowed));
  EXPECT_TRUE(AudioSocketPeerAllowed("192.0.2.7", allowed));
  EXPECT_FALSE(AudioSocketPeerAllowed("192.0.2.8", allowed));
  EXPECT_TRUE(AudioSocketPeerAllowed("::1", allowed));
  EXPECT_TRUE(AudioSocketPeerAllowed("fd12::5", allowed));
  EXPECT_FALSE(AudioSocketPeerAllowed("fe80::1", allowed));
  // An IPv4 peer on a dual-stack socket.
  EXPECT_TRUE(AudioSocketPeerAllowed("::ffff:10.1.0.9", allowed));
  EXPECT_FALSE(AudioSocketPeerAllowed("not an address", allowed));
  EXPECT_TRUE(AudioSocketPeerAllowed("203.0.113.1", {}));  // empty: any peer
  AudioSocketConfig c;
  c.allowed_peers = {"10.0.0.0/33"};
  EXPECT_NE(c.Validate().message().find("allowed_peers"), std::string::npos);
  c.allowed_peers = {"example.com"};
  EXPECT_FALSE(c.Validate().ok());
}

TEST(CallConnection, Pcm16IsLittleEndian) {
  const std::vector<int16_t> samples = {0, 1, -1, 0x1234, -32768};
  const std::string bytes = EncodePcm16Le(samples);
  EXPECT_EQ(bytes, std::string("\x00\x00\x01\x00\xff\xff\x34\x12\x00\x80", 10));
}

}  // namespace
}  // namespace hotline::server
