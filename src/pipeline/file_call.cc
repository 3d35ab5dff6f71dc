#include "pipeline/file_call.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "audio/g711.h"
#include "audio/resampler.h"

namespace hotline::pipeline {
namespace {

constexpr int kLineRateHz = 8000;
constexpr size_t kFrameSamples = audio::SamplesForMs(kLineRateHz, audio::kFrameMs);

}  // namespace

void RecordingSink::SendAudio(std::span<const uint8_t> payload) {
  std::lock_guard lock(mu_);
  const size_t now = audio::SamplesForMs(kLineRateHz, static_cast<int>(now_ms_.load()));
  const size_t at = std::max(cursor_, now);
  if (reply_.size() < at + payload.size()) reply_.resize(at + payload.size(), 0);
  audio::DecodeMulaw(payload, std::span<int16_t>(reply_).subspan(at, payload.size()));
  cursor_ = at + payload.size();
}

void RecordingSink::SendMark(std::string_view) {}

void RecordingSink::Clear() {
  std::lock_guard lock(mu_);
  const size_t now = audio::SamplesForMs(kLineRateHz, static_cast<int>(now_ms_.load()));
  if (cursor_ > now) {
    std::fill(reply_.begin() + static_cast<ptrdiff_t>(now), reply_.end(), int16_t{0});
    reply_.resize(now);
    cursor_ = now;
  }
}

void RecordingSink::Hangup(std::string_view reason) {
  std::lock_guard lock(mu_);
  hangup_ = std::string(reason);
}

void RecordingSink::Transfer(std::string_view reason) {
  std::lock_guard lock(mu_);
  transfer_ = std::string(reason);
}

void RecordingSink::Event(std::string_view type, std::string_view json) {
  std::lock_guard lock(mu_);
  events_.emplace_back(std::string(type), std::string(json));
}

audio::AudioBuffer RecordingSink::Reply() const {
  std::lock_guard lock(mu_);
  return audio::AudioBuffer(reply_, kLineRateHz);
}

std::string RecordingSink::hangup_reason() const {
  std::lock_guard lock(mu_);
  return hangup_;
}

std::string RecordingSink::transfer_reason() const {
  std::lock_guard lock(mu_);
  return transfer_;
}

std::vector<std::pair<std::string, std::string>> RecordingSink::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

Result<FileCallResult> RunFileCall(const CallResources& resources, CallInfo info,
                                   const std::vector<audio::AudioBuffer>& segments,
                                   const FileCallOptions& options) {
  if (info.format.codec != audio::Codec::kMulaw || info.format.sample_rate_hz != kLineRateHz) {
    return InvalidArgumentError("a file call runs over an 8 kHz mu-law line");
  }
  std::vector<audio::AudioBuffer> line;
  for (const audio::AudioBuffer& s : segments) {
    ASSIGN_OR_RETURN(audio::AudioBuffer at8, audio::Resample(s, kLineRateHz, resources.resampler));
    line.push_back(std::move(at8));
  }
  std::atomic<int64_t> now_ms{0};
  auto sink = std::make_shared<RecordingSink>(now_ms);
  ASSIGN_OR_RETURN(std::unique_ptr<CallSession> session,
                   CallSession::Create(resources, info, sink));
  const auto started = std::chrono::steady_clock::now();
  session->Start();

  std::vector<uint8_t> mulaw(kFrameSamples);
  const std::vector<int16_t> silence(kFrameSamples, 0);
  Status push_error;
  auto push = [&](std::span<const int16_t> frame) -> bool {
    if (session->ended()) return false;
    audio::EncodeMulaw(frame, mulaw);
    if (options.realtime) {
      std::this_thread::sleep_until(started + std::chrono::milliseconds(now_ms.load()));
    } else {
      while (session->queued_audio() > 2) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    Status s = session->PushAudio(mulaw, info.format);
    // A full queue in real time means the workers are behind: the frame is lost, as on a line.
    if (!s.ok() && s.code() != StatusCode::kResourceExhausted) {
      if (!session->ended()) push_error = s;  // else the agent hung up meanwhile
      return false;
    }
    now_ms.fetch_add(audio::kFrameMs);
    return true;
  };
  auto wall_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
        .count();
  };
  // Silence until the agent has been idle for `gap_ms` (bounded by max_reply_wait_ms of wall
  // time from now).
  auto wait_for_agent = [&](int gap_ms, int min_ms) {
    const double until = wall_ms() + options.max_reply_wait_ms;
    int idle_ms = 0;
    for (int fed = 0; wall_ms() < until; fed += audio::kFrameMs) {
      if (!push(silence)) return;
      // The frame just sent must be heard before the agent can be judged idle.
      const double drain_until = wall_ms() + 200;
      while (session->queued_audio() > 0 && wall_ms() < drain_until) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      idle_ms = session->idle() ? idle_ms + audio::kFrameMs : 0;
      if (fed >= min_ms && idle_ms >= gap_ms) return;
      // Fast mode: while the agent computes, let wall time pass instead of line time.
      if (!options.realtime && !session->idle()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };

  if (options.wait_for_greeting && !resources.call.greeting_text.empty()) {
    wait_for_agent(options.reply_gap_ms, 200);
  }
  for (const audio::AudioBuffer& seg : line) {
    std::span<const int16_t> all(seg.samples);
    for (size_t at = 0; at < all.size() && !session->ended(); at += kFrameSamples) {
      if (at + kFrameSamples <= all.size()) {
        if (!push(all.subspan(at, kFrameSamples))) break;
      } else {
        std::vector<int16_t> last(all.begin() + static_cast<ptrdiff_t>(at), all.end());
        last.resize(kFrameSamples, 0);
        if (!push(last)) break;
      }
    }
    // Long enough for the endpointer to end the turn, then until the reply has played.
    wait_for_agent(options.reply_gap_ms, resources.endpointer.trailing_silence_ms + 200);
    if (session->ended()) break;
  }
  for (int t = 0; t < options.trailing_silence_ms && push(silence); t += audio::kFrameMs) {
  }
  if (!push_error.ok()) return push_error;
  // Let queued frames and any turn still finishing settle before the caller hangs up.
  const double settle_until = wall_ms() + 2000;
  while (session->queued_audio() > 0 && wall_ms() < settle_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  FileCallResult result;
  result.turns = session->Turns();
  result.stats = session->stats();
  session->Hangup();
  session.reset();
  result.reply = sink->Reply();
  // The reply channel is as long as the call.
  result.reply.samples.resize(
      std::max(result.reply.samples.size(),
               audio::SamplesForMs(kLineRateHz, static_cast<int>(now_ms.load()))),
      0);
  result.hangup_reason = sink->hangup_reason();
  result.transfer_reason = sink->transfer_reason();
  result.events = sink->events();
  result.wall_ms = wall_ms();
  return result;
}

}  // namespace hotline::pipeline
