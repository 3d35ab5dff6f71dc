// Fakes of the pipeline's collaborators for unit tests: a scripted recognizer, a tone
// synthesizer, a scriptable answerer and a recording CallSink; plus helpers that make
// speech-like and silent telephone audio. Header-only; tests only.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "asr/recognizer.h"
#include "audio/pcm.h"
#include "pipeline/call_sink.h"
#include "pipeline/turn_answerer.h"
#include "tts/synthesizer.h"

namespace hotline::pipeline::testing {

// Voiced-speech-like 8 kHz audio (harmonics of 140 Hz through two formants).
inline std::vector<int16_t> Vowel(int ms, double amplitude = 3000) {
  std::vector<int16_t> out(audio::SamplesForMs(8000, ms));
  for (size_t i = 0; i < out.size(); ++i) {
    double t = static_cast<double>(i) / 8000;
    double v = 0;
    for (int h = 1; h * 140.0 < 3400; ++h) {
      double f = h * 140.0;
      double gain =
          1.0 / (1 + std::pow((f - 700) / 150, 2)) + 0.5 / (1 + std::pow((f - 1200) / 200, 2));
      v += gain * std::sin(2 * std::numbers::pi * f * t);
    }
    out[i] = audio::SaturateToInt16(static_cast<int32_t>(amplitude * v));
  }
  return out;
}

inline std::vector<int16_t> Silence(int ms) {
  return std::vector<int16_t>(audio::SamplesForMs(8000, ms), 0);
}

// Waits up to `timeout` for `cond`; returns its last value.
inline bool WaitFor(const std::function<bool()>& cond,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > until) return cond();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Each stream returns the next scripted transcript (the last one repeats). The partial becomes
// that transcript, stable, after `stable_after_frames` frames.
class FakeRecognizer : public asr::Recognizer {
 public:
  explicit FakeRecognizer(std::vector<std::string> texts) : texts_(std::move(texts)) {}
  std::atomic<bool> fail_finish{false};
  std::atomic<int> finish_delay_ms{0};  // the final pass sleeps this long (a stuck backend)
  // The final transcript adds words the (stable) partial did not have.
  std::atomic<bool> final_says_more{false};
  std::atomic<int> stable_after_frames{1000000};
  std::atomic<int> streams{0};
  std::atomic<int> finals_started{0}, finals_done{0};  // final passes begun and returned

  Result<std::unique_ptr<asr::RecognizerStream>> CreateStream(int rate) override {
    std::string text;
    {
      std::lock_guard lock(mu_);
      text = texts_.empty() ? "" : texts_[std::min(next_, texts_.size() - 1)];
      ++next_;
    }
    streams.fetch_add(1);
    return std::unique_ptr<asr::RecognizerStream>(new Stream(*this, std::move(text), rate));
  }
  std::string name() const override { return "fake"; }
  void SetTexts(std::vector<std::string> texts) {
    std::lock_guard lock(mu_);
    texts_ = std::move(texts);
    next_ = 0;
  }

 private:
  class Stream : public asr::RecognizerStream {
   public:
    Stream(FakeRecognizer& r, std::string text, int rate) : r_(r), text_(std::move(text)), rate_(rate) {}
    Status AcceptFrames(audio::AudioView pcm) override {
      if (pcm.sample_rate_hz != rate_) return InvalidArgumentError("wrong rate");
      if (++frames_ == r_.stable_after_frames.load()) {
        partial_.text = text_;
        partial_.stable = true;
        ++partial_.revision;
      }
      return Status::Ok();
    }
    const asr::AsrPartial& partial() const override { return partial_; }
    Result<asr::AsrResult> Finish() override {
      r_.finals_started.fetch_add(1);
      struct Done {
        FakeRecognizer& r;
        ~Done() { r.finals_done.fetch_add(1); }
      } done{r_};
      if (r_.fail_finish.load()) return InternalError("decoder failed");
      if (int ms = r_.finish_delay_ms.load(); ms > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      }
      asr::AsrResult res;
      res.text = r_.final_says_more.load() ? text_ + " and cancel it" : text_;
      res.confidence = 0.9f;
      return res;
    }

   private:
    FakeRecognizer& r_;
    std::string text_;
    int rate_;
    int frames_ = 0;
    asr::AsrPartial partial_;
  };
  std::mutex mu_;
  std::vector<std::string> texts_;
  size_t next_ = 0;
};

// A quiet tone, `ms_per_char` of audio per character, in 20 ms chunks at 8 kHz.
class FakeSynthesizer : public tts::Synthesizer {
 public:
  struct Shared {
    std::mutex mu;
    std::vector<std::string> texts;
    std::string fail_when_contains;  // texts containing this fail
    int ms_per_char = 10;
    int lead_silence_ms = 0;  // each utterance opens with this much digital silence
  };
  explicit FakeSynthesizer(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::string_view backend() const override { return "fake"; }
  const std::string& voice_id() const override { return voice_; }
  int sample_rate_hz() const override { return 8000; }
  Status Synthesize(std::string_view text, const tts::AudioChunkCallback& on_chunk,
                    const CancelToken* cancel) override {
    int ms;
    int lead_ms;
    {
      std::lock_guard lock(shared_->mu);
      lead_ms = shared_->lead_silence_ms;
      shared_->texts.emplace_back(text);
      if (!shared_->fail_when_contains.empty() &&
          text.find(shared_->fail_when_contains) != std::string_view::npos) {
        return UnavailableError("synthesis backend down");
      }
      ms = shared_->ms_per_char * static_cast<int>(text.size());
    }
    std::vector<int16_t> chunk(160);
    for (int at = 0; at < lead_ms; at += 20) RETURN_IF_ERROR(on_chunk(chunk));
    size_t n = 0;
    for (int at = 0; at < ms; at += 20) {
      if (IsCancelled(cancel)) return CancelledError("cancelled");
      for (auto& s : chunk) s = static_cast<int16_t>(((n++ / 10) % 2) ? 300 : -300);
      RETURN_IF_ERROR(on_chunk(chunk));
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<Shared> shared_;
  std::string voice_ = "fake/tone";
};

// Answers every turn with `reply` (or an error / fallback); can block until released or
// cancelled, and can stream sentences.
class FakeAnswerer : public TurnAnswerer {
 public:
  std::mutex mu;
  std::condition_variable cv;
  std::string reply = "Your order ships tomorrow.";
  std::vector<std::string> stream_sentences;  // when set: streamed before returning
  bool fail = false;
  bool fallback = false;
  bool block = false;  // wait for Release() or the cancel token
  std::string gated;   // with `fallback`: the LLM gate's reason the answer reports
  bool degraded = false;  // with `fallback`: a tier failed (TurnAnswer::degraded)
  std::vector<std::string> turns;
  std::vector<std::vector<answer::ChatMessage>> histories;  // the history each Answer was given
  std::vector<std::optional<double>> asr_confidences;  // AnswerHooks::asr_confidence per turn
  std::vector<std::string> pins;
  std::vector<std::string> peeks;
  std::optional<TurnAnswer> peek_answer;
  std::string peek_only_for;  // non-empty: Peek answers only this partial (nullopt otherwise)
  int free_peeks = -1;        // >= 0: the Peek calls after this many wait for Release()
  std::atomic<bool> saw_cancel{false};
  std::atomic<int> answers_started{0};
  std::function<void()> on_pin;  // called as SubmitPin starts (set before the call starts)
  // AnswerHooks::schedule of the answer in progress (valid while it blocks).
  std::atomic<const llm::GenerationSchedule*> schedule{nullptr};
  llm::GenerationSchedule::Value schedule_at_start;  // guarded by mu

  void Release() {
    std::lock_guard lock(mu);
    block = false;
    free_peeks = -1;
    cv.notify_all();
  }

  Result<TurnAnswer> Answer(std::string_view turn, answer::CallerSession&,
                            const std::vector<answer::ChatMessage>& history,
                            const AnswerHooks& hooks) override {
    answers_started.fetch_add(1);
    schedule.store(hooks.schedule);
    std::vector<std::string> sentences;
    {
      std::lock_guard lock(mu);
      turns.emplace_back(turn);
      histories.push_back(history);
      asr_confidences.push_back(hooks.asr_confidence);
      if (hooks.schedule != nullptr) schedule_at_start = hooks.schedule->Get();
      sentences = stream_sentences;
    }
    for (const std::string& s : sentences) {
      if (IsCancelled(hooks.cancel)) break;
      if (hooks.on_sentence) hooks.on_sentence(s);
    }
    {
      std::unique_lock lock(mu);
      while (block && !IsCancelled(hooks.cancel)) cv.wait_for(lock, std::chrono::milliseconds(2));
    }
    if (IsCancelled(hooks.cancel)) {
      saw_cancel.store(true);
      return CancelledError("cancelled");
    }
    std::lock_guard lock(mu);
    if (fail) return UnavailableError("knowledge base unavailable");
    TurnAnswer a;
    a.text = sentences.empty() ? reply : "";
    for (const auto& s : sentences) a.text += (a.text.empty() ? "" : " ") + s;
    a.sentences = sentences.empty() ? std::vector<std::string>{reply} : sentences;
    a.tier = fallback ? TurnTier::kFallback : TurnTier::kKnowledgeBase;
    a.fallback = fallback;
    if (fallback) a.gated = gated;
    a.degraded = fallback && degraded;
    a.understood_ms = 0;
    a.streamed = !sentences.empty() && (hooks.stream_fallback || !fallback);
    return a;
  }
  Result<TurnAnswer> SubmitPin(answer::CallerSession&, std::string_view digits) override {
    if (on_pin) on_pin();
    std::lock_guard lock(mu);
    pins.emplace_back(digits);
    TurnAnswer a;
    a.text = "Thanks, you are verified.";
    a.tier = TurnTier::kIdentify;
    return a;
  }
  Result<std::optional<TurnAnswer>> Peek(std::string_view partial,
                                         const answer::CallerSession&) override {
    std::unique_lock lock(mu);
    peeks.emplace_back(partial);
    while (free_peeks >= 0 && peeks.size() > static_cast<size_t>(free_peeks)) {
      cv.wait_for(lock, std::chrono::milliseconds(2));
    }
    if (!peek_only_for.empty() && partial != peek_only_for) return std::optional<TurnAnswer>();
    return peek_answer;
  }
  bool TrustsTranscript(double asr_confidence) override {
    std::lock_guard lock(mu);
    return asr_confidence >= trust_floor;
  }
  Result<bool> Understands(std::string_view partial, const answer::CallerSession&) override {
    std::lock_guard lock(mu);
    understood.emplace_back(partial);
    return understands;
  }
  Status Prefetch(std::string_view partial, const answer::CallerSession&,
                  const std::vector<answer::ChatMessage>&) override {
    std::lock_guard lock(mu);
    prefetches.emplace_back(partial);
    return Status::Ok();
  }
  std::vector<std::string> prefetches;  // guarded by mu
  double trust_floor = 0;               // TrustsTranscript: confidence at least this (mu)
  bool understands = false;             // what Understands says (guarded by mu)
  std::vector<std::string> understood;  // the partials it was asked about (guarded by mu)
};

// Records everything the session sends. Thread-safe.
class TestSink : public CallSink {
 public:
  void SendAudio(std::span<const uint8_t> payload) override {
    std::lock_guard lock(mu_);
    bytes_ += payload.size();
  }
  void SendMark(std::string_view name) override {
    std::lock_guard lock(mu_);
    marks_.emplace_back(name);
  }
  void Clear() override { clears_.fetch_add(1); }
  void Hangup(std::string_view reason) override {
    std::lock_guard lock(mu_);
    hangup_ = std::string(reason);
  }
  void Transfer(std::string_view reason) override {
    std::lock_guard lock(mu_);
    transfer_ = std::string(reason);
  }
  void Event(std::string_view type, std::string_view json) override {
    std::lock_guard lock(mu_);
    events_.emplace_back(std::string(type), std::string(json));
  }
  size_t bytes() const { std::lock_guard lock(mu_); return bytes_; }
  int clears() const { return clears_.load(); }
  std::vector<std::string> marks() const { std::lock_guard lock(mu_); return marks_; }
  std::string hangup() const { std::lock_guard lock(mu_); return hangup_; }
  std::string transfer() const { std::lock_guard lock(mu_); return transfer_; }
  int CountEvents(std::string_view type) const {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const auto& e : events_) n += e.first == type;
    return n;
  }

 private:
  mutable std::mutex mu_;
  size_t bytes_ = 0;
  std::atomic<int> clears_{0};
  std::vector<std::string> marks_;
  std::string hangup_, transfer_;
  std::vector<std::pair<std::string, std::string>> events_;
};

}  // namespace hotline::pipeline::testing
