// The call edge under hostile callers, end to end over real loopback sockets with the real call
// stack (pocketsphinx, flite, the knowledge base and demo accounts in SQLite): PIN guessing across
// calls, account enumeration, calls that carry no audio, what a call leaves in the log, whom the
// transports trust.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "answer/understand/pii.h"
#include "caller_speech.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "pipeline/call_stack.h"
#include "server/calls/audiosocket_server.h"
#include "server/calls/call_registry.h"
#include "server/calls/softphone_endpoint.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/testing/audiosocket_caller.h"
#include "server/testing/twilio_caller.h"
#include "transport/twilio/request_signature.h"

namespace hotline {
namespace {

using server::testing::TwilioCaller;

const std::string kKbCsv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";

std::string Scratch(const std::string& name) {
  return "/tmp/hotline_e2e_edge_" + std::to_string(getpid()) + "_" + name;
}

struct TurnRecord {
  std::string kind, answer, outcome;
};

// The per-turn records of one call, in order (the record store's SQLite file).
std::vector<TurnRecord> RecordsOf(const std::string& db_path, const std::string& call_id) {
  std::vector<TurnRecord> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    ADD_FAILURE() << "cannot open " << db_path;
    return out;
  }
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT kind, answer, outcome FROM call_turns WHERE call_id = ? ORDER BY turn",
                     -1, &st, nullptr);
  sqlite3_bind_text(st, 1, call_id.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto col = [&](int i) {
      const auto* p = sqlite3_column_text(st, i);
      return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
    };
    out.push_back({col(0), col(1), col(2)});
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

class CallEdgeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pipeline::CallStackOptions o;
    o.kb_db = Scratch("kb.sqlite");
    o.kb_csv = kKbCsv;
    o.call.reprompt_after_ms = 60000;  // no re-prompts while a test waits
    o.call.record_db = Scratch("records.sqlite");
    o.answer.caller.max_pin_attempts = 3;
    o.answer.verification.max_failures = 6;
    o.answer.verification.lockout_s = 900;
    o.metrics = &metrics_;
    auto stack = pipeline::CallStack::Build(o);
    ASSERT_TRUE(stack.ok()) << stack.status();
    stack_ = std::move(*stack).release();
  }
  static void TearDownTestSuite() {
    delete stack_;
    stack_ = nullptr;
    for (const char* name : {"kb.sqlite", "kb.sqlite.lm", "kb.sqlite.lm.dict", "records.sqlite",
                             "records.sqlite-wal", "records.sqlite-shm"}) {
      std::filesystem::remove(Scratch(name));
    }
  }

  void StartServer(server::CallsConfig calls = {}, server::TwilioConfig twilio = {}) {
    twilio_config_ = twilio;
    server::ServerConfig sc;
    sc.port = 0;
    auto srv = server::HttpServer::Create(sc);
    ASSERT_TRUE(srv.ok()) << srv.status();
    server_ = std::move(*srv);
    registry_ = std::make_shared<server::CallRegistry>(calls, &metrics_);
    auto endpoint =
        server::TwilioEndpoint::Create(stack_->resources(), twilio, &metrics_, registry_);
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    twilio_ = std::move(*endpoint);
    ASSERT_TRUE(server_->HandleWebSocket("/twilio", twilio_->Factory()).ok());
    auto softphone =
        server::SoftphoneEndpoint::Create(stack_->resources(), calls, &metrics_, registry_);
    ASSERT_TRUE(softphone.ok()) << softphone.status();
    softphone_ = std::move(*softphone);
    ASSERT_TRUE(server_->HandleWebSocket("/softphone/ws", softphone_->Factory()).ok());
    ASSERT_TRUE(server_->Start().ok());
  }
  void StartAudioSocket() {
    server::AudioSocketConfig c;
    c.port = 0;
    auto srv = server::AudioSocketServer::Create(stack_->resources(), c, &metrics_, registry_);
    ASSERT_TRUE(srv.ok()) << srv.status();
    audiosocket_ = std::move(*srv);
    ASSERT_TRUE(audiosocket_->Start().ok());
  }
  void TearDown() override {
    if (audiosocket_) audiosocket_->Stop();
    if (server_) server_->Stop();
  }

  // The X-Twilio-Signature Twilio would send for /twilio on this server.
  std::string Signature() const {
    return transport::twilio::RequestSignature(
        twilio_config_.auth_token,
        "wss://127.0.0.1:" + std::to_string(server_->port()) + "/twilio");
  }

  // A stream, signed when the endpoint has an auth token.
  std::unique_ptr<TwilioCaller> Call(const std::string& sid, const std::string& number) {
    auto caller = std::make_unique<TwilioCaller>();
    if (!twilio_config_.auth_token.empty()) {
      caller->AddUpgradeHeader("X-Twilio-Signature", Signature());
    }
    EXPECT_TRUE(caller->Connect(server_->port(), "/twilio")) << caller->error();
    EXPECT_TRUE(caller->Start(sid, {{"caller", number}}));
    EXPECT_TRUE(
        caller->WaitForAudio(TwilioCaller::Clock::now() - std::chrono::milliseconds(1), 15000)
            .has_value())
        << "no greeting";
    return caller;
  }

  // Keys `pin` then '#', and waits for the agent's answer to play out.
  static void EnterPin(TwilioCaller& caller, const std::string& pin) {
    const auto sent = TwilioCaller::Clock::now();
    for (char d : pin + "#") ASSERT_TRUE(caller.SendDtmf(d));
    EXPECT_TRUE(caller.WaitForAudio(sent, 15000).has_value()) << "no answer to PIN " << pin;
    EXPECT_TRUE(caller.WaitForQuiet(600, 20000));
  }

  // Keeps the line carrying silence until the agent closes the stream.
  static bool WaitForAgentClose(TwilioCaller& caller, int timeout_ms) {
    for (int waited = 0; waited < timeout_ms && !caller.closed(); waited += 200) {
      caller.SendSilence(200);
    }
    return caller.WaitClosed(1000);
  }

  std::vector<TurnRecord> PinTurns(const std::string& call_id) {
    stack_->records()->Flush();
    std::vector<TurnRecord> pins;
    for (auto& t : RecordsOf(Scratch("records.sqlite"), call_id)) {
      if (t.kind == "dtmf") pins.push_back(std::move(t));
    }
    return pins;
  }

  static inline pipeline::CallStack* stack_ = nullptr;
  static inline MetricsRegistry metrics_;
  std::unique_ptr<server::HttpServer> server_;
  std::shared_ptr<server::CallRegistry> registry_;
  server::TwilioConfig twilio_config_;
  std::unique_ptr<server::TwilioEndpoint> twilio_;
  std::unique_ptr<server::SoftphoneEndpoint> softphone_;
  std::unique_ptr<server::AudioSocketServer> audiosocket_;
};

// Six wrong PINs over two calls lock the account: the third call's right PIN is refused and the
// caller is handed to an agent; a number without an account hears exactly what a wrong PIN hears.
TEST_F(CallEdgeTest, WrongPinsAcrossCallsLockTheAccountAndUnknownNumbersSoundTheSame) {
  StartServer({}, {.auth_token = "test-auth-token"});  // signed streams: caller IDs are believed
  const answer::AnswererConfig defaults;
  Counter& lockouts = metrics_.GetCounter("hotline_answer_pin_lockouts_total", "");
  const uint64_t lockouts_before = lockouts.value();
  int pin = 0;
  for (const char* sid : {"CAedge1", "CAedge2"}) {
    auto caller = Call(sid, "+15550102");
    for (int i = 0; i < 3; ++i) EnterPin(*caller, "000" + std::to_string(pin++));
    ASSERT_TRUE(WaitForAgentClose(*caller, 15000)) << sid;
    EXPECT_NE(caller->close_reason().find("transfer"), std::string::npos) << caller->close_reason();
    const auto turns = PinTurns(sid);
    ASSERT_EQ(turns.size(), 3u) << sid;
    EXPECT_EQ(turns[0].answer, defaults.wrong_pin_text);
    EXPECT_EQ(turns[1].answer, defaults.wrong_pin_text);
    EXPECT_EQ(turns[2].answer, defaults.locked_text);
    EXPECT_EQ(turns[2].outcome, "transfer");
  }
  // Both keys of the second call's last failure (the number and the account) reached six.
  EXPECT_EQ(lockouts.value(), lockouts_before + 2);

  // Carmen's right PIN (5060), within the lock-out window.
  auto third = Call("CAedge3", "+15550102");
  EnterPin(*third, "5060");
  ASSERT_TRUE(WaitForAgentClose(*third, 15000));
  auto turns = PinTurns("CAedge3");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].answer, defaults.locked_text) << "verified during a lock-out";
  EXPECT_NE(third->close_reason().find("transfer"), std::string::npos);

  // A known number with a wrong PIN and an unknown number: the same words.
  auto known = Call("CAedge4", "+15550101");
  EnterPin(*known, "9999");
  const std::vector<int16_t> known_audio = known->ReceivedAudio();
  auto unknown = Call("CAedge5", "+15557770123");
  EnterPin(*unknown, "9999");
  const auto known_turns = PinTurns("CAedge4");
  const auto unknown_turns = PinTurns("CAedge5");
  ASSERT_EQ(known_turns.size(), 1u);
  ASSERT_EQ(unknown_turns.size(), 1u);
  EXPECT_EQ(known_turns[0].answer, unknown_turns[0].answer);
  EXPECT_EQ(unknown_turns[0].answer, defaults.wrong_pin_text);
  EXPECT_FALSE(known->closed());
  EXPECT_FALSE(unknown->closed());
  known->SendStop();
  unknown->SendStop();
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A Twilio stream that sends `start` and then nothing (it would answer pings) holds the only
// call slot; the no-audio timer ends it within the time-out + 1 s and the slot is free at once.
TEST_F(CallEdgeTest, AStreamWithoutAudioIsEndedAndItsSlotFreed) {
  server::CallsConfig calls;
  calls.max_calls = 1;
  calls.no_audio_timeout_ms = 3000;
  StartServer(calls);
  Counter& no_audio =
      metrics_.GetCounter("hotline_calls_ended_total", "", {{"reason", "no_audio"}});
  const uint64_t before = no_audio.value();
  TwilioCaller squatter;
  ASSERT_TRUE(squatter.Connect(server_->port(), "/twilio")) << squatter.error();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(squatter.Start("CAsquat", {{"caller", "+15550100"}}));
  for (int i = 0; i < 50 && registry_->active() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(registry_->active(), 1);
  // Key presses are not audio: they do not keep the call alive.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ASSERT_TRUE(squatter.SendDtmf('5'));
  ASSERT_TRUE(squatter.WaitClosed(calls.no_audio_timeout_ms + 1000));
  const double s = SecondsSince(started);
  std::printf("stream without audio ended after %.2f s (time-out %.1f s): %s\n", s,
              calls.no_audio_timeout_ms / 1000.0, squatter.close_reason().c_str());
  EXPECT_LT(s, calls.no_audio_timeout_ms / 1000.0 + 1.0);
  EXPECT_GE(s, calls.no_audio_timeout_ms / 1000.0 - 0.1);
  EXPECT_EQ(squatter.close_code(), 1000);
  EXPECT_NE(squatter.close_reason().find("no_audio"), std::string::npos);
  EXPECT_EQ(registry_->active(), 0);
  EXPECT_EQ(no_audio.value(), before + 1);
  // The slot is free: the next caller is answered (a greeting, not the busy message).
  auto next = Call("CAnext", "+15550100");
  EXPECT_EQ(registry_->active(), 1);
  EXPECT_FALSE(next->closed());
  next->SendStop();
}

// The same for an AudioSocket peer that sends only DTMF packets (each resets AudioSocket's own
// idle time-out, but none is audio).
TEST_F(CallEdgeTest, AnAudioSocketPeerSendingOnlyDtmfIsEnded) {
  server::CallsConfig calls;
  calls.max_calls = 1;
  calls.no_audio_timeout_ms = 3000;
  StartServer(calls);
  StartAudioSocket();
  server::testing::AudioSocketCaller peer;
  ASSERT_TRUE(peer.Connect(audiosocket_->port())) << peer.error();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(peer.SendUuid("0f0e0d0c-0b0a-0908-0706-050403020100"));
  bool admitted = false;
  while (!peer.closed() && SecondsSince(started) < 10) {
    admitted = admitted || registry_->active() == 1;
    (void)peer.SendDtmf('1');
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  const double s = SecondsSince(started);
  std::printf("AudioSocket peer sending only DTMF ended after %.2f s (time-out %.1f s)\n", s,
              calls.no_audio_timeout_ms / 1000.0);
  EXPECT_TRUE(admitted);
  ASSERT_TRUE(peer.closed());
  EXPECT_TRUE(peer.hangup_received());
  EXPECT_LT(s, calls.no_audio_timeout_ms / 1000.0 + 1.0);
  EXPECT_EQ(registry_->active(), 0);
}

// The log of a real call that spoke a card number, a PIN and a phone number, keyed a PIN, carried
// a forged line in its call id, and of a stream that sent a card number in a malformed message:
// none of the numbers, and no control character from the callers, reaches a log line. The
// redactor is installed as every command installs it (main.cc).
TEST_F(CallEdgeTest, TheLogOfACallCarriesNoPersonalDataAndNoForgedLines) {
  StartServer();
  std::mutex mu;
  std::vector<std::string> lines;
  SetLogRedactor(answer::MakePiiLogRedactor());
  SetLogSinkForTest([&](std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  });
  spdlog::set_level(spdlog::level::debug);

  {
    TwilioCaller caller;
    ASSERT_TRUE(caller.Connect(server_->port(), "/twilio")) << caller.error();
    // A call id with a line break and a terminal escape in it.
    ASSERT_TRUE(
        caller.Start("CAlog\nwarn FORGED admin logged in\x1b[2J", {{"caller", "+15550100"}}));
    ASSERT_TRUE(
        caller.WaitForAudio(TwilioCaller::Clock::now() - std::chrono::milliseconds(1), 15000)
            .has_value());
    auto end = caller.SendAudio(e2e::CallerSaysMulaw(
        "my card number is 4111 1111 1111 1111 and my phone number is 555 201 3344"));
    (void)caller.WaitForAudio(end, 15000);
    EXPECT_TRUE(caller.WaitForQuiet(600, 20000));
    end = caller.SendAudio(e2e::CallerSaysMulaw("my pin is 4 8 2 1"));
    (void)caller.WaitForAudio(end, 15000);
    EXPECT_TRUE(caller.WaitForQuiet(600, 20000));
    const auto sent = TwilioCaller::Clock::now();
    for (char d : std::string("4821#")) ASSERT_TRUE(caller.SendDtmf(d));
    (void)caller.WaitForAudio(sent, 15000);
    caller.SendStop();
    caller.WaitClosed(3000);
  }
  {
    TwilioCaller bad;
    ASSERT_TRUE(bad.Connect(server_->port(), "/twilio")) << bad.error();
    ASSERT_TRUE(bad.Start("CAbad"));
    bad.SendRawText("{\"event\":\"media\" 4111 1111 1111 1111\nerror FORGED\r\x07");
    ASSERT_TRUE(bad.WaitClosed(5000));
  }
  stack_->records()->Flush();
  SetLogSinkForTest(nullptr);
  SetLogRedactor(nullptr);
  spdlog::set_level(spdlog::level::info);

  std::lock_guard lock(mu);
  ASSERT_GT(lines.size(), 5u);
  const std::regex personal(
      "4111[ -]?1111[ -]?1111[ -]?1111|(^|[^0-9])4821([^0-9]|$)|5550100|555[ .-]?201[ .-]?3344|"
      "2013344");
  bool saw_call_id = false, saw_bad_message = false;
  for (std::string line : lines) {
    if (!line.empty() && line.back() == '\n') line.pop_back();
    EXPECT_FALSE(std::regex_search(line, personal)) << line;
    for (char c : line) {
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          << "control character in: " << line;
    }
    EXPECT_NE(line.rfind("warn FORGED", 0), 0u) << line;
    EXPECT_NE(line.rfind("error FORGED", 0), 0u) << line;
    saw_call_id = saw_call_id || line.find("CAlog\\nwarn FORGED") != std::string::npos;
    saw_bad_message = saw_bad_message || line.find("not valid JSON") != std::string::npos;
  }
  EXPECT_TRUE(saw_call_id) << "the escaped call id is logged";
  EXPECT_TRUE(saw_bad_message) << "the malformed message is logged";
}

// Upgrades are refused (403) without a valid Twilio signature when a token is configured, and for
// a foreign browser Origin on /twilio and /softphone/ws; the server's own origin and non-browser
// clients pass.
TEST_F(CallEdgeTest, UpgradesNeedASignatureAndAnAllowedOrigin) {
  server::CallsConfig calls;
  calls.allowed_origins = {"https://agents.example.com"};
  StartServer(calls, {.auth_token = "test-auth-token"});
  const std::string own = "http://127.0.0.1:" + std::to_string(server_->port());
  struct Case {
    const char* what;
    const char* path;
    std::vector<std::pair<std::string, std::string>> headers;
    bool accepted;
  };
  const std::vector<Case> cases = {
      {"twilio without a signature", "/twilio", {}, false},
      {"twilio with a wrong signature",
       "/twilio",
       {{"X-Twilio-Signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="}},
       false},
      {"twilio signed for another URL",
       "/twilio?x=1",
       {{"X-Twilio-Signature", Signature()}},
       false},
      {"twilio signed", "/twilio", {{"X-Twilio-Signature", Signature()}}, true},
      {"twilio signed, foreign origin",
       "/twilio",
       {{"X-Twilio-Signature", Signature()}, {"Origin", "https://evil.example"}},
       false},
      {"softphone, no origin", "/softphone/ws", {}, true},
      {"softphone, own origin", "/softphone/ws", {{"Origin", own}}, true},
      {"softphone, allowed origin",
       "/softphone/ws",
       {{"Origin", "https://agents.example.com"}},
       true},
      {"softphone, foreign origin", "/softphone/ws", {{"Origin", "https://evil.example"}}, false},
  };
  for (const auto& c : cases) {
    TwilioCaller client;
    for (const auto& [name, value] : c.headers) client.AddUpgradeHeader(name, value);
    const bool ok = client.Connect(server_->port(), c.path);
    EXPECT_EQ(ok, c.accepted) << c.what << ": " << client.error();
    if (!c.accepted) {
      EXPECT_NE(client.error().find("403"), std::string::npos) << c.what;
    }
  }
  EXPECT_GE(metrics_.GetCounter("hotline_twilio_upgrades_refused_total", "").value(), 4u);
}

TEST_F(CallEdgeTest, TheSoftphoneTakesItsTokenWhenConfigured) {
  server::CallsConfig calls;
  calls.softphone_token = "s3cret-token";
  StartServer(calls);
  for (const auto& [path, accepted] :
       std::vector<std::pair<std::string, bool>>{{"/softphone/ws", false},
                                                 {"/softphone/ws?token=wrong", false},
                                                 {"/softphone/ws?token=s3cret-token", true}}) {
    TwilioCaller client;
    EXPECT_EQ(client.Connect(server_->port(), path), accepted) << path << ": " << client.error();
  }
}

// An unsigned stream's claimed number is not believed: Alice's number with Alice's PIN is not
// verified (the caller is anonymous, and hears what any wrong PIN hears).
TEST_F(CallEdgeTest, AnUnsignedStreamsCallerIdIsNotBelieved) {
  StartServer();  // no auth token: nothing can be checked
  auto caller = Call("CAunsigned", "+15550100");
  EnterPin(*caller, "4821");
  const auto turns = PinTurns("CAunsigned");
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].answer, answer::AnswererConfig{}.wrong_pin_text);
  caller->SendStop();
}

}  // namespace
}  // namespace hotline
