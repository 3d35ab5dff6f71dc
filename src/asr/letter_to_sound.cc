#include "asr/letter_to_sound.h"

#include <flite/flite.h>

#include <cctype>
#include <mutex>

extern "C" {
cst_lexicon* cmu_lex_init(void);
}

namespace hotline::asr {
namespace {

std::mutex g_mu;

const cst_lexicon* Lexicon() {  // REQUIRES: g_mu held
  static const cst_lexicon* lex = cmu_lex_init();
  return lex;
}

// flite's CMU phones are pocketsphinx's in lower case, vowels with a stress digit ("ah0"), plus
// a few reduced forms the recognizer's 39-phone model lacks (schwa "ax", syllabic "el"...), which
// map onto their nearest phones; its pause "pau" is no phone of a word.
bool ToSphinxPhone(const char* flite_phone, std::string& out) {
  std::string p;
  for (const char* c = flite_phone; *c != '\0'; ++c) {
    if (std::isalpha(static_cast<unsigned char>(*c))) {
      p += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    }
  }
  if (p.empty() || p == "PAU") return false;
  if (p == "AX") p = "AH";
  if (p == "AXR") p = "ER";
  if (p == "IX") p = "IH";
  if (p == "NX") p = "N";
  if (p == "EL") p = "AH L";
  if (p == "EM") p = "AH M";
  if (p == "EN") p = "AH N";
  if (!out.empty()) out += ' ';
  out += p;
  return true;
}

}  // namespace

Result<std::string> PronounceWord(std::string_view word) {
  if (word.empty() || word.size() > 32) {
    return InvalidArgumentError("letter-to-sound: a word of 1 to 32 characters is expected");
  }
  bool letters = false;
  for (char c : word) {
    if (c >= 'a' && c <= 'z') {
      letters = true;
    } else if (c != '\'') {
      return InvalidArgumentError("letter-to-sound: '" + std::string(word) +
                                  "' has characters other than lower-case letters and apostrophes");
    }
  }
  if (!letters) return InvalidArgumentError("letter-to-sound: no letters in the word");
  std::string key(word);
  std::string out;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    const cst_lexicon* lex = Lexicon();
    if (lex == nullptr) return InternalError("letter-to-sound: flite's CMU lexicon did not load");
    cst_val* phones = lex_lookup(lex, key.c_str(), nullptr, nullptr);
    for (const cst_val* v = phones; v != nullptr; v = val_cdr(v)) {
      ToSphinxPhone(val_string(val_car(v)), out);
    }
    delete_val(phones);
  }
  if (out.empty()) return NotFoundError("letter-to-sound: no pronunciation for '" + key + "'");
  return out;
}

}  // namespace hotline::asr
