#include "server/calls/softphone_endpoint.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string_view>
#include <utility>

#include "common/log.h"
#include "server/calls/call_connection.h"
#include "server/calls/websocket_call_sink.h"
#include "transport/softphone/protocol.h"

namespace hotline::server {

namespace sp = transport::softphone;

namespace {

constexpr std::string_view kBusyMark = "hotline-over-capacity";
// Busy audio per binary message: 200 ms.
constexpr int kBusyChunkMs = 200;
// A page that never echoes the busy mark is let go this long after the busy audio's length.
constexpr int64_t kBusyGraceMs = 5000;

}  // namespace

struct SoftphoneEndpoint::Shared {
  const pipeline::CallResources* resources = nullptr;
  std::string busy_pcm_8k;  // over_capacity_text, PCM16 LE
  std::string busy_pcm_16k;
  std::unique_ptr<CallTransport> calls;  // the call cap (shared with other transports), metrics
  std::atomic<uint64_t> next_call{1};
  std::string id_prefix;  // "web-<random>-": call ids unique across restarts
};

namespace {

// The session's way back to the browser.
class SoftphoneSink final : public WebSocketCallSink {
 public:
  SoftphoneSink(std::shared_ptr<WebSocketConnection> ws, std::string call_id, Counter* transfers)
      : WebSocketCallSink(std::move(ws), std::move(call_id)), transfers_(transfers) {}

  void SendAudio(std::span<const uint8_t> payload) override {
    SendBinary(std::string(reinterpret_cast<const char*>(payload.data()), payload.size()), "audio");
  }
  void SendMark(std::string_view name) override { SendText(sp::EncodeMark(name), "event"); }
  void Clear() override { SendText(sp::EncodeClear(), "event"); }
  void Hangup(std::string_view reason) override {
    HLOG_INFO("call {}: agent hung up ({})", call_id(), reason);
    End("hangup", reason);
  }
  void Transfer(std::string_view reason) override {
    HLOG_INFO("call {}: transfer to an agent ({})", call_id(), reason);
    transfers_->Increment();
    End("transfer", reason);
  }
  void Event(std::string_view type, std::string_view json) override {
    if (type == "error") {
      // The session's status message is for the log (where it is); the browser learns only
      // which stage failed. The caller hears the session's spoken apology (call.error_text).
      nlohmann::json in = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
      nlohmann::json out = {{"message", "Sorry, something went wrong on our side."}};
      if (in.is_object()) {
        for (const char* key : {"turn", "kind"}) {
          if (in.contains(key)) out[key] = in[key];
        }
      }
      return SendText(sp::EncodeSessionEvent(type, out.dump()), "event");
    }
    SendText(sp::EncodeSessionEvent(type, json), "event");
  }

 private:
  // The event, then a normal close after the queued audio (the page plays what it has).
  void End(std::string_view kind, std::string_view reason) {
    auto ws = Connection();
    if (ws == nullptr) return;
    (void)ws->SendText(sp::EncodeEnd(kind, reason));
    ws->Close(kCloseNormal, std::string(kind) + ": " + std::string(reason));
  }

  Counter* transfers_;
};

class SoftphoneCallHandler final : public WebSocketHandler {
 public:
  SoftphoneCallHandler(std::shared_ptr<SoftphoneEndpoint::Shared> shared,
                       std::shared_ptr<WebSocketConnection> ws)
      : shared_(std::move(shared)), ws_(std::move(ws)), call_(*shared_->calls) {}

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
        if (!message_.audio.empty()) call_.NoteAudio();
        if (auto* session = call_.session()) {
          Status pushed = session->PushAudio(message_.audio, format_);
          if (!pushed.ok() && pushed.code() == StatusCode::kInvalidArgument) {
            return Reject(kClosePolicy, pushed.message());
          }
          if (!pushed.ok()) HLOG_DEBUG("call {}: {}", call_id_, pushed.message());
        }
        return;
      case sp::ClientMessageType::kMark:
        if (auto* session = call_.session()) session->MarkPlayed(message_.mark_name);
        if (over_capacity_ && message_.mark_name == kBusyMark) {
          closing_ = true;
          ws_->Close(kCloseNormal, "over capacity");
        }
        return;
      case sp::ClientMessageType::kDtmf:
        if (auto* session = call_.session()) {
          Status pushed = session->PushDtmf(message_.digit);
          if (!pushed.ok()) HLOG_DEBUG("call {}: dtmf ignored: {}", call_id_, pushed.message());
        }
        return;
      case sp::ClientMessageType::kHangup:
        if (!call_id_.empty()) HLOG_INFO("call {}: the caller hung up", call_id_);
        call_.End();
        closing_ = true;
        ws_->Close(kCloseNormal, "caller hung up");
        return;
    }
  }

  void OnClose(uint16_t code, std::string_view reason) override {
    if (call_.session() != nullptr) {
      HLOG_INFO("call {}: socket closed ({} {})", call_id_, code, reason);
    }
    call_.End();
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
    // A browser can claim any number: believed only from a page that holds the softphone token.
    const std::string caller_id = shared_->calls->registry().config().softphone_token.empty()
                                      ? std::string()
                                      : message_.caller_id;
    entry.caller_id = caller_id;
    entry.remote = ws_->remote();
    const bool admitted = call_.Admit(std::move(entry), [weak_ws](std::string_view reason) {
      if (auto ws = weak_ws.lock()) {
        (void)ws->SendText(sp::EncodeEnd("hangup", "ended: " + std::string(reason)));
        ws->Close(kCloseNormal, "ended: " + std::string(reason));
      }
    });
    if (!admitted) return TurnAway();

    pipeline::CallInfo info;
    info.call_id = call_id_;
    info.caller_id = caller_id;
    info.format = format_;
    auto sink = std::make_shared<SoftphoneSink>(ws_, call_id_, &shared_->calls->transfers());
    // Announced before the session exists: its greeting's audio must not overtake `started`.
    (void)ws_->SendText(sp::EncodeStarted(call_id_, format_.sample_rate_hz));
    Status opened = call_.Open(*shared_->resources, std::move(info), std::move(sink));
    if (!opened.ok()) {
      closing_ = true;
      // The reason is logged (CallConnection::Open); the page gets no internal detail.
      (void)ws_->SendText(
          sp::EncodeError("Sorry, the call could not be started. Please try again."));
      ws_->Close(kCloseInternalError, "cannot open the call");
      call_.End();
      return;
    }
    HLOG_INFO("call {}: softphone call started ({} Hz, from {})", call_id_, format_.sample_rate_hz,
              ws_->remote());
    call_.session()->Start();
  }

  // Over the cap (counted and logged by CallConnection::Admit): the busy message, then let go.
  void TurnAway() {
    over_capacity_ = true;
    const std::string& audio =
        format_.sample_rate_hz == 16000 ? shared_->busy_pcm_16k : shared_->busy_pcm_8k;
    busy_audio_ms_ = static_cast<int64_t>(audio.size() / 2) * 1000 / format_.sample_rate_hz;
    (void)ws_->SendText(sp::EncodeEnd("busy", shared_->calls->registry().over_capacity_text()));
    const size_t chunk = static_cast<size_t>(format_.sample_rate_hz / 1000 * kBusyChunkMs) * 2;
    for (size_t i = 0; i < audio.size(); i += chunk) {
      (void)ws_->SendBinary(audio.substr(i, chunk));
    }
    (void)ws_->SendText(sp::EncodeMark(kBusyMark));
  }

  void Reject(uint16_t code, std::string reason) {
    shared_->calls->protocol_errors().Increment();
    HLOG_WARN("call {}: closing the softphone call: {}",
              call_id_.empty() ? ws_->remote() : call_id_, reason);
    closing_ = true;
    (void)ws_->SendText(sp::EncodeError(reason));
    ws_->Close(code, std::move(reason));
    call_.End();
  }

  std::shared_ptr<SoftphoneEndpoint::Shared> shared_;
  std::shared_ptr<WebSocketConnection> ws_;
  sp::ClientDecoder decoder_;
  sp::ClientMessage message_;
  pipeline::MediaFormat format_;
  CallConnection call_;  // admission, session and sink; ended by its destructor
  std::string call_id_;
  int64_t busy_audio_ms_ = 0;
  int64_t busy_heard_ms_ = 0;
  bool over_capacity_ = false;
  bool closing_ = false;
};

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
  if (registry == nullptr) registry = std::make_shared<CallRegistry>(std::move(config));
  const std::string& busy_text = registry->over_capacity_text();
  ASSIGN_OR_RETURN(std::vector<int16_t> busy_8k,
                   SynthesizeAnnouncement(resources, busy_text, 8000));
  ASSIGN_OR_RETURN(std::vector<int16_t> busy_16k,
                   SynthesizeAnnouncement(resources, busy_text, 16000));
  shared->busy_pcm_8k = EncodePcm16Le(busy_8k);
  shared->busy_pcm_16k = EncodePcm16Le(busy_16k);
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "web-%08x-", static_cast<unsigned>(std::random_device{}()));
  shared->id_prefix = prefix;
  shared->calls =
      std::make_unique<CallTransport>("softphone", "Softphone", std::move(registry),
                                      metrics != nullptr ? *metrics : MetricsRegistry::Global());
  return std::unique_ptr<SoftphoneEndpoint>(new SoftphoneEndpoint(std::move(shared)));
}

int SoftphoneEndpoint::active_calls() const { return shared_->calls->active(); }

WebSocketFactory SoftphoneEndpoint::Factory() {
  std::shared_ptr<Shared> shared = shared_;
  return [shared](
             const Request& upgrade,
             std::shared_ptr<WebSocketConnection> ws) -> Result<std::unique_ptr<WebSocketHandler>> {
    const CallsConfig& calls = shared->calls->registry().config();
    Status allowed = CheckUpgradeOrigin(upgrade, calls.allowed_origins);
    if (allowed.ok() && !calls.softphone_token.empty()) {
      std::string token;
      // ?token=... (a browser cannot set headers on a WebSocket); the token is URL-safe text.
      for (size_t at = 0; at <= upgrade.query.size();) {
        const size_t amp = std::min(upgrade.query.find('&', at), upgrade.query.size());
        const std::string_view pair = std::string_view(upgrade.query).substr(at, amp - at);
        if (pair.rfind("token=", 0) == 0) token = std::string(pair.substr(6));
        at = amp + 1;
      }
      if (!SameSecret(token, calls.softphone_token)) {
        allowed = PermissionDeniedError(
            "/softphone/ws needs the softphone token (calls.softphone_token): open the page as "
            "/softphone?token=...");
      }
    }
    if (!allowed.ok()) {
      HLOG_WARN("softphone: upgrade from {} refused: {}", upgrade.remote, allowed.message());
      return allowed;
    }
    return std::unique_ptr<WebSocketHandler>(new SoftphoneCallHandler(shared, std::move(ws)));
  };
}

}  // namespace hotline::server
