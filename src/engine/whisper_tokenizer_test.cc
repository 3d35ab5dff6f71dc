#include "engine/whisper_tokenizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/pretokenize.h"
#include "engine/whisper_ggml.h"

namespace hotline::engine {
namespace {

std::string AssetPath(const char* name) {
  return std::string(HOTLINE_SHARED_DATA_DIR) + "/asr/whisper/" + name;
}

// The tokenizer of a real `.bin` (nullptr when the file is absent), loaded once per file.
const WhisperTokenizer* Tiny(bool english) {
  static std::map<bool, std::unique_ptr<const WhisperTokenizer>> cache;
  auto it = cache.find(english);
  if (it != cache.end()) return it->second.get();
  const std::string path =
      AssetPath(english ? "for-tests-ggml-tiny.en.bin" : "for-tests-ggml-tiny.bin");
  std::unique_ptr<const WhisperTokenizer> tok;
  if (std::filesystem::exists(path)) {
    auto f = WhisperGgmlFile::Open(path);
    EXPECT_TRUE(f.ok()) << f.status();
    if (f.ok()) {
      auto v = WhisperGgmlTextTokens(**f);
      EXPECT_TRUE(v.ok()) << v.status();
      auto t = WhisperTokenizer::Create(v->tokens, (*f)->hparams().n_vocab);
      EXPECT_TRUE(t.ok()) << t.status();
      if (t.ok()) tok = std::move(*t);
    }
  }
  return (cache[english] = std::move(tok)).get();
}

#define REQUIRE_TINY(var, english)                                                          \
  const WhisperTokenizer* var = Tiny(english);                                              \
  if (var == nullptr) {                                                                     \
    GTEST_SKIP() << "missing whisper.cpp's for-tests-ggml-tiny" << ((english) ? ".en" : "") \
                 << ".bin under ../shared/data/asr/whisper (the shared data sets)";         \
  }

// tiktoken's byte_pair_merge written the obvious quadratic way, over the same pieces: the
// reference for the heap-based merge.
std::vector<TokenId> ReferenceEncode(const WhisperTokenizer& tok, std::string_view text,
                                     const std::map<std::string, TokenId>& ids) {
  std::vector<TextPiece> pieces;
  PreTokenizeScratch scratch;
  PreTokenize(PreTokenizerKind::kGpt2, text, &pieces, &scratch);
  auto rank = [&](const std::string& s) {
    auto it = ids.find(s);
    return it == ids.end() ? kNoToken : it->second;
  };
  std::vector<TokenId> out;
  for (const TextPiece& p : pieces) {
    const std::string piece(text.substr(p.begin, p.end - p.begin));
    if (rank(piece) != kNoToken) {
      out.push_back(rank(piece));
      continue;
    }
    std::vector<std::string> parts;
    for (char c : piece) parts.emplace_back(1, c);
    while (true) {
      TokenId best = kNoToken;
      size_t at = 0;
      for (size_t i = 0; i + 1 < parts.size(); ++i) {
        const TokenId r = rank(parts[i] + parts[i + 1]);
        if (r != kNoToken && (best == kNoToken || r < best)) {
          best = r;
          at = i;
        }
      }
      if (best == kNoToken) break;
      parts[at] += parts[at + 1];
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    }
    for (const std::string& s : parts) out.push_back(rank(s));
  }
  (void)tok;
  return out;
}

TEST(WhisperTokenizer, SpecialTokenIdsFollowTheVocabularySize) {
  // English-only (tiny.en, base.en, ...): openai/whisper get_encoding("gpt2"), 50256 ranks.
  auto en = WhisperSpecialTokens::ForVocabSize(51864);
  ASSERT_TRUE(en.ok()) << en.status();
  EXPECT_FALSE(en->multilingual);
  EXPECT_EQ(en->n_languages, 99);
  EXPECT_EQ(en->eot, 50256);
  EXPECT_EQ(en->sot, 50257);
  EXPECT_EQ(en->first_language, 50258);
  EXPECT_EQ(en->translate, 50357);
  EXPECT_EQ(en->transcribe, 50358);
  EXPECT_EQ(en->start_of_lm, 50359);
  EXPECT_EQ(en->start_of_prev, 50360);
  EXPECT_EQ(en->no_speech, 50361);
  EXPECT_EQ(en->no_timestamps, 50362);
  EXPECT_EQ(en->timestamp_begin, 50363);
  EXPECT_EQ(en->timestamp_begin + kWhisperTimestampCount, 51864);

  // Multilingual tiny..large-v2: 99 languages, every id one higher.
  auto ml = WhisperSpecialTokens::ForVocabSize(51865);
  ASSERT_TRUE(ml.ok());
  EXPECT_TRUE(ml->multilingual);
  EXPECT_EQ(ml->n_languages, 99);
  EXPECT_EQ(ml->eot, 50257);
  EXPECT_EQ(ml->sot, 50258);
  EXPECT_EQ(ml->first_language, 50259);
  EXPECT_EQ(ml->translate, 50358);
  EXPECT_EQ(ml->transcribe, 50359);
  EXPECT_EQ(ml->start_of_lm, 50360);
  EXPECT_EQ(ml->start_of_prev, 50361);
  EXPECT_EQ(ml->no_speech, 50362);
  EXPECT_EQ(ml->no_timestamps, 50363);
  EXPECT_EQ(ml->timestamp_begin, 50364);

  // large-v3: 100 languages (yue), so the task tokens and everything after move by one.
  auto v3 = WhisperSpecialTokens::ForVocabSize(51866);
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->n_languages, 100);
  EXPECT_EQ(v3->sot, 50258);
  EXPECT_EQ(v3->translate, 50359);
  EXPECT_EQ(v3->transcribe, 50360);
  EXPECT_EQ(v3->no_timestamps, 50364);
  EXPECT_EQ(v3->timestamp_begin, 50365);

  for (int bad : {0, 50000, 51765, 51867, 60000}) {
    EXPECT_FALSE(WhisperSpecialTokens::ForVocabSize(bad).ok()) << bad;
  }
}

TEST(WhisperTokenizer, LanguageTokens) {
  ASSERT_EQ(WhisperLanguageCodes().size(), 100u);
  EXPECT_EQ(WhisperLanguageCodes()[0], "en");
  EXPECT_EQ(WhisperLanguageCodes()[1], "zh");
  EXPECT_EQ(WhisperLanguageCodes()[99], "yue");
  REQUIRE_TINY(tok, false);
  EXPECT_EQ(tok->LanguageToken("en").value(), 50259);
  EXPECT_EQ(tok->LanguageToken("zh").value(), 50260);
  EXPECT_EQ(tok->LanguageToken("su").value(), 50357);                           // the 99th
  EXPECT_EQ(tok->LanguageToken("yue").status().code(), StatusCode::kNotFound);  // 99-language model
  EXPECT_EQ(tok->LanguageToken("xx").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(tok->LanguageCode(50260), "zh");
  EXPECT_EQ(tok->LanguageCode(50258), "");
  EXPECT_EQ(tok->TokenName(50260), "<|zh|>");
}

TEST(WhisperTokenizer, SpecialTokenNamesAndTimestamps) {
  REQUIRE_TINY(tok, false);
  EXPECT_EQ(tok->TokenName(50257), "<|endoftext|>");
  EXPECT_EQ(tok->TokenName(50258), "<|startoftranscript|>");
  EXPECT_EQ(tok->TokenName(50358), "<|translate|>");
  EXPECT_EQ(tok->TokenName(50359), "<|transcribe|>");
  EXPECT_EQ(tok->TokenName(50360), "<|startoflm|>");
  EXPECT_EQ(tok->TokenName(50361), "<|startofprev|>");
  EXPECT_EQ(tok->TokenName(50362), "<|nospeech|>");
  EXPECT_EQ(tok->TokenName(50363), "<|notimestamps|>");
  EXPECT_EQ(tok->TokenName(50364), "<|0.00|>");
  EXPECT_EQ(tok->TokenName(50364 + 62), "<|1.24|>");
  EXPECT_EQ(tok->TokenName(50364 + 1500), "<|30.00|>");
  EXPECT_EQ(tok->TokenName(51865), "");
  EXPECT_EQ(tok->TokenName(-1), "");
  EXPECT_TRUE(tok->IsTimestamp(51864));
  EXPECT_FALSE(tok->IsTimestamp(50363));
  EXPECT_DOUBLE_EQ(tok->TimestampSeconds(50364 + 62), 1.24);
  EXPECT_EQ(tok->TimestampToken(1.24), 50364 + 62);
  EXPECT_EQ(tok->TimestampToken(1.249), 50364 + 62);
  EXPECT_EQ(tok->TimestampToken(-3.0), 50364);
  EXPECT_EQ(tok->TimestampToken(99.0), 51864);

  const std::vector<TokenId> ids = {50258, 50259, 50359, 50364, 2425, 50364 + 62, 50257};
  EXPECT_EQ(tok->Decode(ids), " Hello");
  EXPECT_EQ(tok->Decode(ids, WhisperSpecialRendering::kTimestampsOnly), "<|0.00|> Hello<|1.24|>");
  EXPECT_EQ(tok->Decode(ids, WhisperSpecialRendering::kAll),
            "<|startoftranscript|><|en|><|transcribe|><|0.00|> Hello<|1.24|><|endoftext|>");
}

TEST(WhisperTokenizer, EnglishOnlyIds) {
  REQUIRE_TINY(tok, true);
  EXPECT_FALSE(tok->multilingual());
  EXPECT_EQ(tok->special().eot, 50256);
  EXPECT_EQ(tok->TokenName(50256), "<|endoftext|>");
  EXPECT_EQ(tok->TokenName(50257), "<|startoftranscript|>");
  EXPECT_EQ(tok->TokenName(50362), "<|notimestamps|>");
  EXPECT_EQ(tok->TokenName(50363), "<|0.00|>");
  // tiny.en's vocabulary is GPT-2's. Hugging Face's GPT2Tokenizer documentation:
  //   tokenizer("Hello world")["input_ids"] == [15496, 995]
  //   tokenizer(" Hello world")["input_ids"] == [18435, 995]
  EXPECT_EQ(tok->Encode("Hello world"), (std::vector<TokenId>{15496, 995}));
  EXPECT_EQ(tok->Encode(" Hello world"), (std::vector<TokenId>{18435, 995}));
  EXPECT_EQ(tok->Encode(" Hello"), (std::vector<TokenId>{18435}));
}

TEST(WhisperTokenizer, Prompt) {
  REQUIRE_TINY(ml, false);
  WhisperPromptOptions o;
  EXPECT_EQ(ml->Prompt(o).value(), (std::vector<TokenId>{50258, 50259, 50359, 50363}));
  o.language = "zh";
  o.timestamps = true;
  EXPECT_EQ(ml->Prompt(o).value(), (std::vector<TokenId>{50258, 50260, 50359}));
  o.task = WhisperTask::kTranslate;
  EXPECT_EQ(ml->Prompt(o).value(), (std::vector<TokenId>{50258, 50260, 50358}));
  o.language = "yue";
  EXPECT_FALSE(ml->Prompt(o).ok());
  o = {};
  o.previous = {1, 2, 3, 4, 5};
  o.max_previous = 3;
  EXPECT_EQ(ml->Prompt(o).value(),
            (std::vector<TokenId>{50361, 3, 4, 5, 50258, 50259, 50359, 50363}));
  o.previous = {50258};
  EXPECT_FALSE(ml->Prompt(o).ok());

  REQUIRE_TINY(en, true);
  o = {};
  EXPECT_EQ(en->Prompt(o).value(), (std::vector<TokenId>{50257, 50362}));
  o.language = "en";
  o.timestamps = true;
  EXPECT_EQ(en->Prompt(o).value(), (std::vector<TokenId>{50257}));
  o.language = "de";
  EXPECT_FALSE(en->Prompt(o).ok());
  o.language = "";
  o.task = WhisperTask::kTranslate;
  EXPECT_FALSE(en->Prompt(o).ok());
}

const char* const kSamples[] = {
    "Hello world",
    " Hello",
    "I'd like to check my bill for last month, please.",
    "My account number is 4417-1234-5678-9113 and my PIN's 0042.",
    "我想查询上月话费账单",
    "我想查询上月话费账单，谢谢！",
    "Grüße aus Köln — ça va? ¿Qué tal?",
    "Привет, как дела?",
    "こんにちは、世界",
    "안녕하세요",
    "emoji 🎉🎉 and flags 🇫🇷 👩‍👩‍👧",
    "   leading spaces and trailing   ",
    "\ttabs\nnewlines\r\n  mixed  \n\n",
    "$1,234.56 (approx.) — 50% off!!! ???",
    "don't won't they're we've I'm you'll he'd",
    "<|endoftext|> is text here",
    "a",
    " ",
    "",
    "\xF0\x9F",            // a truncated UTF-8 sequence
    "\xFF\xFE raw bytes",  // invalid UTF-8
    "\xEF\xBF\xBD replacement character",
};

TEST(WhisperTokenizer, RoundTripsOnTheRealVocabularies) {
  for (bool english : {false, true}) {
    REQUIRE_TINY(tok, english);
    for (const char* s : kSamples) {
      const std::vector<TokenId> ids = tok->Encode(s);
      for (TokenId id : ids) EXPECT_TRUE(tok->IsText(id)) << s;
      EXPECT_EQ(tok->Decode(ids), s) << (english ? "tiny.en: " : "tiny: ") << s;
    }
    // Tokens are merged: a plain English sentence takes fewer tokens than characters.
    EXPECT_LT(tok->Encode(kSamples[2]).size(), std::string(kSamples[2]).size() / 3);
  }
}

TEST(WhisperTokenizer, HeapMergeMatchesTiktokensLinearScan) {
  REQUIRE_TINY(tok, false);
  std::map<std::string, TokenId> ids;
  for (TokenId id = tok->special().n_text - 1; id >= 0; --id) {
    if (!tok->TokenBytes(id).empty()) ids[std::string(tok->TokenBytes(id))] = id;  // lowest wins
  }
  for (const char* s : kSamples) {
    EXPECT_EQ(tok->Encode(s), ReferenceEncode(*tok, s, ids)) << s;
  }
  // Random text over a small alphabet (long runs exercise the merge order) and random bytes.
  std::mt19937 rng(7);
  const std::string alphabet[] = {"a", "b", "e", "t", "h",  " ", "  ",
                                  ".", "0", "1", "é", "话", "🎉", "'s"};
  for (int iter = 0; iter < 300; ++iter) {
    std::string s;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      if (iter % 5 == 4) {
        s.push_back(static_cast<char>(rng()));
      } else {
        s += alphabet[rng() % std::size(alphabet)];
      }
    }
    const std::vector<TokenId> got = tok->Encode(s);
    EXPECT_EQ(got, ReferenceEncode(*tok, s, ids)) << s;
    EXPECT_EQ(tok->Decode(got), s);
  }
}

TEST(WhisperTokenizer, RefusesBrokenVocabularies) {
  std::vector<std::string> tokens(50257);
  for (int i = 0; i < 256; ++i)
    tokens[static_cast<size_t>(i)] = std::string(1, static_cast<char>(i));
  for (size_t i = 256; i < tokens.size(); ++i) tokens[i] = "t" + std::to_string(i);
  EXPECT_TRUE(WhisperTokenizer::Create(tokens, 51865).ok());
  EXPECT_FALSE(WhisperTokenizer::Create(tokens, 12345).ok());
  std::vector<std::string> short_vocab(tokens.begin(), tokens.begin() + 50000);
  EXPECT_FALSE(WhisperTokenizer::Create(short_vocab, 51865).ok());
  tokens[65] = "AA";  // byte 'A' has no token any more
  const auto bad = WhisperTokenizer::Create(tokens, 51865);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("single-byte token 65"), std::string::npos);
}

TEST(WhisperTokenizer, EncodesALongTextQuickly) {
  REQUIRE_TINY(tok, false);
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "I'd like to check my bill for last month. 我想查询上月话费账单 ";
  text += std::string(20000, '-');  // one long piece
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<TokenId> ids = tok->Encode(text);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(tok->Decode(ids), text);
  std::printf("encoded %zu bytes into %zu tokens in %.1f ms\n", text.size(), ids.size(), ms);
  EXPECT_LT(ms, 5000.0);
}

}  // namespace
}  // namespace hotline::engine
