#include "answer/answerer.h"

#include "answer/understand/normalize.h"
#include "common/config.h"
#include "common/log.h"
#include "common/metrics.h"

namespace hotline::answer {

namespace {
AnswerResult Reply(std::string text, AnswerTierId tier, bool personal = false) {
  AnswerResult r;
  r.text = std::move(text);
  r.tier = tier;
  r.personal = personal;
  return r;
}
}  // namespace

// A tier's answer: personal when the tier says so or it repeats a value spoken to this caller;
// the caller's values it spoke are remembered for later answers.
static AnswerResult FromTier(TierAnswer hit, AnswerTierId id, CallerSession& caller) {
  for (const std::string& value : hit.personal_values) {
    caller.RememberPersonal(value);
    if (!value.empty() && value[0] == '$') caller.RememberPersonal(value.substr(1));
  }
  const bool personal = hit.personal || caller.MentionsPersonal(hit.text);
  return Reply(std::move(hit.text), id, personal);
}

std::string_view TierName(AnswerTierId tier) {
  switch (tier) {
    case AnswerTierId::kTool: return "tool";
    case AnswerTierId::kIdentify: return "identify";
    case AnswerTierId::kL1: return "l1";
    case AnswerTierId::kL2: return "l2";
    case AnswerTierId::kL3: return "l3";
    case AnswerTierId::kKnowledgeBase: return "kb";
    case AnswerTierId::kLlm: return "llm";
    case AnswerTierId::kFallback: return "fallback";
    case AnswerTierId::kClarify: return "clarify";
  }
  return "unknown";
}

Status AnswererConfig::Validate() const {
  RETURN_IF_ERROR(clarify.Validate().WithContext("clarify"));
  if (language != "en" && language != "zh") {
    return InvalidArgumentError("language is '" + language + "'; expected en or zh");
  }
  for (const auto& pair : tool_intents) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      return InvalidArgumentError("tool_intents entry '" + pair + "' is not intent=tool");
    }
  }
  for (const auto& pair : intent_templates) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      return InvalidArgumentError("intent_templates entry '" + pair + "' is not intent=template");
    }
    if (auto slots = TemplateSlots(pair.substr(eq + 1)); !slots.ok()) {
      return slots.status().WithContext("intent_templates entry '" + pair + "'");
    }
  }
  if (kb_sync_interval_ms < 0) return InvalidArgumentError("kb_sync_interval_ms must not be negative");
  // BM25 scores are positive; a very large floor switches direct answers off.
  if (!(kb_direct_min_score >= 0) || !(kb_direct_agreed_min_score >= 0)) {
    return InvalidArgumentError("kb_direct_min_score and kb_direct_agreed_min_score must be >= 0");
  }
  if (!(kb_direct_agreed_min_margin >= 0 && kb_direct_agreed_min_margin <= 1)) {
    return InvalidArgumentError("kb_direct_agreed_min_margin must be in [0, 1]");
  }
  if (!(accept_min_asr_confidence >= 0 && accept_min_asr_confidence <= 1)) {
    return InvalidArgumentError("accept_min_asr_confidence must be in [0, 1]");
  }
  if (!(kb_direct_agreed_min_asr_confidence >= 0 && kb_direct_agreed_min_asr_confidence <= 1)) {
    return InvalidArgumentError("kb_direct_agreed_min_asr_confidence must be in [0, 1]");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Answerer>> Answerer::Create(AnswererConfig config, AnswererParts parts) {
  RETURN_IF_ERROR(ValidateConfig(config).WithContext("answerer"));
  if (!parts.understand) return InvalidArgumentError("answerer needs an understander");
  if (!parts.clock) parts.clock = &SystemClock::Get();
  if (!parts.metrics) parts.metrics = &MetricsRegistry::Global();
  if (!parts.count_tokens && parts.llm) {
    parts.count_tokens = [model = parts.llm](std::string_view text) { return model->CountTokens(text); };
  }
  std::map<std::string, std::string> tools;
  for (const auto& pair : config.tool_intents) {
    const size_t eq = pair.find('=');
    const std::string tool = pair.substr(eq + 1);
    if (parts.tools && !parts.tools->Find(tool)) {
      return InvalidArgumentError("tool_intents names the unknown tool '" + tool + "'");
    }
    tools[pair.substr(0, eq)] = tool;
  }
  std::unique_ptr<Answerer> a(new Answerer(std::move(config), std::move(parts), std::move(tools)));
  if (a->parts_.kb) {
    ASSIGN_OR_RETURN(a->kb_generation_, a->parts_.kb->Generation());
    if (a->config_.clarify.enabled) {
      // The topic a clarifying question names for an intent: its first article's title.
      ASSIGN_OR_RETURN(std::vector<Article> articles, a->parts_.kb->All());
      for (const Article& article : articles) {
        if (!article.intent.empty() && !article.title.empty()) {
          a->topic_for_intent_.emplace(article.intent, article.title);
        }
      }
    }
  }
  return a;
}

Answerer::Answerer(AnswererConfig config, AnswererParts parts,
                   std::map<std::string, std::string> tools)
    : config_(std::move(config)),
      parts_(std::move(parts)),
      tool_for_intent_(std::move(tools)),
      prompt_builder_(config_.prompt, parts_.count_tokens) {}

AnswerResult Answerer::Done(AnswerResult r) {
  stats_.by_tier[static_cast<int>(r.tier)].fetch_add(1, std::memory_order_relaxed);
  return r;
}

// One Answer call: its options, when it started, and the sentences handed to on_sentence.
struct Answerer::Turn {
  Turn(const AnswerOptions& o, const Clock& c) : options(o), clock(c), start(c.Now()) {}
  const AnswerOptions& options;
  const Clock& clock;
  MonoTime start;
  bool streamed = false;  // the LLM tier delivered its sentences while generating
  bool model_failed = false;  // the LLM tier failed before saying anything
  bool stopped = false;   // on_sentence returned false
  double first_sentence_ms = -1;
  double understood_ms = -1;
  std::vector<std::string> sentences;
  std::optional<AnswerResult::GateCheck> gate;  // the LLM gate ran (the turn reached the model)

  // Hands one sentence to on_sentence; false once the listener wants no more.
  bool Deliver(std::string sentence) {
    if (stopped) return false;
    if (first_sentence_ms < 0) {
      first_sentence_ms = std::chrono::duration<double, std::milli>(clock.Now() - start).count();
    }
    sentences.push_back(std::move(sentence));
    if (options.on_sentence && !options.on_sentence(sentences.back())) stopped = true;
    return !stopped;
  }
};

Result<AnswerResult> Answerer::Answer(std::string_view turn, CallerSession& caller,
                                      const std::vector<ChatMessage>& history,
                                      const AnswerOptions& options) {
  Turn t(options, *parts_.clock);
  ASSIGN_OR_RETURN(AnswerResult r, AnswerTurn(turn, caller, history, t));
  if (!t.streamed && (options.stream_fallback || r.tier != AnswerTierId::kFallback)) {
    // Last guard for text stored before (cached answers, a knowledge base imported by an older
    // version): a sentence with an unfilled {{placeholder}} is never spoken.
    r.text = DropUnfilledPlaceholders(r.text, config_.company);
    for (std::string& sentence : SplitSentences(r.text)) {
      if (!t.Deliver(std::move(sentence))) break;
    }
  }
  r.sentences = std::move(t.sentences);
  r.first_sentence_ms = t.first_sentence_ms;
  r.understood_ms = t.understood_ms;
  r.llm_gate = t.gate;
  if (t.stopped || (t.streamed && IsCancelled(options.cancel))) r.cancelled = true;
  if (r.cancelled) stats_.cancelled.fetch_add(1, std::memory_order_relaxed);
  return r;
}

Result<AnswerResult> Answerer::AnswerTurn(std::string_view turn, CallerSession& caller,
                                          const std::vector<ChatMessage>& history, Turn& t) {
  stats_.turns.fetch_add(1, std::memory_order_relaxed);
  if (parts_.kb && (parts_.l3 || parts_.l2 || parts_.l1)) {
    bool due = false;
    {
      std::lock_guard lock(sync_mu_);
      const MonoTime now = parts_.clock->Now();
      if (now >= next_sync_) {
        next_sync_ = now + std::chrono::milliseconds(config_.kb_sync_interval_ms);
        due = true;
      }
    }
    if (due) {
      if (Status s = SyncKnowledgeBase(); !s.ok()) HLOG_WARN("knowledge-base sync failed: {}", s.message());
    }
  }
  ASSIGN_OR_RETURN(Question q, parts_.understand(turn));
  t.understood_ms = std::chrono::duration<double, std::milli>(t.clock.Now() - t.start).count();

  // A personal request waiting for the PIN: digits in this turn are the PIN.
  if (caller.pending() && !caller.identified() && !q.digits.empty() && parts_.identifier) {
    return HandlePin(caller, q.digits);
  }
  // The reply to a clarifying question: a chosen topic answers the original question as that
  // intent; a "no" or anything else is a new question, which is not clarified again.
  bool may_clarify = config_.clarify.enabled;
  if (caller.clarification()) {
    PendingClarification pending = std::move(*caller.clarification());
    caller.clarification().reset();
    may_clarify = false;
    ClarificationReply reply = ResolveClarification(pending, q.text);
    if (reply.outcome == ClarificationReply::Outcome::kChosen) {
      stats_.clarifications_resolved.fetch_add(1, std::memory_order_relaxed);
      ASSIGN_OR_RETURN(Question original, parts_.understand(pending.question));
      return AnswerAsIntent(std::move(original), reply.intent, caller);
    }
  }
  // A transcript the recognizer is unsure of may be misheard into a question some tier knows:
  // it is answered only by what checks more than its words.
  const bool trusted = TrustsTranscript(t.options.asr_confidence);
  if (!trusted) {
    q.intent.clear();
    if (q.prediction) q.prediction->accepted = false;
  }
  {
    Result<AnswerResult> error = AnswerResult();
    if (auto r = AnswerToolIntent(q, caller, &error)) return std::move(*r);
    if (!error.ok()) return error;
  }
  // Unsure of the intent: ask rather than let a tier guess.
  if (may_clarify && config_.clarify.before_tiers()) {
    if (auto c = Clarify(q, turn, caller)) return std::move(*c);
  }
  const std::pair<AnswerTier*, AnswerTierId> tiers[] = {{parts_.l1, AnswerTierId::kL1},
                                                        {parts_.l2, AnswerTierId::kL2}};
  for (auto [tier, id] : tiers) {
    if (!tier || !trusted) continue;
    auto hit = tier->Lookup(q, caller);
    if (!hit.ok()) {
      stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
      HLOG_WARN("answer tier {} failed: {}", TierName(id), hit.status().message());
      continue;
    }
    if (*hit) return Done(FromTier(std::move(**hit), id, caller));
  }
  if (parts_.l3 && trusted) {
    auto hit = parts_.l3->Lookup(q.text);
    if (!hit.ok()) {
      stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
      HLOG_WARN("L3 lookup failed: {}", hit.status().message());
    } else if (*hit && !caller.MentionsPersonal((*hit)->text)) {
      AnswerResult r = Reply(std::move((*hit)->text), AnswerTierId::kL3);
      r.audio = std::move((*hit)->audio);
      r.audio_format = std::move((*hit)->audio_format);
      return Done(std::move(r));
    }
  }
  ASSIGN_OR_RETURN(std::optional<AnswerResult> generated,
                   FromKnowledgeOrModel(q, caller, history, t));
  if (generated) return Done(std::move(*generated));
  // No tier answered: a question about the likeliest topics instead of a request to rephrase.
  if (may_clarify && !config_.clarify.before_tiers()) {
    if (auto c = Clarify(q, turn, caller)) return std::move(*c);
  }
  AnswerResult r = Reply(config_.fallback_text, AnswerTierId::kFallback);
  r.degraded = t.model_failed;
  return Done(std::move(r));
}

std::optional<AnswerResult> Answerer::Clarify(const Question& q, std::string_view turn,
                                              CallerSession& caller) {
  if (!q.prediction || !q.intent.empty()) return std::nullopt;
  auto c = DecideClarification(*q.prediction, config_.clarify,
                               [this](const std::string& i) { return TopicOf(i); });
  if (!c) return std::nullopt;
  c->question = std::string(turn.substr(0, kMaxNormalizeInputBytes));
  AnswerResult r = Reply(ClarificationText(*c, config_.clarify), AnswerTierId::kClarify);
  caller.clarification() = std::move(*c);
  stats_.clarifications.fetch_add(1, std::memory_order_relaxed);
  return Done(std::move(r));
}

Result<AnswerResult> Answerer::SubmitPin(CallerSession& caller, std::string_view digits) {
  // A keypad digit in reply to a choice ("press 1 or 2") when no PIN is awaited.
  if (caller.clarification() && !caller.pending() && (digits == "1" || digits == "2")) {
    PendingClarification pending = std::move(*caller.clarification());
    caller.clarification().reset();
    ClarificationReply reply = ResolveClarification(pending, digits);
    if (reply.outcome == ClarificationReply::Outcome::kChosen) {
      stats_.clarifications_resolved.fetch_add(1, std::memory_order_relaxed);
      ASSIGN_OR_RETURN(Question original, parts_.understand(pending.question));
      return AnswerAsIntent(std::move(original), reply.intent, caller);
    }
  }
  if (!parts_.identifier) return FailedPreconditionError("no caller identification configured");
  return HandlePin(caller, DigitsOf(digits));
}

Result<AnswerResult> Answerer::HandlePin(CallerSession& caller, std::string_view digits) {
  ASSIGN_OR_RETURN(PinOutcome outcome, parts_.identifier->SubmitPin(caller, digits));
  switch (outcome) {
    case PinOutcome::kIdentified: {
      if (caller.pending()) {
        CallerSession::PendingRequest req = std::move(*caller.pending());
        caller.pending().reset();
        return RunTool(caller, req.tool, req.args);
      }
      return Done(Reply(config_.verified_text, AnswerTierId::kIdentify));
    }
    case PinOutcome::kWrongPin:
      return Done(Reply(config_.wrong_pin_text, AnswerTierId::kIdentify));
    case PinOutcome::kLocked: {
      caller.pending().reset();
      AnswerResult r = Reply(config_.locked_text, AnswerTierId::kIdentify);
      r.transfer = true;
      return Done(std::move(r));
    }
  }
  return InternalError("unhandled PIN outcome");
}

Result<AnswerResult> Answerer::RunTool(CallerSession& caller, const std::string& tool,
                                       const std::map<std::string, std::string>& args) {
  auto r = parts_.tools->Run(tool, args, caller);
  if (r.status().code() == StatusCode::kPermissionDenied) {
    caller.pending() = CallerSession::PendingRequest{tool, args};
    return Done(Reply(config_.ask_pin_text, AnswerTierId::kIdentify));
  }
  if (!r.ok()) {
    stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
    HLOG_WARN("tool {} failed: {}", tool, r.status().message());
    AnswerResult failed = Reply(config_.fallback_text, AnswerTierId::kFallback);
    failed.degraded = true;
    return Done(std::move(failed));
  }
  for (const auto& [slot, value] : r->slots) {
    caller.RememberPersonal(value);
    if (!value.empty() && value[0] == '$') caller.RememberPersonal(value.substr(1));
  }
  return Done(Reply(r->text, AnswerTierId::kTool, true));
}

std::optional<AnswerResult> Answerer::AnswerToolIntent(const Question& q, CallerSession& caller,
                                                       Result<AnswerResult>* error) {
  if (!parts_.tools) return std::nullopt;
  auto it = tool_for_intent_.find(q.intent);
  if (it == tool_for_intent_.end()) return std::nullopt;
  if (caller.identified()) {
    // An L1 template may phrase the tool's result (it runs the tool itself); else the tool's
    // own sentence.
    if (parts_.l1) {
      auto hit = parts_.l1->Lookup(q, caller);
      if (!hit.ok()) {
        stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
        HLOG_WARN("answer tier l1 failed: {}", hit.status().message());
      } else if (*hit) {
        return Done(FromTier(std::move(**hit), AnswerTierId::kL1, caller));
      }
    }
    Result<AnswerResult> r = RunTool(caller, it->second, q.entities);
    if (!r.ok()) {
      *error = r.status();
      return std::nullopt;
    }
    return std::move(*r);
  }
  if (!parts_.identifier) return std::nullopt;
  if (caller.locked()) {
    AnswerResult r = Reply(config_.locked_text, AnswerTierId::kIdentify);
    r.transfer = true;
    return Done(std::move(r));
  }
  caller.pending() = CallerSession::PendingRequest{it->second, q.entities};
  return Done(Reply(config_.ask_pin_text, AnswerTierId::kIdentify));
}

Result<AnswerResult> Answerer::AnswerAsIntent(Question q, const std::string& intent,
                                              CallerSession& caller) {
  q.intent = intent;
  if (q.prediction) {
    q.prediction->intent = intent;
    q.prediction->accepted = true;
  }
  Result<AnswerResult> error = AnswerResult();
  if (auto r = AnswerToolIntent(q, caller, &error)) return std::move(*r);
  if (!error.ok()) return error;
  if (parts_.l1) {
    auto hit = parts_.l1->Lookup(q, caller);
    if (!hit.ok()) {
      stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
      HLOG_WARN("answer tier l1 failed: {}", hit.status().message());
    } else if (*hit) {
      return Done(FromTier(std::move(**hit), AnswerTierId::kL1, caller));
    }
  }
  if (parts_.kb) {
    ASSIGN_OR_RETURN(std::vector<Article> articles, parts_.kb->ByIntent(intent));
    if (!articles.empty()) {
      AnswerResult r = Reply(articles[0].body, AnswerTierId::kKnowledgeBase,
                             caller.MentionsPersonal(articles[0].body));
      r.passage_ids = {articles[0].id};
      return Done(std::move(r));
    }
  }
  return Done(Reply(config_.fallback_text, AnswerTierId::kFallback));
}

std::string Answerer::TopicOf(const std::string& intent) const {
  auto it = topic_for_intent_.find(intent);
  return it == topic_for_intent_.end() ? std::string() : it->second;
}

std::vector<Passage> Answerer::Retrieve(const Question& q) {
  std::vector<Passage> passages;
  if (!parts_.kb || q.text.empty()) return passages;
  auto found = parts_.kb->Search(q.text, config_.kb.top_k);
  if (!found.ok()) {
    stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
    HLOG_WARN("knowledge-base search failed: {}", found.status().message());
    return passages;
  }
  for (auto& p : *found) {
    if (p.score >= config_.kb.min_score) passages.push_back(std::move(p));
  }
  return passages;
}

bool Answerer::TrustsTranscript(std::optional<double> asr_confidence) const {
  return !asr_confidence || *asr_confidence >= config_.accept_min_asr_confidence;
}

bool Answerer::SpeaksPassage(const Question& q, const Passage& top,
                             std::optional<double> asr_confidence) const {
  // Spoken straight from the knowledge base only when the classifier's best guess (accepted or
  // not) names the passage's intent: two independent readings of the turn agree. A misheard or
  // out-of-scope turn still finds some passage with a fair BM25 score, but its best guess rarely
  // points at the same article (docs/answers.md, "The knowledge-base tier").
  const std::string& guess = q.prediction ? q.prediction->intent : q.intent;
  const bool judged =
      config_.kb_direct_requires_intent_match && !guess.empty() && !top.article.intent.empty();
  if (!judged) return top.score >= config_.kb_direct_min_score;
  // The guess's lead and the recognizer's confidence count only for a guess the classifier did
  // not accept; a typed turn has no recognizer confidence.
  const bool unaccepted = q.prediction && !q.prediction->accepted;
  const double margin = unaccepted ? q.prediction->margin : 1.0;
  const double heard = unaccepted ? asr_confidence.value_or(1.0) : 1.0;
  return top.article.intent == guess && top.score >= config_.kb_direct_agreed_min_score &&
         margin >= config_.kb_direct_agreed_min_margin &&
         heard >= config_.kb_direct_agreed_min_asr_confidence;
}

Result<std::optional<AnswerResult>> Answerer::FromKnowledgeOrModel(
    const Question& q, CallerSession& caller, const std::vector<ChatMessage>& history, Turn& t) {
  std::vector<Passage> passages = Retrieve(q);
  if (!passages.empty()) {
    const Passage& top = passages[0];
    if (SpeaksPassage(q, top, t.options.asr_confidence)) {
      const std::vector<std::string> deps{KnowledgeBase::StampFor(top.article.id)};
      std::vector<uint64_t> snapshot;
      if (parts_.l3) {
        auto snap = parts_.l3->Snapshot(deps);
        if (snap.ok()) snapshot = std::move(*snap);
      }
      AnswerResult r = Reply(top.article.body, AnswerTierId::kKnowledgeBase,
                             caller.MentionsPersonal(top.article.body));
      r.passage_ids = {top.article.id};
      if (!r.personal && snapshot.size() == deps.size()) Share(q, r, deps, snapshot);
      return std::optional<AnswerResult>(std::move(r));
    }
  }
  if (parts_.llm && !GateAllows(q, passages, t)) return std::optional<AnswerResult>();
  return FromModel(q, caller, history, std::move(passages), t);
}

bool Answerer::GateAllows(const Question& q, const std::vector<Passage>& passages, Turn& t) {
  AnswerResult::GateCheck check;
  check.input.asr_confidence = t.options.asr_confidence;
  if (q.prediction) {
    check.input.intent_top_two = q.prediction->top_two;
    check.input.intent_margin = q.prediction->margin;
    check.input.intent_confidence = q.prediction->confidence;
    check.input.intent_probability = q.prediction->probability;
    check.input.intent_score = q.prediction->score;
    check.input.neighbour_similarity = q.prediction->neighbour_similarity;
  }
  if (!passages.empty()) check.input.kb_top_score = passages[0].score;
  check.decision = DecideLlmGate(config_.llm_gate, check.input);
  t.gate = check;
  if (check.decision.pass) return true;
  const std::string_view reason = LlmGateReasonName(check.decision.reason);
  stats_.llm_gated.fetch_add(1, std::memory_order_relaxed);
  parts_.metrics
      ->GetCounter("hotline_answer_llm_gated_total",
                   "Turns the LLM gate sent to the fallback instead of the model, by reason",
                   {{"reason", std::string(reason)}})
      .Increment();
  HLOG_DEBUG("LLM gate: {} (asr confidence {:.3f}, intent top-two {:.3f})", reason,
             check.input.asr_confidence.value_or(-1), check.input.intent_top_two.value_or(-1));
  return false;
}

Result<std::optional<AnswerResult>> Answerer::FromModel(const Question& q, CallerSession& caller,
                                                        const std::vector<ChatMessage>& history,
                                                        std::vector<Passage> passages, Turn& t) {
  if (!parts_.llm) return std::optional<AnswerResult>();
  if (IsCancelled(t.options.cancel)) {  // barge-in before the model started: nothing to say
    AnswerResult r = Reply("", AnswerTierId::kLlm);
    t.streamed = true;
    return std::optional<AnswerResult>(std::move(r));
  }
  ASSIGN_OR_RETURN(Prompt prompt,
                   prompt_builder_.Build(PromptInput{q.text, std::move(passages), {}, history}));
  std::vector<std::string> deps;
  for (const auto& id : prompt.passage_ids) deps.push_back(KnowledgeBase::StampFor(id));
  std::vector<uint64_t> snapshot;
  bool have_snapshot = parts_.l3 != nullptr || parts_.l2 != nullptr;
  if (parts_.l3 && !deps.empty()) {
    auto snap = parts_.l3->Snapshot(deps);  // before generating: an update meanwhile is a miss
    have_snapshot = snap.ok();
    if (snap.ok()) snapshot = std::move(*snap);
  }
  llm::GenerateRequest request;
  request.messages = std::move(prompt.messages);
  request.max_tokens = config_.prompt.reserved_output_tokens;
  request.cancel = t.options.cancel;
  request.schedule = t.options.schedule;
  SpeechStream speech(config_.speech, CompanySlots(config_.company));
  bool enough = false;  // the spoken answer is complete (sentence or length limit)
  auto deliver = [&](std::vector<std::string> sentences) {
    for (std::string& s : sentences) {
      if (!t.Deliver(std::move(s))) return false;
    }
    return true;
  };
  auto stats = parts_.llm->Generate(request, [&](std::string_view delta) {
    if (!deliver(speech.Push(delta))) return false;
    if (speech.full()) enough = true;
    return !enough;
  });
  const bool started = !t.sentences.empty();
  if (!stats.ok()) {
    stats_.tier_errors.fetch_add(1, std::memory_order_relaxed);
    HLOG_WARN("language model {} failed: {}", parts_.llm->name(), stats.status().message());
    // Nothing said yet: the next tier (fallback) answers, as a failure of ours (degraded).
    // Otherwise the caller already heard the start of this answer; it stands as it is, uncached.
    if (!started) {
      t.model_failed = true;
      return std::optional<AnswerResult>();
    }
    AnswerResult r = Reply(speech.spoken(), AnswerTierId::kLlm, caller.MentionsPersonal(speech.spoken()));
    r.cancelled = true;
    t.streamed = true;
    return std::optional<AnswerResult>(std::move(r));
  }
  const bool cut = t.stopped || stats->finish == llm::FinishReason::kCancelled ||
                   (stats->finish == llm::FinishReason::kCallback && !enough);
  if (!cut) deliver(speech.Finish());
  if (speech.spoken().empty() && !cut) return std::optional<AnswerResult>();
  t.streamed = true;
  AnswerResult r = Reply(speech.spoken(), AnswerTierId::kLlm);
  r.cancelled = cut || t.stopped;
  r.llm = *stats;
  r.personal = caller.MentionsPersonal(r.text);
  r.passage_ids = prompt.passage_ids;
  if (r.cancelled) return std::optional<AnswerResult>(std::move(r));
  // Answers that depended on this conversation are not the answer to the question in general.
  const bool conversational = request.messages.size() > 2;
  if (!r.personal && !conversational && have_snapshot) Share(q, r, deps, snapshot);
  return std::optional<AnswerResult>(std::move(r));
}

Result<std::optional<AnswerResult>> Answerer::Peek(std::string_view partial,
                                                   const CallerSession& caller) {
  ASSIGN_OR_RETURN(Question q, parts_.understand(partial));
  if (q.text.empty()) return std::optional<AnswerResult>();
  // A reply to a clarifying question is read by Answer, never answered from a cache.
  if (caller.clarification()) return std::optional<AnswerResult>();
  // A request for account data is never answered from a shared tier.
  if (parts_.tools && tool_for_intent_.count(q.intent)) return std::optional<AnswerResult>();
  const std::pair<AnswerTier*, AnswerTierId> tiers[] = {{parts_.l1, AnswerTierId::kL1},
                                                        {parts_.l2, AnswerTierId::kL2}};
  for (auto [tier, id] : tiers) {
    if (!tier) continue;
    auto hit = tier->Peek(q);
    if (!hit.ok() || !*hit || (*hit)->personal || caller.MentionsPersonal((*hit)->text)) continue;
    AnswerResult r = Reply((*hit)->text, id);
    r.sentences = SplitSentences(r.text);
    return std::optional<AnswerResult>(std::move(r));
  }
  if (parts_.l3) {
    auto hit = parts_.l3->Lookup(q.text);
    if (hit.ok() && *hit && !caller.MentionsPersonal((*hit)->text)) {
      AnswerResult r = Reply(std::move((*hit)->text), AnswerTierId::kL3);
      r.sentences = SplitSentences(r.text);
      r.audio = std::move((*hit)->audio);
      r.audio_format = std::move((*hit)->audio_format);
      return std::optional<AnswerResult>(std::move(r));
    }
  }
  return std::optional<AnswerResult>();
}

Result<bool> Answerer::Understands(std::string_view partial, const CallerSession& caller) {
  ASSIGN_OR_RETURN(Question q, parts_.understand(partial));
  if (q.text.empty() || caller.clarification()) return false;
  if (!q.intent.empty()) return true;
  std::vector<Passage> passages = Retrieve(q);
  return !passages.empty() && SpeaksPassage(q, passages[0], std::nullopt);
}

Result<std::vector<ChatMessage>> Answerer::DraftPrompt(std::string_view partial,
                                                       const CallerSession& caller,
                                                       const std::vector<ChatMessage>& history) {
  (void)caller;  // the prompt holds no caller state today; kept for per-caller context later
  ASSIGN_OR_RETURN(Question q, parts_.understand(partial));
  ASSIGN_OR_RETURN(Prompt prompt, prompt_builder_.Build(PromptInput{q.text, Retrieve(q), {}, history}));
  return std::move(prompt.messages);
}

Status Answerer::Prefetch(std::string_view partial, const CallerSession& caller,
                          const std::vector<ChatMessage>& history) {
  if (parts_.llm == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<ChatMessage> messages, DraftPrompt(partial, caller, history));
  return parts_.llm->Prefetch(messages, config_.prompt.reserved_output_tokens);
}

Status Answerer::WarmUp() {
  if (parts_.llm == nullptr) return Status::Ok();
  return parts_.llm->Prefetch({ChatMessage{"system", config_.prompt.system_prompt}},
                              config_.prompt.reserved_output_tokens);
}

void Answerer::Share(const Question& q, const AnswerResult& a, const std::vector<std::string>& deps,
                     const std::vector<uint64_t>& snapshot) {
  if (a.personal || q.text.empty()) return;
  if (parts_.l3) {
    CachedAnswer c;
    c.text = a.text;
    c.source = std::string(TierName(a.tier));
    c.depends_on = deps;
    Status s = parts_.l3->Insert(q.text, c, &snapshot);
    if (!s.ok() && s.code() != StatusCode::kResourceExhausted) {
      HLOG_WARN("L3 insert failed: {}", s.message());
    }
  }
  if (parts_.l2) {
    if (Status s = parts_.l2->Learn(q, a.text, deps); !s.ok()) {
      HLOG_WARN("L2 learn failed: {}", s.message());
    }
  }
}

Status Answerer::SyncKnowledgeBase() {
  if (!parts_.kb || (!parts_.l3 && !parts_.l2 && !parts_.l1)) return Status::Ok();
  std::lock_guard lock(sync_mu_);
  ASSIGN_OR_RETURN(int64_t generation, parts_.kb->Generation());
  if (generation == kb_generation_) return Status::Ok();
  ASSIGN_OR_RETURN(auto changed, parts_.kb->ChangedSince(kb_generation_));
  for (const auto& article : changed) {
    const std::string stamp = KnowledgeBase::StampFor(article.id);
    if (parts_.l1) parts_.l1->Invalidate(stamp);
    if (parts_.l2) parts_.l2->Invalidate(stamp);
    if (parts_.l3) RETURN_IF_ERROR(parts_.l3->Invalidate(stamp));
  }
  HLOG_INFO("knowledge base generation {} -> {}: {} articles changed", kb_generation_, generation,
            changed.size());
  kb_generation_ = generation;
  return Status::Ok();
}

Status Answerer::AttachAudio(const Question& q, const AnswerResult& answer, std::string audio,
                             std::string format) {
  if (!parts_.l3 || answer.personal) {
    return FailedPreconditionError("only shareable answers cached in L3 can carry audio");
  }
  ASSIGN_OR_RETURN(auto first, parts_.l3->Lookup(q.text));
  if (!first || first->text != answer.text) return Status::Ok();  // not cached (any more)
  ASSIGN_OR_RETURN(auto snapshot, parts_.l3->Snapshot(first->depends_on));
  // Looked up again after the snapshot: a stamp bumped in between makes this a miss, and a bump
  // after it makes the re-inserted entry a miss; stale text can never be revived with new stamps.
  ASSIGN_OR_RETURN(auto again, parts_.l3->Lookup(q.text));
  if (!again || again->text != answer.text) return Status::Ok();
  again->audio = std::move(audio);
  again->audio_format = std::move(format);
  return parts_.l3->Insert(q.text, *again, &snapshot);
}

}  // namespace hotline::answer
