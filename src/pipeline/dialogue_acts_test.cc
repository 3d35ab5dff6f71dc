#include "pipeline/dialogue_acts.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "answer/eval/eval_data.h"
#include "common/build_paths.h"
#include "pipeline/call_session.h"
#include "pipeline/social_reply.h"

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

TEST(DialogueActs, TurnsThatHoldTheFloorAskNothingYet) {
  for (const char* t : {"I have a question.", "Can I ask you a question?", "I need help.",
                        "Could you help me, please?", "One more thing."}) {
    EXPECT_EQ(Read(t), DialogueAct::kGoAhead) << t;
  }
  for (const char* t : {"Hold on.", "One moment, let me get my card.", "Um.", "Hmm...",
                        "Just a second, I'm looking for the order number."}) {
    EXPECT_EQ(Read(t), DialogueAct::kHold) << t;
  }
  for (const char* t : {"What can you help me with?", "What are my options?",
                        "What kind of questions can I ask you?"}) {
    EXPECT_EQ(Read(t), DialogueAct::kCapabilities) << t;
  }
  for (const char* t : {"I have a question about my refund.", "Can you help me reset my PIN?",
                        "How long is the hold time?", "Hold my order, please.",
                        "What can you do about the late fee?", "What options do I have to pay?"}) {
    EXPECT_EQ(Read(t), DialogueAct::kNone) << t;
  }
}

TEST(DialogueActs, YesAndOkayAreReadOnlyWhereTheyReplyToTheLine) {
  const DialogueState asked{.asked_anything_else = true};
  const DialogueState answered{.after_statement = true};
  EXPECT_EQ(Read("Yes.", asked), DialogueAct::kGoAhead);
  EXPECT_EQ(Read("Yeah, actually.", asked), DialogueAct::kGoAhead);
  EXPECT_EQ(Read("Yes, where is my order?", asked), DialogueAct::kNone);
  EXPECT_EQ(Read("Yes.", {}), DialogueAct::kNone);  // a reply to a question of the tiers
  EXPECT_EQ(Read("Okay, got it.", answered), DialogueAct::kAcknowledge);
  EXPECT_EQ(Read("Great.", answered), DialogueAct::kAcknowledge);
  EXPECT_EQ(Read("Okay.", {}), DialogueAct::kNone);
  EXPECT_EQ(Read("Okay, and how long does it take?", answered), DialogueAct::kNone);
  EXPECT_EQ(Read("Okay thanks.", answered), DialogueAct::kThanks);
}

TEST(DialogueActs, TheStateAfterAReplyComesFromWhatItSaidAndWhoSaidIt) {
  const CallConfig call;
  EXPECT_TRUE(StateAfterReply(call, call.thanks_text, TurnTier::kSocial).asked_anything_else);
  EXPECT_TRUE(
      StateAfterReply(call, call.anything_else_text, TurnTier::kSocial).asked_anything_else);
  EXPECT_FALSE(StateAfterReply(call, call.hello_text, TurnTier::kSocial).asked_anything_else);
  EXPECT_TRUE(StateAfterReply(call, "It ships tomorrow.", TurnTier::kL1).after_statement);
  EXPECT_TRUE(StateAfterReply(call, "Your balance is $12. ", TurnTier::kTool).after_statement);
  EXPECT_FALSE(
      StateAfterReply(call, "Would you like the steps?", TurnTier::kKnowledgeBase).after_statement);
  EXPECT_FALSE(StateAfterReply(call, "\u9700\u8981\u5417\uff1f", TurnTier::kLlm).after_statement);
  EXPECT_FALSE(
      StateAfterReply(call, "Please enter your PIN.", TurnTier::kIdentify).after_statement);
  EXPECT_FALSE(StateAfterReply(call, call.rephrase_text, TurnTier::kFallback).after_statement);
  EXPECT_FALSE(StateAfterReply(call, call.hold_text, TurnTier::kSocial).after_statement);
}

TEST(DialogueActs, AMissIsRephrasedThenTransferredAndATierFailureIsOwnedUpTo) {
  CallConfig call;
  call.fallback_retries = 1;
  MissReply first = ReplyToMiss(call, 0, /*degraded=*/false, /*streamed=*/false);
  EXPECT_TRUE(first.rephrase);
  EXPECT_FALSE(first.transfer);
  EXPECT_EQ(first.text, &call.rephrase_text);
  MissReply second = ReplyToMiss(call, 1, false, false);
  EXPECT_TRUE(second.transfer);
  EXPECT_EQ(second.text, nullptr);  // the answer's own fallback text
  EXPECT_EQ(ReplyToMiss(call, 0, true, false).text, &call.error_text);
  EXPECT_EQ(ReplyToMiss(call, 1, true, false).text, &call.failure_transfer_text);
  MissReply streamed = ReplyToMiss(call, 0, true, /*streamed=*/true);  // already spoken
  EXPECT_TRUE(streamed.transfer);
  EXPECT_EQ(streamed.text, nullptr);
}

TEST(DialogueActs, MandarinTurnsAreReadWholeOrNotAtAll) {
  CallConfig zh;
  zh.goodbye_phrases = {"再见"};
  zh.agent_phrases = {"转人工", "真人"};
  auto read = [&](const char* text, DialogueState state = {}) {
    return ReadDialogueAct(zh, PhraseText(text), state);
  };
  EXPECT_EQ(read("谢谢！"), DialogueAct::kThanks);
  EXPECT_EQ(read("请再说一遍"), DialogueAct::kRepeat);
  EXPECT_EQ(read("等一下，我找一下密码"), DialogueAct::kHold);
  EXPECT_EQ(read("你们都能办什么业务"), DialogueAct::kCapabilities);
  EXPECT_EQ(read("你是机器人还是真人"), DialogueAct::kAskIfMachine);
  EXPECT_EQ(read("我要找真人"), DialogueAct::kAgent);
  EXPECT_EQ(read("没有了", {.asked_anything_else = true}), DialogueAct::kGoodbye);
  EXPECT_EQ(read("没有了"), DialogueAct::kNone);
  EXPECT_EQ(read("好的", {.after_statement = true}), DialogueAct::kAcknowledge);
  EXPECT_EQ(read("好的"), DialogueAct::kNone);
  for (const char* t : {"谢谢你们多收了我的钱", "我想问一下话费", "什么时候到账",
                        "等一下要交多少钱", "你好，我的宽带坏了"}) {
    EXPECT_EQ(read(t), DialogueAct::kNone) << t;
  }
  EXPECT_EQ(read("有什么便宜的套餐", {.asked_anything_else = true}), DialogueAct::kNone);
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

// The act each labelled intent means, where the line is in `state`: after "anything else?",
// CLINC150's "yes" is a go-ahead and its "no" a goodbye; after an answer, its "yes" ("ok", "all
// right", "you got it") acknowledges it.
std::map<std::string, DialogueAct> ActOfIntent(const DialogueState& state) {
  std::map<std::string, DialogueAct> acts = {{"goodbye", DialogueAct::kGoodbye},
                                             {"thank_you", DialogueAct::kThanks},
                                             {"greeting", DialogueAct::kHello},
                                             {"are_you_a_bot", DialogueAct::kAskIfMachine},
                                             {"repeat", DialogueAct::kRepeat},
                                             {"contact_human_agent", DialogueAct::kAgent},
                                             {"what_can_i_ask_you", DialogueAct::kCapabilities}};
  if (state.asked_anything_else) {
    acts["yes"] = DialogueAct::kGoAhead;
    acts["no"] = DialogueAct::kGoodbye;
  }
  if (state.after_statement) acts["yes"] = DialogueAct::kAcknowledge;  // "ok", "all right"
  return acts;
}

std::map<DialogueAct, Tally> Measure(const std::vector<answer::LabelledText>& set, int* false_acts,
                                     const DialogueState& state = {}) {
  std::map<DialogueAct, Tally> by_act;
  const auto acts = ActOfIntent(state);
  *false_acts = 0;
  for (const auto& q : set) {
    const DialogueAct got = Read(q.text, state);
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
  EXPECT_LE(false_acts, 15);                          // 10 of 5,500 on 2026-12-07 (3 capabilities)
  EXPECT_GE(c[DialogueAct::kGoodbye].hits, 12);       // 16 of 30
  EXPECT_GE(c[DialogueAct::kRepeat].hits, 18);        // 22 of 30
  EXPECT_GE(c[DialogueAct::kAskIfMachine].hits, 10);  // 15 of 30
  EXPECT_GE(c[DialogueAct::kCapabilities].hits, 15);  // 20 of 30

  auto b = Measure(*banking_test, &false_acts);
  Print("Banking77 test", banking_test->size(), b, false_acts);
  EXPECT_LE(false_acts, 2);  // 0 of 3,080

  auto x = Measure(bitext_odd, &false_acts);
  Print("Bitext odd rows", bitext_odd.size(), x, false_acts);
  EXPECT_LE(false_acts, 3);
  EXPECT_GE(x[DialogueAct::kAgent].hits * 100, x[DialogueAct::kAgent].positives * 75);

  // The same questions asked right after "anything else?" and right after an answer: a question
  // must still reach the answer tiers.
  const DialogueState anything_else{.asked_anything_else = true};
  const DialogueState after_answer{.after_statement = true};
  for (const DialogueState& state : {anything_else, after_answer}) {
    const char* when = state.asked_anything_else ? "after anything-else" : "after an answer";
    auto ca = Measure(*clinc_test, &false_acts, state);
    Print(std::string("CLINC150 test + oos_test, ") + when, clinc_test->size(), ca, false_acts);
    EXPECT_LE(false_acts, 20);  // 11 and 11 of 5,500 on 2026-12-07
    // CLINC150's "yes" answers a question of fact ("that is true"); a go-ahead 8 of 30.
    if (state.asked_anything_else) {
      EXPECT_GE(ca[DialogueAct::kGoAhead].hits, 5);
    }
    auto ba = Measure(*banking_test, &false_acts, state);
    Print(std::string("Banking77 test, ") + when, banking_test->size(), ba, false_acts);
    EXPECT_LE(false_acts, 3);  // 0 and 0 of 3,080
  }
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
  auto check = [](int& count, const CallConfig& call, const char* text, const DialogueState& state,
                  DialogueAct want) {
    const DialogueAct got = ReadDialogueAct(call, PhraseText(text), state);
    if (got == want) {
      ++count;
    } else {
      std::printf("  missed: \"%s\" read as %s, meant %s\n", text,
                  std::string(DialogueActName(got)).c_str(),
                  std::string(DialogueActName(want)).c_str());
    }
  };
  const CallConfig en;
  for (const auto& [text, want] : phrases) check(right, en, text, {}, want);
  // The turns that hold the floor or ask what the line can do, written the same way (2026-12-07,
  // before any of their rules was run), each with the state the line is in when it is heard.
  const DialogueState anything_else{.asked_anything_else = true};
  const DialogueState after_answer{.after_statement = true};
  const std::vector<std::tuple<const char*, DialogueState, DialogueAct>> floor = {
      {"i have a question", {}, DialogueAct::kGoAhead},
      {"i need some help please", {}, DialogueAct::kGoAhead},
      {"i've got a quick question for you", {}, DialogueAct::kGoAhead},
      {"can i ask you something", {}, DialogueAct::kGoAhead},
      {"i have a question about my bill", {}, DialogueAct::kNone},
      {"can you help me find my order", {}, DialogueAct::kNone},
      {"yes actually", anything_else, DialogueAct::kGoAhead},
      {"yeah one more thing", anything_else, DialogueAct::kGoAhead},
      {"yes please, i have another question", anything_else, DialogueAct::kGoAhead},
      {"yes, where is my refund", anything_else, DialogueAct::kNone},
      {"hang on a second", {}, DialogueAct::kHold},
      {"one moment please, let me grab my card", {}, DialogueAct::kHold},
      {"wait, let me look for it", {}, DialogueAct::kHold},
      {"just a sec", {}, DialogueAct::kHold},
      {"hmm", {}, DialogueAct::kHold},
      {"can you hold on while i find the order number", {}, DialogueAct::kHold},
      {"hold on, i don't think that's right", {}, DialogueAct::kNone},
      {"how long will i be on hold", {}, DialogueAct::kNone},
      {"what sort of things can you do for me", {}, DialogueAct::kCapabilities},
      {"what are my options here", {}, DialogueAct::kCapabilities},
      {"what can i use this line for", {}, DialogueAct::kCapabilities},
      {"what can you do about my late delivery", {}, DialogueAct::kNone},
      {"what options do i have for delivery", {}, DialogueAct::kNone},
      {"okay got it", after_answer, DialogueAct::kAcknowledge},
      {"alright, makes sense", after_answer, DialogueAct::kAcknowledge},
      {"i see", after_answer, DialogueAct::kAcknowledge},
      {"ok but what about my refund", after_answer, DialogueAct::kNone},
      {"got it, and how long does that take", after_answer, DialogueAct::kNone},
  };
  for (const auto& [text, state, want] : floor) check(right, en, text, state, want);
  // The Mandarin line's, written the same way (2026-12-07, before its rules were written).
  const std::vector<std::tuple<const char*, DialogueState, DialogueAct>> mandarin = {
      {"谢谢你", {}, DialogueAct::kThanks},
      {"好的，非常感谢", {}, DialogueAct::kThanks},
      {"你说什么？", {}, DialogueAct::kRepeat},
      {"不好意思，我没听清，能再说一遍吗", {}, DialogueAct::kRepeat},
      {"喂，你好，有人吗", {}, DialogueAct::kHello},
      {"你是机器人吗", {}, DialogueAct::kAskIfMachine},
      {"你是真人吗", {}, DialogueAct::kAskIfMachine},
      {"稍等一下，我找一下账单", {}, DialogueAct::kHold},
      {"我想问一下", {}, DialogueAct::kGoAhead},
      {"你能帮我做什么", {}, DialogueAct::kCapabilities},
      {"我想查一下上个月的话费", {}, DialogueAct::kNone},
      {"谢谢，但是我的流量还是用不了", {}, DialogueAct::kNone},
      {"稍等一下会扣费吗", {}, DialogueAct::kNone},
      {"你们能帮我把套餐改便宜一点吗", {}, DialogueAct::kNone},
      {"没有了，谢谢", anything_else, DialogueAct::kGoodbye},
      {"不用了", anything_else, DialogueAct::kGoodbye},
      {"还有一个问题", anything_else, DialogueAct::kGoAhead},
      {"有，我想问一下宽带", anything_else, DialogueAct::kNone},
      {"好的，知道了", after_answer, DialogueAct::kAcknowledge},
      {"明白了", after_answer, DialogueAct::kAcknowledge},
      {"好的，那怎么办理呢", after_answer, DialogueAct::kNone},
  };
  CallConfig zh;
  zh.goodbye_phrases = {"再见", "拜拜", "没有了谢谢", "没别的了"};  // config/telecom_zh.yaml
  zh.agent_phrases = {"转人工", "人工客服", "人工服务", "真人", "客服人员"};
  int zh_right = 0;
  for (const auto& [text, state, want] : mandarin) check(zh_right, zh, text, state, want);
  std::printf("Mandarin everyday phrases: %d of %zu read as meant\n", zh_right, mandarin.size());
  // Written before the Mandarin rules, but the rules were written with them in view (no Mandarin
  // data set is here to hold out): a regression check, not a held-out figure.
  EXPECT_GE(zh_right, 19);  // 21 of 21 on 2026-12-07
  std::printf("everyday phrases: %d of %zu read as meant\n", right, phrases.size() + floor.size());
  EXPECT_GE(right, 45);  // 22 of 27 and 27 of 28 on 2026-12-07
}

}  // namespace
}  // namespace hotline::pipeline
