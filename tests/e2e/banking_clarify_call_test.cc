// Clarification in a real call: the banking line (config/banking.yaml, its knowledge base, the
// call stack a call uses) behind `/twilio` on a loopback HttpServer. A caller speaks a question
// the line is unsure of (8 kHz μ-law, real time); the agent asks whether it has the topic right;
// the caller says "yes"; the agent answers from that topic's article.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "app/call_runner.h"
#include "app/hotline_config.h"
#include "common/build_paths.h"
#include "pipeline/call_stack.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/testing/call_load.h"
#include "server/testing/twilio_caller.h"
#include "tts/synthesizer.h"

namespace hotline {
namespace {

using server::testing::TwilioCaller;
using Ms = std::chrono::milliseconds;

std::string Scratch(const std::string& name) {
  return "/tmp/hotline_e2e_clarify_" + std::to_string(getpid()) + "_" + name;
}

// flite kal16 (a voice the banking line was never tuned with) over an 8 kHz μ-law line.
std::string CallerSays(const std::string& text) {
  tts::TtsConfig tc;
  tc.flite.voice = "cmu_us_kal16";
  auto synth = tts::CreateSynthesizer(tc);
  EXPECT_TRUE(synth.ok()) << synth.status();
  if (!synth.ok()) return "";
  auto q = server::testing::SynthesizeCallerQuestion(**synth, text);
  EXPECT_TRUE(q.ok()) << q.status();
  return q.ok() ? q->speech : "";
}

TEST(BankingClarifyCall, AnUnsureQuestionIsConfirmedThenAnswered) {
  if (std::getenv("HOTLINE_E2E_DEBUG")) spdlog::set_level(spdlog::level::debug);
  auto cfg = LoadHotlineConfig(std::string(HOTLINE_SOURCE_DIR) + "/config/banking.yaml", {});
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_TRUE(cfg->answer.clarify.enabled) << "the banking line clarifies";
  pipeline::CallStackOptions o = cli::CallStackOptionsFrom(*cfg);  // as `hotline serve` builds it
  o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/banking/kb.csv";
  o.kb_db = Scratch("kb.sqlite");
  o.audio_cache = false;
  o.call.reprompt_after_ms = 60000;  // no re-prompts while the test waits
  auto stack = pipeline::CallStack::Build(o);
  ASSERT_TRUE(stack.ok()) << stack.status();

  server::ServerConfig sc;
  sc.port = 0;
  auto srv = server::HttpServer::Create(sc);
  ASSERT_TRUE(srv.ok()) << srv.status();
  MetricsRegistry metrics;
  auto registry = std::make_shared<server::CallRegistry>(server::CallsConfig{.max_calls = 2});
  auto twilio = server::TwilioEndpoint::Create((*stack)->resources(), server::TwilioConfig{},
                                               &metrics, registry);
  ASSERT_TRUE(twilio.ok()) << twilio.status();
  ASSERT_TRUE((*srv)->HandleWebSocket("/twilio", (*twilio)->Factory()).ok());
  ASSERT_TRUE((*srv)->Start().ok());

  TwilioCaller caller;
  ASSERT_TRUE(caller.Connect((*srv)->port(), "/twilio")) << caller.error();
  ASSERT_TRUE(caller.Start("CAclarify", {{"caller", "+15550100"}}));
  ASSERT_TRUE(caller.WaitForAudio(TwilioCaller::Clock::now() - Ms(1), 15000)) << "no greeting";
  ASSERT_TRUE(caller.WaitForQuiet(700, 20000));

  const answer::AnswererStats& stats = (*stack)->answerer().stats();
  // The chosen topic is answered by its L1 template or its knowledge-base article.
  auto kb_answers = [&] {
    return stats.by_tier[static_cast<int>(answer::AnswerTierId::kL1)].load() +
           stats.by_tier[static_cast<int>(answer::AnswerTierId::kKnowledgeBase)].load();
  };
  // A Banking77 question (dev split: in neither the knowledge base nor the test split) that the
  // classifier reads as top_up_limits without accepting it, and no passage agrees with firmly.
  auto end = caller.SendAudio(CallerSays("Can I create my own top-up limit?"));
  ASSERT_TRUE(caller.WaitForAudio(end, 15000)) << "no reply to the question";
  ASSERT_TRUE(caller.WaitForQuiet(800, 30000));
  EXPECT_EQ(stats.clarifications.load(), 1u) << "a clarifying question, not an answer";
  const uint64_t answered_before = kb_answers();

  end = caller.SendAudio(CallerSays("yes"));
  ASSERT_TRUE(caller.WaitForAudio(end, 15000)) << "no answer after yes";
  ASSERT_TRUE(caller.WaitForQuiet(800, 30000));
  EXPECT_EQ(stats.clarifications_resolved.load(), 1u);
  EXPECT_EQ(kb_answers(), answered_before + 1) << "answered from the topic's article";
  EXPECT_FALSE(caller.closed());
  caller.SendStop();
  EXPECT_TRUE(caller.WaitClosed(5000));

  (*srv)->Stop();
  stack->reset();
  for (const char* s : {"", ".lm", ".lm.dict"}) std::filesystem::remove(o.kb_db + s);
}

}  // namespace
}  // namespace hotline
