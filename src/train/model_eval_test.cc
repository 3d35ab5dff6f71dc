#include "train/model_eval.h"

#include <gtest/gtest.h>

#include <map>

namespace hotline::train {
namespace {

TEST(ModelEval, WordsAreLowerCaseWithInnerApostrophes) {
  EXPECT_EQ(EvalWords("Don't STOP, it's 3pm! 'quoted'"),
            (std::vector<std::string>{"don't", "stop", "it's", "3pm", "quoted"}));
  EXPECT_TRUE(EvalWords(" ,.!? ").empty());
  EXPECT_EQ(EvalWords("a b c d e", 3).size(), 3u);
}

TEST(ModelEval, RougeLOnHandMadeCases) {
  // LCS "the cat on the mat" = 5 of 6 words on both sides.
  RougeL r = RougeLScore("the cat sat on the mat", "The cat is on the mat.");
  EXPECT_NEAR(r.precision, 5.0 / 6, 1e-12);
  EXPECT_NEAR(r.recall, 5.0 / 6, 1e-12);
  EXPECT_NEAR(r.f1, 5.0 / 6, 1e-12);
  // Different lengths: LCS "cancel your order" = 3; P = 3/3, R = 3/6, F1 = 2/3.
  r = RougeLScore("cancel your order", "you can cancel your order online");
  EXPECT_NEAR(r.precision, 1.0, 1e-12);
  EXPECT_NEAR(r.recall, 0.5, 1e-12);
  EXPECT_NEAR(r.f1, 2.0 / 3, 1e-12);
  // A subsequence, not a bag of words: reversed order keeps one word in common.
  r = RougeLScore("order your cancel", "cancel your order");
  EXPECT_NEAR(r.f1, 1.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(RougeLScore("Same words.", "same WORDS").f1, 1.0);
  EXPECT_DOUBLE_EQ(RougeLScore("nothing shared", "completely different").f1, 0.0);
  EXPECT_DOUBLE_EQ(RougeLScore("", "").f1, 1.0);
  EXPECT_DOUBLE_EQ(RougeLScore("", "a reference").f1, 0.0);
  EXPECT_DOUBLE_EQ(RougeLScore("an answer", "").f1, 0.0);
}

TEST(ModelEval, RepetitionDetectorFindsLoopsAndPassesNormalAnswers) {
  Repetition r = FindRepetition(
      "You can cancel your order online. You can cancel your order online. You can");
  EXPECT_TRUE(r.repeats);
  EXPECT_EQ(r.ngram, "you can cancel your");
  EXPECT_EQ(r.occurrences, 2);
  // A token loop with no punctuation at all.
  r = FindRepetition("order order order order order order");
  EXPECT_TRUE(r.repeats);
  EXPECT_EQ(r.ngram, "order order order order");
  EXPECT_EQ(r.occurrences, 3);
  // Normal answers repeat short phrases, not 4-grams.
  EXPECT_FALSE(FindRepetition("We are committed to helping you successfully cancel your order.")
                   .repeats);
  EXPECT_FALSE(FindRepetition("Check your order on our website, and your order number too.")
                   .repeats);
  EXPECT_TRUE(FindRepetition("Check your order on our website, and your order number too.",
                             {.ngram = 2})
                  .repeats);
  EXPECT_FALSE(FindRepetition("too short").repeats);
  EXPECT_FALSE(FindRepetition("").repeats);
}

TEST(ModelEval, ParsesTheHeldOutFileAndRejectsMalformedLines) {
  auto ok = ParseHeldOutTsv("question\tintent\tanswer\nq one\tcancel_order\tA one.\r\n\nq two\t"
                            "track_order\tA two.\n");
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].question, "q one");
  EXPECT_EQ((*ok)[0].intent, "cancel_order");
  EXPECT_EQ((*ok)[0].answer, "A one.");
  EXPECT_EQ((*ok)[1].answer, "A two.");

  EXPECT_FALSE(ParseHeldOutTsv("q\ti\ta\nx\ty\tz\n").ok());  // no header
  auto bad = ParseHeldOutTsv("question\tintent\tanswer\nq\ti\ta\nonly\ttwo\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 3"), std::string::npos) << bad.status();
  EXPECT_FALSE(ParseHeldOutTsv("question\tintent\tanswer\nq\t \ta\n").ok());
  EXPECT_FALSE(ParseHeldOutTsv("question\tintent\tanswer\n").ok());
  EXPECT_FALSE(ParseHeldOutTsv("question\tintent\tanswer\nq\ti\t" + std::string(20000, 'a')).ok());
}

// Three intents with a few hand-written questions each, and one knowledge-base answer each.
struct Fixture {
  std::unique_ptr<answer::IntentClassifier> classifier;
  std::vector<answer::Article> articles;
};

const Fixture& Judges() {
  static const Fixture* f = [] {
    auto* out = new Fixture();
    const std::map<std::string, std::vector<std::string>> questions = {
        {"cancel_order",
         {"cancel my order", "i want to cancel an order", "how do i cancel the order",
          "please cancel order 123", "can you cancel my purchase", "stop my order",
          "cancel the thing i ordered", "i need to cancel an order now"}},
        {"track_order",
         {"where is my order", "track my order", "when will my package arrive",
          "status of my delivery", "has my order shipped", "where is my parcel",
          "track the package i ordered", "delivery status please"}},
        {"payment_methods",
         {"what payment methods do you accept", "can i pay with paypal", "do you take visa",
          "which cards can i use", "payment options", "can i pay by bank transfer",
          "is apple pay accepted", "how can i pay"}}};
    std::vector<answer::IntentExample> ex;
    for (const auto& [intent, qs] : questions) {
      for (const std::string& q : qs) ex.push_back({q, intent});
    }
    answer::IntentClassifierConfig c;
    c.calibration_folds = 2;
    c.min_calibration_accepted = 1;
    c.target_precision = 0.9;
    c.threads = 1;
    auto clf = answer::IntentClassifier::Train(ex, c);
    if (clf.ok()) out->classifier = std::move(*clf);
    out->articles = {
        {"a1", "Cancel", "You can cancel your order on our website under order history.",
         "cancel_order", "", "", 0},
        {"a2", "Track", "Track your package delivery status on our website with your tracking "
                        "number.",
         "track_order", "", "", 0},
        {"a3", "Pay", "We accept Visa, Mastercard, PayPal and bank transfer payments.",
         "payment_methods", "", "", 0},
        {"a4", "No intent", "An article without an intent is not an answer to judge.", "", "",
         "", 0}};
    return out;
  }();
  return *f;
}

TEST(ModelEval, JudgesNameTheIntentOfAnAnswer) {
  const Fixture& f = Judges();
  ASSERT_NE(f.classifier, nullptr);
  auto judge = AnswerIntentJudge::Create(*f.classifier, f.articles);
  ASSERT_TRUE(judge.ok()) << judge.status();
  auto v = (*judge)->Judge("You can cancel your order under order history on our website.");
  EXPECT_EQ(v.kb_intent, "cancel_order");
  EXPECT_EQ(v.kb_article_id, "a1");
  EXPECT_GT(v.kb_similarity, 0.5);
  EXPECT_EQ(v.classifier_intent, "cancel_order");
  v = (*judge)->Judge("We accept PayPal and Visa.");
  EXPECT_EQ(v.kb_intent, "payment_methods");
  EXPECT_EQ(v.classifier_intent, "payment_methods");
  v = (*judge)->Judge("");
  EXPECT_EQ(v.kb_intent, "");
  EXPECT_EQ(v.kb_similarity, 0.0);

  EXPECT_FALSE(AnswerIntentJudge::Create(*f.classifier, {f.articles[3]}).ok());
}

// Answers by the question text of the last user message; records the prompts it saw.
class ScriptedModel : public llm::LanguageModel {
 public:
  struct Reply {
    std::string text;
    llm::FinishReason finish = llm::FinishReason::kStop;
    bool fail = false;
  };
  explicit ScriptedModel(std::map<std::string, Reply> replies) : replies_(std::move(replies)) {}
  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& req,
                                      const llm::TextCallback& on_text) override {
    requests.push_back(req);
    const std::string& user = req.messages.back().content;
    auto it = replies_.find(user.substr(std::string("Question: ").size()));
    if (it == replies_.end() || it->second.fail) return UnavailableError("model down");
    // Two deltas, as a streaming backend would send them.
    const std::string& t = it->second.text;
    on_text(t.substr(0, t.size() / 2));
    on_text(t.substr(t.size() / 2));
    llm::GenerateStats s;
    s.finish = it->second.finish;
    s.generated_tokens = static_cast<int>(EvalWords(t).size());
    return s;
  }
  int CountTokens(std::string_view text) const override { return int(text.size() / 4) + 1; }
  std::string name() const override { return "scripted"; }
  std::vector<llm::GenerateRequest> requests;

 private:
  std::map<std::string, Reply> replies_;
};

TEST(ModelEval, ReportCountsEveryFigureFromTheModelsAnswers) {
  const Fixture& f = Judges();
  ASSERT_NE(f.classifier, nullptr);
  auto judge = AnswerIntentJudge::Create(*f.classifier, f.articles);
  ASSERT_TRUE(judge.ok());
  const std::string cancel = "You can cancel your order on our website under order history.";
  const std::string track =
      "Track your package delivery status on our website with your tracking number.";
  const std::string pay = "We accept Visa, Mastercard, PayPal and bank transfer payments.";
  const std::vector<SupportExample> heldout = {
      {"cancel order 5", cancel, "cancel_order"},     // exact
      {"where is my parcel now", track, "track_order"},  // right intent, reworded
      {"do you take cards", pay, "payment_methods"},  // wrong intent (the cancel answer)
      {"cancel it please", cancel, "cancel_order"},   // loops until max tokens
      {"track it", track, "track_order"},             // the model fails
  };
  ScriptedModel model({
      {"cancel order 5", {cancel}},
      {"where is my parcel now", {"Your package delivery status is on our website."}},
      {"do you take cards", {cancel}},
      {"cancel it please",
       {"You can cancel your order. You can cancel your order. You can cancel",
        llm::FinishReason::kLength}},
      {"track it", {"", llm::FinishReason::kStop, /*fail=*/true}},
  });
  ModelEvalOptions opt;
  opt.prompt.system_prompt = "Be brief.";
  opt.max_tokens = 20;
  auto rep = EvaluateModel(model, heldout, **judge, opt);
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->examples, 5u);
  EXPECT_EQ(rep->exact, 1u);
  EXPECT_EQ(rep->errors, 1u);
  EXPECT_EQ(rep->repeats, 1u);
  EXPECT_EQ(rep->hit_max_tokens, 1u);
  EXPECT_EQ(rep->loops, 1u);  // the same answer repeats and hits max tokens
  EXPECT_EQ(rep->intent_kb_correct, 3u);  // exact, reworded, looping cancel answer
  EXPECT_EQ(rep->reference_kb_correct, 5u);
  size_t agree = 0;
  for (size_t i = 0; i < heldout.size(); ++i) {
    agree += rep->items[i].error.empty() &&
             rep->items[i].verdict.classifier_intent ==
                 (*judge)->Judge(heldout[i].answer).classifier_intent;
  }
  EXPECT_EQ(rep->classifier_agrees_with_reference, agree);
  EXPECT_GE(agree, 1u);  // the exact answer at least
  EXPECT_EQ(rep->reference_repeats, 0u);
  // ROUGE-L: 1 (exact), > 0.5 (reworded), the wrong answer and the error score low.
  EXPECT_EQ(rep->items[0].rouge.f1, 1.0);
  EXPECT_GT(rep->items[1].rouge.f1, 0.5);
  EXPECT_LT(rep->items[2].rouge.f1, 0.5);
  EXPECT_EQ(rep->items[4].rouge.f1, 0.0);
  EXPECT_NE(rep->items[4].error.find("model down"), std::string::npos);
  double sum = 0;
  size_t at = 0;
  for (const auto& it : rep->items) {
    sum += it.rouge.f1;
    at += it.error.empty() && it.rouge.f1 >= 0.5;
  }
  EXPECT_NEAR(rep->rouge_l_f1_mean, sum / 5, 1e-12);
  EXPECT_EQ(rep->rouge_at_threshold, at);
  // Every request is the call's prompt, greedy, bounded by max_tokens.
  ASSERT_EQ(model.requests.size(), 5u);
  for (const auto& r : model.requests) {
    ASSERT_EQ(r.messages.size(), 2u);
    EXPECT_EQ(r.messages[0].role, "system");
    EXPECT_EQ(r.messages[0].content, "Be brief.");
    EXPECT_EQ(r.messages[1].role, "user");
    EXPECT_EQ(r.temperature, 0.0f);
    EXPECT_EQ(r.max_tokens, 20);
  }
  EXPECT_EQ(model.requests[0].messages[1].content, "Question: cancel order 5");

  opt.limit = 2;
  rep = EvaluateModel(model, heldout, **judge, opt);
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->examples, 2u);
  // Nothing to evaluate, or nothing but failures, is an error.
  EXPECT_FALSE(EvaluateModel(model, {}, **judge, opt).ok());
  EXPECT_FALSE(EvaluateModel(model, {heldout[4]}, **judge, {}).ok());
}

}  // namespace
}  // namespace hotline::train
