#include "tts/synthesizer.h"

#include "net/url.h"
#include "tts/espeak/espeak_synthesizer.h"
#include "tts/flite/flite_synthesizer.h"
#include "tts/openai/openai_synthesizer.h"

namespace hotline::tts {

Status FliteConfig::Validate() const {
  bool known = false;
  for (const auto& n : FliteVoiceNames()) known |= (n == voice);
  if (!known) {
    std::string names;
    for (const auto& n : FliteVoiceNames()) names += (names.empty() ? "" : ", ") + n;
    return InvalidArgumentError("voice '" + voice + "' is not a flite voice (use one of: " + names +
                                ")");
  }
  if (chunk_ms < 5 || chunk_ms > 1000) return InvalidArgumentError("chunk_ms must be in [5, 1000]");
  if (!(rate >= 0.25 && rate <= 4.0)) return InvalidArgumentError("rate must be in [0.25, 4.0]");
  return Status::Ok();
}

Status EspeakConfig::Validate() const {
  if (voice.empty() || voice.size() > 64 ||
      voice.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+") !=
          std::string::npos) {
    return InvalidArgumentError("voice '" + voice +
                                "' is not a valid espeak-ng voice name (e.g. en-us, de, cmn)");
  }
  if (rate_wpm < 80 || rate_wpm > 450) return InvalidArgumentError("rate_wpm must be in [80, 450]");
  if (chunk_ms < 5 || chunk_ms > 1000) return InvalidArgumentError("chunk_ms must be in [5, 1000]");
  return Status::Ok();
}

Status OpenAiTtsConfig::Validate() const {
  if (auto parsed = net::ParseHttpUrl(url); !parsed.ok()) return parsed.status().WithContext("url");
  if (model.empty()) return InvalidArgumentError("model must not be empty");
  if (voice.empty()) return InvalidArgumentError("voice must not be empty");
  if (response_format != "pcm" && response_format != "wav") {
    return InvalidArgumentError("response_format must be pcm or wav, got '" + response_format + "'");
  }
  RETURN_IF_ERROR(audio::CheckSampleRate(pcm_sample_rate_hz).WithContext("pcm_sample_rate_hz"));
  if (chunk_ms < 5 || chunk_ms > 1000) return InvalidArgumentError("chunk_ms must be in [5, 1000]");
  if (max_audio_bytes < 1024) return InvalidArgumentError("max_audio_bytes must be >= 1024");
  return http.Validate().WithContext("http");
}

Status TtsConfig::Validate() const {
  if (backend != "flite" && backend != "espeak-ng" && backend != "openai") {
    return InvalidArgumentError("backend '" + backend + "' is unknown (use flite, espeak-ng or openai)");
  }
  if (max_text_bytes < 16 || max_text_bytes > (1 << 20)) {
    return InvalidArgumentError("max_text_bytes must be in [16, 1048576]");
  }
  // Only the chosen backend's section must be valid.
  if (backend == "flite") return flite.Validate().WithContext("flite");
  if (backend == "espeak-ng") return espeak_ng.Validate().WithContext("espeak_ng");
  return openai.Validate().WithContext("openai");
}

Status CheckSynthesisText(std::string_view text, int max_text_bytes) {
  if (text.size() > static_cast<size_t>(max_text_bytes)) {
    return InvalidArgumentError("text to synthesize is " + std::to_string(text.size()) +
                                " bytes, more than tts.max_text_bytes=" +
                                std::to_string(max_text_bytes) + " (split it into sentences)");
  }
  if (text.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("text to synthesize contains a NUL byte");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Synthesizer>> CreateSynthesizer(const TtsConfig& config) {
  RETURN_IF_ERROR(config.Validate().WithContext("tts"));
  if (config.backend == "flite") return CreateFliteSynthesizer(config.flite, config.max_text_bytes);
  if (config.backend == "espeak-ng") {
    return CreateEspeakSynthesizer(config.espeak_ng, config.max_text_bytes);
  }
  return CreateOpenAiSynthesizer(config.openai, config.max_text_bytes);
}

Result<audio::AudioBuffer> SynthesizeToBuffer(Synthesizer& synth, std::string_view text,
                                              const CancelToken* cancel) {
  audio::AudioBuffer out;
  out.sample_rate_hz = synth.sample_rate_hz();
  RETURN_IF_ERROR(synth.Synthesize(
      text,
      [&](std::span<const int16_t> samples) {
        out.samples.insert(out.samples.end(), samples.begin(), samples.end());
        return Status::Ok();
      },
      cancel));
  return out;
}

}  // namespace hotline::tts
