#include "tts/sentence_chunker.h"

#include <gtest/gtest.h>

namespace hotline::tts {
namespace {

using Chunks = std::vector<std::string>;

// Feeds `text` in pieces of `piece` bytes (0: all at once) and flushes.
Chunks Chunk(std::string_view text, size_t piece = 0, SentenceChunkerConfig cfg = {}) {
  SentenceChunker c(cfg);
  Chunks out;
  if (piece == 0) piece = text.size() + 1;
  for (size_t at = 0; at < text.size(); at += piece) {
    for (auto& s : c.Push(text.substr(at, piece))) out.push_back(s);
  }
  for (auto& s : c.Flush()) out.push_back(s);
  return out;
}

// Same chunks whether the text arrives at once, byte by byte or in LLM-token-sized pieces.
void ExpectChunks(std::string_view text, const Chunks& expected, SentenceChunkerConfig cfg = {}) {
  for (size_t piece : {0, 1, 3, 7}) EXPECT_EQ(Chunk(text, piece, cfg), expected) << "piece " << piece;
}

TEST(SentenceChunker, SentencesAndAShortFirstSentence) {
  ExpectChunks("Sure. Your order shipped yesterday! Will it arrive Tuesday? Yes.",
               {"Sure.", "Your order shipped yesterday!", "Will it arrive Tuesday?", "Yes."});
}

TEST(SentenceChunker, FirstChunkAtAClauseBoundaryOnly) {
  ExpectChunks("Thanks for waiting on the line, I checked your account, and it is active. Bye.",
               {"Thanks for waiting on the line,", "I checked your account, and it is active.",
                "Bye."});
  // Too few words before the comma: wait for the sentence end.
  ExpectChunks("Sure, I can help. Okay.", {"Sure, I can help.", "Okay."});
}

TEST(SentenceChunker, FirstChunkAfterMaxWordsWithoutPunctuation) {
  SentenceChunkerConfig cfg;
  cfg.first_chunk_max_words = 5;
  ExpectChunks("one two three four five six seven eight nine ten",
               {"one two three four five", "six seven eight nine ten"}, cfg);
}

TEST(SentenceChunker, DecimalsAbbreviationsInitialsUrls) {
  ExpectChunks("The rate is 3.5 percent. Next.", {"The rate is 3.5 percent.", "Next."});
  ExpectChunks("Dr. Smith will see you at 5 p.m. Tomorrow is fine.",
               {"Dr. Smith will see you at 5 p.m.", "Tomorrow is fine."});
  ExpectChunks("J. R. R. Tolkien wrote it. Yes.", {"J. R. R. Tolkien wrote it.", "Yes."});
  ExpectChunks("Bring ID, e.g. a passport. Then wait.", {"Bring ID, e.g. a passport.", "Then wait."});
  ExpectChunks("Bring bills, forms etc. and your card. Done.",
               {"Bring bills, forms etc. and your card.", "Done."});
  ExpectChunks("Visit example.com. Thanks.", {"Visit example.com.", "Thanks."});
  ExpectChunks("It costs $5.00. Tax is 8.25%.", {"It costs $5.00.", "Tax is 8.25%."});
  ExpectChunks("Come by Jan. 3 at noon. Ok.", {"Come by Jan. 3 at noon.", "Ok."});
  ExpectChunks("See St. Louis or approx. three stores. Ok.",
               {"See St. Louis or approx. three stores.", "Ok."});
}

TEST(SentenceChunker, Ellipses) {
  ExpectChunks("Well... let me check that for you. Okay... Found it.",
               {"Well... let me check that for you.", "Okay...", "Found it."});
}

TEST(SentenceChunker, QuotesAfterTheFullStop) {
  ExpectChunks("He said \"done.\" Then he left.", {"He said \"done.\"", "Then he left."});
}

TEST(SentenceChunker, CjkPunctuation) {
  ExpectChunks("您好，我查了一下您的订单。它已经发货了！谢谢",
               {"您好，我查了一下您的订单。", "它已经发货了！", "谢谢"});
  // Clause boundary once enough characters are buffered.
  ExpectChunks("我已经查了您的订单，它明天到。", {"我已经查了您的订单，", "它明天到。"});
}

TEST(SentenceChunker, LineBreaksEndListItems) {
  ExpectChunks("Options:\n- Refund\n- Exchange\n", {"Options:", "- Refund", "- Exchange"});
}

TEST(SentenceChunker, FullStopWaitsForTheNextCharacter) {
  SentenceChunker c;
  EXPECT_TRUE(c.Push("Hello there.").empty());
  EXPECT_TRUE(c.Push(" ").empty());
  EXPECT_EQ(c.Push("How"), Chunks{"Hello there."});
  EXPECT_FALSE(c.awaiting_first_chunk());
  EXPECT_EQ(c.Flush(), Chunks{"How"});
  EXPECT_TRUE(c.awaiting_first_chunk());
}

TEST(SentenceChunker, OverlongSentencesAreSplitAndBounded) {
  SentenceChunkerConfig cfg;
  cfg.max_chunk_chars = 40;
  cfg.first_chunk_max_words = 100;
  std::string text = "alpha beta gamma delta, epsilon zeta eta theta iota kappa lambda mu nu xi omicron";
  Chunks chunks = Chunk(text, 0, cfg);
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], "alpha beta gamma delta,");
  for (const auto& c : chunks) EXPECT_LE(c.size(), 40u);
  // No spaces at all: hard split, never inside a UTF-8 sequence.
  std::string cjk;
  for (int i = 0; i < 40; ++i) cjk += "\xE4\xBD\xA0";  // 你
  for (const auto& c : Chunk(cjk, 1, cfg)) {
    EXPECT_LE(c.size(), 40u);
    EXPECT_EQ(c.size() % 3, 0u) << "split inside a character";
  }
  // A stream of garbage never accumulates beyond the bound.
  SentenceChunker g(cfg);
  size_t emitted = 0;
  for (int i = 0; i < 1000; ++i) emitted += g.Push("xxxxxxxxx").size();
  EXPECT_GT(emitted, 200u);
}

TEST(SentenceChunker, ResetDropsPendingText) {
  SentenceChunker c;
  EXPECT_TRUE(c.Push("This answer was interr").empty());
  c.Reset();
  EXPECT_EQ(c.Push("New answer. "), Chunks{});
  EXPECT_EQ(c.Flush(), Chunks{"New answer."});
  EXPECT_TRUE(Chunk("   \n  ").empty());
}

TEST(SentenceChunkerConfig, Validate) {
  SentenceChunkerConfig cfg;
  EXPECT_TRUE(cfg.Validate().ok());
  cfg.first_chunk_max_words = 2;
  EXPECT_FALSE(cfg.Validate().ok());
}

}  // namespace
}  // namespace hotline::tts
