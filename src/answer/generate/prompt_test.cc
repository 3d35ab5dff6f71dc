#include "answer/generate/prompt.h"

#include <gtest/gtest.h>

#include "answer/generate/postprocess.h"
#include "common/utf8.h"

namespace hotline::answer {
namespace {

Passage P(std::string id, std::string body) {
  Passage p;
  p.article.id = std::move(id);
  p.article.title = "Title";
  p.article.body = std::move(body);
  return p;
}

int Total(const Prompt& p) {
  int n = 0;
  for (const auto& m : p.messages) n += EstimateTokens(m.content) + 4;
  return n;
}

TEST(PromptBuilder, StableSystemPromptFirstThenHistoryThenContextAndQuestion) {
  PromptConfig c;
  PromptBuilder b(c);
  PromptInput in;
  in.question = "how long do refunds take";
  in.passages = {P("refund-1", "Refunds take 5 to 7 days."), P("refund-2", "Refunds go to the card.")};
  in.tool_results = {ToolResult{"Your refund of $19.99 is approved.", {}, true}};
  in.history = {{"user", "hi"}, {"assistant", "Hello, how can I help?"}};
  auto p = b.Build(in);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->messages.size(), 4u);
  EXPECT_EQ(p->messages[0].role, "system");
  EXPECT_EQ(p->messages[0].content, c.system_prompt);
  EXPECT_EQ(p->messages[1].content, "hi");
  EXPECT_EQ(p->messages[3].role, "user");
  const std::string& last = p->messages[3].content;
  EXPECT_LT(last.find("Account information"), last.find("[refund-1]"));
  EXPECT_LT(last.find("[refund-1]"), last.find("[refund-2]"));
  EXPECT_NE(last.find("Question: how long do refunds take"), std::string::npos);
  EXPECT_EQ(p->passage_ids, (std::vector<std::string>{"refund-1", "refund-2"}));
  // The system prompt does not depend on the turn: a second call starts with the same message.
  in.question = "something else";
  EXPECT_EQ(b.Build(in)->messages[0].content, p->messages[0].content);
}

TEST(PromptBuilder, TruncatesToTheBudgetOldestHistoryFirst) {
  PromptConfig c;
  c.system_prompt = "Be brief.";
  c.max_seq_len = 200;
  c.reserved_output_tokens = 50;
  int calls = 0;
  PromptBuilder b(c, [&](std::string_view t) {
    ++calls;
    return EstimateTokens(t);
  });
  PromptInput in;
  in.question = "what is the refund policy";
  for (int i = 0; i < 5; ++i) in.passages.push_back(P("p" + std::to_string(i), std::string(100, 'x')));
  for (int i = 0; i < 20; ++i) in.history.push_back({i % 2 ? "assistant" : "user", "turn " + std::to_string(i) + std::string(40, 'y')});
  auto p = b.Build(in);
  ASSERT_TRUE(p.ok());
  EXPECT_GT(calls, 0);  // the injected counter was used
  EXPECT_LE(p->tokens, 150);
  EXPECT_LE(Total(*p), 150);
  EXPECT_GT(p->dropped_passages, 0);
  EXPECT_GT(p->dropped_history, 0);
  // What history remains is the most recent, in order.
  ASSERT_GT(p->messages.size(), 2u);
  EXPECT_NE(p->messages[p->messages.size() - 2].content.find("turn 19"), std::string::npos);

  in.question = std::string(4000, 'q');
  EXPECT_EQ(b.Build(in).status().code(), StatusCode::kResourceExhausted);
}

TEST(Postprocess, StripsMarkdownAndOpenersKeepsDirectAnswerFirst) {
  const std::string llm =
      "Certainly! **Refunds** usually take *5 to 7* business days.\n\n"
      "## Details\n"
      "- Check the [refund page](https://example.com/refunds) for updates\n"
      "- Call us any time\n"
      "```\ncode that must not be spoken\n```\n";
  EXPECT_EQ(PostprocessForSpeech(llm, {}),
            "Refunds usually take 5 to 7 business days. Details. Check the refund page for updates.");
  EXPECT_EQ(PostprocessForSpeech("Sure, your order ships tomorrow.", {}), "Your order ships tomorrow.");
}

TEST(Postprocess, FillsOrDropsPlaceholdersAndLimitsLength) {
  const std::map<std::string, std::string> slots{{"order_number", "A5531"}};
  EXPECT_EQ(PostprocessForSpeech("Order {{Order Number}} has shipped. Call {phone_number} for help.", slots),
            "Order A5531 has shipped.");
  EXPECT_EQ(PostprocessForSpeech("Visit [Website Name] today.", {}), "");
  SpeechConfig short_cfg;
  short_cfg.max_sentences = 1;
  EXPECT_EQ(PostprocessForSpeech("Your bill was $42.17. It was due on the 5th.", {}, short_cfg),
            "Your bill was $42.17.");
  short_cfg.max_chars = 20;
  EXPECT_LE(PostprocessForSpeech(std::string(500, 'a') + " b c.", {}, short_cfg).size(), 20u);
}

// Streamed in pieces of every size, the sentences are those of the whole text, and each one is
// released no later than the text after it starts (never waiting for the end of the stream).
TEST(SpeechStream, StreamingGivesTheSameSentencesAsTheWholeText) {
  const std::vector<std::string> texts = {
      "Certainly! **Refunds** usually take *5 to 7* business days.\n\n## Details\n"
      "- Check the [refund page](https://example.com/refunds) for updates\n- Call us any time\n"
      "```\ncode that must not be spoken. Really.\n```\nThe end.",
      "Sure, your bill was $42.17. It was due on the 5th! Anything else? Visit www.example.com. Bye",
      "1. First step. 2. Second step.\n2) Another item\n| a | b |\n|---|---|\nOrder {{Order Number}} shipped. "
      "Call {phone_number} now. Great question.",
      "Ok. " + std::string(400, 'x') + " tail.",
      "Of course, your refund has been approved, and it will reach your card in five days. Bye",
      "Your order {{Order Number}} has shipped, and it arrives Monday.",
      "Here is what to do: open the app, tap Cards, then choose Freeze. Done.",
      "\u60a8\u7684\u8d26\u5355\u5df2\u7ecf\u51fa\u6765\u4e86\uff0c\u672c\u6708\u8bdd\u8d39"
      "\u662f\u516b\u5341\u5143\u3002\u8fd8\u6709\u522b\u7684\u5417",
  };
  const std::map<std::string, std::string> slots{{"order_number", "A5531"}};
  for (const std::string& text : texts) {
    const std::string whole = PostprocessForSpeech(text, slots);
    for (size_t piece : {1u, 2u, 3u, 7u, 64u}) {
      SpeechStream stream(SpeechConfig{}, slots);
      std::vector<std::string> got;
      for (size_t i = 0; i < text.size(); i += piece) {
        for (auto& s : stream.Push(std::string_view(text).substr(i, piece))) got.push_back(s);
      }
      for (auto& s : stream.Finish()) got.push_back(s);
      // Pieces join with a space, except after a Chinese mark (no space follows one).
      std::string joined;
      for (const auto& s : got) {
        bool spaced = !joined.empty();
        for (const char* mark : {"\u3002", "\uff01", "\uff1f", "\uff0c", "\uff1b", "\uff1a"}) {
          spaced = spaced && !joined.ends_with(mark);
        }
        joined += (spaced ? " " : "") + s;
      }
      EXPECT_EQ(joined, whole) << "piece " << piece << " text " << text.substr(0, 30);
      EXPECT_EQ(stream.spoken(), whole);
    }
  }
}

TEST(SpeechStream, ReleasesASentenceAsSoonAsTheNextOneStartsAndStopsWhenFull) {
  SpeechConfig cfg;
  cfg.max_sentences = 2;
  SpeechStream stream(cfg);
  EXPECT_TRUE(stream.Push("Certainly! Your order ships").empty());  // opener dropped, rest open
  EXPECT_TRUE(stream.Push(" tomorrow.").empty());                    // "." may be "tomorrow.com"
  EXPECT_EQ(stream.Push(" It"), std::vector<std::string>{"Your order ships tomorrow."});
  EXPECT_FALSE(stream.full());
  EXPECT_EQ(stream.Push(" arrives Monday!\n"), std::vector<std::string>{"It arrives Monday!"});
  EXPECT_TRUE(stream.full());
  EXPECT_TRUE(stream.Push("More text. And more. ").empty());
  EXPECT_TRUE(stream.Finish().empty());
  EXPECT_EQ(stream.spoken(), "Your order ships tomorrow. It arrives Monday!");
}

TEST(SpeechStream, TheFirstClauseGoesOutBeforeItsSentenceEnds) {
  SpeechStream stream;  // first_clause_min_words 4
  EXPECT_TRUE(stream.Push("Sure, your refund was").empty());
  EXPECT_TRUE(stream.Push(" approved,").empty());  // the boundary needs the text after it
  // The opener is dropped from the clause as from the sentence.
  EXPECT_EQ(stream.Push(" and"), std::vector<std::string>{"Your refund was approved,"});
  EXPECT_TRUE(stream.Push(" it reaches your card, in five days.").empty());  // one early clause
  EXPECT_EQ(stream.Push(" Bye"), std::vector<std::string>{"and it reaches your card, in five days."});
  EXPECT_EQ(stream.Finish(), std::vector<std::string>{"Bye."});
  EXPECT_EQ(stream.spoken(),
            "Your refund was approved, and it reaches your card, in five days. Bye.");

  // Too few words, an unfinished link or a placeholder before the boundary: the whole sentence
  // waits.
  for (const std::string text : {"Yes, it is done and more words follow",
                                 "Check the [refund page for the status, and then",
                                 "Your order {{Order Number}} shipped, and it arrives"}) {
    SpeechStream s2;
    EXPECT_TRUE(s2.Push(text).empty()) << text;
  }
  // Chinese: ，；： are boundaries, each Han character a word, and the rest joins without a space.
  SpeechStream zh;
  const std::string first = "\u60a8\u7684\u8d26\u5355\u5df2\u51fa\uff0c";  // 您的账单已出，
  EXPECT_TRUE(zh.Push(first).empty());  // nothing after the mark yet
  EXPECT_EQ(zh.Push("\u672c"), std::vector<std::string>{first});
  EXPECT_TRUE(zh.Push("\u6708\u516b\u5341\u5143\u3002").empty());  // 月八十元。
  EXPECT_EQ(zh.Finish(), std::vector<std::string>{"\u672c\u6708\u516b\u5341\u5143\u3002"});
  EXPECT_EQ(zh.spoken(), first + "\u672c\u6708\u516b\u5341\u5143\u3002");

  // A Chinese sentence longer than max_chars (no space to cut at) is cut between characters,
  // never inside one.
  SpeechConfig narrow;
  narrow.max_chars = 20;  // 6 Han characters and 2 bytes of the 7th
  SpeechStream long_zh(narrow);
  std::vector<std::string> cut;
  for (auto& piece : long_zh.Push("\u60a8\u7684\u8d26\u5355\u5df2\u7ecf\u51fa\u6765\u4e86\u3002")) {
    cut.push_back(piece);
  }
  for (auto& piece : long_zh.Finish()) cut.push_back(piece);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(FirstInvalidUtf8(cut[0]), std::string::npos) << cut[0];
  EXPECT_EQ(cut[0], "\u60a8\u7684\u8d26\u5355\u5df2\u7ecf.");

  SpeechConfig off;
  off.first_clause_min_words = 0;
  SpeechStream s3(off);
  EXPECT_TRUE(s3.Push("Your refund was approved, and it reaches").empty());
}

TEST(SplitSentences, SplitsAtSentenceEndsOnly) {
  EXPECT_EQ(SplitSentences("Your bill was $42.17. It is due on the 5th!  Thanks"),
            (std::vector<std::string>{"Your bill was $42.17.", "It is due on the 5th!", "Thanks"}));
  EXPECT_TRUE(SplitSentences("  ").empty());
  EXPECT_EQ(SplitSentences("One line.\nTwo?"), (std::vector<std::string>{"One line.", "Two?"}));
  EXPECT_EQ(SplitSentences("您好！请先重启手机。还是不行吗？谢谢"),
            (std::vector<std::string>{"您好！", "请先重启手机。", "还是不行吗？", "谢谢"}));
}

}  // namespace
}  // namespace hotline::answer
