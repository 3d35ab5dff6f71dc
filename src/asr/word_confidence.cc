#include "asr/word_confidence.h"

#include <algorithm>

namespace hotline::asr {

std::vector<float> FramePosteriorConfidences(std::span<const LatticeArc> arcs,
                                             std::span<const HypothesisWord> hypothesis) {
  std::vector<float> out;
  out.reserve(hypothesis.size());
  std::vector<double> mass;  // summed posterior per frame of the word's span
  for (const HypothesisWord& h : hypothesis) {
    if (h.end_frame < h.start_frame || h.start_frame < 0) {
      out.push_back(0);
      continue;
    }
    mass.assign(static_cast<size_t>(h.end_frame - h.start_frame) + 1, 0.0);
    for (const LatticeArc& a : arcs) {
      if (a.word != h.word || a.end_frame < h.start_frame || a.start_frame > h.end_frame) continue;
      if (!(a.posterior > 0)) continue;  // also drops NaN
      int from = std::max(a.start_frame, h.start_frame) - h.start_frame;
      int to = std::min(a.end_frame, h.end_frame) - h.start_frame;
      for (int f = from; f <= to; ++f) mass[static_cast<size_t>(f)] += a.posterior;
    }
    double best = *std::max_element(mass.begin(), mass.end());
    out.push_back(static_cast<float>(std::min(best, 1.0)));
  }
  return out;
}

float UtteranceConfidence(std::span<const float> word_confidences) {
  if (word_confidences.empty()) return 0;
  double sum = 0;
  for (float c : word_confidences) sum += c;
  return static_cast<float>(sum / static_cast<double>(word_confidences.size()));
}

}  // namespace hotline::asr
