// End to end in a real browser: headless Chromium (Debian package `chromium`) opens /softphone on
// a loopback HttpServer backed by the real call stack, with a fake microphone that plays a caller
// question synthesized by flite, and must hear a spoken reply; then /dashboard must draw charts
// with data. The page's state is read, and screenshots taken, over the Chrome DevTools Protocol
// through Hotline's own test WebSocket client.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "answer/kb/knowledge_base.h"
#include "asr/lm_builder.h"
#include "audio/resampler.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "net/http_client.h"
#include "pipeline/call_stack.h"
#include "server/calls/call_registry.h"
#include "server/calls/softphone_endpoint.h"
#include "server/http_server.h"
#include "server/testing/test_clients.h"
#include "server/web/dashboard.h"
#include "server/web/web_assets.h"
#include "transport/base64.h"
#include "tts/synthesizer.h"

namespace hotline {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

const std::string kKbCsv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";

std::string Scratch(const std::string& name) {
  return "/tmp/hotline_e2e_web_" + std::to_string(getpid()) + "_" + name;
}

constexpr char kNoChromium[] =
    "chromium is not installed: install the Debian package `chromium` (scripts/setup does)";

// The chromium binary, or "" when the package is not installed. HOTLINE_CHROMIUM names another
// binary (or a missing one, to see the failure a machine without the package gets).
std::string FindChromium() {
  if (const char* env = std::getenv("HOTLINE_CHROMIUM"); env != nullptr && *env != 0) {
    return access(env, X_OK) == 0 ? env : "";
  }
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

// The caller's question at 16 kHz: `lead_ms` of silence (the greeting plays meanwhile), the
// words, then silence so the endpointer sees the turn end.
std::vector<int16_t> CallerQuestion(const std::string& text, int lead_ms, int tail_ms) {
  tts::TtsConfig tc;
  tc.flite.voice = "cmu_us_rms";  // not the agent's voice
  auto synth = tts::CreateSynthesizer(tc);
  EXPECT_TRUE(synth.ok()) << synth.status();
  auto speech = tts::SynthesizeToBuffer(**synth, text);
  EXPECT_TRUE(speech.ok()) << speech.status();
  auto wide = audio::Resample(audio::AudioView(speech->samples, speech->sample_rate_hz), 16000);
  EXPECT_TRUE(wide.ok()) << wide.status();
  std::vector<int16_t> pcm(static_cast<size_t>(lead_ms) * 16, 0);
  pcm.insert(pcm.end(), wide->samples.begin(), wide->samples.end());
  pcm.insert(pcm.end(), static_cast<size_t>(tail_ms) * 16, 0);
  return pcm;
}

// One headless Chromium with one page, driven over the DevTools Protocol.
class Browser {
 public:
  ~Browser() {
    cdp_.reset();
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      for (int i = 0; i < 50 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(Ms(40));
      }
      if (::waitpid(pid_, nullptr, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
      }
    }
    std::error_code ec;
    if (!profile_.empty()) std::filesystem::remove_all(profile_, ec);
    if (!log_.empty()) std::filesystem::remove(log_, ec);
  }

  // Starts chromium on `url`; fake microphone from `wav` when given. Empty: it started; otherwise
  // why not.
  std::string Launch(const std::string& url, const std::string& wav = "") {
    const std::string chromium = FindChromium();
    if (chromium.empty()) {
      return kNoChromium;
    }
    profile_ = Scratch("profile_" + std::to_string(++launches_));
    std::filesystem::create_directories(profile_);
    std::vector<std::string> args = {chromium,
                                     "--headless=new",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--disable-dev-shm-usage",
                                     "--no-first-run",
                                     "--no-default-browser-check",
                                     "--disable-extensions",
                                     "--disable-background-networking",
                                     "--mute-audio",
                                     "--window-size=1280,1000",
                                     "--autoplay-policy=no-user-gesture-required",
                                     "--use-fake-ui-for-media-stream",
                                     "--use-fake-device-for-media-stream",
                                     "--remote-debugging-port=0",
                                     "--user-data-dir=" + profile_};
    if (!wav.empty()) args.push_back("--use-file-for-fake-audio-capture=" + wav + "%noloop");
    args.push_back(url);
    log_ = profile_ + ".log";
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (pid_ < 0) return "fork failed";

    // The DevTools port, from the profile's DevToolsActivePort file.
    int port = 0;
    const auto deadline = Clock::now() + Ms(15000);
    while (port == 0 && Clock::now() < deadline) {
      std::ifstream f(profile_ + "/DevToolsActivePort");
      if (f >> port && port > 0) break;
      port = 0;
      if (::waitpid(pid_, nullptr, WNOHANG) != 0) {
        pid_ = -1;
        return "chromium exited at start: " + Log();
      }
      std::this_thread::sleep_for(Ms(50));
    }
    if (port == 0) return "chromium did not open its DevTools port: " + Log();

    // The page target's WebSocket.
    std::string ws_path;
    while (ws_path.empty() && Clock::now() < deadline) {
      auto r = net::HttpClient().Send(
          net::HttpRequest::Get("http://127.0.0.1:" + std::to_string(port) + "/json/list"));
      if (r.ok() && r->status == 200) {
        json list = json::parse(r->body, nullptr, false);
        for (const auto& t : list) {
          if (t.value("type", "") == "page" && t.contains("webSocketDebuggerUrl")) {
            std::smatch m;
            const std::string u = t["webSocketDebuggerUrl"];
            if (std::regex_search(u, m, std::regex("ws://[^/]+(/.*)"))) ws_path = m[1].str();
          }
        }
      }
      if (ws_path.empty()) std::this_thread::sleep_for(Ms(50));
    }
    if (ws_path.empty()) return "no page target in /json/list";
    cdp_ = std::make_unique<server::testing::WsClient>(port, ws_path);
    if (!cdp_->ok()) return "DevTools WebSocket: " + cdp_->error().message();
    // A bounded read: a silent browser fails the test instead of hanging it.
    cdp_->SetReadTimeout(std::chrono::seconds(10));
    return "";
  }

  // One DevTools command; its "result" (null on error or time-out).
  json Command(const std::string& method, json params = json::object()) {
    const int id = ++next_id_;
    json msg = {{"id", id}, {"method", method}, {"params", std::move(params)}};
    if (!cdp_->SendText(msg.dump())) return nullptr;
    std::string in;
    while (cdp_->Read(in)) {
      json j = json::parse(in, nullptr, false);
      if (j.is_object() && j.value("id", 0) == id) {
        if (j.contains("error")) {
          last_error_ = method + ": " + j["error"].dump();
          return nullptr;
        }
        return j["result"];
      }
    }
    return nullptr;
  }

  // Runtime.evaluate of `expression`, returned by value (awaiting a promise). `quiet`: an error
  // (the page still loading, an exception) is null without failing the test.
  json Eval(const std::string& expression, bool quiet = false) {
    json r = Command("Runtime.evaluate",
                     {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}});
    if (r.is_null() || !r.contains("result")) {
      if (!quiet) ADD_FAILURE() << "evaluate failed: " << last_error_;
      return nullptr;
    }
    if (r.contains("exceptionDetails")) {
      if (!quiet) ADD_FAILURE() << "page exception: " << r["exceptionDetails"].dump();
      return nullptr;
    }
    return r["result"].value("value", json());
  }

  // Polls `expression` (a JS boolean) every 200 ms until true or `timeout_ms`.
  bool WaitFor(const std::string& expression, int timeout_ms) {
    const auto deadline = Clock::now() + Ms(timeout_ms);
    while (Clock::now() < deadline) {
      if (Eval(expression, /*quiet=*/true) == json(true)) return true;
      std::this_thread::sleep_for(Ms(200));
    }
    return false;
  }

  // A PNG of the viewport.
  std::string Screenshot() {
    json r = Command("Page.captureScreenshot", {{"format", "png"}});
    if (r.is_null() || !r.contains("data")) return "";
    auto png = transport::Base64Decode(r["data"].get<std::string>());
    return png.ok() ? *png : "";
  }

  std::string Log() const {
    std::ifstream f(log_);
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
  }

 private:
  pid_t pid_ = -1;
  std::string profile_;
  std::string log_;
  std::unique_ptr<server::testing::WsClient> cdp_;
  int next_id_ = 0;
  std::string last_error_;
  static inline int launches_ = 0;
};

double Metric(const std::string& name) {
  double v = 0;
  for (const CollectedMetric& m : MetricsRegistry::Global().Collect(name)) {
    if (m.name == name) v += m.value;
  }
  return v;
}

class BrowserPagesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::getenv("HOTLINE_E2E_DEBUG")) spdlog::set_level(spdlog::level::debug);
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
    o.answer.kb_direct_min_score = 4.0;
    o.call.reprompt_after_ms = 60000;
    auto stack = pipeline::CallStack::Build(o);
    ASSERT_TRUE(stack.ok()) << stack.status();
    stack_ = std::move(*stack).release();
  }
  static void TearDownTestSuite() {
    delete stack_;
    stack_ = nullptr;
    for (const auto& p : {lm_path_, lm_path_ + ".dict", Scratch("kb.sqlite")}) {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  }

  void SetUp() override {
    ASSERT_NE(stack_, nullptr);
    registry_ = std::make_shared<server::CallRegistry>(4);
    server::DashboardOptions d;
    d.interval_ms = 250;  // points accumulate quickly enough for a short test
    d.window_points = 240;
    dashboard_ = std::make_unique<server::Dashboard>(MetricsRegistry::Global(), d,
                                                     [r = registry_] { return r->active(); });
    server::ServerConfig sc;
    sc.port = 0;
    auto srv = server::HttpServer::Create(sc);
    ASSERT_TRUE(srv.ok()) << srv.status();
    server_ = std::move(*srv);
    auto phone = server::SoftphoneEndpoint::Create(stack_->resources(), {}, nullptr, registry_);
    ASSERT_TRUE(phone.ok()) << phone.status();
    phone_ = std::move(*phone);
    ASSERT_TRUE(server_->HandleWebSocket("/softphone/ws", phone_->Factory()).ok());
    ASSERT_TRUE(server::RegisterWebPages(*server_).ok());
    ASSERT_TRUE(dashboard_->Register(*server_).ok());
    ASSERT_TRUE(server_->Start().ok());
    dashboard_->Start();
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (dashboard_) dashboard_->Stop();
    std::error_code ec;
    std::filesystem::remove(Scratch("caller.wav"), ec);
  }

  static inline pipeline::CallStack* stack_ = nullptr;
  static inline std::string lm_path_;
  std::shared_ptr<server::CallRegistry> registry_;
  std::unique_ptr<server::Dashboard> dashboard_;
  std::unique_ptr<server::HttpServer> server_;
  std::unique_ptr<server::SoftphoneEndpoint> phone_;
};

TEST_F(BrowserPagesTest, SoftphoneInChromiumHearsASpokenReply) {
  ASSERT_FALSE(FindChromium().empty()) << kNoChromium;
  // The greeting (about 3 s) plays first; the caller speaks after it.
  const std::string wav = Scratch("caller.wav");
  ASSERT_TRUE(audio::WriteWavFile(
                  wav,
                  audio::AudioView(CallerQuestion("how can i cancel my order", 4500, 6000), 16000),
                  audio::Codec::kPcm16)
                  .ok());
  const double turns_before = Metric("hotline_pipeline_turns_total");
  const double calls_before = Metric("hotline_softphone_calls_total");

  Browser browser;
  const std::string launched = browser.Launch(server_->Url("/softphone?autostart=1"), wav);
  ASSERT_TRUE(launched.empty()) << launched;
  ASSERT_TRUE(browser.WaitFor("!!window.hotlineSoftphone && hotlineSoftphone.callId !== ''", 8000))
      << browser.Eval("JSON.stringify(window.hotlineSoftphone || null)").dump() << browser.Log();

  // A turn of the caller's, answered and spoken: text shown, audio received and played.
  const bool answered = browser.WaitFor(
      "hotlineSoftphone.turns.some(t => t.kind === 'caller' && t.answer && t.answer.length > 0)"
      " && hotlineSoftphone.samplesPlayed > hotlineSoftphone.sampleRate",
      20000);
  json st = browser.Eval(
      "JSON.stringify({s: hotlineSoftphone, text: document.getElementById('transcript').innerText,"
      " rows: document.querySelectorAll('#latency tbody tr').length})");
  ASSERT_TRUE(st.is_string());
  json page = json::parse(st.get<std::string>());
  std::printf("softphone page: %s\n", page.dump().substr(0, 1500).c_str());
  ASSERT_TRUE(answered) << page.dump() << browser.Log();
  const json& s = page["s"];
  EXPECT_EQ(s["sampleRate"], 16000);
  EXPECT_GT(s["framesSent"].get<int>(), 100);            // 20 ms frames of the fake microphone
  EXPECT_GT(s["audioBytesReceived"].get<int>(), 32000);  // over a second of reply at 16 kHz
  EXPECT_GT(s["marksEchoed"].get<int>(), 0);
  EXPECT_EQ(s["error"], "");
  // The answer is on topic and shown on the page; the latency table has the turn.
  std::string answer;
  for (const auto& t : s["turns"]) {
    if (t["kind"] == "caller") answer = t["answer"];
  }
  std::printf("the agent answered: %s\n", answer.c_str());
  EXPECT_TRUE(answer.find("order") != std::string::npos ||
              answer.find("cancel") != std::string::npos)
      << answer;
  EXPECT_NE(page["text"].get<std::string>().find(answer.substr(0, 30)), std::string::npos);
  EXPECT_GE(page["rows"].get<int>(), 1);
  // The server counted the call and the answered turn; the call holds a place under the cap.
  EXPECT_EQ(Metric("hotline_softphone_calls_total"), calls_before + 1);
  EXPECT_GE(Metric("hotline_pipeline_turns_total"), turns_before + 1);
  EXPECT_EQ(registry_->active(), 1);
  auto calls = registry_->List();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].transport, "softphone");

  if (std::getenv("HOTLINE_E2E_KEEP")) {
    const std::string shot = Scratch("softphone.png");
    std::ofstream(shot, std::ios::binary) << browser.Screenshot();
    std::printf("softphone screenshot: %s\n", shot.c_str());
  }

  // Hanging up from the page ends the call on the server.
  browser.Eval("document.getElementById('hangup').click(), true");
  for (int i = 0; i < 50 && registry_->active() > 0; ++i) std::this_thread::sleep_for(Ms(50));
  EXPECT_EQ(registry_->active(), 0);
}

// A call through the softphone protocol (Hotline's own WebSocket client), then the dashboard.
TEST_F(BrowserPagesTest, DashboardInChromiumDrawsChartsWithData) {
  ASSERT_FALSE(FindChromium().empty()) << kNoChromium;
  const std::vector<int16_t> question = CallerQuestion("how can i cancel my order", 3500, 2500);
  server::testing::WsClient caller(server_->port(), "/softphone/ws");
  ASSERT_TRUE(caller.ok());
  caller.SetReadTimeout(std::chrono::seconds(20));
  ASSERT_TRUE(caller.SendText(R"({"type":"start","sample_rate":16000})"));
  // The reader collects marks to echo (as the page does; the sending thread echoes them) and
  // watches for the answered turn.
  std::atomic<bool> answered{false};
  std::mutex mu;
  std::vector<std::string> marks;
  std::thread reader([&] {
    std::string in;
    while (caller.Read(in)) {
      json j = json::parse(in, nullptr, false);
      if (!j.is_object()) continue;  // audio
      if (j["type"] == "mark") {
        std::lock_guard lock(mu);
        marks.push_back(json{{"type", "mark"}, {"name", j["name"]}}.dump());
      }
      if (j["type"] == "turn" && j["data"]["kind"] == "caller") answered = true;
    }
  });
  // Real time: 20 ms frames every 20 ms; a few seconds of silence after, or until answered.
  auto next = Clock::now();
  for (size_t i = 0; i + 320 <= question.size() + 320 * 150 && !answered; i += 320) {
    std::string frame(640, '\0');
    if (i + 320 <= question.size()) std::memcpy(frame.data(), question.data() + i, 640);
    ASSERT_TRUE(caller.SendBinary(frame));
    {
      std::lock_guard lock(mu);
      for (const auto& m : marks) caller.SendText(m);
      marks.clear();
    }
    next += Ms(20);
    std::this_thread::sleep_for(next - Clock::now());
  }
  EXPECT_TRUE(answered.load()) << "the call got no answered turn";
  // Hanging up while the reader is inside the same stream: the server's close arrives there as
  // this thread's write returns (WsClient runs both on its one io thread).
  EXPECT_TRUE(caller.SendText(R"({"type":"hangup"})"));
  reader.join();

  // Let the sampler take a few points after the turn.
  std::this_thread::sleep_for(Ms(600));

  Browser browser;
  const std::string launched = browser.Launch(server_->Url("/dashboard"));
  ASSERT_TRUE(launched.empty()) << launched;
  // Charts drawn from the server-side history: the voice-to-voice and calls charts have lines.
  const std::string count_points =
      "(id) => Math.max(0, ...Array.from(document.querySelectorAll('#chart-' + id + ' polyline'))"
      ".map(p => p.getAttribute('points').trim().split(/\\s+/).length))";
  const bool drawn = browser.WaitFor("(" + count_points + ")('v2v') >= 2 && (" + count_points +
                                         ")('calls') >= 2 && (" + count_points + ")('tiers') >= 2",
                                     8000);
  json dom = browser.Eval("JSON.stringify({v2v: (" + count_points + ")('v2v'), calls: (" +
                          count_points + ")('calls'), tiers: (" + count_points +
                          ")('tiers'), p50: document.querySelector('#num-p50 .value').textContent,"
                          " turns: document.querySelector('#num-turns .value').textContent,"
                          " points: window.hotlineDashboard.series.t.length})");
  ASSERT_TRUE(dom.is_string());
  std::printf("dashboard: %s\n", dom.get<std::string>().c_str());
  ASSERT_TRUE(drawn) << dom.dump() << browser.Log();
  json d = json::parse(dom.get<std::string>());
  EXPECT_NE(d["p50"], "–");  // a voice-to-voice figure from the call
  EXPECT_GE(std::stoi(d["turns"].get<std::string>()), 1);

  // The screenshot is a PNG with content: much larger than the same viewport left blank.
  const std::string png = browser.Screenshot();
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const std::string shot = Scratch("dashboard.png");
  std::ofstream(shot, std::ios::binary) << png;
  std::printf("dashboard screenshot: %s (%zu bytes)\n", shot.c_str(), png.size());
  browser.Eval("document.body.innerHTML = ''; document.body.className = 'blank'; true");
  const std::string blank = browser.Screenshot();
  ASSERT_FALSE(blank.empty());
  std::printf("blank page screenshot: %zu bytes\n", blank.size());
  EXPECT_GT(png.size(), 4 * blank.size());
  if (!std::getenv("HOTLINE_E2E_KEEP")) std::filesystem::remove(shot);
}

}  // namespace
}  // namespace hotline

namespace hotline {
namespace {

// Reads text events until `type` arrives (or the socket closes); audio bytes are counted.
json ReadUntilEvent(server::testing::WsClient& ws, const std::string& type, size_t* audio_bytes) {
  std::string in;
  while (ws.Read(in)) {
    json j = json::parse(in, nullptr, false);
    if (!j.is_object()) {
      if (audio_bytes != nullptr) *audio_bytes += in.size();
      continue;
    }
    if (j.value("type", "") == type) return j;
  }
  return nullptr;
}

void BoundReads(server::testing::WsClient& ws) { ws.SetReadTimeout(std::chrono::seconds(15)); }

TEST_F(BrowserPagesTest, BadInputClosesOnlyThatCallWithTheReason) {
  // A good call in parallel keeps going.
  server::testing::WsClient good(server_->port(), "/softphone/ws");
  ASSERT_TRUE(good.ok());
  BoundReads(good);
  ASSERT_TRUE(good.SendText(R"({"type":"start","sample_rate":8000})"));
  ASSERT_FALSE(ReadUntilEvent(good, "started", nullptr).is_null());
  const double errors_before = Metric("hotline_softphone_protocol_errors_total");

  struct Case {
    std::vector<std::pair<std::string, bool>> messages;  // (data, binary)
    int code;
    const char* reason;
  };
  const std::string start = R"({"type":"start","sample_rate":16000})";
  const std::vector<Case> cases = {
      {{{std::string(640, '\0'), true}}, 1008, "audio before the start message"},
      {{{R"({"type":"start","sample_rate":44100})", false}}, 1008, "must be 8000 or 16000"},
      {{{start, false}, {std::string(641, '\0'), true}}, 1008, "not a whole number"},
      {{{start, false}, {std::string(7000, '\0'), true}}, 1008, "outside 320..6400 bytes"},
      {{{start, false}, {start, false}}, 1008, "a second start message"},
      {{{start, false}, {"not json", false}}, 1008, "not valid JSON"},
      {{{start, false}, {R"({"type":"dtmf","digit":"x"})", false}}, 1008, "one of 0-9"},
      {{{start, false}, {std::string(5000, ' '), false}}, 1009, "exceeds 4096"},
  };
  for (const Case& c : cases) {
    server::testing::WsClient bad(server_->port(), "/softphone/ws");
    ASSERT_TRUE(bad.ok());
    BoundReads(bad);
    for (const auto& [data, binary] : c.messages) {
      ASSERT_TRUE(binary ? bad.SendBinary(data) : bad.SendText(data));
    }
    json err = ReadUntilEvent(bad, "error", nullptr);
    ASSERT_FALSE(err.is_null()) << c.reason;
    EXPECT_NE(err["message"].get<std::string>().find(c.reason), std::string::npos) << err.dump();
    EXPECT_EQ(bad.ReadUntilClosed(), c.code) << c.reason;
    EXPECT_NE(bad.close_reason().find(c.reason), std::string::npos) << bad.close_reason();
  }
  EXPECT_EQ(Metric("hotline_softphone_protocol_errors_total"), errors_before + cases.size());
  // Every bad call gave its place back; the good one still holds its own and is still served.
  for (int i = 0; i < 50 && registry_->active() != 1; ++i) std::this_thread::sleep_for(Ms(20));
  EXPECT_EQ(registry_->active(), 1);
  ASSERT_TRUE(good.SendBinary(std::string(320, '\0')));
  ASSERT_TRUE(good.SendText(R"({"type":"dtmf","digit":"1"})"));
  ASSERT_TRUE(good.SendText(R"({"type":"hangup"})"));
  EXPECT_EQ(good.ReadUntilClosed(), 1000);
  EXPECT_EQ(good.close_reason(), "caller hung up");
}

TEST_F(BrowserPagesTest, OverTheSharedCapACallerHearsTheBusyMessage) {
  // The registry's four places, three taken by other transports' calls.
  std::vector<std::unique_ptr<server::CallRegistry::Admission>> held;
  for (int i = 0; i < 3; ++i) {
    server::ActiveCall call;
    call.id = "CA" + std::to_string(i);
    call.transport = "twilio";
    held.push_back(registry_->Admit(std::move(call), [](std::string_view) {}));
  }
  server::testing::WsClient first(server_->port(), "/softphone/ws");
  ASSERT_TRUE(first.ok());
  BoundReads(first);
  ASSERT_TRUE(first.SendText(R"({"type":"start","sample_rate":16000})"));
  ASSERT_FALSE(ReadUntilEvent(first, "started", nullptr).is_null());
  EXPECT_EQ(registry_->active(), 4);

  const double busy_before = Metric("hotline_softphone_over_capacity_total");
  server::testing::WsClient late(server_->port(), "/softphone/ws");
  ASSERT_TRUE(late.ok());
  BoundReads(late);
  ASSERT_TRUE(late.SendText(R"({"type":"start","sample_rate":8000})"));
  json busy = ReadUntilEvent(late, "busy", nullptr);
  ASSERT_FALSE(busy.is_null());
  EXPECT_NE(busy["reason"].get<std::string>().find("busy"), std::string::npos);
  size_t audio = 0;
  json mark = ReadUntilEvent(late, "mark", &audio);
  ASSERT_FALSE(mark.is_null());
  EXPECT_GT(audio, 8000u * 2);  // over a second of the busy message at 8 kHz
  EXPECT_EQ(audio % 2, 0u);
  EXPECT_EQ(Metric("hotline_softphone_over_capacity_total"), busy_before + 1);
  // Played: the page echoes the mark and is let go.
  ASSERT_TRUE(late.SendText(json{{"type", "mark"}, {"name", mark["name"]}}.dump()));
  EXPECT_EQ(late.ReadUntilClosed(), 1000);
  EXPECT_EQ(late.close_reason(), "over capacity");
  EXPECT_EQ(registry_->active(), 4);

  // Ending the softphone call through the registry (as the admin API does).
  const auto calls = registry_->List();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls.back().transport, "softphone");
  EXPECT_EQ(registry_->End(calls.back().id, "ended by an administrator"), 1u);
  json ended = ReadUntilEvent(first, "hangup", nullptr);
  ASSERT_FALSE(ended.is_null());
  EXPECT_NE(ended["reason"].get<std::string>().find("ended by an administrator"),
            std::string::npos);
  EXPECT_EQ(first.ReadUntilClosed(), 1000);
  for (int i = 0; i < 50 && registry_->active() != 3; ++i) std::this_thread::sleep_for(Ms(20));
  EXPECT_EQ(registry_->active(), 3);
}

}  // namespace
}  // namespace hotline
