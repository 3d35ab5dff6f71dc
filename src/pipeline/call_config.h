// CallConfig: what a call says and how long it waits (the `call` section of hotline.yaml).
//
// Spoken texts (greeting, re-prompt, goodbye, fallbacks), the phrases that end a call or ask for
// a human, per-stage time limits, queue bounds and the output chunk size. Plain values: copy
// freely; Validate() says what to fix.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace hotline::pipeline {

struct CallConfig {
  // Said when the call is answered. Empty: wait for the caller to speak first.
  std::string greeting_text = "Thank you for calling. How can I help you today?";
  // Said after reprompt_after_ms of silence from the caller while the agent is idle.
  std::string reprompt_text = "Are you still there? How can I help you?";
  // Silence before a re-prompt. Shorter nudges sooner; longer lets callers look things up.
  int reprompt_after_ms = 8000;
  // Re-prompts before the agent says goodbye and hangs up. 0 hangs up after the first silence.
  int reprompt_max = 2;
  // Said before hanging up (caller said goodbye, or too many re-prompts).
  std::string goodbye_text = "Thank you for calling. Goodbye!";
  // Said when a stage is slower than its time limit or the server is overloaded.
  std::string busy_text = "Sorry, that is taking me longer than it should. Could you ask me again?";
  // Said before handing the call to a human agent.
  std::string transfer_text = "Of course. Let me transfer you to an agent.";
  // Said before hanging up when the call reaches its longest length (calls.max_call_ms).
  std::string time_limit_text =
      "We have reached the time limit for this call. Please call again if there is anything "
      "else. Goodbye!";
  // Said when a stage fails (recognizer, answer, synthesis).
  std::string error_text = "Sorry, something went wrong on my side. Could you say that again?";
  // Consecutive questions no answer tier could answer that get `rephrase_text` (and the call
  // goes on) before the next one is handed to a human agent. Most misses are misrecognitions or
  // unusual phrasings that a second try fixes; 0 transfers at the first miss.
  int fallback_retries = 1;
  std::string rephrase_text =
      "Sorry, I'm not sure I understood. Could you say that in another way?";
  // Said when a turn was heard but nothing was recognized.
  std::string not_heard_text = "Sorry, I didn't catch that. Could you say it again?";
  // A turn that ends with one of these ends the call politely, unless a negation or a question
  // word says otherwise ("please don't hang up", "why did you hang up"); so does a turn made of
  // one of these and courtesy ("thanks so much, have a nice day"). See pipeline/dialogue_acts.h.
  std::vector<std::string> goodbye_phrases = {"goodbye",
                                              "good bye",
                                              "bye",
                                              "bye bye",
                                              "bye for now",
                                              "that is all",
                                              "that's all",
                                              "that will be all",
                                              "hang up",
                                              "no thank you goodbye",
                                              "see you",
                                              "see ya",
                                              "talk to you later",
                                              "talk to you soon",
                                              "have a nice day",
                                              "have a good day",
                                              "have a great day",
                                              "have a good one",
                                              "have a nice evening",
                                              "have a good evening",
                                              "good night",
                                              "farewell",
                                              "take care"};
  // A turn that asks for one of these is transferred: a request ("can I speak to an agent"), or a
  // short turn ("agent, please"), and not a negation ("I don't need an agent") or someone else's
  // ("my travel agent"). "Talk to a person / someone / somebody" asks too.
  std::vector<std::string> agent_phrases = {"agent", "human", "representative", "operator",
                                            "real person", "speak to someone"};
  // Thanks, hello, "say that again", "are you a real person?", "I have a question", "hold on",
  // "what can you help me with?" and an "okay" after an answer are answered by the session itself
  // (the texts below, or the last reply once more) instead of the answer tiers, which have no
  // article for them. English turns only.
  bool social_replies = true;
  // Said to a thank-you. Asks for more; a "no" to it ends the call.
  std::string thanks_text = "You're welcome. Is there anything else I can help you with?";
  // Said to a hello or "are you there?" in the middle of a call.
  std::string hello_text = "Hello, I'm here. How can I help you?";
  // Said to "are you a real person?".
  std::string machine_text =
      "I'm an automated assistant. I can help with most questions, and if you'd like to speak "
      "to a person, just say agent.";
  // Said to a caller about to ask ("I have a question", "can I ask you something", or a "yes"
  // to "anything else?").
  std::string go_ahead_text = "Sure, go ahead. What would you like to know?";
  // Said to "hold on", "one moment, let me find my card" or a turn of only "um"; the line then
  // waits hold_reprompt_after_ms (not reprompt_after_ms) before asking whether they are there.
  std::string hold_text = "Sure, take your time. I'm here when you're ready.";
  int hold_reprompt_after_ms = 30000;
  // Said to "what can you help me with?": what this line is for (each line sets its own).
  std::string help_text =
      "I can help with your orders, deliveries, returns and refunds, payments and your account, "
      "or put you through to a person. What would you like to do?";
  // Said to an "okay" or "got it" after an answer; a "no" to it ends the call.
  std::string anything_else_text = "Is there anything else I can help you with?";
  // Said before a transfer when the call's questions went unanswered because an answer tier
  // failed (the model's server, an account tool): the failure is the line's, not the caller's.
  std::string failure_transfer_text =
      "Sorry, I'm having trouble on my side. Let me transfer you to an agent.";
  // Time the recognizer may take to finalize a turn before the turn counts as an ASR timeout.
  int asr_timeout_ms = 3000;
  // Time an answer may take (understanding, caches, knowledge base, model) before the turn is
  // abandoned with busy_text. Longer tolerates slow models; shorter keeps callers from waiting.
  int answer_timeout_ms = 8000;
  // Time one sentence may take to its first audio chunk before synthesis counts as timed out.
  int tts_timeout_ms = 5000;
  // DTMF digits are submitted as a PIN on '#' or after this pause after the last digit.
  int dtmf_timeout_ms = 2000;
  // Inbound audio (20 ms frames) queued per call before PushAudio drops frames. Bounds memory and
  // the lag a stalled worker can build up (50 frames = 1 s).
  int audio_queue_frames = 50;
  // Largest single PushAudio payload accepted (bytes); larger is refused as a transport error.
  int max_push_bytes = 65536;
  // Caller audio kept before the utterance opened, fed to the recognizer with it (the endpointer
  // opens an utterance only after start_speech_ms; this keeps the first phoneme).
  int preroll_ms = 300;
  // Agent audio per SendAudio call (a multiple of 20 ms). Larger means fewer transport messages;
  // smaller reacts to barge-in with less audio already handed over.
  int output_chunk_ms = 20;
  // Leading silence of each turn's speech is not sent: synthesizers open an utterance with up to
  // ~200 ms of near-silence (flite: -65 dBFS), which only delays the first audible word. Audio
  // is dropped until a 5 ms window is louder than `lead_trim_dbfs`, at most `lead_trim_max_ms`
  // per turn (0 = keep everything).
  double lead_trim_dbfs = -50.0;
  int lead_trim_max_ms = 400;
  // Work before the caller finishes: when the ASR partial is stable, ask the answerer what the
  // cached tiers would answer and synthesize it ahead; at end of turn, a final transcript equal
  // to that partial is answered with the prepared audio at once. Costs a look-up and a synthesis
  // per stable partial that differs from the last one.
  bool prework = true;
  // Words a stable partial needs before it is looked up ahead (fewer words rarely match).
  int prework_min_words = 3;
  // When the cached tiers already answer the stable partial, end the turn after the endpointer's
  // complete_silence_ms instead of trailing_silence_ms: a question the agent can answer is most
  // likely complete. Saves the difference (260 ms by default) on those turns; a caller who then
  // pauses that long mid-sentence is answered early (saying more withdraws the hint).
  bool prework_ends_turn = true;
  // With prework_ends_turn, a stable partial no cached tier answers ends the turn the same way
  // when it already reads as a whole question: the classifier accepts its intent (an account
  // request, which is never cached, included) or the knowledge base would speak a passage for
  // it; and so does a partial that ends in a goodbye or holds a request for a person (a turn
  // the session answers itself, whatever the tiers say).
  bool understood_ends_turn = true;
  // At end of turn, when the last partial is the one whose answer was prepared, that answer
  // starts playing before the recognizer's final pass (tens of ms on a busy machine) instead of
  // after it. A final transcript that reads differently stops it at once (clear) and is answered
  // as usual; the caller may then hear a fragment of under 100 ms.
  bool prework_speculate = true;
  // A final transcript that reads differently still confirms the speculative answer when the
  // cached tiers answer it with the same text; this bounds the wait for that look-up (ms).
  int speculation_check_ms = 50;
  // When no cached tier answers the stable partial, hand the prompt the model would get to its
  // Prefetch (the embedded engine computes it into its prefix cache, so the final request only
  // pays for the last words). Costs a retrieval per stable partial and background model work.
  bool prework_prefetch = true;
  // Earlier turns (caller + agent messages) handed to the answerer as history.
  int history_turns = 4;
  // Per-call records (SQLite, one row per turn). Empty: not recorded.
  std::string record_db;
  // Turns waiting to be written before new ones are dropped (counted).
  int record_queue = 1024;
  // Worker threads of the process (not per call), shared by all calls. `workers` run the CPU
  // stages (listening: VAD, recognizer; speaking: synthesis, encoding); more than the cores only
  // adds contention. `answer_workers` run the answers (caches, knowledge base, the model), which
  // wait on I/O and on the model: a model turn holds its worker until its answer is complete, so
  // fewer answer workers than the model's batch keep the engine from batching calls. 0 = the
  // model's batch (llm.engine.max_batch_size; 16 for llm backend openai; 0 for none) + 2 for
  // cached answers.
  int workers = 2;
  int answer_workers = 0;

  template <class V>
  void Visit(V& v) {
    v.Field("greeting_text", greeting_text, "Said when the call is answered (empty: none)");
    v.Field("reprompt_text", reprompt_text, "Said after reprompt_after_ms of caller silence");
    v.Field("reprompt_after_ms", reprompt_after_ms, "Caller silence before a re-prompt (ms)");
    v.Field("reprompt_max", reprompt_max, "Re-prompts before saying goodbye and hanging up");
    v.Field("goodbye_text", goodbye_text, "Said before hanging up");
    v.Field("busy_text", busy_text, "Said when a stage times out or the server is overloaded");
    v.Field("transfer_text", transfer_text, "Said before transferring to a human agent");
    v.Field("error_text", error_text, "Said when a stage fails");
    v.Field("time_limit_text", time_limit_text,
            "Said before hanging up at the longest call length (calls.max_call_ms)");
    v.Field("fallback_retries", fallback_retries,
            "Unanswerable questions in a row answered with rephrase_text before a transfer");
    v.Field("rephrase_text", rephrase_text, "Asks the caller to rephrase an unanswerable question");
    v.Field("not_heard_text", not_heard_text, "Said when a turn was heard but not recognized");
    v.Field("goodbye_phrases", goodbye_phrases, "Caller phrases that end the call");
    v.Field("agent_phrases", agent_phrases, "Caller phrases that ask for a human agent");
    v.Field("social_replies", social_replies,
            "Thanks, hello, 'say that again', 'hold on', 'what can you do?' and the like answered "
            "by the session");
    v.Field("thanks_text", thanks_text, "Said to a thank-you (a 'no' to it ends the call)");
    v.Field("hello_text", hello_text, "Said to a hello or 'are you there?' during a call");
    v.Field("machine_text", machine_text, "Said to 'are you a real person?'");
    v.Field("go_ahead_text", go_ahead_text,
            "Said to 'I have a question' or a 'yes' to 'anything else?'");
    v.Field("hold_text", hold_text, "Said to 'hold on, let me find it' or a turn of only 'um'");
    v.Field("hold_reprompt_after_ms", hold_reprompt_after_ms,
            "Caller silence before a re-prompt after hold_text (ms)");
    v.Field("help_text", help_text, "Said to 'what can you help me with?'");
    v.Field("anything_else_text", anything_else_text,
            "Said to an 'okay' or 'got it' after an answer (a 'no' to it ends the call)");
    v.Field("failure_transfer_text", failure_transfer_text,
            "Said before a transfer after repeated answer-tier failures");
    v.Field("asr_timeout_ms", asr_timeout_ms,
            "Time limit of the recognizer's final pass; past it the caller hears busy_text (ms)");
    v.Field("answer_timeout_ms", answer_timeout_ms, "Time limit for an answer (ms)");
    v.Field("tts_timeout_ms", tts_timeout_ms, "Time limit to a sentence's first audio (ms)");
    v.Field("dtmf_timeout_ms", dtmf_timeout_ms, "Pause after the last keypad digit that submits a PIN (ms)");
    v.Field("audio_queue_frames", audio_queue_frames, "Inbound 20 ms frames queued per call");
    v.Field("max_push_bytes", max_push_bytes, "Largest inbound audio payload (bytes)");
    v.Field("preroll_ms", preroll_ms, "Audio before the utterance opened fed to the recognizer (ms)");
    v.Field("output_chunk_ms", output_chunk_ms, "Agent audio per SendAudio call (ms, multiple of 20)");
    v.Field("lead_trim_dbfs", lead_trim_dbfs,
            "Leading audio of a turn quieter than this is not sent (dBFS)");
    v.Field("lead_trim_max_ms", lead_trim_max_ms,
            "Most leading quiet audio dropped per turn (ms; 0 = none)");
    v.Field("prework", prework, "Prepare cached answers' audio while the caller is still talking");
    v.Field("prework_min_words", prework_min_words, "Words a stable partial needs to be looked up ahead");
    v.Field("prework_ends_turn", prework_ends_turn,
            "A partial the cached tiers answer ends the turn after endpointer.complete_silence_ms");
    v.Field("understood_ends_turn", understood_ends_turn,
            "A partial the line understands (accepted intent, passage), a goodbye or an agent "
            "request also ends the turn after endpointer.complete_silence_ms");
    v.Field("prework_prefetch", prework_prefetch,
            "Prefetch the model's prompt for a stable partial no cached tier answers");
    v.Field("speculation_check_ms", speculation_check_ms,
            "Longest wait for the look-up that confirms a differing final transcript (ms, on "
            "the call's clock; the listen strand is not held meanwhile)");
    v.Field("prework_speculate", prework_speculate,
            "Start a prepared answer before the final transcript confirms it");
    v.Field("history_turns", history_turns, "Earlier turns given to the answerer");
    v.Field("record_db", record_db, "SQLite file of per-turn call records (empty: off)");
    v.Field("record_queue", record_queue, "Turn records queued for writing");
    v.Field("workers", workers, "Threads for listening and speaking, shared by all calls");
    v.Field("answer_workers", answer_workers,
            "Threads for answers, shared by all calls; each model turn holds one while it "
            "generates (0 = the model's batch + 2)");
  }
  Status Validate() const;
};

}  // namespace hotline::pipeline
