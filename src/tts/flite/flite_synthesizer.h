// The flite backend: CMU Flite's English voices, compiled into the process (Debian flite1-dev).
//
// Streaming: flite calls back with audio while it generates the waveform (its
// cst_audio_streaming_info hook), after text analysis and acoustic parameter generation for the
// whole text; the first chunk therefore comes after a fraction of the sentence's synthesis time
// (figures in docs/speech-out.md). Cancel is checked on every piece flite hands over and stops
// its waveform generation.
//
// Shared state: each voice is registered once per process and never freed (a few MB; flite's
// register_* functions are not thread-safe, so registration is serialized here). Synthesis of one
// utterance reads the voice but writes only to its own utterance (the streaming hook and rate are
// set on the utterance's features, not the voice's). Whether concurrent syntheses on one voice are
// safe is a property of flite we check by test (identical output serial vs. parallel; clean
// under AddressSanitizer, see flite_synthesizer_test.cc; a symbol audit of libflite finds no
// mutable globals besides its error jump buffer). A deployment that distrusts this sets
// tts.flite.serialize (per instance) or calls SetFliteSerialized(true) (whole process).
//
// Errors inside flite itself (it calls exit() on internal failures) cannot be caught; inputs are
// bounded and checked before they reach it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tts/synthesizer.h"

namespace hotline::tts {

// Voice names this build knows: cmu_us_slt, cmu_us_rms, cmu_us_awb, cmu_us_kal16, cmu_us_kal.
const std::vector<std::string>& FliteVoiceNames();

// Serializes all flite synthesis in the process (default: off, voices are used concurrently).
void SetFliteSerialized(bool serialized);

// REQUIRES: config.Validate() is OK. Registers the voice on first use.
Result<std::unique_ptr<Synthesizer>> CreateFliteSynthesizer(const FliteConfig& config,
                                                            int max_text_bytes);

}  // namespace hotline::tts
