#include "pipeline/call_session.h"

#include "common/utf8.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include <nlohmann/json.hpp>

#include "answer/understand/understanding.h"
#include "audio/codec.h"
#include "common/log.h"
#include "common/log_format.h"
#include "common/utf8.h"
#include "pipeline/call_session_core.h"

namespace hotline::pipeline {

std::string CallSession::Core::Redacted(std::string_view text) {
  if (text.empty()) return {};
  return answer::Understand(text).redacted;
}

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
  auto word_char = [&](auto append) {
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    append();
  };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (std::isalnum(c) || c == '\'') {
        word_char([&] {
          if (c != '\'') out.push_back(static_cast<char>(std::tolower(c)));
        });
      } else {
        space = true;
      }
      ++i;
      continue;
    }
    char32_t cp = 0;
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0) {  // not UTF-8: a break
      space = true;
      ++i;
      continue;
    }
    const std::string_view bytes = text.substr(i, n);
    i += n;
    // Punctuation and symbols outside ASCII (general punctuation, CJK and full-width punctuation)
    // break words; a Han character is a word of its own (Chinese has no spaces); other letters
    // (é, ß, ...) belong to their word.
    const bool punctuation = (cp >= 0x2000 && cp <= 0x206f) || (cp >= 0x3000 && cp <= 0x303f) ||
                             (cp >= 0xff00 && cp <= 0xff0f) || (cp >= 0xff1a && cp <= 0xff20) ||
                             (cp >= 0xff3b && cp <= 0xff40) || (cp >= 0xff5b && cp <= 0xff65) ||
                             cp == 0xa0 || cp == 0xb7;
    if (punctuation) {
      space = true;
    } else if (IsHan(cp)) {
      space = true;
      word_char([&] { out.append(bytes); });
      space = true;
    } else {
      word_char([&] { out.append(bytes); });
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

bool ClosesCall(const CallConfig& call, std::string_view turn_phrase_text) {
  const DialogueAct act = ReadDialogueAct(call, turn_phrase_text);
  return act == DialogueAct::kGoodbye || act == DialogueAct::kAgent;
}

// ---------------------------------------------------------------------------------------------
// Creation and the transport-facing API (any thread, never blocks).

Result<std::unique_ptr<CallSession>> CallSession::Create(const CallResources& resources,
                                                         CallInfo info,
                                                         std::shared_ptr<CallSink> sink) {
  RETURN_IF_ERROR(resources.Validate());
  RETURN_IF_ERROR(info.format.Validate());
  if (sink == nullptr) return InvalidArgumentError("call session needs a sink");
  auto core = std::make_shared<Core>(resources, std::move(info), std::move(sink));
  // VAD, endpointer and recognizer all take the line's own rate: the recognizer's narrowband
  // path (resampling plus filling the empty 4-8 kHz band the wideband model expects) reads
  // telephone audio far better than audio upsampled here would be read.
  const int in_rate = core->info.format.sample_rate_hz;
  ListenerOptions listening;
  listening.codec = core->info.format.codec;
  listening.sample_rate_hz = in_rate;
  listening.vad = resources.vad;
  listening.endpointer = resources.endpointer;
  listening.barge_in = resources.barge_in;
  listening.preroll_ms = resources.call.preroll_ms;
  listening.turn_model = resources.turn_model;
  listening.turn = resources.turn;
  ASSIGN_OR_RETURN(core->listener, Listener::Create(listening, resources.recognizer));
  ASSIGN_OR_RETURN(std::unique_ptr<tts::Synthesizer> synth, resources.make_synthesizer());
  SpeakerOptions speech;
  speech.codec = core->info.format.codec;
  speech.line_rate_hz = in_rate;
  speech.output_chunk_ms = resources.call.output_chunk_ms;
  speech.tts_timeout_ms = resources.call.tts_timeout_ms;
  speech.lead_trim_dbfs = resources.call.lead_trim_dbfs;
  speech.lead_trim_max_ms = resources.call.lead_trim_max_ms;
  speech.chunker = resources.chunker;
  speech.resampler = resources.resampler;
  ASSIGN_OR_RETURN(core->speaker, Speaker::Create(speech, std::move(synth),
                                                  tts::TextNormalizer(resources.normalizer),
                                                  resources.audio_cache, core->clock));
  core->metrics.calls.Increment();
  return std::unique_ptr<CallSession>(new CallSession(std::move(core)));
}

CallSession::CallSession(std::shared_ptr<Core> core) : core_(std::move(core)) {}

CallSession::~CallSession() {
  // Never blocks: queued tasks keep the core alive and find it closed.
  core_->closed.store(true);
  std::lock_guard lock(core_->mu);
  core_->book.CancelActive();
}

void CallSession::Start() {
  auto core = core_;
  Status s = core->turns.Post([core] {
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
  return core->turns.Post([core, digit] {
    if (core->closed.load()) return;
    if (digit == '#') {
      if (core->ending) {
        core->keypad_submit_after_turn = true;  // OnTurnInput submits after EndOfTurn
      } else {
        core->SubmitDtmf();
      }
      return;
    }
    core->keypad.Press(digit, core->stream_ms.load());  // '*' starts over
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
  core_->book.CancelActive();
  core_->answer_in_flight.Drop();
}

bool CallSession::ended() const { return core_->ended.load(); }

bool CallSession::idle() const {
  const Core& c = *core_;
  // The listen strand hands its events to the turn strand before its task ends: read in this
  // order, work moving from one to the other is always seen in one of them.
  if (c.in_utterance.load() || c.agent_busy.load() > 0 || c.listen.pending() > 0 ||
      c.turns.pending() > 0) {
    return false;
  }
  std::lock_guard lock(c.mu);
  return !c.PlayingLocked(c.stream_ms.load()) && !c.pending_end.armed();
}

size_t CallSession::queued_audio() const {
  // Listen strand first: a frame's events are on the turn strand before its task ends.
  const size_t listening = core_->listen.pending();
  return listening + core_->turns.pending();
}
int64_t CallSession::stream_ms() const { return core_->stream_ms.load(); }
const CallInfo& CallSession::info() const { return core_->info; }

std::vector<TurnReport> CallSession::Turns() const {
  std::lock_guard lock(core_->mu);
  return core_->book.all();
}

SessionStats CallSession::stats() const {
  SessionStats s;
  s.frames_in = core_->frames_in.load();
  s.frames_dropped = core_->frames_dropped.load();
  s.frames_out = core_->frames_out.load();
  s.errors = core_->errors.load();
  std::lock_guard lock(core_->mu);
  for (const TurnReport& t : core_->book.all()) {
    if (t.kind == TurnKind::kCaller) ++s.turns;
    if (t.kind == TurnKind::kReprompt) ++s.reprompts;
    if (t.ledger.barge_in >= 0) ++s.barge_ins;
  }
  return s;
}

}  // namespace hotline::pipeline
