#include "pipeline/call_session.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>

#include <nlohmann/json.hpp>

#include "answer/understand/understanding.h"
#include "audio/codec.h"
#include "common/log.h"
#include "common/log_format.h"
#include "pipeline/call_session_core.h"

namespace hotline::pipeline {
namespace {

constexpr size_t kMaxDtmfDigits = 32;

std::string Redacted(std::string_view text) {
  if (text.empty()) return {};
  return answer::Understand(text).redacted;
}

}  // namespace

Status MediaFormat::Validate() const {
  if (sample_rate_hz != 8000 && sample_rate_hz != 16000) {
    return InvalidArgumentError("call media rate must be 8000 or 16000 Hz, got " +
                                std::to_string(sample_rate_hz));
  }
  if (codec != audio::Codec::kPcm16 && sample_rate_hz != 8000) {
    return InvalidArgumentError("G.711 call media must be 8000 Hz");
  }
  return Status::Ok();
}

Status CallResources::Validate() const {
  if (recognizer == nullptr) return InvalidArgumentError("call resources: no recognizer");
  if (!make_synthesizer) return InvalidArgumentError("call resources: no synthesizer factory");
  if (answerer == nullptr) return InvalidArgumentError("call resources: no answerer");
  if (pool == nullptr) return InvalidArgumentError("call resources: no worker pool");
  RETURN_IF_ERROR(call.Validate().WithContext("call"));
  RETURN_IF_ERROR(vad.Validate().WithContext("vad"));
  RETURN_IF_ERROR(endpointer.Validate().WithContext("endpointer"));
  RETURN_IF_ERROR(barge_in.Validate().WithContext("barge_in"));
  RETURN_IF_ERROR(chunker.Validate().WithContext("chunker"));
  return Status::Ok();
}

std::string TurnReport::OutcomeText() const {
  if (outcome == TurnOutcome::kError) return "error:" + error;
  return std::string(TurnOutcomeName(outcome));
}

std::string PhraseText(std::string_view text) {
  std::string out;
  bool space = false;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '\'') {
      if (space && !out.empty()) out.push_back(' ');
      space = false;
      if (c != '\'') out.push_back(static_cast<char>(std::tolower(c)));
    } else {
      space = true;
    }
  }
  return out;
}

bool MatchesPhrase(std::string_view turn, const std::vector<std::string>& phrases, bool anywhere) {
  std::string padded = " " + std::string(turn) + " ";
  for (const std::string& raw : phrases) {
    std::string p = PhraseText(raw);
    if (p.empty()) continue;
    if (turn == p) return true;
    if (turn.size() > p.size() && turn.substr(turn.size() - p.size()) == p &&
        turn[turn.size() - p.size() - 1] == ' ') {
      return true;
    }
    if (anywhere && padded.find(" " + p + " ") != std::string::npos) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Creation and the transport-facing API (any thread, never blocks).

Result<std::unique_ptr<CallSession>> CallSession::Create(const CallResources& resources,
                                                         CallInfo info,
                                                         std::shared_ptr<CallSink> sink) {
  RETURN_IF_ERROR(resources.Validate());
  RETURN_IF_ERROR(info.format.Validate());
  if (sink == nullptr) return InvalidArgumentError("call session needs a sink");
  // VAD, endpointer and recognizer all take the line's own rate: the recognizer's narrowband
  // path (resampling plus filling the empty 4-8 kHz band the wideband model expects) reads
  // telephone audio far better than audio upsampled here would be read.
  const int in_rate = info.format.sample_rate_hz;
  ASSIGN_OR_RETURN(audio::Vad vad, audio::Vad::Create(resources.vad, in_rate));
  ASSIGN_OR_RETURN(audio::FrameChunker chunker, audio::FrameChunker::Create(in_rate));
  auto core = std::make_shared<Core>(resources, std::move(info), std::move(sink), std::move(vad),
                                     std::move(chunker));
  ASSIGN_OR_RETURN(core->synth, resources.make_synthesizer());
  if (core->synth->sample_rate_hz() != in_rate) {
    ASSIGN_OR_RETURN(core->out_resampler, audio::Resampler::Create(core->synth->sample_rate_hz(),
                                                                   in_rate, resources.resampler));
  }
  const size_t preroll_frames = static_cast<size_t>(resources.call.preroll_ms / audio::kFrameMs);
  core->preroll.assign(preroll_frames, std::vector<int16_t>(audio::SamplesForMs(in_rate, audio::kFrameMs)));
  core->metrics.calls.Increment();
  return std::unique_ptr<CallSession>(new CallSession(std::move(core)));
}

CallSession::CallSession(std::shared_ptr<Core> core) : core_(std::move(core)) {}

CallSession::~CallSession() {
  // Never blocks: queued tasks keep the core alive and find it closed.
  core_->closed.store(true);
  std::lock_guard lock(core_->mu);
  if (core_->active_cancel) core_->active_cancel->Cancel();
}

void CallSession::Start() {
  auto core = core_;
  Status s = core->listen.Post([core] {
    if (core->closed.load() || core->res.call.greeting_text.empty()) return;
    TurnReport r;
    r.kind = TurnKind::kGreeting;
    r.tier = TurnTier::kGreeting;
    std::shared_ptr<CancelToken> token;
    int idx = core->BeginTurn(std::move(r), token);
    core->SpeakPrompt(idx, token, core->res.call.greeting_text, AfterSpeech::kNone, "");
  });
  if (!s.ok()) HLOG_WARN("call {}: greeting not queued: {}", core->info.call_id, s.message());
}

Status CallSession::PushAudio(std::span<const uint8_t> bytes, const MediaFormat& format) {
  Core& c = *core_;
  if (c.closed.load()) return FailedPreconditionError("the call has ended");
  if (format.codec != c.info.format.codec || format.sample_rate_hz != c.info.format.sample_rate_hz) {
    return InvalidArgumentError("audio format differs from the call's media format");
  }
  if (bytes.size() > static_cast<size_t>(c.res.call.max_push_bytes)) {
    c.frames_dropped.fetch_add(1);
    c.metrics.audio_dropped_frames.Increment();
    return InvalidArgumentError("audio payload of " + std::to_string(bytes.size()) +
                                " bytes exceeds call.max_push_bytes");
  }
  if (format.codec == audio::Codec::kPcm16 && bytes.size() % 2 != 0) {
    return InvalidArgumentError("PCM16 payload has an odd number of bytes");
  }
  if (bytes.empty()) return Status::Ok();
  auto core = core_;
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  Status s = c.listen.Post([core, data = std::move(copy)]() mutable {
    core->ProcessPayload(std::move(data));
  }, static_cast<size_t>(c.res.call.audio_queue_frames));
  if (!s.ok()) {
    c.frames_dropped.fetch_add(1);
    c.metrics.audio_dropped_frames.Increment();
    return ResourceExhaustedError("call " + c.info.call_id + ": inbound audio queue is full (" +
                                  s.message() + "); payload dropped");
  }
  return Status::Ok();
}

Status CallSession::PushDtmf(char digit) {
  if (!(std::isdigit(static_cast<unsigned char>(digit)) || digit == '*' || digit == '#')) {
    return InvalidArgumentError(std::string("not a DTMF digit: '") + digit + "'");
  }
  if (core_->closed.load()) return FailedPreconditionError("the call has ended");
  auto core = core_;
  return core->listen.Post([core, digit] {
    if (core->closed.load()) return;
    if (digit == '#') {
      core->SubmitDtmf();
      return;
    }
    if (digit == '*') {  // start over
      core->dtmf.clear();
      return;
    }
    if (core->dtmf.size() < kMaxDtmfDigits) core->dtmf.push_back(digit);
    core->dtmf_last_ms = core->stream_ms.load();
  });
}

void CallSession::MarkPlayed(std::string_view name) {
  auto core = core_;
  (void)core->listen.Post([core, n = std::string(name)] {
    std::lock_guard lock(core->mu);
    // The transport says the last audio sent has played: trust it over the estimate.
    core->playout.MarkPlayed(n, core->stream_ms.load());
  });
}

void CallSession::Hangup() {
  core_->closed.store(true);
  core_->ended.store(true);
  std::lock_guard lock(core_->mu);
  if (core_->active_cancel) core_->active_cancel->Cancel();
  core_->answer_pending = false;
}

bool CallSession::ended() const { return core_->ended.load(); }

bool CallSession::idle() const {
  const Core& c = *core_;
  if (c.in_utterance.load() || c.agent_busy.load() > 0 || c.listen.pending() > 0) return false;
  std::lock_guard lock(c.mu);
  return !c.PlayingLocked(c.stream_ms.load()) && c.action == AfterSpeech::kNone;
}

size_t CallSession::queued_audio() const { return core_->listen.pending(); }
int64_t CallSession::stream_ms() const { return core_->stream_ms.load(); }
const CallInfo& CallSession::info() const { return core_->info; }

std::vector<TurnReport> CallSession::Turns() const {
  std::lock_guard lock(core_->mu);
  return core_->turns;
}

SessionStats CallSession::stats() const {
  SessionStats s;
  s.frames_in = core_->frames_in.load();
  s.frames_dropped = core_->frames_dropped.load();
  s.frames_out = core_->frames_out.load();
  s.errors = core_->errors.load();
  std::lock_guard lock(core_->mu);
  for (const TurnReport& t : core_->turns) {
    if (t.kind == TurnKind::kCaller) ++s.turns;
    if (t.kind == TurnKind::kReprompt) ++s.reprompts;
    if (t.ledger.barge_in >= 0) ++s.barge_ins;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Listen strand.

void CallSession::Core::ProcessPayload(std::vector<uint8_t> bytes) {
  if (closed.load()) return;
  decoded.resize(audio::DecodedSamples(info.format.codec, bytes.size()));
  audio::Decode(info.format.codec, bytes, decoded);
  chunker.Push(std::span<const int16_t>(decoded),
               [this](audio::AudioView frame) { ProcessFrame(frame); });
}

void CallSession::Core::ProcessFrame(audio::AudioView frame) {
  if (closed.load()) return;
  frames_in.fetch_add(1);
  const int64_t now_ms = stream_ms.fetch_add(audio::kFrameMs) + audio::kFrameMs;
  auto verdict = vad.Process(frame);
  if (!verdict.ok()) {
    Error(-1, "vad", verdict.status());
    return;
  }
  bool playing;
  float out_level;
  {
    std::lock_guard lock(mu);
    playing = PlayingLocked(now_ms);
    out_level = playout.Level(now_ms);
  }
  if (playing) {
    switch (barge.Process(*verdict, out_level)) {
      case audio::BargeInEvent::kPause:
        PauseOutput();
        break;
      case audio::BargeInEvent::kResume:
        ResumeOutput();
        break;
      case audio::BargeInEvent::kBargeIn:
        BargeIn();
        break;
      case audio::BargeInEvent::kNone:
        break;
    }
  } else if (was_playing) {
    barge.Reset();
  }
  was_playing = playing;

  if (!preroll.empty()) {
    std::copy(frame.samples.begin(), frame.samples.end(), preroll[preroll_next].begin());
    preroll_next = (preroll_next + 1) % preroll.size();
    preroll_count = std::min(preroll_count + 1, preroll.size());
  }
  audio::EndpointUpdate u = endpointer.Push(verdict->speech);
  if (u.event == audio::EndpointEvent::kSpeechStart) in_utterance.store(true);
  switch (u.event) {
    case audio::EndpointEvent::kSpeechStart: {
      silence_ms = 0;
      overlapped = playing;
      barged = barged && playing;  // a barge-in may have fired on this very frame
      partial_revision = 0;
      turn.Reset();
      last_peeked.clear();
      hinted_phrase.clear();
      {
        std::lock_guard lock(mu);
        prework.reset();
      }
      auto stream = res.recognizer->CreateStream(info.format.sample_rate_hz);
      if (!stream.ok()) {
        Error(-1, "asr", stream.status());
        asr.reset();
        break;
      }
      asr = std::move(*stream);
      // Feed the pre-roll (which ends with this frame) so the first phoneme is not lost.
      const size_t n = preroll.empty() ? 0 : preroll_count;
      Status s;
      if (n == 0) s = asr->AcceptFrames(frame);
      for (size_t k = 0; k < n && s.ok(); ++k) {
        const auto& f = preroll[(preroll_next + preroll.size() - n + k) % preroll.size()];
        s = asr->AcceptFrames(audio::AudioView(f, info.format.sample_rate_hz));
      }
      if (!s.ok()) {
        Error(-1, "asr", s);
        asr.reset();
      }
      break;
    }
    case audio::EndpointEvent::kEndOfTurn:
    case audio::EndpointEvent::kMaxLength:
      EndOfTurn(u);
      break;
    case audio::EndpointEvent::kDiscarded:
      asr.reset();
      overlapped = barged = false;
      break;
    case audio::EndpointEvent::kNone:
      if (endpointer.in_utterance() && asr) {
        if (res.turn_model) turn.OnFrame(frame, verdict->speech, u.now_ms);
        if (Status s = asr->AcceptFrames(frame); !s.ok()) {
          Error(-1, "asr", s);
          asr.reset();
        } else if (asr->partial().revision != partial_revision) {
          partial_revision = asr->partial().revision;
          if (res.turn_model) turn.OnPartial(asr->partial().text, u.now_ms);
          // The caller said more than the question the hint was for: back to the full silence.
          if (!hinted_phrase.empty() && PhraseText(asr->partial().text) != hinted_phrase) {
            endpointer.SetLooksComplete(false);
            hinted_phrase.clear();
          }
          if (asr->partial().stable && !closed.load()) {
            nlohmann::json j = {{"text", Redacted(asr->partial().text)}, {"stable", true}};
            sink->Event("partial", j.dump());
            if (res.call.prework) StartPrework(asr->partial().text);
          }
        }
        if (res.turn_model && asr) endpointer.SetSilenceNeededMs(turn.WaitMs(u.now_ms));
      }
      break;
  }
  // Cleared only after the end-of-turn handling has marked the agent busy, so idle() never
  // sees a gap between the caller's turn and the agent's answer.
  in_utterance.store(endpointer.in_utterance());
  CheckTimers();
}

void CallSession::Core::PauseOutput() {
  const int64_t now = stream_ms.load();
  {
    std::lock_guard lock(mu);
    if (closed.load()) return;
    playout.Pause(now);
  }
  metrics.barge_in_pauses.Increment();
  HLOG_DEBUG("call {}: playback paused for probable barge-in", info.call_id);
}

void CallSession::Core::ResumeOutput() {
  {
    std::lock_guard lock(mu);
    const int64_t now = stream_ms.load();
    if (closed.load()) {
      playout.Stop(now, /*send_clear=*/false);
      return;
    }
    playout.Resume(now);
    if (action != AfterSpeech::kNone && action_armed) action_at_ms = playout.StartOfNext(now);
  }
  metrics.barge_in_resumes.Increment();
  HLOG_DEBUG("call {}: playback resumed, the barge-in was not confirmed", info.call_id);
}

bool CallSession::Core::SameAnswer(const std::string& text, const std::string& spoken) {
  // Peek reads the caller's state, which belongs to the answer strand: ask there, and wait a
  // bounded time (a busy strand counts as "not the same").
  auto promise = std::make_shared<std::promise<bool>>();
  std::future<bool> same = promise->get_future();
  auto self = shared_from_this();
  Status posted = answerer.Post([self, promise, text, spoken] {
    auto peeked = self->res.answerer->Peek(text, self->caller);
    promise->set_value(peeked.ok() && peeked->has_value() && !(*peeked)->fallback &&
                       !(*peeked)->personal && (*peeked)->text == spoken);
  });
  if (!posted.ok()) return false;
  return same.wait_for(std::chrono::milliseconds(res.call.speculation_check_ms)) ==
             std::future_status::ready &&
         same.get();
}

void CallSession::Core::AbortSpeech(int idx) {
  std::lock_guard lock(mu);
  if (active_turn != idx) return;
  if (active_cancel) active_cancel->Cancel();
  if (turns[idx].outcome == TurnOutcome::kPending || turns[idx].outcome == TurnOutcome::kAnswered) {
    turns[idx].outcome = TurnOutcome::kSpeculationMissed;
  }
  StopPlaybackLocked();
}

void CallSession::Core::StopPlaybackLocked() {
  playout.Stop(stream_ms.load(), /*send_clear=*/!closed.load());
}

void CallSession::Core::BargeIn() {
  barged = true;
  int idx;
  {
    std::lock_guard lock(mu);
    StopPlaybackLocked();
    idx = active_turn;
    if (active_cancel) active_cancel->Cancel();
    if (idx >= 0) {
      turns[idx].ledger.barge_in = NowMs();
      turns[idx].outcome = TurnOutcome::kBargeIn;
    }
    if (answer_turn == idx) answer_pending = false;
    action = AfterSpeech::kNone;  // an interrupted goodbye does not hang up
    action_armed = false;
  }
  metrics.barge_ins.Increment();
  HLOG_DEBUG("call {}: barge-in on turn {}", info.call_id, idx);
  if (!closed.load()) {
    nlohmann::json j = {{"turn", idx}};
    sink->Event("barge_in", j.dump());
  }
  FinishTurn(idx);
}

void CallSession::Core::EndOfTurn(const audio::EndpointUpdate& u) {
  const double eot = NowMs();
  TurnReport r;
  r.kind = TurnKind::kCaller;
  r.ledger.end_of_turn = eot;
  r.ledger.speech_end = eot - static_cast<double>(u.now_ms - u.speech_end_ms);
  r.ledger.speech_start = eot - static_cast<double>(u.now_ms - u.speech_start_ms);
  const bool echo = overlapped && !barged;
  // Speculative start: the answer prepared for the last partial plays while the recognizer
  // makes its final pass.
  int spec_idx = -1;
  std::string spec_phrase;
  std::shared_ptr<CancelToken> spec_token;
  if (!echo && asr && res.call.prework && res.call.prework_speculate && !closed.load()) {
    const std::string partial = asr->partial().text;
    spec_phrase = PhraseText(partial);
    bool ready;
    {
      std::lock_guard lock(mu);
      ready = !spec_phrase.empty() && prework && prework->phrase == spec_phrase;
    }
    if (ready) {
      TurnReport early = r;
      early.transcript = partial;  // until the final pass says otherwise
      spec_idx = BeginTurn(std::move(early), spec_token);
      {
        std::lock_guard lock(mu);
        finish_held = spec_idx;
        finish_deferred = false;
      }
      if (!UsePrework(spec_idx, spec_token, partial, /*remember=*/false)) {
        ReleaseFinish(spec_idx);
        spec_idx = -1;
      }
    }
  }
  Result<asr::AsrResult> final = asr ? asr->Finish()
                                     : Result<asr::AsrResult>(UnavailableError("no ASR stream"));
  asr.reset();
  r.ledger.asr_final = NowMs();
  // A time-bounded recognizer (asr/deadline_recognizer.h, as CallStack builds it) returns
  // kDeadlineExceeded at the limit; any other is caught here after the fact.
  const bool asr_slow =
      (!final.ok() && final.status().code() == StatusCode::kDeadlineExceeded) ||
      r.ledger.asr_final - eot > res.call.asr_timeout_ms;
  if (final.ok()) {
    r.transcript = final->text;
    r.asr_confidence = final->confidence;
  }
  bool speculated = false;  // the speculative answer stands: the turn is already being spoken
  std::string spoken;
  if (spec_idx >= 0) {
    {
      std::lock_guard lock(mu);
      spoken = turns[spec_idx].answer;
    }
    // The final pass often changes a word ("how can i" → "how do i") without changing what the
    // caller asked: the speculation stands when the cached tiers answer the final the same way.
    speculated = final.ok() && !asr_slow &&
                 (PhraseText(final->text) == spec_phrase || SameAnswer(final->text, spoken));
    if (speculated) {
      std::lock_guard lock(mu);
      TurnReport& t = turns[spec_idx];
      t.transcript = r.transcript;
      t.asr_confidence = r.asr_confidence;
      t.ledger.asr_final = r.ledger.asr_final;
    } else {
      // The caller said something else: stop the prepared answer, answer what was said.
      AbortSpeech(spec_idx);
      ReleaseFinish(spec_idx);
      metrics.speculation_misses.Increment();
    }
  }
  overlapped = barged = false;
  silence_ms = 0;
  if (echo) {
    // Speech over the agent that never became a barge-in: echo or a backchannel ("mm-hm").
    r.outcome = TurnOutcome::kDiscarded;
    std::lock_guard lock(mu);
    turns.push_back(std::move(r));
    turn_finished.push_back(true);
    return;
  }
  reprompts = 0;
  metrics.turns.Increment();
  if (!closed.load()) {
    nlohmann::json j = {{"text", Redacted(r.transcript)}};
    sink->Event("transcript", j.dump());
  }
  if (speculated) {
    metrics.speculation_hits.Increment();
    RememberExchange(r.transcript, spoken);
    ReleaseFinish(spec_idx);
    return;
  }
  std::string text = r.transcript;
  std::shared_ptr<CancelToken> token;
  int idx = BeginTurn(std::move(r), token);
  if (!final.ok() || asr_slow) {
    Status s = final.ok() ? DeadlineExceededError("recognizer took longer than call.asr_timeout_ms")
                          : final.status();  // kDeadlineExceeded from a bounded recognizer
    Error(idx, asr_slow ? "asr_timeout" : "asr", s);
    SpeakPrompt(idx, token, asr_slow ? res.call.busy_text : res.call.error_text,
                AfterSpeech::kNone, "");
    return;
  }
  const std::string phrase = PhraseText(text);
  if (phrase.empty()) {
    {
      std::lock_guard lock(mu);
      turns[idx].outcome = TurnOutcome::kNotHeard;
    }
    SpeakPrompt(idx, token, res.call.not_heard_text, AfterSpeech::kNone, "");
  } else if (MatchesPhrase(phrase, res.call.goodbye_phrases, /*anywhere=*/false)) {
    {
      std::lock_guard lock(mu);
      turns[idx].outcome = TurnOutcome::kGoodbye;
      turns[idx].tier = TurnTier::kGoodbye;
    }
    SpeakPrompt(idx, token, res.call.goodbye_text, AfterSpeech::kHangup, "caller said goodbye");
  } else if (MatchesPhrase(phrase, res.call.agent_phrases, /*anywhere=*/true)) {
    {
      std::lock_guard lock(mu);
      turns[idx].outcome = TurnOutcome::kTransfer;
      turns[idx].tier = TurnTier::kTransfer;
    }
    SpeakPrompt(idx, token, res.call.transfer_text, AfterSpeech::kTransfer,
                "caller asked for an agent");
  } else if (!UsePrework(idx, token, text)) {
    StartAnswer(idx, token, std::move(text));
  }
}

bool CallSession::Core::CheckTimeLimit(int64_t now) {
  if (info.max_call_ms <= 0 || time_limit_said || now < info.max_call_ms) return false;
  const bool forced = now >= info.max_call_ms + kTimeLimitGraceMs;
  {
    std::lock_guard lock(mu);
    // A hang-up or transfer already on its way ends the call anyway.
    if (action != AfterSpeech::kNone) return false;
    const bool quiet = !endpointer.in_utterance() && agent_busy.load() == 0 &&
                       !PlayingLocked(now) && !answer_pending;
    if (!quiet && !forced) return false;
    if (forced) StopPlaybackLocked();
  }
  time_limit_said = true;
  HLOG_INFO("call {}: reached its time limit ({} ms){}", LogEscape(info.call_id), info.max_call_ms,
            forced ? ", cutting the turn in progress short" : "");
  TurnReport r;
  r.kind = TurnKind::kTimeLimit;
  r.tier = TurnTier::kGoodbye;
  r.outcome = TurnOutcome::kTimeLimit;
  std::shared_ptr<CancelToken> token;
  const int idx = BeginTurn(std::move(r), token);  // cancels an answer still being prepared
  if (res.call.time_limit_text.empty()) {
    if (!closed.exchange(true)) {
      ended.store(true);
      metrics.hangups.Increment();
      sink->Hangup("time limit reached");
    }
    FinishTurn(idx);
    return true;
  }
  SpeakPrompt(idx, token, res.call.time_limit_text, AfterSpeech::kHangup, "time limit reached");
  return true;
}

void CallSession::Core::CheckTimers() {
  const int64_t now = stream_ms.load();
  if (CheckTimeLimit(now)) return;
  if (!dtmf.empty() && dtmf_last_ms >= 0 && now - dtmf_last_ms >= res.call.dtmf_timeout_ms) {
    SubmitDtmf();
  }
  // Answer time-out: the turn is abandoned (its late result is dropped) and busy_text is said.
  int timed_out = -1;
  std::shared_ptr<CancelToken> fresh;
  {
    std::lock_guard lock(mu);
    if (answer_pending &&
        MillisBetween(answer_started, clock->Now()) > res.call.answer_timeout_ms) {
      answer_pending = false;
      timed_out = answer_turn;
      if (active_cancel) active_cancel->Cancel();
      fresh = std::make_shared<CancelToken>();
      active_cancel = fresh;
      turns[timed_out].outcome = TurnOutcome::kBusy;
    }
  }
  if (timed_out >= 0) {
    Error(timed_out, "answer_timeout",
          DeadlineExceededError("answer took longer than call.answer_timeout_ms"));
    PostSpeak(timed_out, fresh, {res.call.busy_text}, false, true, AfterSpeech::kNone, "",
              BusyGuard());
  }
  // Hang-up / transfer once the agent's last words have played.
  AfterSpeech act = AfterSpeech::kNone;
  std::string reason;
  {
    std::lock_guard lock(mu);
    if (action != AfterSpeech::kNone && action_armed && !playout.paused() && now >= action_at_ms) {
      act = action;
      reason = action_reason;
      action = AfterSpeech::kNone;
    }
  }
  if (act != AfterSpeech::kNone) {
    bool was_closed = closed.exchange(true);
    ended.store(true);
    if (!was_closed) {
      if (act == AfterSpeech::kHangup) {
        metrics.hangups.Increment();
        sink->Hangup(reason);
      } else {
        metrics.transfers.Increment();
        sink->Transfer(reason);
      }
    }
    return;
  }
  // Re-prompt after silence while nothing else is going on.
  bool quiet;
  {
    std::lock_guard lock(mu);
    quiet = !endpointer.in_utterance() && agent_busy.load() == 0 && !PlayingLocked(now) &&
            action == AfterSpeech::kNone && dtmf.empty();
  }
  silence_ms = quiet ? silence_ms + audio::kFrameMs : 0;
  if (silence_ms >= res.call.reprompt_after_ms) {
    silence_ms = 0;
    TurnReport r;
    std::shared_ptr<CancelToken> token;
    if (reprompts >= res.call.reprompt_max) {
      r.kind = TurnKind::kReprompt;
      r.tier = TurnTier::kGoodbye;
      r.outcome = TurnOutcome::kNoResponse;
      int idx = BeginTurn(std::move(r), token);
      SpeakPrompt(idx, token, res.call.goodbye_text, AfterSpeech::kHangup, "no response from caller");
    } else {
      ++reprompts;
      metrics.reprompts.Increment();
      r.kind = TurnKind::kReprompt;
      r.tier = TurnTier::kReprompt;
      int idx = BeginTurn(std::move(r), token);
      SpeakPrompt(idx, token, res.call.reprompt_text, AfterSpeech::kNone, "");
    }
  }
}

void CallSession::Core::SubmitDtmf() {
  std::string digits = std::move(dtmf);
  dtmf.clear();
  dtmf_last_ms = -1;
  if (digits.empty()) return;
  TurnReport r;
  r.kind = TurnKind::kDtmf;
  r.transcript = "<" + std::to_string(digits.size()) + " keypad digits>";
  std::shared_ptr<CancelToken> token;
  int idx = BeginTurn(std::move(r), token);
  auto self = shared_from_this();
  auto busy = BusyGuard();
  Status s = answerer.Post([self, idx, token, digits = std::move(digits), busy] {
    if (self->closed.load() || token->cancelled()) return self->FinishTurn(idx);
    auto result = self->res.answerer->SubmitPin(self->caller, digits);
    if (token->cancelled()) return self->FinishTurn(idx);
    if (!result.ok()) {
      self->Error(idx, "answer", result.status());
      self->PostSpeak(idx, token, {self->res.call.error_text}, false, true, AfterSpeech::kNone, "",
                      busy);
      return;
    }
    {
      std::lock_guard lock(self->mu);
      self->turns[idx].answer = result->text;
      self->turns[idx].tier = result->tier;
      self->turns[idx].personal = result->personal;
      if (result->transfer) self->turns[idx].outcome = TurnOutcome::kTransfer;
    }
    self->PostSpeak(idx, token, {result->text}, result->personal, true,
                    result->transfer ? AfterSpeech::kTransfer : AfterSpeech::kNone,
                    result->transfer ? "caller not verified" : "", busy);
  });
  if (!s.ok()) Error(idx, "overload", s);
}

// ---------------------------------------------------------------------------------------------
// Turns.

std::shared_ptr<void> CallSession::Core::BusyGuard() {
  agent_busy.fetch_add(1);
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self](void*) { self->agent_busy.fetch_sub(1); });
}

int CallSession::Core::BeginTurn(TurnReport report, std::shared_ptr<CancelToken>& token) {
  token = std::make_shared<CancelToken>();
  int previous;
  int idx;
  {
    std::lock_guard lock(mu);
    previous = active_turn;
    if (active_cancel) active_cancel->Cancel();
    if (previous >= 0 && turns[previous].outcome == TurnOutcome::kPending) {
      turns[previous].outcome = TurnOutcome::kSuperseded;
    }
    idx = static_cast<int>(turns.size());
    report.index = idx;
    turns.push_back(std::move(report));
    turn_finished.push_back(false);
    active_turn = idx;
    active_cancel = token;
    answer_pending = false;
    action = AfterSpeech::kNone;
    action_armed = false;
    // Audio of the superseded turn held by a pause never plays (the pause itself stays until
    // the barge-in detector settles it).
    playout.DropHeld();
  }
  if (previous >= 0) FinishTurn(previous);
  return idx;
}

void CallSession::Core::StartAnswer(int idx, std::shared_ptr<CancelToken> token, std::string text) {
  std::shared_ptr<llm::GenerationSchedule> schedule;
  {
    std::lock_guard lock(mu);
    answer_pending = true;
    answer_turn = idx;
    answer_started = clock->Now();
    // Nothing of this answer is heard yet: its model tokens are needed now.
    answer_schedule = std::make_shared<llm::GenerationSchedule>();
    answer_schedule->Waiting(answer_started);
    answer_paced_at = answer_started;
    schedule = answer_schedule;
  }
  auto self = shared_from_this();
  auto busy = BusyGuard();
  Status s = answerer.Post([self, idx, token, text = std::move(text), busy, schedule] {
    if (self->closed.load() || token->cancelled()) return self->FinishTurn(idx);
    std::vector<answer::ChatMessage> history = self->history;
    AnswerHooks hooks;
    hooks.cancel = token.get();
    hooks.schedule = schedule.get();
    hooks.stream_fallback = self->misses >= self->res.call.fallback_retries;
    {
      std::lock_guard lock(self->mu);
      hooks.asr_confidence = self->turns[idx].asr_confidence;
    }
    double first_sentence_at = -1;
    hooks.on_sentence = [&](std::string_view sentence) {
      if (first_sentence_at < 0) first_sentence_at = self->NowMs();
      // Whether the answer is personal is known only at the end: the speak side looks the audio
      // cache up but stores nothing until then.
      self->PostSpeak(idx, token, {std::string(sentence)}, /*personal=*/true, false,
                      AfterSpeech::kNone, "", busy);
    };
    const double called_at = self->NowMs();
    auto result = self->res.answerer->Answer(text, self->caller, history, hooks);
    {
      std::lock_guard lock(self->mu);
      if (self->answer_turn == idx && self->answer_pending) self->answer_pending = false;
      // Timed out: busy_text is being said.
      if (self->turns[idx].outcome == TurnOutcome::kBusy) return;
      if (result.ok()) {
        TurnLedger& l = self->turns[idx].ledger;
        const double done = self->NowMs();
        if (result->understood_ms >= 0) {
          l.understood = std::min(done, called_at + result->understood_ms);
        }
        if (result->tier == TurnTier::kLlm) {
          if (result->llm_first_token_ms >= 0)
            l.llm_first_token = called_at + result->llm_first_token_ms;
        } else {
          l.cache_result = first_sentence_at >= 0 ? first_sentence_at : done;
        }
        self->turns[idx].tokens = result->tokens;
      }
    }
    if (self->closed.load() || token->cancelled()) return self->FinishTurn(idx);
    if (!result.ok()) {
      self->Error(idx, "answer", result.status());
      self->PostSpeak(idx, token, {self->res.call.error_text}, false, true, AfterSpeech::kNone, "",
                      busy);
      return;
    }
    self->metrics.CountTier(TurnTierName(result->tier));
    // An unanswerable question is first met with a request to rephrase; only repeated misses
    // go to a human.
    const bool rephrase = result->fallback && !result->streamed &&
                          self->misses < self->res.call.fallback_retries;
    self->misses = result->fallback ? self->misses + 1 : 0;
    if (rephrase) result->text = self->res.call.rephrase_text;
    const bool transfer = (result->fallback && !rephrase) || result->transfer;
    {
      std::lock_guard lock(self->mu);
      TurnReport& t = self->turns[idx];
      t.answer = result->text;
      t.tier = result->tier;
      t.personal = result->personal;
      t.outcome = transfer   ? TurnOutcome::kTransfer
                  : rephrase ? TurnOutcome::kRephrase
                             : TurnOutcome::kAnswered;
      t.llm_gate = result->gated;
    }
    self->history.push_back({"user", Redacted(text)});
    self->history.push_back({"assistant", result->personal ? "<personal>" : result->text});
    const size_t keep = static_cast<size_t>(self->res.call.history_turns) * 2;
    if (self->history.size() > keep) {
      self->history.erase(self->history.begin(),
                          self->history.end() - static_cast<ptrdiff_t>(keep));
    }
    AfterSpeech after = transfer ? AfterSpeech::kTransfer : AfterSpeech::kNone;
    std::string reason = result->transfer ? "caller not verified"
                         : transfer       ? "no answer tier could answer"
                                          : "";
    std::vector<std::string> pieces;
    if (!result->streamed) pieces.push_back(result->text);
    self->PostSpeak(idx, token, std::move(pieces), result->personal, true, after, reason, busy);
  });
  if (!s.ok()) {
    Error(idx, "overload", s);
    PostSpeak(idx, token, {res.call.busy_text}, false, true, AfterSpeech::kNone, "", BusyGuard());
  }
}

void CallSession::Core::SpeakPrompt(int idx, std::shared_ptr<CancelToken> token,
                                    const std::string& text, AfterSpeech after,
                                    std::string reason) {
  {
    std::lock_guard lock(mu);
    turns[idx].answer = text;
    if (turns[idx].tier == TurnTier::kNone) turns[idx].tier = TurnTier::kPrompt;
  }
  PostSpeak(idx, std::move(token), {text}, false, true, after, std::move(reason), BusyGuard());
}

void CallSession::Core::Error(int idx, const std::string& kind, const Status& s) {
  errors.fetch_add(1);
  metrics.CountError(kind);
  HLOG_WARN("call {}: {} error: {}", info.call_id, kind, s.message());
  if (idx >= 0) {
    std::lock_guard lock(mu);
    if (turns[idx].outcome == TurnOutcome::kPending ||
        turns[idx].outcome == TurnOutcome::kAnswered) {
      turns[idx].outcome = TurnOutcome::kError;
      turns[idx].error = kind;
    }
  }
  if (!closed.load()) {
    nlohmann::json j = {{"turn", idx}, {"kind", kind}, {"message", s.message()}};
    sink->Event("error", j.dump());
  }
}

void CallSession::Core::ReleaseFinish(int idx) {
  bool finish;
  {
    std::lock_guard lock(mu);
    if (finish_held != idx) return;
    finish_held = -1;
    finish = finish_deferred;
    finish_deferred = false;
  }
  if (finish) FinishTurn(idx);
}

void CallSession::Core::FinishTurn(int idx) {
  if (idx < 0) return;
  TurnReport t;
  {
    std::lock_guard lock(mu);
    if (idx == finish_held) {
      finish_deferred = true;
      return;
    }
    if (turn_finished[idx]) return;
    turn_finished[idx] = true;
    if (turns[idx].outcome == TurnOutcome::kPending) turns[idx].outcome = TurnOutcome::kAnswered;
    if (turns[idx].ledger.turn_done < 0) turns[idx].ledger.turn_done = NowMs();
    t = turns[idx];
  }
  metrics.ObserveTurn(t.ledger, t.kind == TurnKind::kCaller ? TurnTierName(t.tier) : "");
  const double origin = t.ledger.speech_end >= 0 ? t.ledger.speech_end : 0;
  const std::string ledger_json = t.ledger.ToJson(origin);
  const std::string transcript =
      t.kind == TurnKind::kCaller ? Redacted(t.transcript) : t.transcript;
  const std::string_view kind = TurnKindName(t.kind);
  const std::string_view tier = TurnTierName(t.tier);
  const std::string outcome = t.OutcomeText();
  const std::string spoken = t.personal ? "<personal>" : t.answer;
  if (!closed.load()) {
    nlohmann::json j = {{"turn", t.index},
                        {"kind", kind},
                        {"transcript", transcript},
                        {"answer", spoken},
                        {"tier", tier},
                        {"outcome", outcome},
                        {"ledger", nlohmann::json::parse(ledger_json)}};
    sink->Event("turn", j.dump());
  }
  if (res.records != nullptr) {
    TurnRow row;
    row.call_id = info.call_id;
    row.caller_id = info.caller_id;
    row.turn = t.index;
    row.kind = std::string(kind);
    row.transcript = transcript;
    row.answer = spoken;
    row.tier = std::string(tier);
    row.outcome = outcome;
    row.tokens = t.tokens;
    row.ledger_json = ledger_json;
    row.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    if (!res.records->Append(std::move(row))) metrics.records_dropped.Increment();
  }
}

}  // namespace hotline::pipeline
