#include "server/calls/call_connection.h"

#include <utility>

#include "audio/codec.h"
#include "audio/resampler.h"
#include "common/log.h"
#include "tts/synthesizer.h"

namespace hotline::server {

CallTransport::CallTransport(std::string name, std::string_view title,
                             std::shared_ptr<CallRegistry> registry, MetricsRegistry& metrics)
    : name_(std::move(name)), registry_(std::move(registry)) {
  const std::string prefix = "hotline_" + name_;
  const std::string t(title);
  calls_ = &metrics.GetCounter(prefix + "_calls_total", t + " calls answered");
  over_capacity_ = &metrics.GetCounter(prefix + "_over_capacity_total",
                                       t + " calls turned away over calls.max_calls");
  protocol_errors_ = &metrics.GetCounter(prefix + "_protocol_errors_total",
                                         t + " connections closed for malformed input");
  transfers_ =
      &metrics.GetCounter(prefix + "_transfers_total", t + " calls handed to a human agent");
  active_gauge_ = &metrics.GetGauge(prefix + "_active_calls", t + " calls in progress");
}

bool CallConnection::Admit(ActiveCall call, EndCallFn end) {
  call_id_ = call.id;
  admission_ = transport_.registry().Admit(std::move(call), std::move(end));
  if (admission_ == nullptr) {
    transport_.over_capacity_->Increment();
    HLOG_WARN("call {}: over capacity ({} calls), turned away", call_id_,
              transport_.registry().max_calls());
    return false;
  }
  counted_ = true;
  transport_.active_gauge_->Set(transport_.active_.fetch_add(1) + 1);
  transport_.calls_->Increment();
  return true;
}

namespace {

// Counts how the agent ended the call, then passes everything to the transport's sink.
class CountingSink final : public DetachableCallSink {
 public:
  CountingSink(std::shared_ptr<DetachableCallSink> inner, CallRegistry& registry)
      : inner_(std::move(inner)), registry_(registry) {}
  void SendAudio(std::span<const uint8_t> payload) override { inner_->SendAudio(payload); }
  void SendMark(std::string_view name) override { inner_->SendMark(name); }
  void Clear() override { inner_->Clear(); }
  void Hangup(std::string_view reason) override {
    CallEndReason why = CallEndReason::kAgentHangup;
    if (reason == pipeline::kHangupNoResponse) why = CallEndReason::kNoSpeech;
    if (reason == pipeline::kHangupTimeLimit) why = CallEndReason::kMaxDuration;
    registry_.CountEnded(why);
    inner_->Hangup(reason);
  }
  void Transfer(std::string_view reason) override {
    registry_.CountEnded(CallEndReason::kTransfer);
    inner_->Transfer(reason);
  }
  void Event(std::string_view type, std::string_view json) override { inner_->Event(type, json); }
  void Detach() override { inner_->Detach(); }

 private:
  const std::shared_ptr<DetachableCallSink> inner_;
  CallRegistry& registry_;
};

}  // namespace

Status CallConnection::Open(const pipeline::CallResources& resources, pipeline::CallInfo info,
                            std::shared_ptr<DetachableCallSink> sink) {
  sink = std::make_shared<CountingSink>(std::move(sink), transport_.registry());
  sink_ = sink;
  // The session says goodbye at the limit; the registry's timer is the backstop (see
  // CallRegistry::kMaxCallBackstopMs).
  info.max_call_ms = transport_.registry().config().max_call_ms;
  auto session = pipeline::CallSession::Create(resources, std::move(info), std::move(sink));
  if (!session.ok()) {
    HLOG_ERROR("call {}: cannot open a session: {}", call_id_, session.status().ToString());
    return session.status();
  }
  session_ = std::move(*session);
  return Status::Ok();
}

void CallConnection::End() {
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
    transport_.active_gauge_->Set(transport_.active_.fetch_sub(1) - 1);
  }
  admission_.reset();
}

Result<std::vector<int16_t>> SynthesizeAnnouncement(const pipeline::CallResources& resources,
                                                    std::string_view text, int rate_hz) {
  ASSIGN_OR_RETURN(auto synth, resources.make_synthesizer());
  ASSIGN_OR_RETURN(audio::AudioBuffer speech, tts::SynthesizeToBuffer(*synth, text));
  ASSIGN_OR_RETURN(audio::AudioBuffer line,
                   audio::Resample(audio::AudioView(speech.samples, speech.sample_rate_hz), rate_hz,
                                   resources.resampler));
  return std::move(line.samples);
}

std::string EncodePcm16Le(std::span<const int16_t> samples) {
  std::string pcm(audio::EncodedBytes(audio::Codec::kPcm16, samples.size()), '\0');
  audio::EncodePcm16Le(samples, {reinterpret_cast<uint8_t*>(pcm.data()), pcm.size()});
  return pcm;
}

Status CheckUpgradeOrigin(const Request& upgrade, const std::vector<std::string>& allowed) {
  const std::string origin = upgrade.HeaderValue("Origin");
  if (origin.empty()) return Status::Ok();
  const std::string host = upgrade.HeaderValue("Host");
  if (!host.empty() && (origin == "http://" + host || origin == "https://" + host)) {
    return Status::Ok();
  }
  for (const auto& a : allowed) {
    if (a == "*" || a == origin) return Status::Ok();
  }
  return PermissionDeniedError("Origin '" + origin.substr(0, 200) + "' may not open " +
                               upgrade.path + "; add it to calls.allowed_origins to allow it");
}

bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

}  // namespace hotline::server
