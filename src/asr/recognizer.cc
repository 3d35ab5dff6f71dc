#include "asr/recognizer.h"

#include <string>

#include "asr/openai/openai_recognizer.h"
#include "asr/pocketsphinx/pocketsphinx_recognizer.h"
#include "asr/whisper/whisper_recognizer.h"
#include "net/http_client.h"
#include "net/url.h"

namespace hotline::asr {

Status PocketsphinxConfig::Validate() const {
  if (acoustic_model.empty() || dictionary.empty()) {
    return InvalidArgumentError("acoustic_model and dictionary must be set (apt install pocketsphinx-en-us)");
  }
  if (generic_lm.empty() && domain_lm.empty()) {
    return InvalidArgumentError("set generic_lm, domain_lm or both");
  }
  if (lm_mode != "interpolated" && lm_mode != "switched") {
    return InvalidArgumentError("lm_mode must be 'interpolated' or 'switched', got '" + lm_mode + "'");
  }
  if (lm_mode == "interpolated" && !domain_lm.empty() && generic_lm.empty()) {
    return InvalidArgumentError("lm_mode 'interpolated' needs generic_lm as well as domain_lm");
  }
  if (!(domain_weight > 0 && domain_weight < 1)) {
    return InvalidArgumentError("domain_weight must be in (0, 1), got " + std::to_string(domain_weight));
  }
  if (!(language_weight > 0 && language_weight <= 50)) {
    return InvalidArgumentError("language_weight must be in (0, 50], got " +
                                std::to_string(language_weight));
  }
  if (!(posterior_scale > 0 && posterior_scale <= 1000)) {
    return InvalidArgumentError("posterior_scale must be in (0, 1000], got " +
                                std::to_string(posterior_scale));
  }
  if (!(beam > 0 && beam < 1) || !(word_beam > 0 && word_beam < 1)) {
    return InvalidArgumentError("beam and word_beam are probabilities in (0, 1), e.g. 1e-48");
  }
  if (max_streams < 1 || max_streams > 4096) {
    return InvalidArgumentError("max_streams must be in [1, 4096], got " + std::to_string(max_streams));
  }
  if (partial_interval_ms < 20 || partial_interval_ms > 5000) {
    return InvalidArgumentError("partial_interval_ms must be in [20, 5000], got " +
                                std::to_string(partial_interval_ms));
  }
  if (max_utterance_s < 1 || max_utterance_s > 3600) {
    return InvalidArgumentError("max_utterance_s must be in [1, 3600], got " +
                                std::to_string(max_utterance_s));
  }
  if (!(telephone_band_fill_dbfs <= 0 && telephone_band_fill_dbfs >= -90)) {
    return InvalidArgumentError("telephone_band_fill_dbfs must be in [-90, 0] (0 disables), got " +
                                std::to_string(telephone_band_fill_dbfs));
  }
  return Status::Ok();
}

Status OpenAiAsrConfig::Validate() const {
  if (auto parsed = net::ParseHttpUrl(url); !parsed.ok()) return parsed.status().WithContext("url");
  if (model.empty()) return InvalidArgumentError("model must be set (e.g. whisper-1)");
  if (timeout_ms < 100 || timeout_ms > 600000) {
    return InvalidArgumentError("timeout_ms must be in [100, 600000], got " + std::to_string(timeout_ms));
  }
  if (max_utterance_s < 1 || max_utterance_s > 3600) {
    return InvalidArgumentError("max_utterance_s must be in [1, 3600], got " +
                                std::to_string(max_utterance_s));
  }
  if (max_streams < 1 || max_streams > 100000) {
    return InvalidArgumentError("max_streams must be in [1, 100000], got " + std::to_string(max_streams));
  }
  if (!ca_file.empty()) {
    RETURN_IF_ERROR(net::CheckTrustedAuthorities(ca_file).WithContext("ca_file"));
  }
  return Status::Ok();
}

Status WhisperConfig::Validate() const {
  // An empty model_path is fine while another backend is chosen (AsrConfig::Validate).
  if (language.empty()) {
    return InvalidArgumentError("language must be a Whisper language code (en, zh, ...) or 'auto'");
  }
  if (threads < 1 || threads > 64) {
    return InvalidArgumentError("threads must be in [1, 64], got " + std::to_string(threads));
  }
  if (max_streams < 1 || max_streams > 1024) {
    return InvalidArgumentError("max_streams must be in [1, 1024], got " +
                                std::to_string(max_streams));
  }
  if (partial_interval_ms != 0 && (partial_interval_ms < 100 || partial_interval_ms > 10000)) {
    return InvalidArgumentError(
        "partial_interval_ms must be 0 (no partials) or in [100, 10000], got " +
        std::to_string(partial_interval_ms));
  }
  if (max_utterance_s < 1 || max_utterance_s > 30) {
    return InvalidArgumentError(
        "max_utterance_s must be in [1, 30] (Whisper reads one 30 s window), got " +
        std::to_string(max_utterance_s));
  }
  if (max_tokens < 1 || max_tokens > 224) {
    return InvalidArgumentError(
        "max_tokens must be in [1, 224] (Whisper samples at most half of its 448-token "
        "context), got " + std::to_string(max_tokens));
  }
  if (temperature_fallback) {
    return InvalidArgumentError(
        "temperature_fallback is not implemented (the whisper backend decodes greedily); set it "
        "to false");
  }
  if (!(no_speech_threshold >= 0 && no_speech_threshold <= 1)) {
    return InvalidArgumentError(
        "no_speech_threshold must be in [0, 1] (1 disables the rule), got " +
        std::to_string(no_speech_threshold));
  }
  return Status::Ok();
}

Status AsrConfig::Validate() const {
  if (backend != "pocketsphinx" && backend != "openai" && backend != "whisper") {
    return InvalidArgumentError("backend must be 'pocketsphinx', 'openai' or 'whisper', got '" +
                                backend + "'");
  }
  if (stable_ms < 0 || stable_ms > 10000) {
    return InvalidArgumentError("stable_ms must be in [0, 10000], got " + std::to_string(stable_ms));
  }
  if (backend == "whisper" && whisper.model_path.empty()) {
    return InvalidArgumentError(
        "whisper.model_path must name a Whisper GGUF; make one from a whisper.cpp model with "
        "`hotline engine convert-whisper ggml-base.bin -o whisper-base.gguf`");
  }
  RETURN_IF_ERROR(turn.Validate().WithContext("turn"));
  return Status::Ok();
}

Result<std::unique_ptr<Recognizer>> CreateRecognizer(const AsrConfig& config) {
  RETURN_IF_ERROR(config.Validate().WithContext("asr"));
  if (config.backend == "pocketsphinx") {
    RETURN_IF_ERROR(config.pocketsphinx.Validate().WithContext("asr.pocketsphinx"));
    ASSIGN_OR_RETURN(auto r, PocketsphinxRecognizer::Create(config.pocketsphinx, config.stable_ms));
    return std::unique_ptr<Recognizer>(std::move(r));
  }
  if (config.backend == "whisper") {
    RETURN_IF_ERROR(config.whisper.Validate().WithContext("asr.whisper"));
    ASSIGN_OR_RETURN(auto r, WhisperRecognizer::Create(config.whisper, config.stable_ms));
    return std::unique_ptr<Recognizer>(std::move(r));
  }
  RETURN_IF_ERROR(config.openai.Validate().WithContext("asr.openai"));
  ASSIGN_OR_RETURN(auto r, OpenAiRecognizer::Create(config.openai));
  return std::unique_ptr<Recognizer>(std::move(r));
}

}  // namespace hotline::asr
