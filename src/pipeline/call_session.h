// CallSession: one phone call — listening, turn-taking, answering, speaking, barge-in.
//
//   transport ─PushAudio─► [bounded per-call queue] ─► listen strand:
//       decode (μ-law/PCM16) → 20 ms frames → VAD → endpointer → streaming ASR (with pre-roll;
//       fed at the line rate: the recognizer's narrowband path resamples and fills the band);
//       barge-in detector (caller speech over the agent's playing audio; its pause and resume of
//       the agent's audio are applied here); at end of turn the ASR final pass
//   turn strand: the listen strand's events, one typed input per frame — ends of turns (a
//       prepared answer starts while the final pass runs), goodbye / agent / answer, barge-in,
//       DTMF, re-prompt and time-limit timers; it only posts work, so nothing here waits
//   answer strand: TurnAnswerer::Answer (blocking: caches, knowledge base, model)
//   speak strand:  sentence chunker → text normalizer → audio cache or streaming TTS
//       → resample to 8 kHz → encode → CallSink::SendAudio (first sentence sent while the rest is
//       synthesized)
//
// The four strands run on shared ThreadPools (one call's work is serialized per strand, calls
// run in parallel), so listening continues while an answer is computed and spoken, and a turn's
// timers and barge-in are handled while the recognizer makes its final pass.
//
// Urgent control: barge-in (the barge-in detector confirms caller speech while agent audio is
// playing) raises the turn's CancelToken (answer and TTS stop at their next check), calls
// CallSink::Clear(), stamps `barge_in` in the ledger and returns to listening; the interrupting
// speech is recognized as the next turn. A turn that overlaps the agent's speech without
// becoming a barge-in (echo, "mm-hm") is dropped.
//
// Turn-taking: greeting on Start(); re-prompt after reprompt_after_ms of silence while idle;
// goodbye + Hangup when the caller says a goodbye phrase or after reprompt_max re-prompts;
// transfer_text + Transfer when the caller asks for an agent or the answerer falls back. DTMF
// digits are collected and submitted as a PIN ('#' or a pause). Every stage failure or time-out
// is spoken (error_text / busy_text / not_heard_text) and counted by kind; nothing a call does
// reaches another call.
//
// Time: the call's audio clock is the inbound stream (20 ms per frame); re-prompts, DTMF pauses,
// agent playout (when audio handed to the sink plays, for barge-in and hang-up after goodbye)
// are measured on it, so a transport that stops sending audio stops the session's timers too.
// Ledger stamps use the injected Clock.
//
// Lifetime: the session may be destroyed from any thread at any time (mid-answer included); the
// destructor never blocks. Work still queued keeps the call's state alive and finds it closed;
// nothing is sent to the sink after Hangup()/destruction. REQUIRES: CallResources' pointees and
// the pools outlive every session (the server drains the pools before freeing the resources).
//
// Thread-safety: PushAudio, PushDtmf, MarkPlayed, Hangup and the accessors may be called from any
// thread (typically the transport's I/O thread); none of them blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asr/recognizer.h"
#include "asr/turn_detector.h"
#include "audio/barge_in.h"
#include "audio/endpointer.h"
#include "audio/resampler.h"
#include "audio/vad.h"
#include "audio/wav.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/thread_pool.h"
#include "pipeline/call_config.h"
#include "pipeline/call_record_store.h"
#include "pipeline/call_sink.h"
#include "pipeline/latency_ledger.h"
#include "pipeline/turn_answerer.h"
#include "pipeline/turn_types.h"
#include "tts/audio_cache.h"
#include "tts/sentence_chunker.h"
#include "tts/synthesizer.h"
#include "tts/text_normalizer.h"

namespace hotline::pipeline {

// The transport's audio format: μ-law / A-law at 8 kHz (telephone lines), or PCM16 little-endian
// at 8 or 16 kHz.
struct MediaFormat {
  audio::Codec codec = audio::Codec::kMulaw;
  int sample_rate_hz = 8000;
  Status Validate() const;
};

struct CallInfo {
  std::string call_id;    // the transport's id (Twilio CallSid, AudioSocket UUID, file name)
  std::string caller_id;  // the calling number; may be empty (withheld)
  MediaFormat format;     // both directions
  // The call's longest length in stream time (0: no limit; the server sets calls.max_call_ms).
  // Once reached, the session lets the turn in progress finish (at most kTimeLimitGraceMs more),
  // says call.time_limit_text and hangs up.
  int64_t max_call_ms = 0;
};

// How long past CallInfo::max_call_ms a turn in progress may go on before the session cuts it
// short to say goodbye.
inline constexpr int64_t kTimeLimitGraceMs = 10000;

using SynthesizerFactory = std::function<Result<std::unique_ptr<tts::Synthesizer>>()>;

// Shared, read-only state every call uses. Pointees must outlive all sessions.
struct CallResources {
  asr::Recognizer* recognizer = nullptr;      // required
  SynthesizerFactory make_synthesizer;        // required: one synthesizer per call
  TurnAnswerer* answerer = nullptr;           // required
  tts::AudioCache* audio_cache = nullptr;     // optional: fixed prompts and shareable answers
  CallRecordStore* records = nullptr;         // optional: per-turn rows
  ThreadPool* pool = nullptr;                 // required: CPU stages (listen, speak)
  ThreadPool* answer_pool = nullptr;          // blocking answers; null: `pool`
  const Clock* clock = nullptr;               // null: the system clock
  MetricsRegistry* metrics = nullptr;         // null: the global registry

  CallConfig call;
  audio::VadConfig vad;
  audio::EndpointerConfig endpointer;
  audio::BargeInConfig barge_in;
  audio::ResamplerConfig resampler;
  tts::SentenceChunkerConfig chunker;
  tts::TextNormalizerConfig normalizer;
  // Optional: the learned end-of-turn decision (asr.turn); null keeps the endpointer's fixed rule.
  std::shared_ptr<const asr::TurnEndModel> turn_model;
  asr::TurnDetectorConfig turn;

  Status Validate() const;
};

// One turn as the session saw it (for the CLI, tests and the record).
struct TurnReport {
  int index = 0;
  TurnKind kind = TurnKind::kCaller;
  std::string transcript;  // as recognized (per call only: may contain PII)
  double asr_confidence = 0;
  std::string answer;      // what the agent said (or started to say)
  TurnTier tier = TurnTier::kNone;  // answering tier, or the fixed text that was said
  TurnOutcome outcome = TurnOutcome::kPending;
  std::string error;  // with outcome kError: the failed stage ("asr", "tts_timeout", ...)
  // The outcome as records and events print it: its name, or "error:<stage>".
  std::string OutcomeText() const;
  // The LLM gate kept the model from answering (answer/generate/llm_gate.h): its reason, e.g.
  // "low_intent_top_two"; the turn's outcome is then rephrase or transfer. Empty otherwise.
  std::string llm_gate;
  bool personal = false;
  bool prework_used = false;  // answered with audio prepared before the turn ended
  double prework_saved_ms = 0;  // look-up + synthesis time spent ahead for this turn
  int64_t tokens = 0;           // model tokens (prompt + generated)
  TurnLedger ledger;
};

struct SessionStats {
  uint64_t frames_in = 0;
  uint64_t frames_dropped = 0;  // PushAudio payloads refused (queue full or too large)
  uint64_t turns = 0;
  uint64_t barge_ins = 0;
  uint64_t reprompts = 0;
  uint64_t errors = 0;
  uint64_t frames_out = 0;
};

class CallSession {
 public:
  // Validates the resources and the media format; builds the per-call state (VAD, resamplers,
  // synthesizer). Cheap: models are shared.
  static Result<std::unique_ptr<CallSession>> Create(const CallResources& resources, CallInfo info,
                                                     std::shared_ptr<CallSink> sink);
  ~CallSession();
  CallSession(const CallSession&) = delete;
  CallSession& operator=(const CallSession&) = delete;

  // Answers the call: speaks the greeting. Call once, after the transport is ready for audio.
  void Start();
  // Inbound audio in `format` (must equal CallInfo::format). Never blocks: the payload is queued;
  // ResourceExhausted (payload dropped, counted) when the per-call queue is full; InvalidArgument
  // for a payload that is too large, not a whole number of samples, or of the wrong format.
  Status PushAudio(std::span<const uint8_t> bytes, const MediaFormat& format);
  // One keypad digit ('0'-'9', '*', '#'). Others are refused.
  Status PushDtmf(char digit);
  // The transport played up to the mark named `name` (see CallSink::SendMark).
  void MarkPlayed(std::string_view name);
  // The caller hung up: stops all work; nothing more is sent to the sink.
  void Hangup();

  // The call is over (either side hung up, or it was transferred).
  bool ended() const;
  // Nothing to do for the agent right now: no open utterance, no answer or speech in flight, and
  // all audio handed to the sink has played (on the inbound clock). For scripted transports.
  bool idle() const;
  // Inbound payloads (and other listen- and turn-strand work) not yet fully handled: 0 once
  // everything pushed so far has been processed, its events included.
  size_t queued_audio() const;
  // Inbound stream time (ms of caller audio processed).
  int64_t stream_ms() const;
  // Turns so far (a copy).
  std::vector<TurnReport> Turns() const;
  SessionStats stats() const;
  const CallInfo& info() const;

  struct Core;

 private:
  explicit CallSession(std::shared_ptr<Core> core);
  std::shared_ptr<Core> core_;
};

// Lower-case, punctuation-free words of `text` joined by single spaces ("Bye!" → "bye"); letters
// outside ASCII stay, and each Han character is a word ("再见！" → "再 见").
std::string PhraseText(std::string_view text);
// True when `phrases` holds a phrase equal to the turn, or ending it (goodbye), or — with
// `anywhere` — contained in it as whole words (agent request).
bool MatchesPhrase(std::string_view turn_phrase_text, const std::vector<std::string>& phrases,
                   bool anywhere);
// A goodbye or a request for a person (ReadDialogueAct, pipeline/dialogue_acts.h): the session
// ends its part of the call, whatever the answer tiers would say.
bool ClosesCall(const CallConfig& call, std::string_view turn_phrase_text);

}  // namespace hotline::pipeline
