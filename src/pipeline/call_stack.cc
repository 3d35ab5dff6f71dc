#include "pipeline/call_stack.h"

#include <filesystem>

#include "answer/understand/clarify.h"
#include "asr/lm_builder.h"
#include "common/log.h"
#include "pipeline/dialogue_acts.h"

namespace hotline::pipeline {

int AnswerWorkers(const CallConfig& call, const llm::LlmConfig& llm) {
  if (call.answer_workers > 0) return call.answer_workers;
  int batch = 0;
  if (llm.backend == "engine") batch = llm.engine.engine.max_batch_size;
  if (llm.backend == "openai") batch = kOpenAiAnswerBatch;
  return batch + 2;
}

CallStack::~CallStack() {
  // Tasks still queued use every other member: finish them first.
  if (pool_) pool_->Shutdown();
  if (answer_pool_) answer_pool_->Shutdown();
  // The domain model written at Build() is this stack's own scratch file.
  bounded_recognizer_.reset();  // waits for any final pass still running past its limit
  recognizer_.reset();
  std::error_code ec;
  for (const std::string& path : generated_files_) std::filesystem::remove(path, ec);
}

Result<KbReloadReport> CallStack::ReloadKnowledgeBase() {
  if (kb_csv_.empty()) {
    return FailedPreconditionError(
        "this call stack was built without a knowledge-base CSV: nothing to reload");
  }
  answer::KnowledgeBase& kb = answers_->kb();
  ASSIGN_OR_RETURN(int64_t before, kb.Generation());
  ASSIGN_OR_RETURN(answer::ImportReport imported, kb.ImportFile(kb_csv_));
  ASSIGN_OR_RETURN(auto changed, kb.ChangedSince(before));
  RETURN_IF_ERROR(answers_->answerer().SyncKnowledgeBase());
  KbReloadReport r;
  r.source = kb_csv_;
  r.records = imported.records;
  r.added = imported.added;
  r.updated = imported.updated;
  r.unchanged = imported.unchanged;
  r.changed = changed.size();
  r.generation = imported.generation;
  return r;
}

Result<CacheFlushReport> CallStack::FlushAnswerCaches() {
  CacheFlushReport r;
  ASSIGN_OR_RETURN(auto articles, answers_->kb().All());
  for (const auto& a : articles) {
    const std::string stamp = answer::KnowledgeBase::StampFor(a.id);
    if (auto* l3 = answers_->l3()) {
      RETURN_IF_ERROR(l3->Invalidate(stamp));
      ++r.stamps_bumped;
    }
    if (auto* l2 = answers_->semantic_cache()) r.l2_dropped += l2->InvalidateTagItem(stamp);
  }
  if (audio_cache_ != nullptr) {
    r.audio_entries = static_cast<size_t>(audio_cache_->stats().entries);
    audio_cache_->Clear();
  }
  return r;
}

Result<std::vector<std::string>> UseKnowledgeBaseLm(asr::AsrConfig& asr, const std::string& kb_csv,
                                                    const std::string& lm_path) {
  if (asr.backend != "pocketsphinx" || !asr.pocketsphinx.domain_lm.empty()) {
    return std::vector<std::string>();
  }
  ASSIGN_OR_RETURN(std::vector<std::string> rows, asr::ReadTrainingTexts(kb_csv, "questions"));
  std::vector<std::string> texts;
  for (const std::string& row : rows) {  // "question|question|..."
    for (std::string& q : answer::SplitQuestions(row)) texts.push_back(std::move(q));
  }
  // Callers also answer the line's own questions ("Is that right?"): their replies, often
  // enough that a short "yes" is not heard as the nearest question word.
  constexpr int kReplyRepeats = 20;
  for (int i = 0; i < kReplyRepeats; ++i) {
    for (const std::string& reply : answer::EnglishClarificationReplies()) texts.push_back(reply);
  }
  // ... and talk over the agent: they keep it going ("uh huh", "okay") or stop it ("wait"). A
  // backchannel heard as a question word, or a cue heard as nothing, misleads the barge-in's
  // word check (speech_in.barge_in.check_words).
  constexpr int kBackchannelRepeats = 10;
  for (int i = 0; i < kBackchannelRepeats; ++i) {
    for (const std::string& b : EnglishBackchannels()) texts.push_back(b);
    for (const std::string& c : EnglishInterruptionCues()) texts.push_back(c);
  }
  auto built = asr::WriteDomainLm(texts, asr.pocketsphinx.dictionary, lm_path);
  if (!built.ok()) return built.status().WithContext("domain language model from the knowledge base");
  asr.pocketsphinx.domain_lm = lm_path;
  if (asr.pocketsphinx.lm_mode == "switched") asr.pocketsphinx.dictionary = lm_path + ".dict";
  return std::vector<std::string>{lm_path, lm_path + ".dict"};
}

Result<std::unique_ptr<CallStack>> CallStack::Build(const CallStackOptions& o) {
  RETURN_IF_ERROR(o.call.Validate().WithContext("call"));
  if (o.kb_db.empty()) return InvalidArgumentError("call stack: no knowledge-base database path");
  std::unique_ptr<CallStack> s(new CallStack());
  s->kb_csv_ = o.kb_csv;
  asr::AsrConfig asr = o.asr;
  if (o.domain_lm_from_kb && !o.kb_csv.empty()) {
    ASSIGN_OR_RETURN(s->generated_files_, UseKnowledgeBaseLm(asr, o.kb_csv, o.kb_db + ".lm"));
  }
  ASSIGN_OR_RETURN(s->recognizer_, asr::CreateRecognizer(asr));
  // Every call's final pass is bounded by call.asr_timeout_ms: a stuck recognizer costs the
  // caller the busy prompt, not silence.
  s->bounded_recognizer_ = std::make_unique<asr::DeadlineRecognizer>(
      *s->recognizer_, std::chrono::milliseconds(o.call.asr_timeout_ms));
  // Check the voice once here, so a bad voice fails at start rather than on the first call.
  {
    auto probe = tts::CreateSynthesizer(o.tts);
    if (!probe.ok()) return probe.status().WithContext("speech synthesizer");
  }
  // The answering chain: understanding, L1 intent templates (+ account tools), L2 semantic
  // cache, L3 exact results, knowledge base, and the language model when one is configured.
  ASSIGN_OR_RETURN(s->llm_, llm::CreateLanguageModel(o.llm, o.metrics));
  answer::AnswerStackOptions ao;
  ao.kb_path = o.kb_db;
  ao.kb_csv = o.kb_csv;
  ao.accounts_path = o.accounts_db;
  ao.llm = s->llm_.get();
  ao.metrics = o.metrics;
  ao.clock = o.answer_clock;
  auto answers = answer::AnswerStack::Build(o.answer, o.store, ao);
  if (!answers.ok()) return answers.status().WithContext("answering chain");
  s->answers_ = std::move(*answers);
  s->adapter_ = std::make_unique<AnswererAdapter>(s->answers_->answerer());
  if (Status warm = s->answers_->answerer().WarmUp(); !warm.ok()) {
    HLOG_WARN("model warm-up (system prompt into the prefix cache) failed: {}", warm.message());
  }
  if (o.audio_cache) s->audio_cache_ = std::make_unique<tts::AudioCache>();
  if (!o.call.record_db.empty()) {
    ASSIGN_OR_RETURN(s->records_, CallRecordStore::Open(o.call.record_db, o.call.record_queue));
  }
  s->pool_ = std::make_unique<ThreadPool>(static_cast<size_t>(o.call.workers), 4096);
  s->answer_pool_ =
      std::make_unique<ThreadPool>(static_cast<size_t>(AnswerWorkers(o.call, o.llm)), 1024);

  CallResources& r = s->resources_;
  r.recognizer = s->bounded_recognizer_.get();
  r.make_synthesizer = [tts = o.tts] { return tts::CreateSynthesizer(tts); };
  r.answerer = s->adapter_.get();
  r.audio_cache = s->audio_cache_.get();
  r.records = s->records_.get();
  r.pool = s->pool_.get();
  r.answer_pool = s->answer_pool_.get();
  r.metrics = o.metrics;
  r.call = o.call;
  r.vad = o.vad;
  r.endpointer = o.endpointer;
  r.barge_in = o.barge_in;
  r.resampler = o.resampler;
  // The detector reads streaming partials; a backend without them keeps the fixed rule.
  if (asr.turn.enabled && asr.backend == "pocketsphinx") {
    auto turn_model = asr::LoadTurnEndModel(asr.turn);
    if (!turn_model.ok()) return turn_model.status().WithContext("asr.turn");
    r.turn_model = std::move(*turn_model);
    r.turn = asr.turn;
  }
  RETURN_IF_ERROR(r.Validate());
  return s;
}

}  // namespace hotline::pipeline
