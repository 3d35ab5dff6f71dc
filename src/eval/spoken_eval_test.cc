#include "eval/spoken_eval.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/build_paths.h"
#include "eval/speech_cache.h"

namespace hotline::eval {
namespace {

TEST(SpokenEval, DeclaresTuningAndReportVoices) {
  auto report = ParseVoices("report");
  ASSERT_TRUE(report.ok());
  for (const Voice& v : *report) EXPECT_TRUE(v.report_only) << v.id();
  auto tuning = ParseVoices("tuning");
  ASSERT_TRUE(tuning.ok());
  for (const Voice& v : *tuning) EXPECT_FALSE(v.report_only) << v.id();
  EXPECT_EQ(report->size() + tuning->size(), DefaultVoices().size());
  auto listed = ParseVoices("flite/cmu_us_slt,espeak-ng/en-gb-x-rp,flite/cmu_us_kal");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_FALSE((*listed)[0].report_only);
  EXPECT_TRUE((*listed)[1].report_only);
  EXPECT_TRUE((*listed)[2].report_only);  // not declared: never used for tuning
  EXPECT_FALSE(ParseVoices("slt").ok());
  EXPECT_FALSE(ParseVoices("festival/kal").ok());
  auto written = ParseVoices(std::string(kWrittenLine) + ",flite/cmu_us_rms");
  ASSERT_TRUE(written.ok()) << written.status().message();
  ASSERT_EQ(written->size(), 2u);
  EXPECT_TRUE((*written)[0].written());
  EXPECT_FALSE((*written)[0].report_only);
  EXPECT_FALSE((*written)[1].written());
  EXPECT_FALSE(ParseVoices("text/spoken").ok());
  auto mixed = ParseVoices(std::string(kWrittenLine) + ",report");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->size(), 1 + report->size());
}

TEST(SpokenEval, SamplesEvenlyOverTheSet) {
  std::vector<answer::LabelledText> v;
  for (int i = 0; i < 10; ++i) v.push_back({std::to_string(i), "x"});
  auto s = EvenSample(v, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].text, "0");
  EXPECT_EQ(s[1].text, "3");
  EXPECT_EQ(s[2].text, "6");
  EXPECT_EQ(EvenSample(v, 0).size(), 10u);
}

TEST(SpokenEval, ReadsHeldOutAndEverydayQuestionFiles) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream f(dir + "/heldout.tsv");
    f << "question\tintent\tanswer\ncancel my order\tcancel_order\tWe will.\n";
  }
  {
    std::ofstream f(dir + "/everyday.tsv");
    f << "# domain\tquestion\texpected topic\nretail\twhere is my parcel\ttracking\n"
      << "oos\twhat is the weather\tout of scope\n";
  }
  auto h = LoadQuestionTsv(dir + "/heldout.tsv", "h");
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->questions.size(), 1u);
  EXPECT_EQ(h->questions[0].label, "cancel_order");
  auto e = LoadQuestionTsv(dir + "/everyday.tsv", "e");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->questions.size(), 2u);
  EXPECT_EQ(e->questions[0].text, "where is my parcel");
  EXPECT_EQ(e->questions[0].label, "");
  EXPECT_EQ(e->questions[1].label, kOutOfScope);
  std::ofstream(dir + "/bad.tsv") << "text\tlabel\nx\ty\n";
  EXPECT_FALSE(LoadQuestionTsv(dir + "/bad.tsv", "b").ok());
}

TEST(SpeechCache, KeepsSynthesizedSpeechBetweenRuns) {
  const std::string dir = ::testing::TempDir() + "/speech_cache_" + std::to_string(getpid());
  tts::TtsConfig tc;
  tc.backend = "flite";
  tc.flite.voice = "cmu_us_kal16";
  auto synth = tts::CreateSynthesizer(tc);
  ASSERT_TRUE(synth.ok());
  SpeechCache first(dir);
  auto a = first.Get(**synth, "hello there");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(first.misses(), 1u);
  SpeechCache second(dir);
  auto b = second.Get(**synth, "hello there");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(second.hits(), 1u);
  EXPECT_EQ(b->samples, a->samples);
  EXPECT_NE(second.PathFor((*synth)->voice_id(), "hello there"),
            second.PathFor((*synth)->voice_id(), "hello there!"));
  std::filesystem::remove_all(dir);
}

// The whole chain on the banking line: speech -> μ-law line -> pocketsphinx with the call's
// language model -> the answer chain; a plain question is answered from its article and an
// out-of-scope one falls back.
TEST(SpokenEval, AnswersSpokenQuestionsThroughTheCallStack) {
  pipeline::CallStackOptions o;
  o.kb_db = ::testing::TempDir() + "/spoken_eval_" + std::to_string(getpid()) + ".sqlite";
  o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/banking/kb.csv";
  o.answer.intent_templates.clear();
  o.audio_cache = false;
  o.call.workers = 1;
  o.call.answer_workers = 1;
  auto stack = pipeline::CallStack::Build(o);
  ASSERT_TRUE(stack.ok()) << stack.status().message();
  std::vector<QuestionSet> sets = {
      {"plain",
       {{"i lost my card", "lost_or_stolen_card"}, {"who won the football game", kOutOfScope}}}};
  SpokenEvalOptions eo;
  eo.voices = {{"flite", "cmu_us_rms", true}};
  eo.snrs_db = {kCleanLine, 20};
  eo.cache_dir = ::testing::TempDir() + "/spoken_eval_cache_" + std::to_string(getpid());
  auto r = RunSpokenEval(**stack, sets, tts::TtsConfig{}, eo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cells.size(), 2u);
  const SpokenCell& clean = r->cells[0];
  EXPECT_EQ(clean.questions, 2u);
  EXPECT_EQ(clean.in_scope, 1u);
  ASSERT_EQ(clean.items.size(), 2u);
  EXPECT_EQ(clean.items[0].outcome, ItemOutcome::kRight)
      << clean.items[0].heard << " / " << clean.items[0].tier;
  EXPECT_EQ(clean.items[0].heard_intent, "lost_or_stolen_card");
  EXPECT_LT(clean.items[0].wer, 0.5);
  EXPECT_GT(clean.final_p50_ms, 0);
  // Speech is synthesized once per question, then read back for the noisy line.
  EXPECT_EQ(r->synthesized, 2u);
  EXPECT_EQ(r->cached, 2u);
  const std::string table = FormatSpokenTable(*r);
  EXPECT_NE(table.find("flite/cmu_us_rms"), std::string::npos);
  EXPECT_NE(table.find("20 dB"), std::string::npos);
  EXPECT_NE(SpokenReportJson(*r, true).find("\"outcome\""), std::string::npos);
  stack->reset();
  std::filesystem::remove_all(eo.cache_dir);
  for (const char* s : {"", ".lm", ".lm.dict"}) std::filesystem::remove(o.kb_db + s);
}

// The written line skips synthesis and recognition; a turn the classifier is unsure of gets a
// clarifying question, and the cooperative caller's reply is answered in the same call.
TEST(SpokenEval, WrittenLineAndClarifiedTurns) {
  pipeline::CallStackOptions o;
  o.kb_db = ::testing::TempDir() + "/spoken_eval_w_" + std::to_string(getpid()) + ".sqlite";
  o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/banking/kb.csv";
  o.answer.intent_templates.clear();
  o.answer.clarify.enabled = true;
  o.answer.clarify.confirm_min_probability = 0;  // every unsure turn is confirmed or chosen
  o.audio_cache = false;
  o.call.workers = 1;
  o.call.answer_workers = 1;
  auto stack = pipeline::CallStack::Build(o);
  ASSERT_TRUE(stack.ok()) << stack.status().message();
  std::vector<QuestionSet> sets = {{"w",
                                    {{"I lost my card!", "lost_or_stolen_card"},
                                     {"card", "card_arrival"},
                                     {"my money", "balance_not_updated_after_bank_transfer"}}}};
  SpokenEvalOptions eo;
  eo.voices = {{"text", "written", false}};
  eo.snrs_db = {kCleanLine, 20};  // the written line has one condition only
  eo.cache_dir = "";
  auto r = RunSpokenEval(**stack, sets, tts::TtsConfig{}, eo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cells.size(), 1u);
  const SpokenCell& c = r->cells[0];
  EXPECT_EQ(r->synthesized + r->cached, 0u);
  EXPECT_EQ(c.wer.rate(), 0);
  ASSERT_EQ(c.items.size(), 3u);
  EXPECT_EQ(c.items[0].heard, "i lost my card");
  EXPECT_EQ(c.items[0].outcome, ItemOutcome::kRight) << c.items[0].tier;
  size_t clarified = 0;
  for (const SpokenItem& i : c.items) {
    if (i.outcome != ItemOutcome::kClarified) {
      EXPECT_TRUE(i.reply.empty());
      continue;
    }
    ++clarified;
    EXPECT_FALSE(i.reply.empty()) << i.question;
    EXPECT_NE(i.after_clarification, ItemOutcome::kNone) << i.question;
    // A caller who said which topic was theirs gets its article.
    if (i.reply != "no" && i.reply != "neither") {
      EXPECT_EQ(i.after_clarification, ItemOutcome::kRight);
    }
  }
  EXPECT_GE(clarified, 1u);
  EXPECT_EQ(c.clarified, clarified);
  EXPECT_EQ(c.right + c.wrong + c.fallback + c.clarified, c.questions);
  EXPECT_NE(FormatSpokenTable(*r).find("text/written"), std::string::npos);
  stack->reset();
  for (const char* s : {"", ".lm", ".lm.dict"}) std::filesystem::remove(o.kb_db + s);
}

// With the run keeping the answer chain's time, a question asked twice in one cell is answered
// from the cache the second time, and the next cell starts with empty caches: the same question
// comes from the knowledge base again, whichever cell ran before.
TEST(SpokenEval, EveryCellStartsWithEmptyAnswerCaches) {
  FakeClock clock;
  pipeline::CallStackOptions o;
  o.kb_db = ::testing::TempDir() + "/spoken_eval_c_" + std::to_string(getpid()) + ".sqlite";
  o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/banking/kb.csv";
  o.answer.intent_templates.clear();
  o.audio_cache = false;
  o.call.workers = 1;
  o.call.answer_workers = 1;
  o.answer_clock = &clock;
  // L1's templates are not cached answers: the knowledge base speaks its best passage instead.
  o.answer.use_intent_cache = false;
  o.answer.kb_direct_requires_intent_match = false;
  o.answer.kb_direct_min_score = 0;
  auto stack = pipeline::CallStack::Build(o);
  ASSERT_TRUE(stack.ok()) << stack.status().message();
  const answer::LabelledText lost = {"i lost my card", "lost_or_stolen_card"};
  std::vector<QuestionSet> sets = {{"first", {lost, lost}}, {"second", {lost}}};
  SpokenEvalOptions eo;
  eo.voices = {{"text", "written", false}};
  eo.cache_dir = "";
  eo.answer_clock = &clock;
  auto r = RunSpokenEval(**stack, sets, tts::TtsConfig{}, eo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cells.size(), 2u);
  ASSERT_EQ(r->cells[0].items.size(), 2u);
  ASSERT_EQ(r->cells[1].items.size(), 1u);
  EXPECT_EQ(r->cells[0].items[0].tier, "kb");
  EXPECT_EQ(r->cells[0].items[1].tier, "l2");
  EXPECT_EQ(r->cells[1].items[0].tier, "kb");
  for (const SpokenCell& c : r->cells) {
    for (const SpokenItem& i : c.items)
      EXPECT_EQ(i.outcome, ItemOutcome::kRight) << c.set << " " << i.tier;
  }
  stack->reset();
  for (const char* s : {"", ".lm", ".lm.dict"}) std::filesystem::remove(o.kb_db + s);
}

}  // namespace
}  // namespace hotline::eval
