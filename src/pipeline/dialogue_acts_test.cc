#include "pipeline/dialogue_acts.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "answer/eval/eval_data.h"
#include "common/build_paths.h"
#include "pipeline/call_session.h"

namespace hotline::pipeline {
namespace {

DialogueAct Read(const std::string& text, DialogueState state = {}) {
  return ReadDialogueAct(CallConfig{}, PhraseText(text), state);
}

TEST(DialogueActs, GoodbyesEndTheCallUnlessNegatedOrAsked) {
  for (const char* t : {"Bye.", "Okay, bye!", "Thanks so much, bye now.", "That's all, thank you.",
                        "No, that's it, thanks.", "It was lovely to speak with you, bye bye.",
                        "Have a nice day.", "Great, that's everything I needed, goodbye."}) {
    EXPECT_EQ(Read(t), DialogueAct::kGoodbye) << t;
  }
  for (const char* t : {"Please don't hang up.", "Why did you hang up on me?", "Is that all?",
                        "Bye, and where is my order?", "How do I say goodbye to my old plan?",
                        "That's it?", "I never said goodbye."}) {
    EXPECT_NE(Read(t), DialogueAct::kGoodbye) << t;
  }
}

TEST(DialogueActs, AgentRequestsAreRequestsForAPerson) {
  for (const char* t : {"Agent.", "Representative, please.", "Can I talk to an agent, please?",
                        "I need to speak to a real person.", "Put me through to an agent.",
                        "I don't know how to reach an agent.", "Let me talk to somebody."}) {
    EXPECT_EQ(Read(t), DialogueAct::kAgent) << t;
  }
  for (const char* t :
       {"I don't want an agent.", "My travel agent booked the trip.", "Agents of change.",
        "What does human resources do?", "Send money to someone.",
        "I sent the deposit over to the agent but the transfer keeps failing with an error."}) {
    EXPECT_NE(Read(t), DialogueAct::kAgent) << t;
  }
}

TEST(DialogueActs, SocialTurnsAreReadOnlyWhenNothingElseIsAsked) {
  EXPECT_EQ(Read("Are you a real person?"), DialogueAct::kAskIfMachine);
  EXPECT_EQ(Read("Am I talking to a robot?"), DialogueAct::kAskIfMachine);
  EXPECT_EQ(Read("Is this a recording?"), DialogueAct::kAskIfMachine);
  EXPECT_EQ(Read("Sorry, can you say that again?"), DialogueAct::kRepeat);
  EXPECT_EQ(Read("What?"), DialogueAct::kRepeat);
  EXPECT_EQ(Read("I didn't catch that."), DialogueAct::kRepeat);
  EXPECT_EQ(Read("Thank you so much."), DialogueAct::kThanks);
  EXPECT_EQ(Read("Thanks for the help!"), DialogueAct::kThanks);
  EXPECT_EQ(Read("Hello? Are you there?"), DialogueAct::kHello);
  EXPECT_EQ(Read("Hi there."), DialogueAct::kHello);
  for (const char* t : {"Repeat my last order.", "Thanks, but my card still doesn't work.",
                        "Hi, I want to check my bill.", "What is my balance?",
                        "Can a real person open an account for me?"}) {
    EXPECT_EQ(Read(t), DialogueAct::kNone) << t;
  }
  EXPECT_EQ(Read(""), DialogueAct::kNone);
}

TEST(DialogueActs, NoToAnythingElseEndsTheCallOnlyAfterTheQuestion) {
  const DialogueState asked{.asked_anything_else = true};
  for (const char* t : {"No.", "No thanks.", "Nope, I'm good.", "Not really.", "I'm all set."}) {
    EXPECT_EQ(Read(t, asked), DialogueAct::kGoodbye) << t;
  }
  EXPECT_NE(Read("No.", {}), DialogueAct::kGoodbye);
  EXPECT_EQ(Read("No, what is my balance?", asked), DialogueAct::kNone);
}

TEST(DialogueActs, ConfiguredPhrasesAndOtherScriptsKeepPhraseMatching) {
  CallConfig call;
  call.goodbye_phrases = {"再见", "cheerio"};
  call.agent_phrases = {"转人工"};
  EXPECT_EQ(ReadDialogueAct(call, PhraseText("好的，再见！")), DialogueAct::kGoodbye);
  EXPECT_EQ(ReadDialogueAct(call, PhraseText("你好我想转人工服务")), DialogueAct::kAgent);
  EXPECT_EQ(ReadDialogueAct(call, PhraseText("再见到你真好")), DialogueAct::kNone);
  EXPECT_EQ(ReadDialogueAct(call, PhraseText("Right, cheerio!")), DialogueAct::kGoodbye);
  EXPECT_EQ(ReadDialogueAct(call, PhraseText("Bye!")), DialogueAct::kNone);  // not configured
  EXPECT_TRUE(ClosesCall(call, PhraseText("我要转人工")));
  EXPECT_FALSE(ClosesCall(call, PhraseText("Thank you.")));
}

// ---- measured on question sets no rule was written from --------------------------------------
//
// The word lists were written from CLINC150's train and val splits, Bitext's even rows and
// Banking77's train split. This test reads the others: CLINC150 test + oos_test, Bitext's odd
// rows, Banking77 test; and the team's own everyday phrases, written before any figure was seen.
// It prints each act's recall and the turns wrongly read as an act, and fails on a regression
// past the floors below (the figures of 2026-12-07 with some room).

struct Tally {
  int positives = 0, hits = 0, false_acts = 0, questions = 0;
};

std::map<std::string, DialogueAct> ActOfIntent() {
  return {{"goodbye", DialogueAct::kGoodbye}, {"thank_you", DialogueAct::kThanks},
          {"greeting", DialogueAct::kHello},  {"are_you_a_bot", DialogueAct::kAskIfMachine},
          {"repeat", DialogueAct::kRepeat},   {"contact_human_agent", DialogueAct::kAgent}};
}

std::map<DialogueAct, Tally> Measure(const std::vector<answer::LabelledText>& set,
                                     int* false_acts) {
  std::map<DialogueAct, Tally> by_act;
  const auto acts = ActOfIntent();
  *false_acts = 0;
  for (const auto& q : set) {
    const DialogueAct got = Read(q.text);
    const auto it = acts.find(q.label);
    const DialogueAct want = it == acts.end() ? DialogueAct::kNone : it->second;
    if (want != DialogueAct::kNone) {
      ++by_act[want].positives;
      if (got == want) ++by_act[want].hits;
    }
    if (got != DialogueAct::kNone && got != want) {
      ++by_act[got].false_acts;
      ++*false_acts;
    }
  }
  return by_act;
}

void Print(const std::string& name, size_t n, const std::map<DialogueAct, Tally>& by_act,
           int false_acts) {
  std::printf("%s (%zu questions): wrongly read as an act %d\n", name.c_str(), n, false_acts);
  for (const auto& [act, t] : by_act) {
    std::printf("  %-15s recall %d/%d, wrongly %d\n", std::string(DialogueActName(act)).c_str(),
                t.hits, t.positives, t.false_acts);
  }
}

TEST(DialogueActsMeasured, HeldOutQuestionSets) {
  const std::string data = HOTLINE_SHARED_DATA_DIR;
  const std::string clinc = data + "/intent/clinc150/data_full.json";
  const std::string banking = data + "/intent/banking77/test.csv";
  const std::string bitext = data + "/support/bitext/customer_support.csv";
  for (const std::string& f : {clinc, banking, bitext}) {
    if (!std::filesystem::exists(f)) GTEST_SKIP() << f << " is missing (the shared data sets)";
  }
  auto clinc_test = answer::LoadLabelledTexts(clinc, "test");
  auto clinc_oos = answer::LoadLabelledTexts(clinc, "oos_test");
  auto banking_test = answer::LoadLabelledTexts(banking, "");
  auto bitext_all = answer::LoadLabelledTexts(bitext, "");
  ASSERT_TRUE(clinc_test.ok() && clinc_oos.ok() && banking_test.ok() && bitext_all.ok());
  clinc_test->insert(clinc_test->end(), clinc_oos->begin(), clinc_oos->end());
  std::vector<answer::LabelledText> bitext_odd;
  for (size_t i = 1; i < bitext_all->size(); i += 2) bitext_odd.push_back((*bitext_all)[i]);

  int false_acts = 0;
  auto c = Measure(*clinc_test, &false_acts);
  Print("CLINC150 test + oos_test", clinc_test->size(), c, false_acts);
  EXPECT_LE(false_acts, 15);                          // 7 of 5,500 on 2026-12-07
  EXPECT_GE(c[DialogueAct::kGoodbye].hits, 12);       // 16 of 30
  EXPECT_GE(c[DialogueAct::kRepeat].hits, 18);        // 22 of 30
  EXPECT_GE(c[DialogueAct::kAskIfMachine].hits, 10);  // 14 of 30

  auto b = Measure(*banking_test, &false_acts);
  Print("Banking77 test", banking_test->size(), b, false_acts);
  EXPECT_LE(false_acts, 2);  // 0 of 3,080

  auto x = Measure(bitext_odd, &false_acts);
  Print("Bitext odd rows", bitext_odd.size(), x, false_acts);
  EXPECT_LE(false_acts, 3);
  EXPECT_GE(x[DialogueAct::kAgent].hits * 100, x[DialogueAct::kAgent].positives * 75);
}

TEST(DialogueActsMeasured, EverydayPhrasesOfOurOwn) {
  // Written before any rule was run on anything; never used to change a rule.
  const std::vector<std::pair<const char*, DialogueAct>> phrases = {
      {"ok thanks so much, bye now", DialogueAct::kGoodbye},
      {"alright that's everything, goodbye", DialogueAct::kGoodbye},
      {"thank you, have a nice day, bye", DialogueAct::kGoodbye},
      {"great, that's all I needed", DialogueAct::kGoodbye},
      {"no that's it thanks bye", DialogueAct::kGoodbye},
      {"cheers, talk soon", DialogueAct::kGoodbye},
      {"i'm done, thank you", DialogueAct::kGoodbye},
      {"perfect, bye", DialogueAct::kGoodbye},
      {"please don't hang up", DialogueAct::kNone},
      {"why did you hang up on me yesterday", DialogueAct::kNone},
      {"wait don't hang up i still have a question", DialogueAct::kNone},
      {"is that all i need to do", DialogueAct::kNone},
      {"how do i say goodbye to my old account", DialogueAct::kNone},
      {"the line keeps dropping, it hangs up", DialogueAct::kNone},
      {"can you put me through to someone", DialogueAct::kAgent},
      {"i'd like a real human please", DialogueAct::kAgent},
      {"transfer me to a representative", DialogueAct::kAgent},
      {"get me an operator", DialogueAct::kAgent},
      {"i want to talk to a person", DialogueAct::kAgent},
      {"agent", DialogueAct::kAgent},
      {"let me speak to your manager", DialogueAct::kAgent},
      {"no i don't need an agent", DialogueAct::kNone},
      {"my travel agent booked it", DialogueAct::kNone},
      {"is the operator fee included", DialogueAct::kNone},
      {"what does the human resources department do", DialogueAct::kNone},
      {"you don't have to transfer me to anyone", DialogueAct::kNone},
      {"the estate agent hasn't received my deposit", DialogueAct::kNone},
  };
  int right = 0;
  for (const auto& [text, want] : phrases) {
    const DialogueAct got = Read(text);
    if (got == want) {
      ++right;
    } else {
      std::printf("  missed: \"%s\" read as %s, meant %s\n", text,
                  std::string(DialogueActName(got)).c_str(),
                  std::string(DialogueActName(want)).c_str());
    }
  }
  std::printf("everyday phrases: %d of %zu read as meant\n", right, phrases.size());
  EXPECT_GE(right, 20);  // 22 of 27 on 2026-12-07
}

}  // namespace
}  // namespace hotline::pipeline
