#include "asr/letter_to_sound.h"

#include <gtest/gtest.h>

namespace hotline::asr {
namespace {

TEST(LetterToSound, PronouncesWordsOutsideTheDictionary) {
  // "freemium" is in no pronouncing dictionary; the rules still give the sounds a speaker makes.
  auto p = PronounceWord("freemium");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->rfind("F R IY M", 0), 0u) << *p;
  auto known = PronounceWord("card");
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(*known, "K AA R D");
}

TEST(LetterToSound, PhonesAreInTheRecognizersSet) {
  // The 39 phones of pocketsphinx's US English model (flite's reduced vowels map onto them).
  const std::string phones =
      " AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW "
      "V W Y Z ZH ";
  for (const char* w : {"signup", "eta", "paypal", "cashback", "wana", "xfinity", "uv"}) {
    auto p = PronounceWord(w);
    ASSERT_TRUE(p.ok()) << w;
    size_t start = 0;
    while (start < p->size()) {
      size_t end = p->find(' ', start);
      if (end == std::string::npos) end = p->size();
      const std::string phone = p->substr(start, end - start);
      EXPECT_NE(phones.find(" " + phone + " "), std::string::npos) << w << ": " << *p;
      start = end + 1;
    }
  }
}

TEST(LetterToSound, RefusesWhatIsNoWord) {
  EXPECT_FALSE(PronounceWord("").ok());
  EXPECT_FALSE(PronounceWord("abc123").ok());
  EXPECT_FALSE(PronounceWord("Card").ok());
  EXPECT_FALSE(PronounceWord("'''").ok());
  EXPECT_FALSE(PronounceWord(std::string(33, 'a')).ok());
}

}  // namespace
}  // namespace hotline::asr
