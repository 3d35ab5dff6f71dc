// A caller's words as they reach Hotline over an 8 kHz telephone line, for the end-to-end call
// tests: synthesized by flite in a caller's voice (not the agent's), resampled to 8 kHz and, for
// Twilio-style transports, encoded G.711 μ-law.
//
//   auto end = caller.SendAudio(e2e::CallerSaysMulaw("how can i cancel my order"));
//   auto end = audiosocket_caller->SendAudio(e2e::CallerSaysPcm("how can i cancel my order"));
//
// A synthesis failure fails the calling test (EXPECT) and returns empty audio.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "audio/g711.h"
#include "audio/resampler.h"
#include "tts/synthesizer.h"

namespace hotline::e2e {

// The agent speaks with flite's default voice; callers use another one.
inline constexpr const char* kCallerVoice = "cmu_us_rms";

// `text` in flite voice `voice`, as 8 kHz PCM16 samples.
inline std::vector<int16_t> CallerSaysPcm(const std::string& text,
                                          const std::string& voice = kCallerVoice) {
  tts::TtsConfig tc;
  tc.flite.voice = voice;
  auto synth = tts::CreateSynthesizer(tc);
  EXPECT_TRUE(synth.ok()) << synth.status();
  if (!synth.ok()) return {};
  auto speech = tts::SynthesizeToBuffer(**synth, text);
  EXPECT_TRUE(speech.ok()) << speech.status();
  if (!speech.ok()) return {};
  auto narrow = audio::Resample(audio::AudioView(speech->samples, speech->sample_rate_hz), 8000);
  EXPECT_TRUE(narrow.ok()) << narrow.status();
  if (!narrow.ok()) return {};
  return std::move(narrow->samples);
}

// The same, encoded μ-law (one byte per sample).
inline std::string CallerSaysMulaw(const std::string& text,
                                   const std::string& voice = kCallerVoice) {
  const std::vector<int16_t> pcm = CallerSaysPcm(text, voice);
  std::string mulaw(pcm.size(), '\0');
  audio::EncodeMulaw(pcm,
                     std::span<uint8_t>(reinterpret_cast<uint8_t*>(mulaw.data()), mulaw.size()));
  return mulaw;
}

}  // namespace hotline::e2e
