// Pronunciations for words missing from the recognizer's dictionary, from flite's CMU lexicon
// and its letter-to-sound rules (Debian's libflite: libflite_cmulex), written in the phone set of
// pocketsphinx's US English model (the CMU set without stress marks: "freemium" -> "F R IY M IY
// AH M").
//
// Only words of letters and inner apostrophes are pronounced (at most 32 characters); anything
// else is refused, so a typo made of digits or symbols never reaches the dictionary.
//
// Thread-safety: Pronounce serializes on a process-wide lock (flite's lexicon look-up allocates
// from shared state). Blocking: CPU only, tens of microseconds per word.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::asr {

// "F R IY M IY AH M" for `word` (lower-case letters and apostrophes). InvalidArgument for other
// words; NotFound when flite returns no phones.
Result<std::string> PronounceWord(std::string_view word);

}  // namespace hotline::asr
