// Answerer logic with real SQLite (knowledge base, accounts) and the in-process store; the
// understanding step and the language model are small fakes (their real modules are tested on
// their own).
#include "answer/answerer.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <functional>

#include "answer/cache/memory_store.h"

namespace hotline::answer {
namespace {

// Lower-cases, keeps letters/digits/spaces, maps a few phrasings onto intents.
Result<Question> FakeUnderstand(std::string_view turn) {
  Question q;
  for (char c : turn) {
    if (std::isdigit(static_cast<unsigned char>(c))) q.digits.push_back(c);
    if (std::isalnum(static_cast<unsigned char>(c)) || c == ' ') {
      q.text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  if (q.text.find("bill") != std::string::npos) q.intent = "get_invoice";
  if (q.text.find("my order") != std::string::npos) q.intent = "track_order";
  if (q.text.find("delivery") != std::string::npos) q.intent = "delivery_period";
  if (q.text.find("october") != std::string::npos) q.entities["month"] = "2026-10";
  // Unsure readings for the clarification tests: two close intents, or one likely intent.
  if (q.text.find("money back") != std::string::npos) {
    q.prediction.emplace();
    q.prediction->intent = "check_refund_policy";
    q.prediction->runner_up = "delivery_period";
    q.prediction->probability = 0.45;
    q.prediction->margin = 0.1;
    q.prediction->top_two = 0.8;
  }
  if (q.text.find("password thing") != std::string::npos) {
    q.prediction.emplace();
    q.prediction->intent = "recover_password";
    q.prediction->runner_up = "create_account";
    q.prediction->probability = 0.6;
    q.prediction->margin = 0.5;
    q.prediction->top_two = 0.7;
  }
  // A classifier's best guess it did not accept (q.intent stays empty).
  if (q.text.find("forgot") != std::string::npos) {
    q.prediction.emplace();
    q.prediction->intent = "recover_password";
    q.prediction->top_two = 0.9;  // sure enough for the LLM gate
    q.intent.clear();
  }
  return q;
}

// Answers from the prompt: repeats the last history message when asked to repeat, otherwise
// says something general. Counts calls.
// Streams its answer a few bytes at a time, like a backend's token deltas.
class EchoModel : public llm::LanguageModel {
 public:
  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& request,
                                      const llm::TextCallback& on_text) override {
    ++calls;
    last_prompt = request.messages;
    if (!fail_with.ok()) return fail_with;  // the server down, before any text
    const auto& messages = request.messages;
    const std::string& question = messages.back().content;
    std::string text;
    if (question.find("repeat") != std::string::npos) {
      text = messages.size() > 2 ? "Sure! " + messages[messages.size() - 2].content
                                 : std::string("**There is nothing to repeat yet.**");
    } else {
      text = "Certainly! We are open *nine to five* on weekdays.\n- Call us any time.";
    }
    llm::GenerateStats stats;
    stats.prompt_tokens = 100;
    stats.first_token_ms = 1.5;
    for (size_t i = 0; i < text.size(); i += 3) {
      if (IsCancelled(request.cancel)) {
        stats.finish = llm::FinishReason::kCancelled;
        return stats;
      }
      ++stats.generated_tokens;
      if (!on_text(std::string_view(text).substr(i, 3))) {
        stats.finish = llm::FinishReason::kCallback;
        return stats;
      }
    }
    return stats;
  }
  Status Prefetch(const std::vector<ChatMessage>& messages, int max_tokens) override {
    (void)max_tokens;
    ++prefetches;
    last_prefetch = messages;
    return Status::Ok();
  }
  int CountTokens(std::string_view text) const override { return EstimateTokens(text); }
  std::string name() const override { return "echo"; }
  int calls = 0;
  int prefetches = 0;
  Status fail_with = Status::Ok();
  std::vector<ChatMessage> last_prompt;
  std::vector<ChatMessage> last_prefetch;
};

// A simple exact-match shared cache standing in for L2; records everything it learns.
class SpyTier : public AnswerTier {
 public:
  Result<std::optional<TierAnswer>> Lookup(const Question& q, const CallerSession&) override {
    auto it = learned.find(q.text);
    if (it == learned.end()) return std::optional<TierAnswer>();
    return std::optional<TierAnswer>(TierAnswer{it->second, false, {}});
  }
  Status Learn(const Question& q, std::string_view answer, const std::vector<std::string>&) override {
    learned[q.text] = std::string(answer);
    return Status::Ok();
  }
  std::map<std::string, std::string> learned;
};

class FailingTier : public AnswerTier {
 public:
  Result<std::optional<TierAnswer>> Lookup(const Question&, const CallerSession&) override {
    return UnavailableError("down");
  }
  Status Learn(const Question&, std::string_view, const std::vector<std::string>&) override {
    return Status::Ok();
  }
};

constexpr const char* kKb =
    "id,title,intent,body\n"
    "delivery-1,Delivery period,delivery_period,Standard delivery takes 3 to 5 business days.\n"
    "refund-1,Refund policy,check_refund_policy,You can return items within 30 days for a refund.\n"
    // Unrelated articles, so that BM25's inverse document frequency means something.
    "password-1,Recover password,recover_password,Use the forgotten password link on the sign-in page.\n"
    "newsletter-1,Newsletter,newsletter_subscription,Subscribe to the newsletter in your profile settings.\n"
    "account-1,Create account,create_account,Sign up on our website with your email address.\n"
    "payment-1,Payment methods,check_payment_methods,We accept cards and bank transfers.\n"
    "complaint-1,Complaint,complaint,Tell us what went wrong and we will look into it.\n"
    "review-1,Review,review,Leave a review in the feedback section of our website.\n";

struct World {
  FakeClock clock;
  std::unique_ptr<MemoryStore> store = MemoryStore::Create(MemoryStoreConfig{}, &clock).value();
  ResultCache l3{*store, ResultCacheConfig{}};
  std::unique_ptr<KnowledgeBase> kb = KnowledgeBase::Open(":memory:", true).value();
  std::unique_ptr<AccountsDb> accounts = AccountsDb::Open(":memory:", true).value();
  ToolRegistry tools;
  std::unique_ptr<CallerIdentifier> identifier;
  EchoModel llm;
  SpyTier l2;
  std::unique_ptr<Answerer> answerer;

  explicit World(bool with_llm = true, AnswerTier* l1 = nullptr,
                 const std::function<void(AnswererConfig&)>& tune = {}) {
    EXPECT_TRUE(kb->ImportCsv(kKb, "kb.csv").ok());
    EXPECT_TRUE(accounts->SeedDemo().ok());
    tools = CreateDemoTools(*accounts).value();
    identifier = std::make_unique<CallerIdentifier>(*accounts, CallerConfig{});
    AnswererConfig config;
    config.kb_sync_interval_ms = 0;
    config.kb_direct_min_score = 0.5;
    config.kb_direct_agreed_min_score = 0.5;
    if (tune) tune(config);
    AnswererParts parts;
    parts.understand = FakeUnderstand;
    parts.l1 = l1;
    parts.l2 = &l2;
    parts.l3 = &l3;
    parts.kb = kb.get();
    parts.tools = &tools;
    parts.identifier = identifier.get();
    parts.llm = with_llm ? &llm : nullptr;
    parts.clock = &clock;
    auto a = Answerer::Create(config, parts);
    EXPECT_TRUE(a.ok()) << a.status();
    answerer = std::move(a).value();
  }

  AnswerResult Ask(std::string_view turn, CallerSession& caller,
                   const std::vector<ChatMessage>& history = {}) {
    auto r = answerer->Answer(turn, caller, history);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : AnswerResult{};
  }
  // A spoken turn, with the recognizer's confidence in its transcript.
  AnswerResult Hear(std::string_view turn, double asr_confidence, CallerSession& caller) {
    AnswerOptions o;
    o.asr_confidence = asr_confidence;
    auto r = answerer->Answer(turn, caller, {}, o);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : AnswerResult{};
  }
};

TEST(Answerer, ReportsWhichTierAnswered) {
  World w;
  CallerSession caller("+15550199");
  AnswerResult r = w.Ask("How long does delivery take?", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kKnowledgeBase);
  EXPECT_EQ(r.text, "Standard delivery takes 3 to 5 business days.");
  EXPECT_EQ(r.passage_ids, (std::vector<std::string>{"delivery-1"}));
  EXPECT_GE(r.understood_ms, 0);
  // The shareable answer was offered to L2, which now answers the same question first.
  EXPECT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kL2);
  w.l2.learned.clear();
  EXPECT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kL3);

  r = w.Ask("When are you open?", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kLlm);
  EXPECT_EQ(r.text, "We are open nine to five on weekdays. Call us any time.");  // post-processed
  EXPECT_EQ(w.llm.last_prompt.front().role, "system");
  w.l2.learned.clear();
  EXPECT_EQ(w.Ask("When are you open?", caller).tier, AnswerTierId::kL3);
  EXPECT_EQ(w.llm.calls, 1);
  EXPECT_EQ(w.answerer->stats().by_tier[static_cast<int>(AnswerTierId::kL3)].load(), 2u);

  World no_llm(false);
  EXPECT_EQ(no_llm.Ask("When are you open?", caller).tier, AnswerTierId::kFallback);

  // A listener that says something else on a miss gets the fallback without its sentences.
  int streamed = 0;
  AnswerOptions quiet_miss;
  quiet_miss.on_sentence = [&](std::string_view) { return ++streamed > 0; };
  quiet_miss.stream_fallback = false;
  auto miss = no_llm.answerer->Answer("When are you open?", caller, {}, quiet_miss);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_EQ(miss->tier, AnswerTierId::kFallback);
  EXPECT_FALSE(miss->text.empty());
  EXPECT_EQ(streamed, 0);
}

TEST(Answerer, APassageIsSpokenOnlyWhenTheClassifiersBestGuessIsItsIntent) {
  {
    World w;
    CallerSession caller("+15550199");
    // The best guess (not accepted) names another article: the model answers, not the passage.
    AnswerResult r = w.Ask("I forgot how long standard delivery takes", caller);
    EXPECT_EQ(r.tier, AnswerTierId::kLlm);
    // The same passage, with a guess that agrees (the fake's delivery_period).
    r = w.Ask("How long does standard delivery take?", caller);
    EXPECT_EQ(r.tier, AnswerTierId::kKnowledgeBase);
  }
  // An agreeing guess lowers the score a passage needs from kb_direct_min_score to
  // kb_direct_agreed_min_score.
  auto agreed_floor = [](double floor) {
    return [floor](AnswererConfig& c) {
      c.kb_direct_min_score = 1e9;
      c.kb_direct_agreed_min_score = floor;
    };
  };
  {
    World w(true, nullptr, agreed_floor(0.5));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask("How long does standard delivery take?", caller).tier,
              AnswerTierId::kKnowledgeBase);
  }
  {
    World w(true, nullptr, agreed_floor(1e9));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask("How long does standard delivery take?", caller).tier, AnswerTierId::kLlm);
  }
  // With the check off, the passage's score alone decides, whatever the guess.
  {
    World w(true, nullptr, [](AnswererConfig& c) { c.kb_direct_requires_intent_match = false; });
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask("I forgot how long standard delivery takes", caller).tier,
              AnswerTierId::kKnowledgeBase);
  }
}

TEST(Answerer, AnUnsureTurnIsClarifiedAndTheChosenTopicAnswered) {
  auto on = [](AnswererConfig& c) { c.clarify.enabled = true; };
  {
    World w(false, nullptr, on);
    CallerSession caller("+15550199");
    AnswerResult r = w.Ask("I want my money back", caller);
    EXPECT_EQ(r.tier, AnswerTierId::kClarify);
    EXPECT_EQ(r.text, "Is this about refund policy, or about delivery period?");
    ASSERT_TRUE(caller.clarification().has_value());
    r = w.Ask("the second one", caller);
    EXPECT_EQ(r.tier, AnswerTierId::kKnowledgeBase);
    EXPECT_EQ(r.text, "Standard delivery takes 3 to 5 business days.");
    EXPECT_FALSE(caller.clarification().has_value());
    // Named by its topic's words.
    EXPECT_EQ(w.Ask("I want my money back", caller).tier, AnswerTierId::kClarify);
    EXPECT_EQ(w.Ask("the refund", caller).text,
              "You can return items within 30 days for a refund.");
    EXPECT_EQ(w.answerer->stats().clarifications.load(), 2u);
    EXPECT_EQ(w.answerer->stats().clarifications_resolved.load(), 2u);
    EXPECT_EQ(w.answerer->stats().by_tier[static_cast<int>(AnswerTierId::kClarify)].load(), 2u);
  }
  {
    // Confirmation, then yes.
    World w(false, nullptr, on);
    CallerSession caller("+15550199");
    AnswerResult r = w.Ask("the password thing", caller);
    EXPECT_EQ(r.tier, AnswerTierId::kClarify);
    EXPECT_EQ(r.text, "You'd like help with recover password. Is that right?");
    EXPECT_EQ(w.Ask("yes please", caller).text,
              "Use the forgotten password link on the sign-in page.");
  }
  {
    // "No": the reply is a turn of its own, and is not clarified again; an unsure question asked
    // right after a clarification is not clarified either (one clarification per question).
    World w(false, nullptr, on);
    CallerSession caller("+15550199");
    w.Ask("the password thing", caller);
    EXPECT_EQ(w.Ask("no", caller).tier, AnswerTierId::kFallback);
    w.Ask("the password thing", caller);
    EXPECT_NE(w.Ask("I want my money back", caller).tier, AnswerTierId::kClarify);
  }
  {
    // The keypad: 1 or 2 for a choice.
    World w(false, nullptr, on);
    CallerSession caller("+15550199");
    w.Ask("I want my money back", caller);
    auto r = w.answerer->SubmitPin(caller, "1");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->text, "You can return items within 30 days for a refund.");
  }
  {
    // Off (the default): the unsure turn goes to the tiers as before.
    World w(false);
    CallerSession caller("+15550199");
    EXPECT_NE(w.Ask("I want my money back", caller).tier, AnswerTierId::kClarify);
  }
}

// clarify.when = before_fallback: a turn two readings agree on is answered; only a turn no tier
// answered is asked about. kb_direct_agreed_min_margin withholds a passage whose guess is barely
// ahead of its runner-up.
TEST(Answerer, BeforeFallbackClarifiesOnlyWhatNoTierAnswered) {
  auto tune = [](std::string when, double margin) {
    return [when, margin](AnswererConfig& c) {
      c.clarify.enabled = !when.empty();
      if (!when.empty()) c.clarify.when = when;
      c.kb_direct_agreed_min_margin = margin;
    };
  };
  // The fake's guess: check_refund_policy, 0.1 ahead of delivery_period, not accepted.
  const std::string agreed = "I want my money back, a refund";
  const std::string refund = "You can return items within 30 days for a refund.";
  {
    World w(false, nullptr, tune("before_fallback", 0));
    CallerSession caller("+15550199");
    AnswerResult r = w.Ask(agreed, caller);
    EXPECT_EQ(r.tier, AnswerTierId::kKnowledgeBase);
    EXPECT_EQ(r.text, refund);
    EXPECT_FALSE(caller.clarification().has_value());
    // No passage for this one: the question replaces the rephrase request.
    EXPECT_EQ(w.Ask("I want my money back", caller).tier, AnswerTierId::kClarify);
    EXPECT_EQ(w.Ask("the first one", caller).text, refund);
  }
  {
    World w(false, nullptr, tune("before_tiers", 0));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask(agreed, caller).tier, AnswerTierId::kClarify);
  }
  {
    World w(false, nullptr, tune("before_fallback", 0.2));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask(agreed, caller).tier, AnswerTierId::kClarify);
  }
  {
    World w(false, nullptr, tune("", 0.2));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask(agreed, caller).tier, AnswerTierId::kFallback);
  }
  {
    World w(false, nullptr, tune("", 0.1));  // a lead of exactly the margin is enough
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask(agreed, caller).tier, AnswerTierId::kKnowledgeBase);
  }
}

// kb_direct_agreed_min_asr_confidence withholds an agreed passage from a spoken turn the
// recognizer doubts; a typed turn has no recognizer and is not held to it, and neither is a turn
// whose intent the classifier accepted or one the answer caches answer.
TEST(Answerer, DoubtfulTranscriptIsAskedAboutNotAnswered) {
  const std::string agreed = "I want my money back, a refund";
  const std::string refund = "You can return items within 30 days for a refund.";
  auto with_floor = [](bool clarify) {
    return [clarify](AnswererConfig& c) {
      c.clarify.enabled = clarify;
      c.clarify.when = "before_fallback";
      c.kb_direct_agreed_min_asr_confidence = 0.3;
    };
  };
  {
    World w(false, nullptr, with_floor(true));
    CallerSession caller("+15550199");
    AnswerResult r = w.Hear(agreed, 0.1, caller);
    EXPECT_EQ(r.tier, AnswerTierId::kClarify);
    EXPECT_EQ(w.Hear("the first one", 0.9, caller).text, refund);
    // An accepted intent is answered however doubtful the transcript.
    EXPECT_EQ(w.Hear("How long does delivery take?", 0.05, caller).tier,
              AnswerTierId::kKnowledgeBase);
  }
  for (double heard : {0.3, 0.8}) {  // at the floor is enough
    World w(false, nullptr, with_floor(true));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Hear(agreed, heard, caller).text, refund);
  }
  {
    World w(false, nullptr, with_floor(true));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Ask(agreed, caller).text, refund);  // typed
    // Now in the answer caches: the same words, however heard, get the same answer (from the
    // semantic cache, the first cached tier that holds it).
    AnswerResult cached = w.Hear(agreed, 0.1, caller);
    EXPECT_EQ(cached.tier, AnswerTierId::kL2);
    EXPECT_EQ(cached.text, refund);
  }
  {
    World w(false, nullptr, with_floor(false));
    CallerSession caller("+15550199");
    EXPECT_EQ(w.Hear(agreed, 0.1, caller).tier, AnswerTierId::kFallback);
  }
}

TEST(Answerer, AFailingTierFallsThrough) {
  FailingTier broken;
  World w(true, &broken);
  CallerSession caller("+15550199");
  EXPECT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kKnowledgeBase);
  EXPECT_EQ(w.answerer->stats().tier_errors.load(), 1u);
}

TEST(Answerer, CallersBillAmountIsNeverServedToAnotherCallerByAnyTier) {
  World w;
  const std::string kAlicesAmount = "42.17";
  auto contains_amount = [&](const std::string& s) { return s.find(kAlicesAmount) != std::string::npos; };

  // Alice asks for her bill: she is asked for her PIN, then hears her amount.
  CallerSession alice("+15550100");
  AnswerResult r = w.Ask("What was my bill last month?", alice);
  EXPECT_EQ(r.tier, AnswerTierId::kIdentify);
  EXPECT_FALSE(contains_amount(r.text));
  r = w.Ask("four eight two one, 4 8 2 1", alice);
  EXPECT_EQ(r.tier, AnswerTierId::kTool);
  EXPECT_TRUE(r.personal);
  EXPECT_EQ(r.text, "Your bill for November 2026 was $42.17.");
  EXPECT_TRUE(contains_amount(w.Ask("What was my bill last month?", alice).text));
  // Alice asks the model to repeat it: the model sees her history and repeats the amount; the
  // answer is flagged personal because it mentions a value spoken only to her.
  std::vector<ChatMessage> alice_history = {{"user", "What was my bill last month?"},
                                            {"assistant", "Your bill for November 2026 was $42.17."}};
  r = w.Ask("Can you repeat that?", alice, alice_history);
  EXPECT_EQ(r.tier, AnswerTierId::kLlm);
  EXPECT_TRUE(contains_amount(r.text));
  EXPECT_TRUE(r.personal);

  // Bob, identified by keypad, asks the same questions: his own amount or nothing, never Alice's.
  CallerSession bob("+15550101");
  ASSERT_EQ(w.answerer->SubmitPin(bob, "1379").value().tier, AnswerTierId::kIdentify);
  ASSERT_TRUE(bob.identified());
  r = w.Ask("What was my bill last month?", bob);
  EXPECT_EQ(r.text, "Your bill for November 2026 was $93.12.");
  r = w.Ask("Can you repeat that?", bob);
  EXPECT_FALSE(contains_amount(r.text));
  const int llm_calls = w.llm.calls;

  // Someone calling from Alice's number (spoofed caller ID) without her PIN gets nothing.
  CallerSession spoofer("+15550100");
  for (const char* q : {"What was my bill last month?", "What was my bill last month",
                        "Can you repeat that?", "what was my bill last month"}) {
    r = w.Ask(q, spoofer);
    EXPECT_FALSE(contains_amount(r.text)) << q;
    EXPECT_FALSE(r.personal) << q;
  }
  EXPECT_EQ(w.Ask("0000", spoofer).text, AnswererConfig{}.wrong_pin_text);
  EXPECT_FALSE(spoofer.identified());
  EXPECT_GT(w.llm.calls, llm_calls - 1);

  // No shared tier holds the amount.
  for (const auto& [question, answer] : w.l2.learned) EXPECT_FALSE(contains_amount(answer)) << question;
  for (const char* q : {"what was my bill last month", "can you repeat that"}) {
    auto hit = w.l3.Lookup(q).value();
    if (hit) {
      EXPECT_FALSE(contains_amount(hit->text)) << q;
    }
  }
}

TEST(Answerer, KnowledgeBaseUpdateInvalidatesCachedAnswers) {
  World w;
  CallerSession caller("+15550199");
  ASSERT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kKnowledgeBase);
  w.l2.learned.clear();
  ASSERT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kL3);
  ASSERT_TRUE(w.kb->ImportCsv("id,title,intent,body\ndelivery-1,Delivery period,delivery_period,"
                              "Standard delivery now takes 2 business days.\n",
                              "update.csv")
                  .ok());
  w.l2.learned.clear();
  AnswerResult r = w.Ask("How long does delivery take?", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kKnowledgeBase);
  EXPECT_EQ(r.text, "Standard delivery now takes 2 business days.");
  // The unrelated refund answer was not touched by the update.
  ASSERT_EQ(w.Ask("What is the refund policy?", caller).tier, AnswerTierId::kKnowledgeBase);
  w.l2.learned.clear();
  EXPECT_EQ(w.Ask("What is the refund policy?", caller).tier, AnswerTierId::kL3);
}

TEST(Answerer, CachedAnswersCarrySynthesizedAudio) {
  World w;
  CallerSession caller("+15550199");
  AnswerResult r = w.Ask("How long does delivery take?", caller);
  Question q = FakeUnderstand("How long does delivery take?").value();
  ASSERT_TRUE(w.answerer->AttachAudio(q, r, std::string("\x01\x02\x03\x04", 4), "s16le/16000").ok());
  w.l2.learned.clear();
  AnswerResult hit = w.Ask("How long does delivery take?", caller);
  EXPECT_EQ(hit.tier, AnswerTierId::kL3);
  EXPECT_EQ(hit.audio.size(), 4u);
  EXPECT_EQ(hit.audio_format, "s16le/16000");
  AnswerResult personal = r;
  personal.personal = true;
  EXPECT_FALSE(w.answerer->AttachAudio(q, personal, "x", "s16le/16000").ok());
}

TEST(Answerer, StreamsSentencesInOrderForEveryTier) {
  World w;
  CallerSession caller("+15550199");
  std::vector<std::string> heard;
  AnswerOptions options;
  options.on_sentence = [&](std::string_view s) {
    heard.emplace_back(s);
    return true;
  };
  // LLM tier: sentences arrive while the model streams, post-processed one by one.
  auto r = w.answerer->Answer("When are you open?", caller, {}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tier, AnswerTierId::kLlm);
  EXPECT_EQ(heard, (std::vector<std::string>{"We are open nine to five on weekdays.", "Call us any time."}));
  EXPECT_EQ(r->sentences, heard);
  EXPECT_FALSE(r->cancelled);
  ASSERT_TRUE(r->llm.has_value());
  EXPECT_EQ(r->llm->prompt_tokens, 100);
  EXPECT_GT(r->llm->generated_tokens, 10);
  EXPECT_GE(r->first_sentence_ms, 0);
  // Knowledge-base tier: the whole answer, split into sentences at once.
  heard.clear();
  r = w.answerer->Answer("How long does delivery take?", caller, {}, options);
  EXPECT_EQ(r->tier, AnswerTierId::kKnowledgeBase);
  EXPECT_EQ(heard, (std::vector<std::string>{"Standard delivery takes 3 to 5 business days."}));
}

// A model that fails before saying anything leaves the turn to the fallback, marked as a failure
// of ours (degraded) so the call does not ask the caller to rephrase; an unanswerable question
// with the model well is not degraded.
TEST(Answerer, AModelThatFailsIsOwnedUpToNotTakenForAnUnanswerableQuestion) {
  World w;
  CallerSession caller("+15550199");
  w.llm.fail_with = UnavailableError("llm: circuit open");
  AnswerResult r = w.Ask("When are you open?", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kFallback);
  EXPECT_TRUE(r.degraded);
  EXPECT_EQ(w.llm.calls, 1);
  w.llm.fail_with = Status::Ok();
  r = w.Ask("When are you open?", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kLlm) << "the failure was cached";
  EXPECT_FALSE(r.degraded);

  World no_model(/*with_llm=*/false);
  r = no_model.Ask("When are you open?", caller);
  EXPECT_EQ(r.tier, AnswerTierId::kFallback);
  EXPECT_FALSE(r.degraded) << "nothing failed: no tier has the answer";
}

TEST(Answerer, BargeInStopsTheModelAndTheCutAnswerIsNeverCached) {
  World w;
  CallerSession caller("+15550199");
  // The listener stops after the first sentence (barge-in noticed between sentences).
  AnswerOptions options;
  int sentences = 0;
  options.on_sentence = [&](std::string_view) { return ++sentences < 1; };
  auto r = w.answerer->Answer("When are you open?", caller, {}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_EQ(r->text, "We are open nine to five on weekdays.");
  EXPECT_EQ(w.answerer->stats().cancelled.load(), 1u);
  EXPECT_TRUE(w.l2.learned.empty());
  EXPECT_FALSE(w.l3.Lookup("when are you open").value().has_value());
  // A token raised from "another thread" (here: the first sentence) stops the model too.
  CancelToken cancel;
  AnswerOptions by_token;
  by_token.cancel = &cancel;
  by_token.on_sentence = [&](std::string_view) {
    cancel.Cancel();
    return true;
  };
  r = w.answerer->Answer("When are you open?", caller, {}, by_token);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  ASSERT_TRUE(r->llm.has_value());
  EXPECT_EQ(r->llm->finish, llm::FinishReason::kCancelled);
  EXPECT_TRUE(w.l2.learned.empty());
  EXPECT_FALSE(w.l3.Lookup("when are you open").value().has_value());
  // Uncancelled, the same question is answered in full and cached.
  r = w.answerer->Answer("When are you open?", caller);
  EXPECT_FALSE(r->cancelled);
  EXPECT_TRUE(w.l3.Lookup("when are you open").value().has_value());
  EXPECT_EQ(w.llm.calls, 3);
}

TEST(Answerer, PeekAnswersFromSharedCachesWithoutSideEffects) {
  World w;
  CallerSession caller("+15550199");
  EXPECT_FALSE(w.answerer->Peek("How long does delivery take", caller).value().has_value());
  ASSERT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kKnowledgeBase);
  const uint64_t turns = w.answerer->stats().turns.load();
  auto peek = w.answerer->Peek("How long does delivery take", caller).value();
  ASSERT_TRUE(peek.has_value());
  EXPECT_EQ(peek->text, "Standard delivery takes 3 to 5 business days.");
  EXPECT_EQ(w.answerer->stats().turns.load(), turns);
  // A personal request is never peeked, and peeking never starts the PIN dialogue.
  CallerSession alice("+15550100");
  EXPECT_FALSE(w.answerer->Peek("What was my bill last month", alice).value().has_value());
  EXPECT_FALSE(alice.pending().has_value());
  // The draft prompt is what the model gets: system prompt first, the question last.
  auto draft = w.answerer->DraftPrompt("When are you open", caller, {{"user", "hi"}, {"assistant", "Hello."}});
  ASSERT_TRUE(draft.ok());
  ASSERT_EQ(draft->size(), 4u);
  EXPECT_EQ(draft->front().role, "system");
  EXPECT_NE(draft->back().content.find("when are you open"), std::string::npos);
  EXPECT_EQ(w.llm.calls, 0);
  // Prefetch hands exactly that draft to the model.
  ASSERT_TRUE(w.answerer->Prefetch("When are you open", caller, {{"user", "hi"}, {"assistant", "Hello."}}).ok());
  EXPECT_EQ(w.llm.prefetches, 1);
  ASSERT_EQ(w.llm.last_prefetch.size(), draft->size());
  for (size_t i = 0; i < draft->size(); ++i) {
    EXPECT_EQ(w.llm.last_prefetch[i].role, (*draft)[i].role);
    EXPECT_EQ(w.llm.last_prefetch[i].content, (*draft)[i].content);
  }
  EXPECT_EQ(w.llm.calls, 0);
  World no_llm(false);
  EXPECT_TRUE(no_llm.answerer->Prefetch("When are you open", caller, {}).ok());
}

TEST(Answerer, UnderstandsAPartialTheLineWouldActOnThoughNoCacheAnswersIt) {
  World w;
  CallerSession caller("+15550199");
  // An account request: the classifier accepts it, no shared tier ever answers it.
  EXPECT_FALSE(w.answerer->Peek("What was my bill", caller).value().has_value());
  EXPECT_TRUE(w.answerer->Understands("What was my bill", caller).value());
  EXPECT_FALSE(caller.pending().has_value());  // no PIN dialogue started
  // A guess the classifier did not accept, which the knowledge base's best passage agrees with.
  EXPECT_TRUE(w.answerer->Understands("I forgot my password", caller).value());
  // Neither an intent nor a passage the tier would speak: the model's, or nobody's.
  EXPECT_FALSE(w.answerer->Understands("When are you open", caller).value());
  EXPECT_FALSE(w.answerer->Understands("", caller).value());
  EXPECT_EQ(w.answerer->stats().turns.load(), 0u);
  EXPECT_EQ(w.llm.calls, 0);
  // A reply to a clarifying question is the clarification's to read.
  World clarifying(false, nullptr, [](AnswererConfig& c) { c.clarify.enabled = true; });
  ASSERT_EQ(clarifying.Ask("I want my money back", caller).tier, AnswerTierId::kClarify);
  EXPECT_FALSE(clarifying.answerer->Understands("What was my bill", caller).value());
}

TEST(Answerer, ATranscriptTheRecognizerDoubtsIsNotAnsweredOnItsWordsAlone) {
  auto floor = [](AnswererConfig& c) {
    c.accept_min_asr_confidence = 0.3;
    c.kb_direct_agreed_min_asr_confidence = 0.3;
  };
  World w(false, nullptr, floor);
  CallerSession caller("+15550199");
  ASSERT_EQ(w.Ask("How long does delivery take?", caller).tier, AnswerTierId::kKnowledgeBase);
  // Heard well, the cached answer is given; heard with doubt, the caches are not asked (this
  // fake understander has no classifier's guess, so the passage's score alone decides).
  EXPECT_EQ(w.Hear("How long does delivery take?", 0.3, caller).tier, AnswerTierId::kL2);
  EXPECT_EQ(w.Hear("How long does delivery take?", 0.29, caller).tier,
            AnswerTierId::kKnowledgeBase);
  w.l2.learned.clear();
  EXPECT_EQ(w.Hear("How long does delivery take?", 0.9, caller).tier, AnswerTierId::kL3);
  EXPECT_EQ(w.Hear("How long does delivery take?", 0.1, caller).tier, AnswerTierId::kKnowledgeBase);
  // A guess the classifier made is no longer accepted: its agreed passage is held to the floor.
  EXPECT_EQ(w.Hear("I forgot my password", 0.9, caller).tier, AnswerTierId::kKnowledgeBase);
  EXPECT_EQ(w.Hear("I forgot my password", 0.1, caller).tier, AnswerTierId::kFallback);
  // An account request heard with doubt does not start the PIN dialogue.
  CallerSession alice("+15550100");
  EXPECT_NE(w.Hear("What was my bill", 0.1, alice).tier, AnswerTierId::kIdentify);
  EXPECT_FALSE(alice.pending().has_value());
  EXPECT_EQ(w.Hear("What was my bill", 0.9, alice).tier, AnswerTierId::kIdentify);
  // Typed turns have no recognizer to doubt.
  EXPECT_TRUE(w.answerer->TrustsTranscript(std::nullopt));
  EXPECT_FALSE(w.answerer->TrustsTranscript(0.29));
  // With clarification on, the doubted turn is asked about instead.
  World clarifying(false, nullptr, [&](AnswererConfig& c) {
    floor(c);
    c.clarify.enabled = true;
  });
  EXPECT_EQ(clarifying.Hear("I want my money back", 0.1, caller).tier, AnswerTierId::kClarify);
}

TEST(Answerer, ConfigValidation) {
  AnswererConfig c;
  c.tool_intents = {"no_equals_sign"};
  AnswererParts parts;
  parts.understand = FakeUnderstand;
  EXPECT_FALSE(Answerer::Create(c, parts).ok());
  EXPECT_FALSE(Answerer::Create(AnswererConfig{}, AnswererParts{}).ok());  // no understander
  AnswererConfig scores;
  scores.kb_direct_agreed_min_score = -1;
  auto r = Answerer::Create(scores, parts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kb_direct_agreed_min_score"), std::string::npos);
  scores.kb_direct_agreed_min_score = std::nan("");
  EXPECT_FALSE(Answerer::Create(scores, parts).ok());
  scores.kb_direct_agreed_min_score = 1e9;  // off
  EXPECT_TRUE(Answerer::Create(scores, parts).ok());
  scores.kb_direct_agreed_min_margin = 1.5;
  r = Answerer::Create(scores, parts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kb_direct_agreed_min_margin"), std::string::npos);
  scores.kb_direct_agreed_min_margin = 0.2;
  scores.kb_direct_agreed_min_asr_confidence = -0.1;
  r = Answerer::Create(scores, parts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kb_direct_agreed_min_asr_confidence"), std::string::npos);
  scores.kb_direct_agreed_min_asr_confidence = 0.3;
  scores.clarify.when = "sometimes";
  r = Answerer::Create(scores, parts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("before_fallback"), std::string::npos);
}

}  // namespace
}  // namespace hotline::answer
