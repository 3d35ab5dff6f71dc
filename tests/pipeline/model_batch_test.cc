// Model turns that batch: sixteen calls whose turns all go to the embedded engine (a small
// random-weight model written by the engine's own generator) at the same moment reach the engine
// together, so its continuous-batching scheduler runs them in one forward pass. The call stack,
// its worker pools, the answerer and the engine are the real ones; only the recognizer (scripted
// transcripts) and the voice (a tone) are fakes, so that sixteen calls fit a small machine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "audio/g711.h"
#include "common/build_paths.h"
#include "engine/quant_model.h"
#include "llm/engine/engine_language_model.h"
#include "pipeline/call_stack.h"
#include "pipeline/testing/fakes.h"

namespace hotline::pipeline {
namespace {

using testing::FakeRecognizer;
using testing::FakeSynthesizer;
using testing::Silence;
using testing::TestSink;
using testing::Vowel;
using testing::WaitFor;

constexpr int kCalls = 16;

class ModelBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = ::testing::TempDir() + "/model_batch_" + std::to_string(getpid());
    engine::RandomModelSpec spec;
    spec.arch = "qwen2";
    spec.shape = "tiny";
    spec.type = engine::GgmlType::Q8_0;
    engine::ComputePool pool(1);
    auto info = engine::WriteRandomModel(spec, base_ + ".gguf", pool);
    ASSERT_TRUE(info.ok()) << info.status();
  }
  void TearDown() override {
    for (const char* suffix : {".gguf", ".kb.sqlite", ".kb.sqlite-wal", ".kb.sqlite-shm"}) {
      std::filesystem::remove(base_ + suffix);
    }
  }

  // Every turn goes to the model: no intent templates, no semantic cache, no passage spoken
  // directly, no gate; an empty result cache.
  CallStackOptions Options() {
    CallStackOptions o;
    o.kb_db = base_ + ".kb.sqlite";
    o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";
    o.domain_lm_from_kb = false;
    o.answer.use_intent_cache = false;
    o.answer.use_semantic_cache = false;
    o.answer.kb_direct_min_score = 1e9;
    o.answer.kb_direct_agreed_min_score = 1e9;
    o.answer.llm_gate.enabled = false;
    o.answer.prompt.max_seq_len = 256;
    o.answer.prompt.max_passages = 0;
    o.answer.prompt.max_history_messages = 0;
    o.answer.prompt.reserved_output_tokens = 16;
    o.llm.backend = "engine";
    o.llm.engine.engine.model_path = base_ + ".gguf";
    o.llm.engine.engine.threads = 1;
    o.llm.engine.engine.max_batch_size = 16;
    o.llm.engine.chat_template = "chatml";
    o.call.greeting_text = "";
    o.call.reprompt_after_ms = 60000;
    o.call.answer_timeout_ms = 120000;
    o.call.prework = false;
    o.metrics = &metrics_;
    return o;
  }

  // A caller turn on `session`: speech, then the silence that ends it.
  static void Say(CallSession& session) {
    std::vector<int16_t> pcm = Silence(200);
    for (int16_t s : Vowel(600)) pcm.push_back(s);
    for (int16_t s : Silence(700)) pcm.push_back(s);
    std::vector<uint8_t> frame(160);
    for (size_t at = 0; at + 160 <= pcm.size(); at += 160) {
      audio::EncodeMulaw(std::span<const int16_t>(pcm).subspan(at, 160), frame);
      ASSERT_TRUE(session.PushAudio(frame, MediaFormat{}).ok());
      ASSERT_TRUE(WaitFor([&] { return session.queued_audio() == 0; }));
    }
  }

  std::string base_;
  MetricsRegistry metrics_;
};

TEST_F(ModelBatchTest, AnswerWorkersFollowTheModelsBatch) {
  CallConfig call;
  llm::LlmConfig llm;
  EXPECT_EQ(AnswerWorkers(call, llm), 2);  // no model: cached answers only
  llm.backend = "engine";
  llm.engine.engine.max_batch_size = 24;
  EXPECT_EQ(AnswerWorkers(call, llm), 26);
  llm.backend = "openai";
  EXPECT_EQ(AnswerWorkers(call, llm), kOpenAiAnswerBatch + 2);
  call.answer_workers = 3;
  EXPECT_EQ(AnswerWorkers(call, llm), 3);
  call.answer_workers = -1;
  EXPECT_NE(call.Validate().message().find("answer_workers"), std::string::npos);
}

TEST_F(ModelBatchTest, SixteenSimultaneousModelTurnsReachTheEngineAsOneBatch) {
  auto stack = CallStack::Build(Options());
  ASSERT_TRUE(stack.ok()) << stack.status();
  auto* model = dynamic_cast<llm::EngineLanguageModel*>((*stack)->language_model());
  ASSERT_NE(model, nullptr);
  EXPECT_EQ((*stack)->resources().answer_pool->threads(), 18u);

  FakeRecognizer recognizer(
      {"where is my order", "how do i pay", "can i change my address", "what are your hours"});
  auto voice = std::make_shared<FakeSynthesizer::Shared>();
  CallResources res = (*stack)->resources();
  res.recognizer = &recognizer;
  res.make_synthesizer = [voice]() -> Result<std::unique_ptr<tts::Synthesizer>> {
    return std::unique_ptr<tts::Synthesizer>(new FakeSynthesizer(voice));
  };

  // The start-up warm-up (the system prompt, prefetched) is done before the calls begin.
  ASSERT_TRUE(WaitFor([&] { return model->queue_depth() == 0; }, std::chrono::seconds(60)));
  // The engine admits nothing until every turn has asked: the turns then wait for it together,
  // which is what sixteen callers finishing their questions at once look like to the model.
  model->Pause();
  std::vector<std::shared_ptr<TestSink>> sinks;
  std::vector<std::unique_ptr<CallSession>> sessions;
  for (int i = 0; i < kCalls; ++i) {
    sinks.push_back(std::make_shared<TestSink>());
    CallInfo info;
    info.call_id = "batch-" + std::to_string(i);
    auto s = CallSession::Create(res, info, sinks.back());
    ASSERT_TRUE(s.ok()) << s.status();
    sessions.push_back(std::move(*s));
    sessions.back()->Start();
  }
  for (auto& s : sessions) Say(*s);
  const bool all_waiting =
      WaitFor([&] { return model->queue_depth() == kCalls; }, std::chrono::seconds(60));
  const int waiting = model->queue_depth();
  model->Resume();
  ASSERT_TRUE(all_waiting) << "only " << waiting << " of " << kCalls
                           << " model turns reached the engine at once";

  ASSERT_TRUE(WaitFor(
      [&] {
        for (auto& s : sinks) {
          if (s->CountEvents("turn") < 1) return false;
        }
        return true;
      },
      std::chrono::seconds(120)));
  EXPECT_EQ(model->counters().requests, static_cast<uint64_t>(kCalls));
  const engine::SchedulerStats stats = model->scheduler_stats();
  EXPECT_GE(stats.max_batch_sequences, 8) << "most sequences in one pass";
  // The same figure as the stack's registry exports it (hotline_engine_batch_sequences): passes
  // that carried more than 8 sequences.
  const Histogram::Snapshot batches =
      metrics_.GetHistogram("hotline_engine_batch_sequences", "", PowersOfTwoBuckets(1024)).Snap();
  uint64_t at_most_8 = 0;
  for (size_t i = 0; i < batches.upper_bounds.size(); ++i) {
    if (batches.upper_bounds[i] == 8) at_most_8 = batches.cumulative_counts[i];
  }
  EXPECT_GT(batches.count - at_most_8, 0u) << "no pass carried more than 8 sequences";
  for (auto& s : sessions) {
    for (const TurnReport& t : s->Turns()) {
      if (t.kind != TurnKind::kCaller) continue;
      EXPECT_EQ(t.tier, TurnTier::kLlm) << t.OutcomeText() << " " << t.answer;
    }
  }
}

}  // namespace
}  // namespace hotline::pipeline
