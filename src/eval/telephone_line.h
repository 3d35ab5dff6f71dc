// The telephone line of the spoken benchmark: speech at any rate → 8 kHz → optional line noise at
// a signal-to-noise ratio → G.711 μ-law and back, as a caller's audio reaches Hotline over a
// phone call.
//
// Noise is white Gaussian noise at the 8 kHz rate (the whole telephone band), scaled against the
// power of the speech's active part (frames within 30 dB of the loudest, so that the silence
// around synthesized speech does not lower the speech level), from a generator seeded by the
// caller: the same question gets the same noise in every run.
//
// Thread-safety: pure function. Allocates the output.
#pragma once

#include <cstdint>
#include <vector>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::eval {

struct LineOptions {
  // Signal-to-noise ratio of the added noise (dB); +infinity adds none.
  double snr_db = 0;
  bool add_noise = false;
  uint64_t seed = 1;
};

// 8 kHz PCM16 samples as decoded from the μ-law line.
Result<std::vector<int16_t>> ThroughTelephoneLine(audio::AudioView speech,
                                                  const LineOptions& options);

// Power (mean square, PCM16 units) of the active part of `pcm` (20 ms frames within 30 dB of the
// loudest frame). 0 for silence.
double ActiveSpeechPower(const std::vector<int16_t>& pcm, int rate_hz);

}  // namespace hotline::eval
