#include "pipeline/call_stack.h"

#include "answer/understanding.h"
#include "asr/lm_builder.h"

namespace hotline::pipeline {

CallStack::~CallStack() {
  // Tasks still queued use every other member: finish them first.
  if (pool_) pool_->Shutdown();
  if (answer_pool_) answer_pool_->Shutdown();
}

Result<std::unique_ptr<CallStack>> CallStack::Build(const CallStackOptions& o) {
  RETURN_IF_ERROR(o.call.Validate().WithContext("call"));
  if (o.kb_db.empty()) return InvalidArgumentError("call stack: no knowledge-base database path");
  if (o.workers < 1 || o.answer_workers < 1) {
    return InvalidArgumentError("call stack: workers and answer_workers must be >= 1");
  }
  std::unique_ptr<CallStack> s(new CallStack());
  asr::AsrConfig asr = o.asr;
  if (o.domain_lm_from_kb && asr.backend == "pocketsphinx" && asr.pocketsphinx.domain_lm.empty() &&
      !o.kb_csv.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::string> rows, asr::ReadTrainingTexts(o.kb_csv, "questions"));
    std::vector<std::string> texts;
    for (const std::string& row : rows) {  // "question|question|..."
      size_t start = 0;
      while (start <= row.size()) {
        size_t bar = row.find('|', start);
        if (bar == std::string::npos) bar = row.size();
        if (bar > start) texts.push_back(row.substr(start, bar - start));
        start = bar + 1;
      }
    }
    const std::string lm = o.kb_db + ".lm";
    auto built = asr::WriteDomainLm(texts, asr.pocketsphinx.dictionary, lm);
    if (!built.ok()) return built.status().WithContext("domain language model from the knowledge base");
    asr.pocketsphinx.domain_lm = lm;
    if (asr.pocketsphinx.lm_mode == "switched") asr.pocketsphinx.dictionary = lm + ".dict";
  }
  ASSIGN_OR_RETURN(s->recognizer_, asr::CreateRecognizer(asr));
  // Check the voice once here, so a bad voice fails at start rather than on the first call.
  {
    auto probe = tts::CreateSynthesizer(o.tts);
    if (!probe.ok()) return probe.status().WithContext("speech synthesizer");
  }
  ASSIGN_OR_RETURN(s->kb_, answer::KnowledgeBase::Open(o.kb_db, /*create=*/true));
  if (!o.kb_csv.empty()) {
    auto report = s->kb_->ImportFile(o.kb_csv);
    if (!report.ok()) return report.status().WithContext("knowledge base import");
  }
  ASSIGN_OR_RETURN(s->store_, answer::Store::Create(o.store));
  s->l3_ = std::make_unique<answer::ResultCache>(*s->store_, o.answer.l3);
  answer::AnswererParts parts;
  parts.understand = [](std::string_view turn) -> Result<answer::Question> {
    answer::Understanding u = answer::Understand(turn);
    answer::Question q;
    q.text = u.redacted;
    return q;
  };
  parts.l3 = s->l3_.get();
  parts.kb = s->kb_.get();
  ASSIGN_OR_RETURN(s->answerer_, answer::Answerer::Create(o.answer, std::move(parts)));
  s->adapter_ = std::make_unique<AnswererAdapter>(*s->answerer_);
  if (o.audio_cache) s->audio_cache_ = std::make_unique<tts::AudioCache>();
  if (!o.call.record_db.empty()) {
    ASSIGN_OR_RETURN(s->records_, CallRecordStore::Open(o.call.record_db, o.call.record_queue));
  }
  s->pool_ = std::make_unique<ThreadPool>(static_cast<size_t>(o.workers), 4096);
  s->answer_pool_ = std::make_unique<ThreadPool>(static_cast<size_t>(o.answer_workers), 1024);

  CallResources& r = s->resources_;
  r.recognizer = s->recognizer_.get();
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
  RETURN_IF_ERROR(r.Validate());
  return s;
}

}  // namespace hotline::pipeline
