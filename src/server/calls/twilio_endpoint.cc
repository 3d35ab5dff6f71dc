#include "server/calls/twilio_endpoint.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "audio/g711.h"
#include "common/log.h"
#include "server/calls/call_connection.h"
#include "server/calls/websocket_call_sink.h"
#include "transport/twilio/media_streams.h"
#include "transport/twilio/request_signature.h"

namespace hotline::server {

namespace twilio = transport::twilio;

namespace {

constexpr int kTelephoneRateHz = 8000;
constexpr std::string_view kBusyMark = "hotline-over-capacity";
// Audio per outbound media message when the endpoint itself speaks (over capacity): 200 ms.
constexpr size_t kBusyChunkBytes = 1600;

}  // namespace

Status TwilioConfig::Validate() const {
  if (!public_url.empty() && public_url.rfind("wss://", 0) != 0 &&
      public_url.rfind("ws://", 0) != 0) {
    return InvalidArgumentError(
        "public_url must start with wss:// (the stream URL in the TwiML), "
        "got '" +
        public_url + "'");
  }
  return Status::Ok();
}

std::string TwilioConfig::EffectiveAuthToken() const {
  if (!auth_token.empty()) return auth_token;
  for (const char* name : {"HOTLINE_TWILIO_AUTH_TOKEN", "TWILIO_AUTH_TOKEN"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  }
  return std::string();
}

struct TwilioEndpoint::Shared {
  const pipeline::CallResources* resources = nullptr;
  TwilioConfig config;
  std::string auth_token;  // config.EffectiveAuthToken(), read once
  Counter* refused_upgrades = nullptr;
  std::string busy_mulaw;  // the registry's over-capacity text, 8 kHz μ-law
  std::unique_ptr<CallTransport> calls;  // the call cap (shared with other transports), metrics
};

namespace {

// The session's way back to the caller: queues Twilio messages on the WebSocket.
class TwilioSink final : public WebSocketCallSink {
 public:
  TwilioSink(std::shared_ptr<WebSocketConnection> ws, std::string stream_sid, std::string call_id,
             Counter* transfers)
      : WebSocketCallSink(std::move(ws), std::move(call_id)),
        stream_sid_(std::move(stream_sid)),
        transfers_(transfers) {}

  void SendAudio(std::span<const uint8_t> payload) override {
    std::string_view bytes(reinterpret_cast<const char*>(payload.data()), payload.size());
    SendText(twilio::EncodeMedia(stream_sid_, bytes), "message");
  }
  void SendMark(std::string_view name) override {
    SendText(twilio::EncodeMark(stream_sid_, name), "message");
  }
  void Clear() override { SendText(twilio::EncodeClear(stream_sid_), "message"); }
  void Hangup(std::string_view reason) override {
    HLOG_INFO("call {}: agent hung up ({})", call_id(), reason);
    if (auto ws = Connection()) ws->Close(kCloseNormal, "hangup: " + std::string(reason));
  }
  void Transfer(std::string_view reason) override {
    HLOG_INFO("call {}: transfer to an agent ({})", call_id(), reason);
    transfers_->Increment();
    // Closing the stream lets Twilio continue with the TwiML after <Connect> (the agents' queue).
    if (auto ws = Connection()) ws->Close(kCloseNormal, "transfer: " + std::string(reason));
  }
  void Event(std::string_view type, std::string_view json) override {
    HLOG_DEBUG("call {}: {} {}", call_id(), type, json);
  }

 private:
  const std::string stream_sid_;
  Counter* transfers_;
};

class TwilioCallHandler final : public WebSocketHandler {
 public:
  // `signed_stream`: the upgrade carried a valid X-Twilio-Signature.
  TwilioCallHandler(std::shared_ptr<TwilioEndpoint::Shared> shared,
                    std::shared_ptr<WebSocketConnection> ws, bool signed_stream)
      : shared_(std::move(shared)),
        ws_(std::move(ws)),
        call_(*shared_->calls),
        signed_stream_(signed_stream) {}

  void OnMessage(std::string_view data, bool binary) override {
    if (closing_) return;
    if (binary) return Reject(kClosePolicy, "binary frames are not Twilio Media Streams messages");
    Status s = decoder_.Decode(data, message_);
    if (!s.ok()) {
      return Reject(s.code() == StatusCode::kResourceExhausted ? kCloseTooBig : kClosePolicy,
                    s.message());
    }
    switch (message_.event) {
      case twilio::EventType::kConnected:
      case twilio::EventType::kUnknown:
        return;
      case twilio::EventType::kStart:
        return OnStart();
      case twilio::EventType::kMedia:
        call_.NoteAudio();
        if (auto* session = call_.session()) {
          const auto* p = reinterpret_cast<const uint8_t*>(message_.payload.data());
          Status pushed = session->PushAudio(std::span<const uint8_t>(p, message_.payload.size()),
                                             pipeline::MediaFormat{});
          // A full queue drops 20 ms and is counted by the session; a bad payload ends the call.
          if (!pushed.ok() && pushed.code() == StatusCode::kInvalidArgument) {
            return Reject(kClosePolicy, pushed.message());
          }
          if (!pushed.ok()) HLOG_DEBUG("call {}: {}", call_id_, pushed.message());
        }
        return;
      case twilio::EventType::kDtmf:
        if (auto* session = call_.session()) {
          Status pushed = session->PushDtmf(message_.digit);
          if (!pushed.ok()) HLOG_DEBUG("call {}: dtmf ignored: {}", call_id_, pushed.message());
        }
        return;
      case twilio::EventType::kMark:
        if (auto* session = call_.session()) session->MarkPlayed(message_.mark_name);
        if (over_capacity_ && message_.mark_name == kBusyMark) {
          closing_ = true;
          ws_->Close(kCloseNormal, "over capacity");
        }
        return;
      case twilio::EventType::kStop:
        call_.End();
        closing_ = true;
        ws_->Close(kCloseNormal, "stream stopped");
        return;
    }
  }

  void OnClose(uint16_t code, std::string_view reason) override {
    if (call_.session() != nullptr) {
      HLOG_INFO("call {}: stream closed ({} {})", call_id_, code, reason);
    }
    call_.End();
  }

 private:
  void OnStart() {
    if (call_.admitted() || over_capacity_) return Reject(kClosePolicy, "a second start event");
    const auto& f = message_.media_format;
    if (f.encoding != "audio/x-mulaw" || f.sample_rate_hz != kTelephoneRateHz || f.channels != 1) {
      return Reject(kClosePolicy, "unsupported media format " + f.encoding + " " +
                                      std::to_string(f.sample_rate_hz) + " Hz " +
                                      std::to_string(f.channels) +
                                      " channel(s); Hotline takes audio/x-mulaw 8000 Hz mono");
    }
    call_id_ = message_.call_sid.empty() ? message_.stream_sid : message_.call_sid;
    std::weak_ptr<WebSocketConnection> weak_ws = ws_;
    ActiveCall entry;
    entry.id = call_id_;
    entry.transport = "twilio";
    entry.remote = ws_->remote();
    const bool admitted = call_.Admit(std::move(entry), [weak_ws](std::string_view reason) {
      if (auto ws = weak_ws.lock()) ws->Close(kCloseNormal, "ended: " + std::string(reason));
    });
    if (!admitted) {
      over_capacity_ = true;
      const std::string& audio = shared_->busy_mulaw;
      for (size_t i = 0; i < audio.size(); i += kBusyChunkBytes) {
        (void)ws_->SendText(twilio::EncodeMedia(
            message_.stream_sid, std::string_view(audio).substr(i, kBusyChunkBytes)));
      }
      (void)ws_->SendText(twilio::EncodeMark(message_.stream_sid, kBusyMark));
      return;
    }
    pipeline::CallInfo info;
    info.call_id = call_id_;
    // Anyone can open /twilio and claim a number: only a signed stream's parameters are Twilio's.
    const bool vouched = signed_stream_ || shared_->config.trust_unsigned_caller_id;
    for (const auto& name :
         vouched ? shared_->config.caller_id_parameters : std::vector<std::string>{}) {
      auto it = std::find_if(message_.custom_parameters.begin(), message_.custom_parameters.end(),
                             [&](const auto& kv) { return kv.first == name; });
      if (it != message_.custom_parameters.end() && !it->second.empty()) {
        info.caller_id = it->second;
        break;
      }
    }
    auto sink = std::make_shared<TwilioSink>(ws_, message_.stream_sid, call_id_,
                                             &shared_->calls->transfers());
    Status opened = call_.Open(*shared_->resources, std::move(info), std::move(sink));
    if (!opened.ok()) {
      closing_ = true;
      ws_->Close(kCloseInternalError, "cannot open the call");  // the reason is in the log
      call_.End();
      return;
    }
    HLOG_INFO("call {}: started (stream {})", call_id_, message_.stream_sid);
    call_.session()->Start();
  }

  void Reject(uint16_t code, std::string reason) {
    shared_->calls->protocol_errors().Increment();
    HLOG_WARN("call {}: closing the stream: {}", call_id_.empty() ? ws_->remote() : call_id_,
              reason);
    closing_ = true;
    ws_->Close(code, std::move(reason));
    call_.End();
  }

  std::shared_ptr<TwilioEndpoint::Shared> shared_;
  std::shared_ptr<WebSocketConnection> ws_;
  twilio::MediaStreamDecoder decoder_;
  twilio::InboundMessage message_;  // reused: steady-state media does not allocate
  CallConnection call_;             // admission, session and sink; ended by its destructor
  std::string call_id_;
  const bool signed_stream_;
  bool over_capacity_ = false;
  bool closing_ = false;
};

Result<std::string> SynthesizeMulaw(const pipeline::CallResources& resources, std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<int16_t> narrow,
                   SynthesizeAnnouncement(resources, text, kTelephoneRateHz));
  std::string mulaw(narrow.size(), '\0');
  audio::EncodeMulaw(narrow,
                     std::span<uint8_t>(reinterpret_cast<uint8_t*>(mulaw.data()), mulaw.size()));
  return mulaw;
}

}  // namespace

Result<std::unique_ptr<TwilioEndpoint>> TwilioEndpoint::Create(
    const pipeline::CallResources& resources, TwilioConfig config, MetricsRegistry* metrics,
    std::shared_ptr<CallRegistry> registry) {
  RETURN_IF_ERROR(config.Validate());
  RETURN_IF_ERROR(resources.Validate());
  auto shared = std::make_shared<Shared>();
  shared->resources = &resources;
  if (registry == nullptr) registry = std::make_shared<CallRegistry>(CallsConfig{});
  ASSIGN_OR_RETURN(shared->busy_mulaw, SynthesizeMulaw(resources, registry->over_capacity_text()));
  shared->config = std::move(config);
  shared->auth_token = shared->config.EffectiveAuthToken();
  MetricsRegistry& m = metrics != nullptr ? *metrics : MetricsRegistry::Global();
  shared->refused_upgrades = &m.GetCounter(
      "hotline_twilio_upgrades_refused_total",
      "/twilio upgrades refused: foreign Origin or missing/invalid X-Twilio-Signature");
  shared->calls =
      std::make_unique<CallTransport>("twilio", "Twilio", std::move(registry),
                                      metrics != nullptr ? *metrics : MetricsRegistry::Global());
  return std::unique_ptr<TwilioEndpoint>(new TwilioEndpoint(std::move(shared)));
}

int TwilioEndpoint::active_calls() const { return shared_->calls->active(); }

WebSocketFactory TwilioEndpoint::Factory() {
  std::shared_ptr<Shared> shared = shared_;
  return [shared](
             const Request& upgrade,
             std::shared_ptr<WebSocketConnection> ws) -> Result<std::unique_ptr<WebSocketHandler>> {
    if (Status s = CheckUpgradeOrigin(upgrade, shared->calls->registry().config().allowed_origins);
        !s.ok()) {
      shared->refused_upgrades->Increment();
      HLOG_WARN("twilio: upgrade from {} refused: {}", upgrade.remote, s.message());
      return s;
    }
    bool signed_stream = false;
    if (!shared->auth_token.empty() && shared->config.validate_signature) {
      const std::string url = shared->config.public_url.empty()
                                  ? "wss://" + upgrade.HeaderValue("Host") + upgrade.target
                                  : shared->config.public_url;
      const std::string signature = upgrade.HeaderValue("X-Twilio-Signature");
      if (!transport::twilio::VerifyRequestSignature(shared->auth_token, url, signature)) {
        shared->refused_upgrades->Increment();
        HLOG_WARN("twilio: upgrade from {} refused: {} X-Twilio-Signature for {}", upgrade.remote,
                  signature.empty() ? "no" : "an invalid", url);
        return PermissionDeniedError(
            "a valid X-Twilio-Signature is required (twilio.auth_token is set); check "
            "twilio.public_url against the stream URL in the TwiML");
      }
      signed_stream = true;
    }
    return std::unique_ptr<WebSocketHandler>(
        new TwilioCallHandler(shared, std::move(ws), signed_stream));
  };
}

}  // namespace hotline::server
