// Word and utterance confidence from a recognizer's word lattice.
//
// The posterior of one lattice arc is a poor confidence: the same word is usually present as many
// arcs that differ only in where it starts or ends by a frame or two, and the probability mass is
// split among them (a clearly heard word can get an arc posterior of 0.1). The frame-based word
// posterior (Wessel, Schlueter, Macherey, Ney, "Confidence measures for large vocabulary
// continuous speech recognition", IEEE TSAP 2001, the C_max measure) adds up the posteriors of
// every arc that carries the same word over a frame, and takes the best frame of the word's span.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace hotline::asr {

// One arc of a word lattice: a word over frames [start_frame, end_frame] (both inclusive) with
// its posterior probability in [0, 1].
struct LatticeArc {
  std::string word;
  int start_frame = 0;
  int end_frame = 0;
  double posterior = 0;
};

// One word of the recognized transcript with its frames (both inclusive).
struct HypothesisWord {
  std::string word;
  int start_frame = 0;
  int end_frame = 0;
};

// For each hypothesis word, in order: the largest, over the frames of its span, of the summed
// posteriors of the arcs with the same word that cover that frame, capped at 1. A word with an
// empty or inverted span, or with no arc of its own, gets 0. O(words * (arcs + span)).
std::vector<float> FramePosteriorConfidences(std::span<const LatticeArc> arcs,
                                             std::span<const HypothesisWord> hypothesis);

// The utterance's confidence from its words' confidences: their mean (0 for no words). The mean
// was chosen over the minimum on the Banking77 dev split (docs/speech-in.md, "Confidence").
float UtteranceConfidence(std::span<const float> word_confidences);

}  // namespace hotline::asr
