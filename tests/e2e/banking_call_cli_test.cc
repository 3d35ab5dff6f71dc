// The banking line end to end: a Banking77 *test* question, spoken by a voice never used for
// tuning, placed through `hotline call --domain banking` (8 kHz μ-law line, the call session, the
// recognizer with the call's language model, the answer chain) is answered from the article of
// its intent. Runs the built binary; data from ../shared/data.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "asr/lm_builder.h"
#include "common/build_paths.h"
#include "run_hotline.h"

namespace hotline::e2e {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(BankingCall, AnswersASpokenBanking77TestQuestionFromItsArticle) {
  const std::string question = "Where do I link the new card?";
  const std::string intent = "card_linking";
  const std::string test_csv = std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/banking77/test.csv";
  if (!std::filesystem::exists(test_csv)) GTEST_SKIP() << "no Banking77 at " << test_csv;
  // It is a Banking77 test question, not one the banking line was built from.
  ASSERT_NE(ReadAll(test_csv).find(question + "," + intent), std::string::npos);
  auto rows = asr::ParseCsv(ReadAll(std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/banking/kb.csv"));
  ASSERT_TRUE(rows.ok());
  std::string body;
  for (const auto& row : *rows) {
    if (row.size() >= 6 && row[2] == intent) body = row[3];
    if (row.size() >= 6 && row[2] == intent) {
      EXPECT_EQ(row[5].find(question), std::string::npos);
    }
  }
  ASSERT_FALSE(body.empty());

  const std::string wav = ::testing::TempDir() + "/banking_q_" + std::to_string(getpid()) + ".wav";
  CommandResult say =
      RunHotline("tts say '" + question + "' -o " + wav + " --backend flite --voice cmu_us_kal16");
  ASSERT_EQ(say.exit_code, 0) << say.all();
  CommandResult call = RunHotline("call " + wav + " --domain banking --fast --json");
  std::filesystem::remove(wav);
  ASSERT_EQ(call.exit_code, 0) << call.all();
  auto j = nlohmann::json::parse(call.out);
  // The greeting comes first; the caller's question is the first caller turn.
  const nlohmann::json* turn = nullptr;
  for (const auto& t : j["turns"]) {
    if (t["kind"] == "caller") {
      turn = &t;
      break;
    }
  }
  ASSERT_NE(turn, nullptr) << call.out;
  EXPECT_EQ((*turn)["answer"].get<std::string>(), body)
      << "heard: " << (*turn)["transcript"] << " tier: " << (*turn)["tier"];
}

TEST(BankingCall, RefusesAnUnknownLine) {
  CommandResult r = RunHotline("call /nonexistent.wav --domain insurance --fast");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--domain insurance"), std::string::npos) << r.err;
}

// Typed turns read as a call reads them: a thank-you and "say that again" are the line's own
// replies, and a "no" to "anything else?" ends the exchange before the next question.
TEST(BankingChat, SocialTurnsAreTheLinesOwnAndANoEndsTheExchange) {
  CommandResult r = RunHotline(
      "chat --domain banking --no-audio 'thank you so much' 'sorry, say that again?' 'no' "
      "'how do I top up my card'");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const std::string thanks = "You're welcome. Is there anything else I can help you with?";
  const size_t first = r.out.find(thanks);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(thanks, first + 1), std::string::npos) << r.out;  // said again
  EXPECT_NE(r.out.find("social (repeat)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tier:    goodbye"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the turns after this one are not read"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("top up my card"), std::string::npos) << r.out;
}

// A "yes" to "anything else?", "what can you help me with?" and "hold on" are the line's own
// (its banking help text from config/banking.yaml); an "okay" after an answer asks for more.
TEST(BankingChat, TurnsThatHoldTheFloorAreTheLinesOwn) {
  CommandResult r = RunHotline(
      "chat --domain banking --no-audio 'thanks' 'yes' 'what can you help me with' "
      "'hold on, let me find my card' 'how do I top up my card' 'okay, got it'");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("social (go_ahead)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("I can help with your cards"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("social (hold)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("social (acknowledge)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tier:    fallback"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("goes to an agent"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace hotline::e2e
