// Answerer: one caller turn in, one spoken answer out, from the cheapest tier that can answer.
//
//   understand ─► personal request (intent served by a tool)?  ─► identified: tool answer
//              │                                                └► not yet: ask for the PIN
//              ├► L1 intent templates (AnswerTier, e.g. the intent cache)
//              ├► L2 semantic cache    (AnswerTier)
//              ├► L3 exact result cache (ResultCache; answers with audio when synthesized)
//              ├► knowledge base: the top passage is spoken directly when it matches well
//              ├► LLM gate (llm_gate.h): a turn the call is not sure it understood (low
//              │  recognizer confidence, low intent margin) skips the model: fallback
//              ├► language model (llm::LanguageModel): prompt (system, history, passages),
//              │  streamed through the speech post-processing sentence by sentence
//              └► fallback: offer a human agent
// The result names the tier that answered.
//
// Streaming: AnswerOptions::on_sentence receives the spoken answer as sentences, in order, as
// soon as each is ready: while the model generates for the LLM tier (SpeechStream), the whole
// answer split into sentences for every other tier. Returning false from it, or raising
// AnswerOptions::cancel (barge-in, from any thread), stops the model; the result is then flagged
// `cancelled`, holds what was spoken, and is never cached.
//
// Look-ahead while the caller is still talking (stable ASR partials): Peek says what the
// shareable cached tiers (L1 templates without tools, L2, L3) would answer, with no side effects
// on stats or the caller; DraftPrompt gives the messages the model would get, for
// llm::LanguageModel::Prefetch.
//
// Personal data never crosses callers: tool answers are flagged personal and are stored in no
// cache; every value they spoke is remembered in the CallerSession and any later answer that
// mentions one is flagged personal too; L1/L2/L3 only learn answers that are not personal and
// did not depend on the conversation (an LLM answer built with history or tool results is never
// cached, since the same question can need another answer in another call).
//
// Knowledge-base updates: KB and LLM answers cached in L3 depend on the stamps of the articles
// they used; SyncKnowledgeBase (called by Answer at most every kb_sync_interval_ms) bumps the
// stamps of articles changed since the last sync, so their cached answers stop being served.
//
// Thread-safety: Answer, Peek and DraftPrompt may be called concurrently for different calls
// (different CallerSessions); the tiers they use are thread-safe. A CallerSession is used by one
// call at a time. Blocking: the tiers block (SQLite, Redis, the model); call from worker threads.
// on_sentence runs on the thread that called Answer.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/account/caller.h"
#include "answer/account/tools.h"
#include "answer/cache/intent_cache.h"
#include "answer/cache/result_cache.h"
#include "answer/cache/semantic_cache.h"
#include "answer/generate/llm_gate.h"
#include "answer/generate/postprocess.h"
#include "answer/generate/prompt.h"
#include "answer/kb/kb_company.h"
#include "answer/kb/knowledge_base.h"
#include "answer/understand/clarify.h"
#include "answer/understand/entities.h"
#include "answer/understand/intent_classifier.h"
#include "common/cancel_token.h"
#include "common/clock.h"
#include "common/status.h"
#include "llm/language_model.h"

namespace hotline::answer {

// What understanding made of a turn (see understanding.h; an adapter fills this).
struct Question {
  std::string text;    // normalized and PII-redacted: cache keys, logs, remote models
  std::string digits;  // digits typed or spoken in the turn (PIN entry); never logged or cached
  std::string intent;  // accepted intent label, empty when rejected / out of scope
  double intent_confidence = 0;
  std::map<std::string, std::string> entities;  // "month" -> "2026-11", "order_number" -> "A5531"
  std::optional<IntentPrediction> prediction;   // the classifier's full output (L1), when run
  std::vector<Entity> entity_list;              // entities as extracted (L1 template slots)
};
using Understander = std::function<Result<Question>(std::string_view turn)>;

struct TierAnswer {
  std::string text;
  bool personal = false;  // carries a caller's data
  // Values of the caller's data it spoke (amounts, order numbers): the Answerer remembers them in
  // the CallerSession so that no later answer repeating one is shared.
  std::vector<std::string> personal_values;
};

// A cache tier implemented elsewhere (L1 intent templates, L2 semantic cache).
class AnswerTier {
 public:
  virtual ~AnswerTier() = default;
  // nullopt: fall through to the next tier.
  virtual Result<std::optional<TierAnswer>> Lookup(const Question& q, const CallerSession& caller) = 0;
  // Offered each answer of a later tier that may be shared between callers. `depends_on` lists
  // the version stamps (knowledge-base articles) the answer was built from.
  virtual Status Learn(const Question& q, std::string_view answer,
                       const std::vector<std::string>& depends_on) = 0;
  // What Lookup would answer for any caller, without side effects (no stats, no tool calls):
  // only answers that may be shared between callers. Default: nothing.
  virtual Result<std::optional<TierAnswer>> Peek(const Question& q) {
    (void)q;
    return std::optional<TierAnswer>();
  }
  // Version stamp `stamp` (a knowledge-base article) moved: drop answers learned from it.
  virtual void Invalidate(std::string_view stamp) { (void)stamp; }
};

// kClarify: a question back to the caller (understand/clarify.h), not an answer yet.
enum class AnswerTierId { kTool, kIdentify, kL1, kL2, kL3, kKnowledgeBase, kLlm, kFallback, kClarify };
std::string_view TierName(AnswerTierId tier);

struct AnswerResult {
  std::string text;                    // the whole spoken answer
  std::vector<std::string> sentences;  // `text` as the sentences given to on_sentence
  AnswerTierId tier = AnswerTierId::kFallback;
  bool personal = false;
  // Hand the call to a human agent after this answer (the caller was locked out of verification).
  bool transfer = false;
  // The fallback answered because a tier failed (the model's server down, slow or its circuit
  // open; an account tool's error), not because the question has no answer: the caller is not
  // the one to rephrase.
  bool degraded = false;
  // Stopped by AnswerOptions (cancel raised or on_sentence returned false): `text` is what was
  // produced until then; never cached.
  bool cancelled = false;
  std::string audio;         // cached synthesized audio (L3 hits only; may be empty)
  std::string audio_format;
  std::vector<std::string> passage_ids;  // knowledge-base articles used
  // The model's figures when the LLM tier ran (first_token_ms, prompt/cached/generated tokens).
  std::optional<llm::GenerateStats> llm;
  double first_sentence_ms = -1;  // Answer call -> first on_sentence call (-1: none)
  double understood_ms = -1;      // Answer call -> question understood (normalized, intent)
  // The LLM gate's verdict when the turn reached the LLM tier (a model is configured), with what
  // it saw; a blocked turn is answered by the fallback (tier kFallback).
  struct GateCheck {
    LlmGateInput input;
    LlmGateDecision decision;
  };
  std::optional<GateCheck> llm_gate;
  // Why the fallback answered because the gate blocked the model ("low_intent_top_two", ...);
  // empty otherwise.
  std::string_view gated_reason() const {
    return llm_gate && !llm_gate->decision.pass ? LlmGateReasonName(llm_gate->decision.reason)
                                                : std::string_view();
  }
};

struct AnswerOptions {
  // The spoken answer, sentence by sentence, as soon as each is ready (see the file comment).
  // Return false to stop (the answer is then cancelled). May be empty.
  std::function<bool(std::string_view sentence)> on_sentence;
  // Raised from any thread (barge-in, hang-up): the model stops and the answer is not cached.
  const CancelToken* cancel = nullptr;
  // false: a fallback answer (no tier could answer) is returned without going through
  // on_sentence, for a caller that says something else first (e.g. asks to rephrase).
  bool stream_fallback = true;
  // The recognizer's utterance confidence (0..1) of a spoken turn, for the LLM gate; nullopt for
  // a typed or scripted turn (the gate's recognizer check is skipped).
  std::optional<double> asr_confidence;
  // Live scheduling hints for the model's request (what the caller hears; see
  // llm::GenerationSchedule). Owned by the caller; null: none.
  const llm::GenerationSchedule* schedule = nullptr;
};

struct AnswererConfig {
  // The callers' language: "en" or "zh" (Mandarin). It picks how account tools word their answers
  // (dollars or 元, "November 2026" or "2026年11月"); Chinese text is recognized as such by itself
  // everywhere else (normalization, features, the knowledge base's trigram search, speech).
  std::string language = "en";
  // L1: the intent classifier (trained at start-up on the knowledge base's example questions)
  // and its answer templates.
  bool use_intent_cache = true;
  IntentClassifierConfig intent;
  IntentCacheConfig intent_cache;
  // "intent=template" pairs that override or add L1 templates; a template of a tool intent
  // (tool_intents) is filled from that tool's result for an identified caller. Other intents use
  // their knowledge-base article.
  std::vector<std::string> intent_templates = {"get_invoice=Your bill for {month} was {amount}.",
                                               "check_invoice=Your bill for {month} was {amount}."};
  // L2: the semantic cache of shareable answers.
  bool use_semantic_cache = true;
  SemanticCacheConfig semantic_cache;
  // L3: exact results (shareable answers by normalized question, with knowledge-base stamps).
  // Off: nothing is stored or served there (every repeated question reaches the tiers below).
  bool use_result_cache = true;
  ResultCacheConfig l3;
  KnowledgeBaseConfig kb;
  // Company facts that fill {{key}} placeholders of articles, templates and model output.
  CompanyConfig company;
  PromptConfig prompt;
  SpeechConfig speech;
  CallerConfig caller;
  // Wrong PINs across calls: lock-out window and back-off (verification.h).
  VerificationConfig verification;
  // Which turns the LLM tier may answer (llm_gate.h).
  LlmGateConfig llm_gate;
  // Asking "is this about X or Y?" instead of guessing when the classifier is unsure, in front of
  // every tier or in place of the rephrase request (`when`, understand/clarify.h). Off by default.
  ClarifyConfig clarify;
  // BM25 score above which the best passage is spoken directly (no LLM) when no intent check
  // applies (no classifier, an article without an intent, or the check switched off). Lower
  // answers more questions from the knowledge base; higher sends more to the LLM.
  double kb_direct_min_score = 6.0;
  // Speak a passage directly only when the intent classifier's best guess for the turn
  // (accepted or not) is the passage's intent, when both have one. Off: any passage at
  // kb_direct_min_score is spoken, which answers misheard and out-of-scope turns with whatever
  // article shares a few words with them.
  bool kb_direct_requires_intent_match = true;
  // BM25 score above which a passage the classifier's best guess agrees with is spoken. Tuned on
  // the Banking77 dev split and CLINC150 oos_val with the tuning voices (docs/answers.md).
  double kb_direct_agreed_min_score = 3.0;
  // ...and whose best guess leads the runner-up intent by at least this much probability. A
  // guess barely ahead of a neighbouring intent ("card payment" or "cash withdrawal" exchange
  // rate) is as often the other one; with `clarify` on, such turns are asked about instead.
  // 0 = no margin needed.
  double kb_direct_agreed_min_margin = 0;
  // ...and, for a spoken turn, whose transcript the recognizer is at least this sure of
  // (AnswerOptions::asr_confidence, the mean word posterior). An unaccepted guess on a misheard
  // transcript still agrees with some passage; with `clarify` on, such turns are asked about
  // instead. Typed turns (no recognizer) are not held to it; the caches and accepted intents
  // are held to accept_min_asr_confidence. 0 = no floor.
  double kb_direct_agreed_min_asr_confidence = 0;
  // The recognizer's confidence a spoken turn needs to be answered on its words alone: from L1,
  // L2 or L3 (whose answers a misheard transcript can match as well as a well-heard one), or on
  // an intent the classifier accepted (a tool, a passage). Below it the turn goes on as one the
  // classifier was unsure of: an agreed passage (held to the floor above), the model (held to
  // its gate), a clarifying question, or the fallback. The call session holds its prepared
  // answers to the same floor. Typed turns are not held to it. 0 = no floor.
  double accept_min_asr_confidence = 0;
  // "intent=tool" pairs: intents answered by an account tool for an identified caller.
  std::vector<std::string> tool_intents = {"get_invoice=last_bill", "check_invoice=last_bill",
                                           "track_order=order_status",
                                           "track_refund=refund_status"};
  // How often Answer checks the knowledge base for updates (0: every turn).
  int kb_sync_interval_ms = 1000;
  std::string ask_pin_text = "For your account details, please enter or say your PIN.";
  // Said after a right PIN when no request was waiting for it.
  std::string verified_text = "Thank you, you're verified. How can I help?";
  // Said after a wrong PIN, and equally after any PIN from a number that has no account: the two
  // must sound the same, or callers could learn which numbers are customers.
  std::string wrong_pin_text = "That PIN didn't match. Please try again.";
  // Said when this call's PIN attempts are used up or the number or account is locked out
  // (verification.*); the call is then transferred to an agent.
  std::string locked_text =
      "I can't access your account on this call. Let me transfer you to an agent.";
  std::string fallback_text = "I'm not sure about that. Let me transfer you to an agent.";

  template <class V>
  void Visit(V& v) {
    v.Field("language", language, "Callers' language: en or zh (how account tools word answers)");
    v.Field("use_intent_cache", use_intent_cache, "Answer from L1 intent templates");
    v.Section("intent", intent);
    v.Section("intent_cache", intent_cache);
    v.Field("intent_templates", intent_templates, "intent=template pairs for L1");
    v.Field("use_semantic_cache", use_semantic_cache, "Answer from the L2 semantic cache");
    v.Section("semantic_cache", semantic_cache);
    v.Field("use_result_cache", use_result_cache,
            "Answer from (and store shareable answers in) the L3 exact-result cache");
    v.Section("l3", l3);
    v.Section("kb", kb);
    v.Section("company", company);
    v.Section("prompt", prompt);
    v.Section("speech", speech);
    v.Section("caller", caller);
    v.Section("verification", verification);
    v.Section("llm_gate", llm_gate);
    v.Section("clarify", clarify);
    v.Field("kb_direct_min_score", kb_direct_min_score, "BM25 score to speak a passage directly");
    v.Field("kb_direct_requires_intent_match", kb_direct_requires_intent_match,
            "Speak a passage directly only when the classifier's best guess is its intent");
    v.Field("kb_direct_agreed_min_score", kb_direct_agreed_min_score,
            "BM25 score to speak a passage the classifier's best guess agrees with");
    v.Field("kb_direct_agreed_min_margin", kb_direct_agreed_min_margin,
            "Probability lead over the runner-up intent the agreeing guess needs (0 = none)");
    v.Field(
        "accept_min_asr_confidence", accept_min_asr_confidence,
        "Recognizer confidence a spoken turn needs for L1/L2/L3 or an accepted intent (0 = none)");
    v.Field("kb_direct_agreed_min_asr_confidence", kb_direct_agreed_min_asr_confidence,
            "Recognizer confidence a spoken turn needs for an agreed passage (0 = none)");
    v.Field("tool_intents", tool_intents, "intent=tool pairs served by account tools");
    v.Field("kb_sync_interval_ms", kb_sync_interval_ms, "Knowledge-base update check interval");
    v.Field("ask_pin_text", ask_pin_text, "Prompt for the caller's PIN");
    v.Field("verified_text", verified_text, "Said after a right PIN with no request waiting");
    v.Field("wrong_pin_text", wrong_pin_text, "Said after a wrong PIN");
    v.Field("locked_text", locked_text, "Said when the caller is locked out");
    v.Field("fallback_text", fallback_text, "Said when no tier can answer");
  }
  Status Validate() const;
};

// The components the answerer chains; any may be null (that tier is skipped). All must outlive
// the Answerer.
struct AnswererParts {
  Understander understand;  // required
  AnswerTier* l1 = nullptr;
  AnswerTier* l2 = nullptr;
  ResultCache* l3 = nullptr;
  KnowledgeBase* kb = nullptr;
  ToolRegistry* tools = nullptr;
  CallerIdentifier* identifier = nullptr;
  llm::LanguageModel* llm = nullptr;
  TokenCounter count_tokens;  // null: llm->CountTokens when a model is given, else an estimate
  const Clock* clock = nullptr;  // null: the system clock
  MetricsRegistry* metrics = nullptr;  // hotline_answer_llm_gated_total; null: the global registry
};

struct AnswererStats {
  std::atomic<uint64_t> turns{0};
  std::atomic<uint64_t> by_tier[9] = {};
  std::atomic<uint64_t> tier_errors{0};  // a tier failed and the next one answered
  std::atomic<uint64_t> cancelled{0};    // answers stopped by barge-in
  std::atomic<uint64_t> llm_gated{0};    // turns the LLM gate sent to the fallback
  std::atomic<uint64_t> clarifications{0};           // clarifying questions asked
  std::atomic<uint64_t> clarifications_resolved{0};  // replies that chose a topic
};

class Answerer {
 public:
  static Result<std::unique_ptr<Answerer>> Create(AnswererConfig config, AnswererParts parts);

  // Answers one turn of the call. `history`: earlier messages of this call, oldest first.
  Result<AnswerResult> Answer(std::string_view turn, CallerSession& caller,
                              const std::vector<ChatMessage>& history = {},
                              const AnswerOptions& options = {});

  // What the shareable cached tiers (L1 templates that use no tool, L2, L3) would answer for
  // `partial` now; nullopt when none would (or the turn asks for personal data). No side effects:
  // no stats, no caller state, no model, no tool (an L3 entry found stale may be dropped).
  Result<std::optional<AnswerResult>> Peek(std::string_view partial, const CallerSession& caller);

  // Whether a transcript heard with `asr_confidence` (nullopt: typed) may be answered on its
  // words alone (accept_min_asr_confidence).
  bool TrustsTranscript(std::optional<double> asr_confidence) const;

  // Whether `partial` already reads as a question this line acts on, whether or not a cached
  // tier could answer it now: the classifier accepts its intent (an account request included),
  // or the knowledge base would speak a passage for it (taking the unknown recognizer
  // confidence of a partial as sure). False in reply to a clarifying question. For ending the
  // caller's turn sooner, never for choosing the answer. No side effects on the caller; a
  // failing knowledge-base search is logged and counted (tier_errors) as Answer's is.
  Result<bool> Understands(std::string_view partial, const CallerSession& caller);

  // The messages the language model would get if `partial` were the whole turn (for
  // llm::LanguageModel::Prefetch while the caller talks). Reads the knowledge base.
  Result<std::vector<ChatMessage>> DraftPrompt(std::string_view partial, const CallerSession& caller,
                                               const std::vector<ChatMessage>& history);
  // Hands DraftPrompt's messages to the model's Prefetch (its prefix cache computes them while
  // the caller talks). No model: nothing. Errors are the draft's or the model's (best effort).
  Status Prefetch(std::string_view partial, const CallerSession& caller,
                  const std::vector<ChatMessage>& history);

  // Hands the system prompt, the start every model prompt shares, to the model's Prefetch, so the
  // first calls after start-up pay only for their own context (the embedded engine computes it
  // into its prefix cache behind every caller's request). No model: nothing. Best effort.
  Status WarmUp();

  // A PIN typed on the keypad (DTMF digits from the transport). When a personal request was
  // waiting for it, the answer to that request; otherwise a confirmation.
  Result<AnswerResult> SubmitPin(CallerSession& caller, std::string_view digits);

  // Invalidates cached answers built from articles changed since the last sync.
  Status SyncKnowledgeBase();

  // Stores synthesized audio with a cached (shareable) answer so later hits skip synthesis.
  Status AttachAudio(const Question& q, const AnswerResult& answer, std::string audio,
                     std::string format);

  const AnswererStats& stats() const { return stats_; }

 private:
  Answerer(AnswererConfig config, AnswererParts parts, std::map<std::string, std::string> tools);
  struct Turn;  // per-call state of one Answer (options, timing, sentences delivered)
  Result<AnswerResult> AnswerTurn(std::string_view turn, CallerSession& caller,
                                  const std::vector<ChatMessage>& history, Turn& t);
  Result<AnswerResult> RunTool(CallerSession& caller, const std::string& tool,
                               const std::map<std::string, std::string>& args);
  Result<AnswerResult> HandlePin(CallerSession& caller, std::string_view digits);
  // A turn whose intent is one of the account tools': the tool's answer for an identified
  // caller, else the PIN request (or the lock-out). nullopt when `q.intent` is no tool's.
  std::optional<AnswerResult> AnswerToolIntent(const Question& q, CallerSession& caller,
                                               Result<AnswerResult>* error);
  // The caller chose `intent` for `original` in reply to a clarifying question: the intent's tool,
  // L1 template or knowledge-base article (never shared: the question alone was ambiguous).
  Result<AnswerResult> AnswerAsIntent(Question original, const std::string& intent,
                                      CallerSession& caller);
  // A clarifying question for an unsure turn `q` (no accepted intent), remembered in `caller`;
  // nullopt when the classifier's reading does not support one (clarify.h).
  std::optional<AnswerResult> Clarify(const Question& q, std::string_view turn,
                                      CallerSession& caller);
  std::string TopicOf(const std::string& intent) const;
  std::vector<Passage> Retrieve(const Question& q);
  // Whether the knowledge-base tier speaks `top` (the best passage for `q`) itself: its BM25
  // score, and where the classifier's best guess is judged, that guess naming the passage's
  // intent with the lead and recognizer confidence the configuration asks for.
  bool SpeaksPassage(const Question& q, const Passage& top,
                     std::optional<double> asr_confidence) const;
  Result<std::optional<AnswerResult>> FromKnowledgeOrModel(const Question& q, CallerSession& caller,
                                                           const std::vector<ChatMessage>& history,
                                                           Turn& t);
  // The LLM gate for a turn about to reach the model: records its verdict in `t`, counts a block.
  bool GateAllows(const Question& q, const std::vector<Passage>& passages, Turn& t);
  Result<std::optional<AnswerResult>> FromModel(const Question& q, CallerSession& caller,
                                                const std::vector<ChatMessage>& history,
                                                std::vector<Passage> passages, Turn& t);
  void Share(const Question& q, const AnswerResult& a, const std::vector<std::string>& deps,
             const std::vector<uint64_t>& snapshot);
  AnswerResult Done(AnswerResult r);

  AnswererConfig config_;
  AnswererParts parts_;
  std::map<std::string, std::string> tool_for_intent_;
  std::map<std::string, std::string> topic_for_intent_;  // an article title per intent
  PromptBuilder prompt_builder_;
  std::mutex sync_mu_;
  int64_t kb_generation_ = 0;
  MonoTime next_sync_{};
  AnswererStats stats_;
};

}  // namespace hotline::answer
