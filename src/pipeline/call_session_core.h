// CallSession::Core: the state of one call, shared by its strands (listen, turn, answer, speak)
// and kept alive by every task queued for it. Private to pipeline/ (call_session*.cc).
//
// Files by job: call_session.cc (the public API: frames, DTMF and marks in, reports out),
// call_session_listen.cc (hearing the caller: the listen strand, and the pause and resume of the
// agent's audio it drives), call_session_turns.cc (the turn strand: ends of turns, timers, a turn
// from BeginTurn to FinishTurn), call_session_prework.cc (answers prepared while the caller
// speaks), call_session_speak.cc (a turn's text through the Speaker to the Playout).
//
// The stages talk through typed events on their strands and none waits for another:
//   listen strand  — the Listener (decoding, VAD, barge-in detector, endpointer, recognizer
//                    stream and its final pass, pre-roll: pipeline/listener.h). Each frame's
//                    events go to the turn strand as one TurnInput; a probable barge-in's pause
//                    and resume of the agent's audio are handled here at once;
//   turn strand    — what the events mean for the conversation: ends of turns, speculation and
//                    its check, pre-work look-ups, barge-in, DTMF, silence and time-limit timers,
//                    the dialogue state. Its work is short (it posts answers and speech): a final
//                    pass or an answer in progress never delays a barge-in or a timer;
//   answer strand  — CallerSession and history;
//   speak strand   — the Speaker (synthesizer, output resampler and buffers);
//   `mu`           — the TurnBook (turns, the active turn and its cancel token, the hold of a
//                    speculative turn), the answer in flight, the playout (timeline, pause,
//                    marks), the pending hang-up/transfer (pipeline/turn_control.h); sink calls
//                    that must not interleave with Clear().
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "answer/account/caller.h"
#include "common/cancel_token.h"
#include "pipeline/call_session.h"
#include "pipeline/dialogue_acts.h"
#include "pipeline/listener.h"
#include "pipeline/playout.h"
#include "pipeline/speaker.h"
#include "pipeline/turn_book.h"
#include "pipeline/turn_control.h"

namespace hotline::pipeline {

struct CallSession::Core : std::enable_shared_from_this<CallSession::Core> {
  Core(const CallResources& r, CallInfo i, std::shared_ptr<CallSink> s)
      : res(r),
        info(std::move(i)),
        sink(std::move(s)),
        clock(r.clock != nullptr ? r.clock : &SystemClock::Get()),
        call_start(clock->Now()),
        metrics(r.metrics != nullptr ? *r.metrics : MetricsRegistry::Global()),
        listen(*r.pool),
        turns(*r.pool),
        answerer(r.answer_pool != nullptr ? *r.answer_pool : *r.pool),
        speak(*r.pool),
        silence(r.call.reprompt_after_ms, r.call.hold_reprompt_after_ms, r.call.reprompt_max),
        playout(*sink),
        caller(info.caller_id) {}

  double NowMs() const { return MillisBetween(call_start, clock->Now()); }
  double MsOf(MonoTime t) const { return MillisBetween(call_start, t); }

  // ---- shared (lifecycle) ----
  CallResources res;
  CallInfo info;
  std::shared_ptr<CallSink> sink;
  const Clock* clock;
  MonoTime call_start;
  PipelineMetrics metrics;
  Strand listen;
  Strand turns;
  Strand answerer;
  Strand speak;
  std::atomic<bool> closed{false};  // no more sink calls, no more work
  std::atomic<bool> ended{false};
  std::atomic<int> agent_busy{0};  // answers and speech in flight
  std::atomic<int64_t> stream_ms{0};
  // The caller is in an utterance, as the turn strand has taken it in: it is cleared only after
  // that turn's end has marked the agent busy, so idle() never sees a gap between the two.
  std::atomic<bool> in_utterance{false};
  std::atomic<uint64_t> frames_in{0}, frames_dropped{0}, frames_out{0}, errors{0};

  // ---- listen strand ----
  std::unique_ptr<Listener> listener;
  std::vector<Listener::Event> heard;  // the events of the frame being handled
  // The recognizer's final pass of a turn, run on the listen strand while the turn strand starts
  // a prepared answer for the turn's last partial.
  struct FinalPass {
    Result<asr::AsrResult> result;
    double done_ms = 0;  // when it returned (call clock)
  };
  // What the listen strand hands the turn strand: the Listener's events other than pause and
  // resume, the final pass of the turn whose end came before them, and (once per frame, `tick`)
  // whether the caller is still speaking, after which the timers are checked.
  struct TurnInput {
    std::optional<FinalPass> final;
    std::vector<Listener::Event> events;
    double heard_ms = 0;  // when the Listener gave them (call clock)
    bool tick = false;
    bool in_utterance = false;
  };

  // ---- turn strand ----
  SilenceTimer silence;                // re-prompts (hold_reprompt_after_ms after a hold)
  bool time_limit_said = false;        // info.max_call_ms reached and its goodbye begun
  KeypadEntry keypad;                  // the digits being typed
  // '#' was pressed while a spoken turn waited for its final pass: the digits are submitted
  // once that turn is answered, so the keypad turn (pressed later) supersedes it, not the reverse.
  bool keypad_submit_after_turn = false;
  std::string last_peeked;  // phrase of the last partial looked up ahead
  // Where the conversation stands: the last reply asked "anything else?" (a turn heard as nothing
  // keeps it open). after_statement is read from the book when a turn is answered.
  DialogueState dialogue;
  // A caller's turn as the recognizer's final pass heard it, before it is answered.
  struct HeardTurn {
    TurnReport report;      // transcript, confidence and the ledger up to asr_final
    Status final_status;    // Ok, or why the final pass gave no transcript
    bool asr_slow = false;  // the final pass took longer than call.asr_timeout_ms
    // The answerer may answer the transcript on its words alone (TrustsTranscript): else no
    // prepared answer is spoken for it.
    bool trusted = true;
    int spec_idx = -1;      // the speculative turn already speaking, or -1
    std::string spoken;     // ... and its answer
  };
  // A turn whose end was heard, waiting for its final pass (a speculative start may already be
  // speaking for it: spec_idx).
  struct EndingTurn {
    HeardTurn heard;
    bool echo = false;        // speech over the agent that never became a barge-in
    std::string spec_phrase;  // PhraseText of the partial the speculation started on
  };
  std::optional<EndingTurn> ending;
  // A speculative start whose final transcript reads differently, waiting for the answer strand
  // to say whether the cached tiers answer it the same way (CheckSpeculation). The turn strand
  // goes on taking events meanwhile; its timers wait, and anything that starts a turn settles
  // it first (as a miss: the final transcript is answered on its own).
  struct SpeculationCheck {
    uint64_t id = 0;
    HeardTurn heard;
    MonoTime asked{};
  };
  std::optional<SpeculationCheck> spec_check;
  uint64_t spec_checks = 0;

  // ---- guarded by mu ----
  mutable std::mutex mu;
  // The turns, the active one and its cancel token; a speculative turn is held (not reported)
  // until its final transcript is known.
  TurnBook book;
  // The answer being prepared, and the pacing of its model request: moved by the speak strand
  // as that turn's audio is sent (urgent until its first sentence plays).
  AnswerInFlight answer_in_flight;
  // A hang-up or transfer waiting for the agent's last words to play.
  PendingEnd pending_end;
  // The agent's audio at the transport: what plays when, the pause of a probable barge-in (the
  // unplayed audio held, sent again if it is not confirmed), the turn-end marks.
  Playout playout;
  // The answer prepared from a stable partial (work before the caller finishes).
  struct Prework {
    std::string phrase;  // PhraseText of the partial it was looked up for
    TurnAnswer answer;
    double peek_ms = 0;   // look-up time spent ahead
    double synth_ms = 0;  // synthesis time spent ahead
  };
  std::optional<Prework> prework;
  // The text of the turn being spoken, piece by piece as the speaker says it, with the number of
  // frames each piece has sent: with Playout::heard(), the words the caller heard before a
  // barge-in (HeardTextLocked).
  struct SpokenText {
    int turn = -1;
    std::vector<std::string> pieces;
    std::vector<int> frames;
  };
  SpokenText spoken;

  // ---- answer strand ----
  answer::CallerSession caller;
  std::vector<answer::ChatMessage> history;
  int history_turn = -1;  // the agent turn whose answer ends the history
  int misses = 0;  // unanswerable questions in a row

  // ---- speak strand ----
  std::unique_ptr<Speaker> speaker;  // text to the line's encoded frames
  int chunked_turn = -1;             // the turn whose first piece was cut into chunks

  // The caller's words with PII masked, for events, history and records (empty stays empty).
  static std::string Redacted(std::string_view text);

  // call_session_listen.cc — the listen strand: frames through the Listener, their events to the
  // turn strand, and the playback control barge-in drives.
  void ProcessPayload(std::vector<uint8_t> bytes);
  void ProcessFrame(audio::AudioView frame);
  // Hands `in` to the turn strand.
  void PostTurns(TurnInput in);
  // The turn strand's side: a final pass, then the events, then the frame's timers.
  void OnTurnInput(TurnInput& in);
  // One event of the Listener's (turn strand), heard at `heard_ms`.
  void OnHeard(const Listener::Event& e, double heard_ms);
  void BargeIn();
  // The two stages before a confirmed barge-in (listen strand).
  void PauseOutput();
  void ResumeOutput();
  // Stops the turn being spoken (cancel + clear) without counting a barge-in.
  void AbortSpeech(int idx);
  // Drops all agent audio (mu held): Clear() at the transport unless a pause already did, the
  // frames a pause held, the playout timeline and outstanding marks.
  void StopPlaybackLocked();

  // call_session_turns.cc — ends of turns, timers, and a turn's life (turn strand).
  // The Listener's kEndOfTurn, heard at `heard_ms`: a speculative start while the listen strand
  // makes the final pass; EndOfTurn then decides what to answer.
  void BeginEndOfTurn(const Listener::Event& e, double heard_ms);
  void EndOfTurn(FinalPass final);
  // Speculative start: when an answer was prepared for the turn's last partial (`partial`), it
  // starts playing (as turn `r`, its finish held) while the recognizer makes its final pass.
  // Returns the turn's index, or -1; `phrase` gets the partial's PhraseText.
  int StartSpeculation(const TurnReport& r, const std::string& partial, std::string& phrase);
  // The caller's turn `idx` said `text`: not heard, goodbye, a human, a prepared answer, or an
  // answer to look up.
  // `trusted`: a prepared answer may be spoken for `text` (HeardTurn::trusted).
  void RespondTo(int idx, std::shared_ptr<CancelToken> token, std::string text, bool trusted);
  // A thanks, hello, "say that again" or "are you a person?": the session's own reply.
  void ReplySocially(int idx, std::shared_ptr<CancelToken> token, DialogueAct act);
  // The last turn before `idx` with something said (its answer), or null. REQUIRES: mu held.
  const TurnReport* LastReplyLocked(int idx);
  // The final transcript of a speculative start reads differently from the partial it started
  // on: asks the answer strand whether the cached tiers answer it with the same words, and
  // returns. The answer (or call.speculation_check_ms without one) settles the turn.
  void CheckSpeculation(HeardTurn heard);
  // Settles the pending check `id` (turn strand): the speculation stands when `same`.
  void SettleSpeculation(uint64_t id, bool same);
  // Settles a pending check as a miss when it has waited call.speculation_check_ms, or at once
  // when `now` (something is about to start a turn). True while one is still pending.
  bool SpeculationPending(bool now);
  // The rest of an end of turn once it is known whether the speculative start stands.
  void AnswerHeard(HeardTurn heard, bool speculated);
  void CheckTimers();
  // At info.max_call_ms once the agent is quiet (at the latest kTimeLimitGraceMs later, cutting
  // the turn in progress short): says call.time_limit_text, then hangs up. True once begun.
  bool CheckTimeLimit(int64_t now);
  void SubmitDtmf();
  // A new agent turn (caller turn, greeting, prompt): supersedes the active one. Returns its
  // index and installs its cancel token.
  int BeginTurn(TurnReport report, std::shared_ptr<CancelToken>& token);
  void StartAnswer(int idx, std::shared_ptr<CancelToken> token, std::string text);
  // The answer of turn `idx` (answer strand): asks the answerer, streaming its sentences to the
  // speak strand as they come, then SpeakAnswer.
  void RunAnswer(int idx, const std::shared_ptr<CancelToken>& token, const std::string& text,
                 const std::shared_ptr<void>& busy, llm::GenerationSchedule* schedule);
  // What the caller hears of `result`: the answer, a request to rephrase, a transfer, or
  // error_text; records the turn and the history (answer strand).
  void SpeakAnswer(int idx, const std::shared_ptr<CancelToken>& token, const std::string& text,
                   Result<TurnAnswer> result, const std::shared_ptr<void>& busy);
  void SpeakPrompt(int idx, std::shared_ptr<CancelToken> token, const std::string& text,
                   AfterSpeech after, std::string reason);
  void Error(int idx, const std::string& kind, const Status& s);
  // Ends the hold on FinishTurn(idx) and finishes it if that was asked meanwhile.
  void ReleaseFinish(int idx);
  void FinishTurn(int idx);
  std::shared_ptr<void> BusyGuard();

  // call_session_prework.cc — answers prepared before the caller finishes.
  void StartPrework(const std::string& partial);
  // The partial `phrase` looks like a whole turn: end it after complete_silence_ms, unless the
  // caller has said more by the time this reaches the listen strand (any strand).
  void PostHint(const std::string& phrase);
  // Speaks the prepared answer if it is for `text`'s phrase; `remember`: add the exchange to
  // the history now (a speculative start adds it once the final transcript confirms it).
  bool UsePrework(int idx, const std::shared_ptr<CancelToken>& token, const std::string& text,
                  bool remember = true);
  void RememberExchange(int idx, const std::string& caller_text, const std::string& agent_text);
  // Appends a caller turn (redacted) and the agent's answer (turn `idx`) to the history, keeping
  // the last call.history_turns exchanges (answer strand).
  void AddToHistory(int idx, const std::string& caller_text, const std::string& agent_text);
  // Turn `idx` was cut off by a barge-in after the caller heard `heard` of it: the history keeps
  // only that, so the model is not told it said what the caller never heard (answer strand).
  void CutHistory(int idx, const std::string& heard);

  // call_session_speak.cc
  // Queues speech of `pieces` for turn `idx` on the speak strand. `finish`: the turn's speech is
  // complete after these (flush, mark, then `after` once played).
  void PostSpeak(int idx, std::shared_ptr<CancelToken> token, std::vector<std::string> pieces,
                 bool personal, bool finish, AfterSpeech after, std::string reason,
                 std::shared_ptr<void> busy);
  void RunSpeak(int idx, const std::shared_ptr<CancelToken>& token,
                const std::vector<std::string>& pieces, bool personal, bool finish,
                AfterSpeech after, const std::string& reason);
  // Where the speaker's audio of turn `idx` goes: the playout (SendFrames) and the ledger.
  Speaker::Output SpeakOutput(int idx, const CancelToken& token);
  // The words of turn `idx` the caller heard before its audio stopped: the pieces played whole,
  // and of the piece playing then, its words in proportion to its frames played ("" when none
  // played). REQUIRES: mu held.
  std::string HeardTextLocked(int idx) const;
  // Hands turn `idx`'s encoded frames to the playout, unless the turn was cancelled (mu).
  Status SendFrames(int idx, const CancelToken& token, std::deque<Playout::Frame>& frames);
  void Stamp(int idx, double TurnLedger::*field);
  // Turn `idx` has sent audio up to play_end_ms: its model request needs its next tokens only
  // before that audio ends (GenerationSchedule::Playing).
  void PaceModel(int idx);
  // The agent's audio is playing at inbound time `now_ms` (REQUIRES: mu held).
  // A pause counts as playing: the caller is still heard as talking over the agent.
  bool PlayingLocked(int64_t now_ms) const { return playout.Playing(now_ms); }
  // Nobody is talking at `now_ms`: the caller is not in an utterance, the agent has no answer or
  // speech in flight and nothing playing (REQUIRES: mu held; turn strand).
  bool QuietLocked(int64_t now_ms) const {
    return !in_utterance.load() && agent_busy.load() == 0 && !PlayingLocked(now_ms);
  }
};

}  // namespace hotline::pipeline
