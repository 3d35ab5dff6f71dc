// The Mandarin telecom line end to end on embedded parts: config/telecom_zh.yaml and
// assets/kb/telecom_zh/kb.csv.
//  - Over the call session: the seed's example "我想查询上月话费账单" (I want to check last month's
//    phone bill) arrives as Chinese text from the recognizer (scripted here: the embedded
//    recognizer hears English only), the caller is asked for the PIN, says it in Chinese
//    numerals, and hears their own bill from the account tool, spoken by espeak-ng's Mandarin
//    voice over the 8 kHz line.
//  - Typed, through `hotline chat --domain telecom_zh` (the built binary): the same exchange, and
//    a knowledge-base question, with the replies written as audio.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "app/hotline_config.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "pipeline/call_stack.h"
#include "pipeline/file_call.h"
#include "pipeline/testing/fakes.h"
#include "run_hotline.h"

namespace hotline::e2e {
namespace {

const std::string kConfig = std::string(HOTLINE_SOURCE_DIR) + "/config/telecom_zh.yaml";
const std::string kKbCsv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/telecom_zh/kb.csv";

double Rms(std::span<const int16_t> s) {
  double sum = 0;
  for (int16_t v : s) sum += static_cast<double>(v) * v;
  return s.empty() ? 0 : std::sqrt(sum / static_cast<double>(s.size()));
}

TEST(MandarinLine, TheSeedsBillQueryIsAnsweredWithTheCallersOwnFigureAfterThePin) {
  auto cfg = LoadHotlineConfig(kConfig, {});
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  const std::string scratch = ::testing::TempDir() + "/mandarin_" + std::to_string(getpid());
  pipeline::CallStackOptions o;
  o.asr = cfg->asr;
  o.tts = cfg->tts;
  o.answer = cfg->answer;
  o.store = cfg->store;
  o.llm = cfg->llm;
  o.call = cfg->call;
  o.vad = cfg->speech_in.vad;
  o.endpointer = cfg->speech_in.endpointer;
  o.kb_db = scratch + ".kb.sqlite";
  o.kb_csv = kKbCsv;
  o.domain_lm_from_kb = false;  // the recognizer is scripted below
  MetricsRegistry metrics;
  o.metrics = &metrics;
  auto stack = pipeline::CallStack::Build(o);
  ASSERT_TRUE(stack.ok()) << stack.status();

  // What a Mandarin recognizer would hand over; everything after it is the real line.
  pipeline::testing::FakeRecognizer heard({"我想查询上月话费账单", "我的密码是四八二一"});
  pipeline::CallResources resources = (*stack)->resources();
  resources.recognizer = &heard;
  pipeline::CallInfo info;
  info.call_id = "zh-bill";
  info.caller_id = "+15550100";  // a demo customer: PIN 4821, November's bill 42.17
  pipeline::FileCallOptions run;
  run.realtime = false;
  const audio::AudioBuffer utterance(pipeline::testing::Vowel(1200), 8000);
  auto result = pipeline::RunFileCall(resources, info, {utterance, utterance}, run);
  ASSERT_TRUE(result.ok()) << result.status();

  std::vector<const pipeline::TurnReport*> caller_turns;
  for (const pipeline::TurnReport& t : result->turns) {
    if (t.kind == pipeline::TurnKind::kCaller && t.outcome != pipeline::TurnOutcome::kDiscarded) {
      caller_turns.push_back(&t);
    }
  }
  ASSERT_EQ(caller_turns.size(), 2u);
  EXPECT_EQ(caller_turns[0]->transcript, "我想查询上月话费账单");
  EXPECT_EQ(caller_turns[0]->answer, cfg->answer.ask_pin_text);
  EXPECT_EQ(caller_turns[1]->answer, "您2026年11月的话费是42.17元。");
  EXPECT_GE(caller_turns[1]->ledger.first_audio_sent, 0) << "the bill was not spoken";
  // The agent's channel carries speech (the greeting, the PIN request and the bill).
  EXPECT_GT(result->reply.duration_s(), 4.0);
  EXPECT_GT(Rms(result->reply.samples), 200.0);
  for (const char* suffix : {".kb.sqlite", ".kb.sqlite-wal", ".kb.sqlite-shm"}) {
    std::filesystem::remove(scratch + suffix);
  }
}

TEST(MandarinLine, TypedTurnsGoThroughTheWholeChainAndAreSpoken) {
  const std::string out = ::testing::TempDir() + "/mandarin_chat_" + std::to_string(getpid());
  CommandResult r = RunHotline("chat --domain telecom_zh --out " + out +
                               " 我想查询上月话费账单 我的密码是四八二一 我的手机昨天在地铁上丢了");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("查询账户信息需要先验证身份"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("您2026年11月的话费是42.17元。"), std::string::npos) << r.out;
  // A knowledge-base answer, its company fact filled in from the line's configuration.
  EXPECT_NE(r.out.find("手机丢了请马上挂失：拨打10088"), std::string::npos) << r.out;
  for (int n = 1; n <= 3; ++n) {
    auto wav = audio::ReadWavFile(out + "/reply-" + std::to_string(n) + ".wav");
    ASSERT_TRUE(wav.ok()) << wav.status();
    EXPECT_GT(wav->audio.duration_s(), 1.0) << "reply " << n;
    EXPECT_GT(Rms(wav->audio.samples), 200.0) << "reply " << n;
  }
  std::filesystem::remove_all(out);
}

// The Mandarin line's own replies: a thank-you is welcomed with its "anything else?" in Mandarin,
// "say that again" repeats it, and a "no" to it ends the call.
TEST(MandarinLine, ThanksAndNoMoreEndTheCallInMandarin) {
  CommandResult r = RunHotline(
      "chat --domain telecom_zh --no-audio 谢谢你 你说什么 没有了，谢谢 我想查询上月话费账单");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const std::string thanks = "不客气，请问还有其他可以帮您的吗？";
  const size_t first = r.out.find(thanks);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(thanks, first + 1), std::string::npos) << r.out;  // said again
  EXPECT_NE(r.out.find("social (repeat)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("感谢您的来电，再见！"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("我想查询上月话费账单"), std::string::npos) << r.out;  // not read
}

}  // namespace
}  // namespace hotline::e2e
