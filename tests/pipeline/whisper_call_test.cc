// `asr.backend: whisper` in a call: the whole call stack (call session, endpointer, the Whisper
// recognizer with streaming partials, the answer chain, speech) over a random-weight Whisper
// model with the real vocabulary (whisper.cpp's for-tests-ggml-tiny.bin from the shared data;
// skipped without it). Random weights make the words meaningless: the test checks that a real
// recording becomes a caller turn that is recognized, answered and spoken, with the recognizer's
// final pass timed in the turn's ledger.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "audio/resampler.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "engine/whisper_test_util.h"
#include "pipeline/call_stack.h"
#include "pipeline/file_call.h"

namespace hotline::pipeline {
namespace {

TEST(WhisperCall, ARecordedQuestionIsRecognizedAnsweredAndSpoken) {
  const std::string bin = std::string(HOTLINE_SHARED_DATA_DIR) + "/asr/whisper/for-tests-ggml-tiny.bin";
  const char* recording = "/usr/share/pocketsphinx/test/data/goforward.raw";
  if (!std::filesystem::exists(bin)) GTEST_SKIP() << "no whisper.cpp test vocabulary at " << bin;
  const std::string base = ::testing::TempDir() + "/whisper_call_" + std::to_string(getpid());
  engine::WhisperHparams hp = engine::testing::SmallWhisperHparams(64, 2);
  hp.n_vocab = 0;  // the file's (51,865, multilingual)
  hp.n_audio_ctx = 1500;
  hp.n_text_ctx = 448;
  ASSERT_TRUE(engine::testing::WriteRandomWhisperWithVocab(bin, hp, engine::GgmlType::Q8_0,
                                                           base + ".gguf")
                  .ok());

  CallStackOptions o;
  o.asr.backend = "whisper";
  o.asr.whisper.model_path = base + ".gguf";
  o.asr.whisper.max_tokens = 16;  // random weights rarely stop by themselves
  o.asr.whisper.no_speech_threshold = 1;  // never silent: the turn must reach the answer chain
  o.llm.backend = "none";
  o.kb_db = base + ".kb.sqlite";
  o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";
  o.call.greeting_text = "Hello.";
  MetricsRegistry metrics;
  o.metrics = &metrics;
  auto stack = CallStack::Build(o);
  ASSERT_TRUE(stack.ok()) << stack.status();

  auto raw = audio::ReadRawFile(recording, 16000);
  ASSERT_TRUE(raw.ok()) << raw.status();
  CallInfo info;
  info.call_id = "whisper-call";
  info.caller_id = "+15550100";
  FileCallOptions run;
  run.realtime = false;
  auto result = RunFileCall((*stack)->resources(), info, {raw->audio}, run);
  ASSERT_TRUE(result.ok()) << result.status();

  const TurnReport* turn = nullptr;
  for (const TurnReport& t : result->turns) {
    if (t.kind == TurnKind::kCaller && t.outcome != TurnOutcome::kDiscarded) turn = &t;
  }
  ASSERT_NE(turn, nullptr) << "the recording became no caller turn";
  EXPECT_FALSE(turn->transcript.empty());
  EXPECT_FALSE(turn->answer.empty());
  EXPECT_GE(turn->ledger.asr_final, 0) << "no final recognition pass in the ledger";
  EXPECT_GE(turn->ledger.first_audio_sent, 0) << "the answer was not spoken";
  std::printf("whisper in a call: heard \"%s\", answered by %s\n", turn->transcript.c_str(),
              std::string(TurnTierName(turn->tier)).c_str());
  stack->reset();
  for (const char* suffix : {".gguf", ".kb.sqlite", ".kb.sqlite-wal", ".kb.sqlite-shm"}) {
    std::filesystem::remove(base + suffix);
  }
}

}  // namespace
}  // namespace hotline::pipeline
