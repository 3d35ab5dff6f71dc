// The whole answering stack as the pipeline builds it: the demo knowledge base (assets), the
// intent classifier trained on its questions, L1 templates, the L2 semantic cache, L3, demo
// accounts and tools. Only the language model is a fake (streams a scripted answer).
#include "answer/answer_stack.h"

#include <gtest/gtest.h>

#include <chrono>

#include "answer/cache/memory_store.h"
#include "common/build_paths.h"
#include "common/metrics.h"

namespace hotline::answer {
namespace {

// Streams one fixed sentence per question, naming the question so tests can tell answers apart.
class ScriptedModel : public llm::LanguageModel {
 public:
  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& request,
                                      const llm::TextCallback& on_text) override {
    ++calls;
    const std::string& prompt = request.messages.back().content;
    std::string text = "I can help with that. Our answer number " + std::to_string(calls) + ".";
    if (prompt.find("was charged twice") != std::string::npos) text = "A double charge is refunded.";
    if (prompt.find("not charged") != std::string::npos) text = "Payments can take a day to show.";
    if (prompt.find("gift") != std::string::npos) text = "Gift wrapping costs five dollars.";
    llm::GenerateStats stats;
    for (size_t i = 0; i < text.size(); i += 4) {
      ++stats.generated_tokens;
      if (!on_text(std::string_view(text).substr(i, 4))) {
        stats.finish = llm::FinishReason::kCallback;
        break;
      }
    }
    return stats;
  }
  Status Prefetch(const std::vector<llm::Message>& messages, int max_tokens) override {
    prefetched.push_back(messages);
    prefetch_room = max_tokens;
    return Status::Ok();
  }
  int CountTokens(std::string_view text) const override { return EstimateTokens(text); }
  std::string name() const override { return "scripted"; }
  int calls = 0;
  std::vector<std::vector<llm::Message>> prefetched;
  int prefetch_room = 0;
};

struct Stack {
  FakeClock clock;
  ScriptedModel llm;
  std::unique_ptr<AnswerStack> stack;

  explicit Stack(AnswererConfig config = {}) {
    config.kb_sync_interval_ms = 0;
    AnswerStackOptions options;
    options.kb_path = ":memory:";
    options.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";
    options.llm = &llm;
    options.clock = &clock;
    auto built = AnswerStack::Build(config, StoreConfig{}, options);
    EXPECT_TRUE(built.ok()) << built.status();
    if (built.ok()) stack = std::move(*built);
  }
  AnswerResult Ask(std::string_view turn, CallerSession& caller) {
    auto r = stack->answerer().Answer(turn, caller);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : AnswerResult{};
  }
};

TEST(AnswerStack, BuildsTheWholeChainQuickly) {
  const auto start = std::chrono::steady_clock::now();
  Stack s;
  ASSERT_TRUE(s.stack);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const AnswerStackReport& r = s.stack->report();
  std::printf("stack built in %.0f ms: %zu articles, %zu questions, %zu intents, classifier %.0f ms "
              "(threshold %.3f, cv precision %.3f coverage %.3f), %zu L1 templates\n",
              ms, r.articles, r.training_examples, r.intents, r.classifier_ms,
              r.classifier_threshold, r.cv_precision, r.cv_coverage, r.l1_templates);
  EXPECT_EQ(r.articles, 54u);
  EXPECT_EQ(r.intents, 27u);
  EXPECT_GT(r.l1_templates, 20u);
  // Start-up training stays short (0.66-0.9 s measured on an idle-ish 2-core machine; no model
  // file is needed). Wall time on a shared CI machine varies with load, so this bound only
  // catches an order-of-magnitude regression (e.g. a much larger training set).
  EXPECT_LT(r.classifier_ms, 20000);
  EXPECT_NE(s.stack->classifier(), nullptr);
  EXPECT_NE(s.stack->semantic_cache(), nullptr);
}

TEST(AnswerStack, IntentTemplateWithSlotsFromEntities) {
  AnswererConfig config;
  config.intent_templates.push_back(
      "cancel_order=Order {order_number} can be cancelled until it ships.");
  Stack s(config);
  ASSERT_TRUE(s.stack);
  CallerSession caller("+15550199");
  const char* turn = "I want to cancel order A5531";
  Question q = s.stack->Understand(turn);
  ASSERT_TRUE(q.prediction.has_value());
  ASSERT_EQ(q.intent, "cancel_order") << q.prediction->intent << " score " << q.prediction->score;
  AnswerResult r = s.Ask(turn, caller);
  EXPECT_EQ(r.tier, AnswerTierId::kL1);
  EXPECT_EQ(r.text, "Order a5531 can be cancelled until it ships.");
  EXPECT_EQ(s.llm.calls, 0);
}

TEST(AnswerStack, IntentTemplateWithAToolIsPersonalAndNeverCached) {
  Stack s;
  ASSERT_TRUE(s.stack);
  CallerSession alice("+15550100");
  ASSERT_EQ(s.stack->answerer().SubmitPin(alice, "4821").value().tier, AnswerTierId::kIdentify);
  ASSERT_TRUE(alice.identified());
  const char* turn = "get invoice from last month";
  ASSERT_EQ(s.stack->Understand(turn).intent, "get_invoice");
  AnswerResult r = s.Ask(turn, alice);
  EXPECT_EQ(r.tier, AnswerTierId::kL1);
  EXPECT_TRUE(r.personal);
  EXPECT_NE(r.text.find("$42.17"), std::string::npos) << r.text;
  // Neither L2 nor L3 learned it; the amount is remembered as personal for this call.
  EXPECT_EQ(s.stack->semantic_cache()->size(), 0u);
  EXPECT_FALSE(s.stack->l3()->Lookup(s.stack->Understand(turn).text).value().has_value());
  EXPECT_TRUE(alice.MentionsPersonal("it was 42.17"));
}

// The knowledge base never answers directly here, so the model is asked first.
AnswererConfig ModelFirst() {
  AnswererConfig config;
  config.kb_direct_min_score = 1e9;
  config.kb_direct_agreed_min_score = 1e9;
  // These questions (gift wrapping, card charges) are outside the demo knowledge base's intents:
  // the LLM gate would send them to the fallback (tests/answer/llm_gate_demo_test.cc). Here the
  // model must answer them so that the semantic cache can learn its answers.
  config.llm_gate.enabled = false;
  return config;
}

TEST(AnswerStack, SemanticCacheAnswersARephrasingAfterTheModel) {
  Stack s(ModelFirst());
  ASSERT_TRUE(s.stack);
  CallerSession caller("+15550199");
  AnswerResult first = s.Ask("How much does gift wrapping cost?", caller);
  ASSERT_EQ(first.tier, AnswerTierId::kLlm);
  EXPECT_EQ(first.text, "Gift wrapping costs five dollars.");
  EXPECT_EQ(s.stack->semantic_cache()->size(), 1u);
  AnswerResult second = s.Ask("how much does the gift wrapping cost", caller);
  EXPECT_EQ(second.tier, AnswerTierId::kL2);
  EXPECT_EQ(second.text, first.text);
  EXPECT_EQ(s.llm.calls, 1);
}

// Every cache tier off: each question, asked again word for word, goes to the model again.
TEST(AnswerStack, WithEveryCacheOffARepeatedQuestionReachesTheModelAgain) {
  AnswererConfig config = ModelFirst();
  config.use_intent_cache = false;
  config.use_semantic_cache = false;
  config.use_result_cache = false;
  Stack s(config);
  ASSERT_TRUE(s.stack);
  EXPECT_EQ(s.stack->l3(), nullptr);
  EXPECT_EQ(s.stack->semantic_cache(), nullptr);
  CallerSession caller("+15550199");
  EXPECT_EQ(s.Ask("How much does gift wrapping cost?", caller).tier, AnswerTierId::kLlm);
  EXPECT_EQ(s.Ask("How much does gift wrapping cost?", caller).tier, AnswerTierId::kLlm);
  EXPECT_EQ(s.llm.calls, 2);
}

// Start-up warm-up: the system prompt, the start of every model prompt, is prefetched alone.
TEST(AnswerStack, WarmUpPrefetchesTheSystemPrompt) {
  Stack s(ModelFirst());
  ASSERT_TRUE(s.stack);
  ASSERT_TRUE(s.stack->answerer().WarmUp().ok());
  ASSERT_EQ(s.llm.prefetched.size(), 1u);
  ASSERT_EQ(s.llm.prefetched[0].size(), 1u);
  EXPECT_EQ(s.llm.prefetched[0][0].role, "system");
  EXPECT_EQ(s.llm.prefetched[0][0].content, AnswererConfig{}.prompt.system_prompt);
  EXPECT_EQ(s.llm.prefetch_room, AnswererConfig{}.prompt.reserved_output_tokens);
  // A turn's prompt starts with the same message.
  CallerSession caller("+15550199");
  auto draft = s.stack->answerer().DraftPrompt("how much is gift wrapping", caller, {});
  ASSERT_TRUE(draft.ok()) << draft.status();
  EXPECT_EQ(draft->front().content, s.llm.prefetched[0][0].content);
}

TEST(AnswerStack, MeaningFlipIsNotServedFromTheSemanticCache) {
  Stack s(ModelFirst());
  ASSERT_TRUE(s.stack);
  CallerSession caller("+15550199");
  ASSERT_EQ(s.Ask("My card was charged twice", caller).tier, AnswerTierId::kLlm);
  // Close in words (cosine ~0.9, above the threshold), opposite in meaning: the guard blocks it.
  auto near = s.stack->semantic_cache()->Lookup("my card was not charged twice").value();
  EXPECT_FALSE(near.hit.has_value());
  EXPECT_GE(near.best_similarity, s.stack->semantic_cache()->threshold());
  EXPECT_EQ(near.blocked_by, "negation");
  Counter& rejects = MetricsRegistry::Global().GetCounter(
      "hotline_answer_cache_rejects_total", "", {{"tier", "l2"}, {"reason", "meaning_guard"}});
  const uint64_t rejects_before = rejects.value();
  AnswerResult r = s.Ask("My card was not charged twice", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kLlm);
  EXPECT_EQ(rejects.value(), rejects_before + 1);  // the refusal is counted
  EXPECT_EQ(r.text, "Payments can take a day to show.");
  EXPECT_EQ(s.llm.calls, 2);
  // The same question again is an L2 hit (the guard passes what does not flip).
  EXPECT_EQ(s.Ask("my card was charged twice", caller).tier, AnswerTierId::kL2);
}

TEST(AnswerStack, ACallersBillIsNeverServedToAnotherCallerThroughAnyTier) {
  Stack s;
  ASSERT_TRUE(s.stack);
  auto has_alices = [](const std::string& t) { return t.find("42.17") != std::string::npos; };
  CallerSession alice("+15550100");
  const char* ask = "get invoice from last month";
  EXPECT_EQ(s.Ask(ask, alice).tier, AnswerTierId::kIdentify);
  AnswerResult r = s.Ask("four eight two one", alice);
  EXPECT_TRUE(has_alices(r.text)) << r.text;
  EXPECT_TRUE(r.personal);
  EXPECT_TRUE(has_alices(s.Ask(ask, alice).text));

  // A spoofed caller ID, an unidentified stranger and another customer, by every phrasing.
  CallerSession spoofer("+15550100");
  CallerSession stranger("+15550199");
  CallerSession bob("+15550101");
  ASSERT_EQ(s.stack->answerer().SubmitPin(bob, "1379").value().tier, AnswerTierId::kIdentify);
  for (CallerSession* other : {&spoofer, &stranger, &bob}) {
    for (const char* q : {"get invoice from last month", "getting invoices", "what was my bill",
                          "How much was my last invoice?", "repeat the amount please"}) {
      AnswerResult o = s.Ask(q, *other);
      EXPECT_FALSE(has_alices(o.text)) << q << " -> " << o.text;
      auto peek = s.stack->answerer().Peek(q, *other).value();
      if (peek) {
        EXPECT_FALSE(has_alices(peek->text)) << q;
      }
    }
  }
  EXPECT_FALSE(spoofer.identified());
  // Nothing shared holds it.
  for (const char* q : {"get invoice from last month", "getting invoices"}) {
    auto l2 = s.stack->semantic_cache()->Lookup(s.stack->Understand(q).text).value();
    if (l2.hit) {
      EXPECT_FALSE(has_alices(l2.hit->answer)) << q;
    }
    auto l3 = s.stack->l3()->Lookup(s.stack->Understand(q).text).value();
    if (l3) {
      EXPECT_FALSE(has_alices(l3->text)) << q;
    }
  }
}

TEST(AnswerStack, MonthsResolveAgainstToday) {
  Understanding u;
  u.normalized = "bill for march";
  u.redacted = u.normalized;
  u.entities = {Entity{EntityType::kMonth, "03", "", 2, 3}};
  EXPECT_EQ(QuestionFromUnderstanding(u, "2026-12").entities.at("month"), "2026-03");
  u.entities[0].value = "last_month";
  EXPECT_EQ(QuestionFromUnderstanding(u, "2026-01").entities.at("month"), "2025-12");
  u.entities[0].value = "11";
  EXPECT_EQ(QuestionFromUnderstanding(u, "2026-03").entities.at("month"), "2025-11");
  EXPECT_EQ(CurrentYearMonth().size(), 7u);
}

}  // namespace
}  // namespace hotline::answer
