#include "asr/turn_detector.h"

#include <algorithm>
#include <cmath>

#include "common/build_paths.h"

namespace hotline::asr {

Status TurnDetectorConfig::Validate() const {
  if (min_wait_ms < 20 || min_wait_ms > max_wait_ms || max_wait_ms > 10000) {
    return InvalidArgumentError(
        "turn waits must satisfy 20 <= min_wait_ms <= max_wait_ms <= 10000, "
        "got " +
        std::to_string(min_wait_ms) + " and " + std::to_string(max_wait_ms));
  }
  if (center_wait_ms < min_wait_ms || center_wait_ms > max_wait_ms) {
    return InvalidArgumentError("center_wait_ms must lie in [min_wait_ms, max_wait_ms], got " +
                                std::to_string(center_wait_ms));
  }
  if (!(ms_per_logit >= 0 && ms_per_logit <= 5000)) {
    return InvalidArgumentError("ms_per_logit must be in [0, 5000]");
  }
  if (open_word_ms < 0 || open_word_ms > 2000) {
    return InvalidArgumentError("open_word_ms must be in [0, 2000], got " +
                                std::to_string(open_word_ms));
  }
  for (double w : {bias, lexical_weight, open_word_logit, pitch_fall_weight, energy_drop_weight,
                   lengthening_weight}) {
    if (!std::isfinite(w) || std::abs(w) > 100) {
      return InvalidArgumentError("turn detector weights must be finite and within +-100");
    }
  }
  return Status::Ok();
}

std::string TurnEndModelPath(const TurnDetectorConfig& config) {
  if (!config.model.empty()) return config.model;
  return std::string(HOTLINE_ASSETS_DIR) + "/turns/turn_end.model";
}

Result<std::shared_ptr<const TurnEndModel>> LoadTurnEndModel(const TurnDetectorConfig& config) {
  ASSIGN_OR_RETURN(TurnEndModel m, TurnEndModel::Load(TurnEndModelPath(config)));
  return std::shared_ptr<const TurnEndModel>(std::make_shared<TurnEndModel>(std::move(m)));
}

TurnDetector::TurnDetector(const TurnDetectorConfig& config,
                           std::shared_ptr<const TurnEndModel> model)
    : config_(config), model_(std::move(model)) {
  Reset();
}

void TurnDetector::Reset() {
  prosody_.Reset();
  partial_.clear();
  lexical_p_ = model_ ? model_->prior() : 0.1;
  partial_changed_ms_ = -1;
}

void TurnDetector::OnFrame(audio::AudioView frame, bool speech, int64_t now_ms) {
  (void)now_ms;
  prosody_.Push(frame, speech);
}

void TurnDetector::OnPartial(std::string_view text, int64_t now_ms) {
  if (text == partial_) return;
  partial_.assign(text);
  partial_changed_ms_ = now_ms;
  lexical_p_ = model_ ? model_->EndProbability(text) : 0.1;
}

TurnEvidence TurnDetector::Evidence(int64_t now_ms) const {
  return Decide(config_, lexical_p_, partial_.empty(),
                partial_changed_ms_ < 0 ? -1 : now_ms - partial_changed_ms_, prosody_.features());
}

TurnEvidence TurnDetector::Decide(const TurnDetectorConfig& config, double lexical_p,
                                  bool partial_empty, int64_t ms_since_partial_change,
                                  const audio::ProsodyFeatures& prosody) {
  TurnEvidence e;
  e.lexical_p = std::clamp(lexical_p, 1e-4, 1 - 1e-4);
  e.open_word = partial_empty ||
                (ms_since_partial_change >= 0 && ms_since_partial_change < config.open_word_ms);
  e.prosody = prosody;
  double z = config.bias + config.lexical_weight * std::log(e.lexical_p / (1 - e.lexical_p));
  if (e.open_word) z += config.open_word_logit;
  if (prosody.valid) {
    z += config.pitch_fall_weight * std::clamp(prosody.pitch_fall_st, -6.0f, 6.0f);
    z += config.energy_drop_weight * std::clamp(prosody.energy_drop_db, -20.0f, 20.0f);
    z += config.lengthening_weight * std::clamp(prosody.lengthening - 1.0f, -1.0f, 3.0f);
  }
  e.logit = z;
  const double wait = config.center_wait_ms - config.ms_per_logit * z;
  e.wait_ms = static_cast<int>(std::lround(std::clamp(wait, static_cast<double>(config.min_wait_ms),
                                                      static_cast<double>(config.max_wait_ms))));
  return e;
}

}  // namespace hotline::asr
