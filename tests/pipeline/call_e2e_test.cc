// A whole call through the real stack: a synthesized caller asks a knowledge-base question over
// an 8 kHz μ-law line; the agent's reply channel, transcribed back with the same recognizer, must
// answer it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>

#include "asr/recognizer.h"
#include "audio/resampler.h"
#include "common/build_paths.h"
#include "pipeline/call_stack.h"
#include "pipeline/file_call.h"
#include "tts/synthesizer.h"

namespace hotline::pipeline {
namespace {

class CallE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = ::testing::TempDir() + "/call_e2e_" + std::to_string(getpid());
    options_.kb_db = base_ + ".kb.sqlite";
    options_.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";
    options_.call.greeting_text = "Hello.";
    options_.metrics = &metrics_;
  }
  void TearDown() override {
    for (const char* suffix : {".kb.sqlite", ".kb.sqlite.lm", ".kb.sqlite.lm.dict",
                               ".kb.sqlite-wal", ".kb.sqlite-shm"}) {
      std::filesystem::remove(base_ + suffix);
    }
  }
  audio::AudioBuffer Speak(const std::string& text) {
    auto synth = tts::CreateSynthesizer(options_.tts);
    EXPECT_TRUE(synth.ok()) << synth.status();
    auto voice = tts::SynthesizeToBuffer(**synth, text);
    EXPECT_TRUE(voice.ok()) << voice.status();
    return *voice;
  }
  // Transcribes 8 kHz audio with a recognizer stream (whole buffer, one utterance).
  std::string Transcribe(asr::Recognizer& rec, const audio::AudioBuffer& audio) {
    auto stream = rec.CreateStream(audio.sample_rate_hz);
    EXPECT_TRUE(stream.ok()) << stream.status();
    const size_t frame = audio::SamplesForMs(audio.sample_rate_hz, 20);
    for (size_t at = 0; at + frame <= audio.samples.size(); at += frame) {
      EXPECT_TRUE((*stream)->AcceptFrames(audio::AudioView(
          std::span<const int16_t>(audio.samples).subspan(at, frame), audio.sample_rate_hz)).ok());
    }
    auto r = (*stream)->Finish();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->text : "";
  }

  std::string base_;
  MetricsRegistry metrics_;
  CallStackOptions options_;
};

TEST_F(CallE2eTest, KnowledgeBaseQuestionIsAnsweredAndTheReplyIsIntelligible) {
  auto stack = CallStack::Build(options_);
  ASSERT_TRUE(stack.ok()) << stack.status();
  CallInfo info;
  info.call_id = "e2e";
  info.caller_id = "+15550100";
  FileCallOptions run;
  run.realtime = false;
  auto result = RunFileCall((*stack)->resources(), info, {Speak("How can I cancel my order?")}, run);
  ASSERT_TRUE(result.ok()) << result.status();

  const TurnReport* turn = nullptr;
  for (const TurnReport& t : result->turns) {
    if (t.kind == TurnKind::kCaller && t.outcome != TurnOutcome::kDiscarded && turn == nullptr) {
      turn = &t;
    }
  }
  ASSERT_NE(turn, nullptr) << "no caller turn was heard";
  EXPECT_NE(turn->transcript.find("cancel"), std::string::npos) << turn->transcript;
  ASSERT_FALSE(turn->answer.empty());
  EXPECT_GE(turn->ledger.first_audio_sent, turn->ledger.asr_final);
  // Fast mode sends audio ahead of the wall clock, so stamps taken from the audio clock may lie
  // before the call's start; their order still holds.
  EXPECT_LT(turn->ledger.speech_start, turn->ledger.speech_end);
  EXPECT_GE(turn->ledger.end_of_turn, turn->ledger.speech_end);

  // The reply channel, heard back with the generic recognizer, says the answer that was given:
  // at least one of its longer words comes back.
  auto rec = asr::CreateRecognizer(options_.asr);
  ASSERT_TRUE(rec.ok()) << rec.status();
  const std::string heard = Transcribe(**rec, result->reply);
  int found = 0;
  std::string word;
  for (char c : turn->answer + " ") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      if (word.size() >= 5 && heard.find(word) != std::string::npos) ++found;
      word.clear();
    }
  }
  EXPECT_GE(found, 1) << "answer: " << turn->answer << "\nreply heard as: " << heard;
}

}  // namespace
}  // namespace hotline::pipeline
