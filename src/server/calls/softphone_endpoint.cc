#include "server/calls/softphone_endpoint.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <string_view>
#include <utility>

#include "audio/resampler.h"
#include "common/log.h"
#include "transport/softphone/protocol.h"
#include "tts/synthesizer.h"

namespace hotline::server {

namespace sp = transport::softphone;

namespace {

constexpr std::string_view kBusyMark = "hotline-over-capacity";
// Busy audio per binary message: 200 ms.
constexpr int kBusyChunkMs = 200;
// A page that never echoes the busy mark is let go this long after the busy audio's length.
constexpr int64_t kBusyGraceMs = 5000;

}  // namespace

Status SoftphoneConfig::Validate() const {
  if (max_calls < 1 || max_calls > 100000) {
    return InvalidArgumentError("softphone max_calls must be in [1, 100000], got " +
                                std::to_string(max_calls));
  }
  if (over_capacity_text.empty() || over_capacity_text.size() > 1000) {
    return InvalidArgumentError("over_capacity_text must be 1..1000 characters");
  }
  return Status::Ok();
}

struct SoftphoneEndpoint::Shared {
  const pipeline::CallResources* resources = nullptr;
  SoftphoneConfig config;
  std::string busy_pcm_8k;  // over_capacity_text, PCM16 LE
  std::string busy_pcm_16k;
  std::shared_ptr<CallRegistry> registry;
  std::atomic<int> active{0};
  std::atomic<uint64_t> next_call{1};
  std::string id_prefix;  // "web-<random>-": call ids unique across restarts
  Counter* calls = nullptr;
  Counter* over_capacity = nullptr;
  Counter* protocol_errors = nullptr;
  Counter* transfers = nullptr;
  Gauge* active_gauge = nullptr;
};

namespace {

// The session's way back to the browser.
class SoftphoneSink final : public pipeline::CallSink {
 public:
  SoftphoneSink(std::shared_ptr<WebSocketConnection> ws, std::string call_id, Counter* transfers)
      : ws_(std::move(ws)), call_id_(std::move(call_id)), transfers_(transfers) {}

  // The call is over for the transport; later sends are ignored (see TwilioSink::Detach).
  void Detach() {
    std::lock_guard<std::mutex> lock(mu_);
    ws_.reset();
  }

  void SendAudio(std::span<const uint8_t> payload) override {
    auto ws = Connection();
    if (ws == nullptr) return;
    Status s =
        ws->SendBinary(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
    if (!s.ok() && !ws->closed()) {
      HLOG_WARN("call {}: outbound audio dropped: {}", call_id_, s.message());
    }
  }
  void SendMark(std::string_view name) override { Send(sp::EncodeMark(name)); }
  void Clear() override { Send(sp::EncodeClear()); }
  void Hangup(std::string_view reason) override {
    HLOG_INFO("call {}: agent hung up ({})", call_id_, reason);
    End("hangup", reason);
  }
  void Transfer(std::string_view reason) override {
    HLOG_INFO("call {}: transfer to an agent ({})", call_id_, reason);
    transfers_->Increment();
    End("transfer", reason);
  }
  void Event(std::string_view type, std::string_view json) override {
    Send(sp::EncodeSessionEvent(type, json));
  }

 private:
  std::shared_ptr<WebSocketConnection> Connection() {
    std::lock_guard<std::mutex> lock(mu_);
    return ws_;
  }
  void Send(std::string message) {
    auto ws = Connection();
    if (ws == nullptr) return;
    Status s = ws->SendText(std::move(message));
    if (!s.ok() && !ws->closed()) {
      HLOG_WARN("call {}: outbound event dropped: {}", call_id_, s.message());
    }
  }
  // The event, then a normal close after the queued audio (the page plays what it has).
  void End(std::string_view kind, std::string_view reason) {
    auto ws = Connection();
    if (ws == nullptr) return;
    (void)ws->SendText(sp::EncodeEnd(kind, reason));
    ws->Close(kCloseNormal, std::string(kind) + ": " + std::string(reason));
  }

  std::mutex mu_;
  std::shared_ptr<WebSocketConnection> ws_;  // guarded by mu_; null once detached
  const std::string call_id_;
  Counter* transfers_;
};

class SoftphoneCallHandler final : public WebSocketHandler {
 public:
  SoftphoneCallHandler(std::shared_ptr<SoftphoneEndpoint::Shared> shared,
                       std::shared_ptr<WebSocketConnection> ws)
      : shared_(std::move(shared)), ws_(std::move(ws)) {}

  ~SoftphoneCallHandler() override { EndSession(); }

  void OnMessage(std::string_view data, bool binary) override {
    if (closing_) return;
    Status s = decoder_.Decode(data, binary, message_);
    if (!s.ok()) {
      return Reject(s.code() == StatusCode::kResourceExhausted ? kCloseTooBig : kClosePolicy,
                    s.message());
    }
    switch (message_.type) {
      case sp::ClientMessageType::kStart:
        return OnStart();
      case sp::ClientMessageType::kAudio:
        if (over_capacity_) {
          busy_heard_ms_ +=
              static_cast<int64_t>(message_.audio.size() / 2) * 1000 / decoder_.sample_rate_hz();
          if (busy_heard_ms_ > busy_audio_ms_ + kBusyGraceMs) {
            closing_ = true;
            ws_->Close(kCloseNormal, "over capacity");
          }
          return;
        }
        if (session_ != nullptr) {
          Status pushed = session_->PushAudio(message_.audio, format_);
          if (!pushed.ok() && pushed.code() == StatusCode::kInvalidArgument) {
            return Reject(kClosePolicy, pushed.message());
          }
          if (!pushed.ok()) HLOG_DEBUG("call {}: {}", call_id_, pushed.message());
        }
        return;
      case sp::ClientMessageType::kMark:
        if (session_ != nullptr) session_->MarkPlayed(message_.mark_name);
        if (over_capacity_ && message_.mark_name == kBusyMark) {
          closing_ = true;
          ws_->Close(kCloseNormal, "over capacity");
        }
        return;
      case sp::ClientMessageType::kDtmf:
        if (session_ != nullptr) {
          Status pushed = session_->PushDtmf(message_.digit);
          if (!pushed.ok()) HLOG_DEBUG("call {}: dtmf ignored: {}", call_id_, pushed.message());
        }
        return;
      case sp::ClientMessageType::kHangup:
        if (!call_id_.empty()) HLOG_INFO("call {}: the caller hung up", call_id_);
        EndSession();
        closing_ = true;
        ws_->Close(kCloseNormal, "caller hung up");
        return;
    }
  }

  void OnClose(uint16_t code, std::string_view reason) override {
    if (session_ != nullptr) HLOG_INFO("call {}: socket closed ({} {})", call_id_, code, reason);
    EndSession();
  }

 private:
  void OnStart() {
    format_.codec = audio::Codec::kPcm16;
    format_.sample_rate_hz = message_.sample_rate_hz;
    call_id_ = shared_->id_prefix + std::to_string(shared_->next_call.fetch_add(1));
    std::weak_ptr<WebSocketConnection> weak_ws = ws_;
    ActiveCall entry;
    entry.id = call_id_;
    entry.transport = "softphone";
    entry.caller_id = message_.caller_id;
    entry.remote = ws_->remote();
    admission_ = shared_->registry->Admit(std::move(entry), [weak_ws](std::string_view reason) {
      if (auto ws = weak_ws.lock()) {
        (void)ws->SendText(sp::EncodeEnd("hangup", "ended: " + std::string(reason)));
        ws->Close(kCloseNormal, "ended: " + std::string(reason));
      }
    });
    if (admission_ == nullptr) return TurnAway();

    shared_->active.fetch_add(1);
    counted_ = true;
    shared_->active_gauge->Set(shared_->active.load());
    shared_->calls->Increment();

    pipeline::CallInfo info;
    info.call_id = call_id_;
    info.caller_id = message_.caller_id;
    info.format = format_;
    auto sink = std::make_shared<SoftphoneSink>(ws_, call_id_, shared_->transfers);
    sink_ = sink;
    // Announced before the session exists: its greeting's audio must not overtake `started`.
    (void)ws_->SendText(sp::EncodeStarted(call_id_, format_.sample_rate_hz));
    auto session = pipeline::CallSession::Create(*shared_->resources, std::move(info), sink);
    if (!session.ok()) {
      HLOG_ERROR("call {}: cannot open a session: {}", call_id_, session.status().ToString());
      closing_ = true;
      (void)ws_->SendText(sp::EncodeError("cannot open the call: " + session.status().message()));
      ws_->Close(kCloseInternalError, "cannot open the call: " + session.status().message());
      EndSession();
      return;
    }
    session_ = std::move(*session);
    HLOG_INFO("call {}: softphone call started ({} Hz, from {})", call_id_, format_.sample_rate_hz,
              ws_->remote());
    session_->Start();
  }

  void TurnAway() {
    shared_->over_capacity->Increment();
    HLOG_WARN("call {}: over capacity ({} calls), turned away", call_id_,
              shared_->registry->max_calls());
    over_capacity_ = true;
    const std::string& audio =
        format_.sample_rate_hz == 16000 ? shared_->busy_pcm_16k : shared_->busy_pcm_8k;
    busy_audio_ms_ = static_cast<int64_t>(audio.size() / 2) * 1000 / format_.sample_rate_hz;
    (void)ws_->SendText(sp::EncodeEnd("busy", shared_->registry->over_capacity_text()));
    const size_t chunk = static_cast<size_t>(format_.sample_rate_hz / 1000 * kBusyChunkMs) * 2;
    for (size_t i = 0; i < audio.size(); i += chunk) {
      (void)ws_->SendBinary(audio.substr(i, chunk));
    }
    (void)ws_->SendText(sp::EncodeMark(kBusyMark));
  }

  void Reject(uint16_t code, std::string reason) {
    shared_->protocol_errors->Increment();
    HLOG_WARN("call {}: closing the softphone call: {}",
              call_id_.empty() ? ws_->remote() : call_id_, reason);
    closing_ = true;
    (void)ws_->SendText(sp::EncodeError(reason));
    ws_->Close(code, std::move(reason));
    EndSession();
  }

  // Hangs the session up (never blocks) and gives back its place.
  void EndSession() {
    if (session_ != nullptr) {
      session_->Hangup();
      session_.reset();
    }
    if (sink_ != nullptr) {
      sink_->Detach();
      sink_.reset();
    }
    if (counted_) {
      counted_ = false;
      shared_->active.fetch_sub(1);
      shared_->active_gauge->Set(shared_->active.load());
    }
    admission_.reset();
  }

  std::shared_ptr<SoftphoneEndpoint::Shared> shared_;
  std::shared_ptr<WebSocketConnection> ws_;
  sp::ClientDecoder decoder_;
  sp::ClientMessage message_;
  pipeline::MediaFormat format_;
  std::unique_ptr<pipeline::CallSession> session_;
  std::shared_ptr<SoftphoneSink> sink_;
  std::unique_ptr<CallRegistry::Admission> admission_;
  std::string call_id_;
  int64_t busy_audio_ms_ = 0;
  int64_t busy_heard_ms_ = 0;
  bool counted_ = false;
  bool over_capacity_ = false;
  bool closing_ = false;
};

Result<std::string> SynthesizePcm16(const pipeline::CallResources& resources, std::string_view text,
                                    int rate_hz) {
  ASSIGN_OR_RETURN(auto synth, resources.make_synthesizer());
  ASSIGN_OR_RETURN(audio::AudioBuffer speech, tts::SynthesizeToBuffer(*synth, text));
  ASSIGN_OR_RETURN(audio::AudioBuffer line,
                   audio::Resample(audio::AudioView(speech.samples, speech.sample_rate_hz), rate_hz,
                                   resources.resampler));
  std::string pcm(line.samples.size() * 2, '\0');
  for (size_t i = 0; i < line.samples.size(); ++i) {
    const auto v = static_cast<uint16_t>(line.samples[i]);
    pcm[2 * i] = static_cast<char>(v & 0xff);
    pcm[2 * i + 1] = static_cast<char>(v >> 8);
  }
  return pcm;
}

}  // namespace

Result<std::unique_ptr<SoftphoneEndpoint>> SoftphoneEndpoint::Create(
    const pipeline::CallResources& resources, SoftphoneConfig config, MetricsRegistry* metrics,
    std::shared_ptr<CallRegistry> registry) {
  RETURN_IF_ERROR(config.Validate());
  RETURN_IF_ERROR(resources.Validate());
  auto shared = std::make_shared<Shared>();
  shared->resources = &resources;
  // One cap and one busy message for every transport: a shared registry's text wins, as on
  // Twilio and AudioSocket; without one, a registry of this endpoint's own from `config`.
  if (registry == nullptr) {
    CallsConfig own;
    own.max_calls = config.max_calls;
    own.over_capacity_text = config.over_capacity_text;
    registry = std::make_shared<CallRegistry>(std::move(own));
  }
  shared->registry = std::move(registry);
  const std::string& busy_text = shared->registry->over_capacity_text();
  ASSIGN_OR_RETURN(shared->busy_pcm_8k, SynthesizePcm16(resources, busy_text, 8000));
  ASSIGN_OR_RETURN(shared->busy_pcm_16k, SynthesizePcm16(resources, busy_text, 16000));
  shared->config = std::move(config);
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "web-%08x-", static_cast<unsigned>(std::random_device{}()));
  shared->id_prefix = prefix;
  MetricsRegistry& m = metrics != nullptr ? *metrics : MetricsRegistry::Global();
  shared->calls =
      &m.GetCounter("hotline_softphone_calls_total", "Browser softphone calls answered");
  shared->over_capacity = &m.GetCounter("hotline_softphone_over_capacity_total",
                                        "Softphone calls turned away at the call cap");
  shared->protocol_errors = &m.GetCounter("hotline_softphone_protocol_errors_total",
                                          "Softphone calls closed for malformed input");
  shared->transfers =
      &m.GetCounter("hotline_softphone_transfers_total", "Softphone calls handed to a human agent");
  shared->active_gauge =
      &m.GetGauge("hotline_softphone_active_calls", "Softphone calls in progress");
  return std::unique_ptr<SoftphoneEndpoint>(new SoftphoneEndpoint(std::move(shared)));
}

int SoftphoneEndpoint::active_calls() const { return shared_->active.load(); }

WebSocketFactory SoftphoneEndpoint::Factory() {
  std::shared_ptr<Shared> shared = shared_;
  return [shared](
             const Request&,
             std::shared_ptr<WebSocketConnection> ws) -> Result<std::unique_ptr<WebSocketHandler>> {
    return std::unique_ptr<WebSocketHandler>(new SoftphoneCallHandler(shared, std::move(ws)));
  };
}

}  // namespace hotline::server
