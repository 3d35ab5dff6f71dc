#include "tts/espeak/espeak_synthesizer.h"

#include <espeak-ng/speak_lib.h>

#include <mutex>

#include "tts/chunk_emitter.h"

namespace hotline::tts {
namespace {

// Everything espeak-ng touches is guarded by this mutex.
std::mutex g_espeak_mu;
int g_espeak_rate_hz = 0;          // guarded; 0 until initialized
std::string g_espeak_voice;        // guarded; voice currently selected in the library
int g_espeak_wpm = -1;             // guarded; rate currently set in the library

int OnSynth(short* wav, int numsamples, espeak_EVENT* events) {
  auto* emitter = static_cast<ChunkEmitter*>(events != nullptr ? events->user_data : nullptr);
  if (emitter == nullptr) return 1;
  if (wav != nullptr && numsamples > 0) {
    if (!emitter->Add(std::span<const int16_t>(wav, static_cast<size_t>(numsamples))).ok()) return 1;
  }
  return emitter->status().ok() ? 0 : 1;  // non-zero asks espeak-ng to abort
}

// REQUIRES: g_espeak_mu held.
Status EnsureInitialized(const EspeakConfig& config) {
  if (g_espeak_rate_hz > 0) return Status::Ok();
  int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, config.chunk_ms,
                               config.data_path.empty() ? nullptr : config.data_path.c_str(),
                               espeakINITIALIZE_DONT_EXIT);
  if (rate <= 0) {
    return UnavailableError("espeak-ng failed to initialize (data path '" +
                            (config.data_path.empty() ? std::string("default") : config.data_path) +
                            "'): install espeak-ng-data or set tts.espeak_ng.data_path");
  }
  espeak_SetSynthCallback(&OnSynth);
  g_espeak_rate_hz = rate;
  return Status::Ok();
}

// REQUIRES: g_espeak_mu held.
Status SelectVoice(const EspeakConfig& config) {
  if (g_espeak_voice != config.voice) {
    if (espeak_SetVoiceByName(config.voice.c_str()) != EE_OK) {
      g_espeak_voice.clear();
      return NotFoundError("espeak-ng has no voice '" + config.voice +
                           "' (list them with `espeak-ng --voices`)");
    }
    g_espeak_voice = config.voice;
    g_espeak_wpm = -1;  // a new voice resets the rate
  }
  if (g_espeak_wpm != config.rate_wpm) {
    if (espeak_SetParameter(espeakRATE, config.rate_wpm, 0) != EE_OK) {
      return InternalError("espeak-ng rejected rate_wpm=" + std::to_string(config.rate_wpm));
    }
    g_espeak_wpm = config.rate_wpm;
  }
  return Status::Ok();
}

class EspeakSynthesizer : public Synthesizer {
 public:
  EspeakSynthesizer(const EspeakConfig& config, int rate_hz, int max_text_bytes)
      : config_(config),
        rate_hz_(rate_hz),
        max_text_bytes_(max_text_bytes),
        voice_id_("espeak-ng/" + config.voice + "@" + std::to_string(config.rate_wpm)) {}

  std::string_view backend() const override { return "espeak-ng"; }
  const std::string& voice_id() const override { return voice_id_; }
  int sample_rate_hz() const override { return rate_hz_; }

  Status Synthesize(std::string_view text, const AudioChunkCallback& on_chunk,
                    const CancelToken* cancel) override {
    RETURN_IF_ERROR(CheckSynthesisText(text, max_text_bytes_));
    if (IsCancelled(cancel)) return CancelledError("speech synthesis cancelled");
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return Status::Ok();
    std::string input(text);
    ChunkEmitter emitter(audio::SamplesForMs(rate_hz_, config_.chunk_ms), on_chunk, cancel);
    {
      std::lock_guard<std::mutex> lock(g_espeak_mu);
      RETURN_IF_ERROR(SelectVoice(config_));
      espeak_ERROR err = espeak_Synth(input.c_str(), input.size() + 1, 0, POS_CHARACTER, 0,
                                      espeakCHARS_UTF8, nullptr, &emitter);
      RETURN_IF_ERROR(emitter.status());
      if (err != EE_OK) return InternalError("espeak-ng failed to synthesize the text");
    }
    return emitter.Finish();
  }

 private:
  EspeakConfig config_;
  int rate_hz_;
  int max_text_bytes_;
  std::string voice_id_;
};

}  // namespace

Result<std::unique_ptr<Synthesizer>> CreateEspeakSynthesizer(const EspeakConfig& config,
                                                             int max_text_bytes) {
  int rate = 0;
  {
    std::lock_guard<std::mutex> lock(g_espeak_mu);
    RETURN_IF_ERROR(EnsureInitialized(config));
    RETURN_IF_ERROR(SelectVoice(config));  // fail at creation, not at the first sentence
    rate = g_espeak_rate_hz;
  }
  return std::unique_ptr<Synthesizer>(new EspeakSynthesizer(config, rate, max_text_bytes));
}

}  // namespace hotline::tts
