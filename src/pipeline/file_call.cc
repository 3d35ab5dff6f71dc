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

namespace {

// The caller's side of a file call: pushes the line's frames at the pace the options ask for and
// waits for the agent between the caller's turns.
class FileCaller {
 public:
  FileCaller(CallSession& session, const MediaFormat& format, const FileCallOptions& options,
             std::atomic<int64_t>& now_ms)
      : session_(session),
        format_(format),
        options_(options),
        now_ms_(now_ms),
        started_(std::chrono::steady_clock::now()),
        mulaw_(kFrameSamples),
        silence_(kFrameSamples, 0) {}

  // One 20 ms frame onto the line; false when the call has ended or the push failed.
  bool Push(std::span<const int16_t> frame) {
    if (session_.ended()) return false;
    audio::EncodeMulaw(frame, mulaw_);
    if (options_.realtime) {
      std::this_thread::sleep_until(started_ + std::chrono::milliseconds(now_ms_.load()));
    } else {
      while (session_.queued_audio() > 2)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    Status s = session_.PushAudio(mulaw_, format_);
    // A full queue in real time means the workers are behind: the frame is lost, as on a line.
    if (!s.ok() && s.code() != StatusCode::kResourceExhausted) {
      if (!session_.ended()) push_error_ = s;  // else the agent hung up meanwhile
      return false;
    }
    now_ms_.fetch_add(audio::kFrameMs);
    return true;
  }
  bool PushSilence() { return Push(silence_); }

  // One recording, cut into frames (the last padded with silence).
  void Say(const audio::AudioBuffer& segment) {
    std::span<const int16_t> all(segment.samples);
    for (size_t at = 0; at < all.size() && !session_.ended(); at += kFrameSamples) {
      if (at + kFrameSamples <= all.size()) {
        if (!Push(all.subspan(at, kFrameSamples))) return;
      } else {
        std::vector<int16_t> last(all.begin() + static_cast<ptrdiff_t>(at), all.end());
        last.resize(kFrameSamples, 0);
        if (!Push(last)) return;
      }
    }
  }

  // Silence until the agent has been idle for `gap_ms` and at least `min_ms` were sent (bounded
  // by max_reply_wait_ms of wall time from now).
  void WaitForAgent(int gap_ms, int min_ms) {
    const double until = WallMs() + options_.max_reply_wait_ms;
    int idle_ms = 0;
    for (int fed = 0; WallMs() < until; fed += audio::kFrameMs) {
      if (!PushSilence()) return;
      // The frame just sent must be heard before the agent can be judged idle.
      const double drain_until = WallMs() + 200;
      while (session_.queued_audio() > 0 && WallMs() < drain_until) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      idle_ms = session_.idle() ? idle_ms + audio::kFrameMs : 0;
      if (fed >= min_ms && idle_ms >= gap_ms) return;
      // Fast mode: while the agent computes, let wall time pass instead of line time.
      if (!options_.realtime && !session_.idle()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  // Lets queued frames and any turn still finishing settle (at most 2 s).
  void Settle() {
    const double settle_until = WallMs() + 2000;
    while (session_.queued_audio() > 0 && WallMs() < settle_until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  double WallMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_)
        .count();
  }
  const Status& push_error() const { return push_error_; }

 private:
  CallSession& session_;
  const MediaFormat format_;
  const FileCallOptions& options_;
  std::atomic<int64_t>& now_ms_;
  const std::chrono::steady_clock::time_point started_;
  std::vector<uint8_t> mulaw_;
  const std::vector<int16_t> silence_;
  Status push_error_;
};

}  // namespace

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
  const MediaFormat format = info.format;
  ASSIGN_OR_RETURN(std::unique_ptr<CallSession> session,
                   CallSession::Create(resources, std::move(info), sink));
  FileCaller caller(*session, format, options, now_ms);
  session->Start();

  if (options.wait_for_greeting && !resources.call.greeting_text.empty()) {
    caller.WaitForAgent(options.reply_gap_ms, 200);
  }
  for (const audio::AudioBuffer& seg : line) {
    caller.Say(seg);
    // Long enough for the endpointer to end the turn, then until the reply has played.
    caller.WaitForAgent(options.reply_gap_ms, resources.endpointer.trailing_silence_ms + 200);
    if (session->ended()) break;
  }
  for (int t = 0; t < options.trailing_silence_ms && caller.PushSilence(); t += audio::kFrameMs) {
  }
  if (!caller.push_error().ok()) return caller.push_error();
  // Let queued frames and any turn still finishing settle before the caller hangs up.
  caller.Settle();
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
  result.wall_ms = caller.WallMs();
  return result;
}

}  // namespace hotline::pipeline
