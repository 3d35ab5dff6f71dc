// CallStack: everything calls share on one process, built once from configuration — the
// recognizer, the synthesizer factory, the knowledge base (imported from a CSV), the answer store
// and L3 cache, the answerer, the synthesized-audio cache, the per-call record store and the
// worker pools — handed to each CallSession as CallResources.
//
// Used by `hotline call`, `hotline demo` and the end-to-end tests; the server will build the
// same. Building blocks (model loading, knowledge-base import); after that the stack is shared
// read-only by all calls. Destruction drains the pools before the parts their tasks use.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "answer/answer_stack.h"
#include "answer/answerer.h"
#include "answer/cache/result_cache.h"
#include "answer/cache/store.h"
#include "answer/kb/knowledge_base.h"
#include "asr/asr_config.h"
#include "asr/deadline_recognizer.h"
#include "common/clock.h"
#include "llm/language_model.h"
#include "llm/llm_config.h"
#include "pipeline/call_session.h"

namespace hotline::pipeline {

struct CallStackOptions {
  asr::AsrConfig asr;
  tts::TtsConfig tts;
  answer::AnswererConfig answer;
  answer::StoreConfig store;
  // The language model behind the answerer's last tier (backend "none": no model tier).
  llm::LlmConfig llm;
  // Accounts database for the account tools ("": the in-memory demo accounts).
  std::string accounts_db;
  CallConfig call;
  audio::VadConfig vad;
  audio::EndpointerConfig endpointer;
  audio::BargeInConfig barge_in;
  audio::ResamplerConfig resampler;
  // Knowledge base: the SQLite file, and a CSV imported into it at start (empty: use as is).
  std::string kb_db;
  std::string kb_csv;
  // The worker pools are sized by call.workers and call.answer_workers (see AnswerWorkers).
  bool audio_cache = true;
  // With the pocketsphinx backend and no asr.pocketsphinx.domain_lm: build a domain language
  // model from the knowledge base's example questions at start (kb_db + ".lm"; a second or so),
  // as `hotline asr build-lm` would. The generic model alone misreads most call-centre questions.
  bool domain_lm_from_kb = true;
  MetricsRegistry* metrics = nullptr;  // null: the global registry
  // The answer chain's clock: cache entries' time to live, knowledge-base update checks, turn
  // timings. Borrowed, must outlive the stack; null: the system clock. An evaluation passes a
  // FakeClock so that what stays cached does not depend on how fast the machine ran it.
  const Clock* answer_clock = nullptr;
};

// What ReloadKnowledgeBase did.
struct KbReloadReport {
  std::string source;     // the CSV re-imported
  int records = 0;        // rows read
  int added = 0;
  int updated = 0;
  int unchanged = 0;
  size_t changed = 0;     // articles whose cached answers were invalidated
  int64_t generation = 0;
};

// What FlushAnswerCaches did.
struct CacheFlushReport {
  size_t stamps_bumped = 0;  // knowledge-base articles whose L3 answers became misses
  size_t l2_dropped = 0;     // semantic-cache entries dropped
  size_t audio_entries = 0;  // synthesized-audio entries dropped
};

// The answer pool's size for `call` and the language model `llm`: call.answer_workers, or for 0
// the model's batch (llm.engine.max_batch_size for the engine backend, kOpenAiAnswerBatch for a
// remote server, 0 without a model) plus 2 for cached answers. An answer that reaches the model
// holds its worker while it generates, so this bounds the model turns in flight at once.
inline constexpr int kOpenAiAnswerBatch = 16;
int AnswerWorkers(const CallConfig& call, const llm::LlmConfig& llm);

// Gives a pocketsphinx recognizer without a domain model of its own (`asr`) the one a call uses:
// built at `lm_path` (+ ".dict") from `kb_csv`'s example questions and the replies callers give
// to the line's own questions (answer::EnglishClarificationReplies). Returns the files written,
// for the caller to remove; none when `asr` already has a model or is another backend.
// Blocking: reads the CSV, writes the model.
Result<std::vector<std::string>> UseKnowledgeBaseLm(asr::AsrConfig& asr, const std::string& kb_csv,
                                                    const std::string& lm_path);

class CallStack {
 public:
  static Result<std::unique_ptr<CallStack>> Build(const CallStackOptions& options);
  ~CallStack();

  const CallResources& resources() const { return resources_; }
  answer::Answerer& answerer() { return answers_->answerer(); }
  answer::AnswerStack& answers() { return *answers_; }
  llm::LanguageModel* language_model() { return llm_.get(); }
  tts::AudioCache* audio_cache() { return audio_cache_.get(); }
  CallRecordStore* records() { return records_.get(); }
  size_t kb_articles() const { return answers_->report().articles; }

  // Re-imports the knowledge-base CSV the stack was built from (an upsert by id, all or nothing:
  // a malformed file changes nothing and the error names its line), then invalidates the cached
  // answers (L1-L3) built from the articles that changed. Calls in progress keep going; their next
  // answers see the new articles. The intent classifier and L1 templates are trained at start-up
  // only: a new intent needs a restart. Blocking (file and SQLite I/O); thread-safe.
  Result<KbReloadReport> ReloadKnowledgeBase();
  // Makes every cached answer a miss: bumps the stamp of every knowledge-base article (every
  // shared L3 answer depends on one), drops the semantic-cache entries built from them and empties
  // the synthesized-audio cache. Blocking; thread-safe.
  Result<CacheFlushReport> FlushAnswerCaches();

 private:
  CallStack() = default;

  std::unique_ptr<asr::Recognizer> recognizer_;
  std::unique_ptr<asr::DeadlineRecognizer> bounded_recognizer_;  // recognizer_, time-bounded
  std::unique_ptr<llm::LanguageModel> llm_;
  std::unique_ptr<answer::AnswerStack> answers_;
  std::unique_ptr<AnswererAdapter> adapter_;
  std::unique_ptr<tts::AudioCache> audio_cache_;
  std::unique_ptr<CallRecordStore> records_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ThreadPool> answer_pool_;
  CallResources resources_;
  std::vector<std::string> generated_files_;  // removed by the destructor
  std::string kb_csv_;
};

}  // namespace hotline::pipeline
