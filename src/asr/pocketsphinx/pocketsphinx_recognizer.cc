#include "asr/pocketsphinx/pocketsphinx_recognizer.h"

#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asr/word_confidence.h"
#include "audio/resampler.h"
#include "common/log.h"

namespace hotline::asr {
namespace {

constexpr int kModelRateHz = 16000;
constexpr int kFrameRateHz = 100;  // pocketsphinx frames per second (-frate)

// pocketsphinx reports through a printf-style callback; route it into our log (its INFO chatter
// at debug level, its errors as warnings: the decoder's return codes carry the failure).
void SphinxLog(void* /*user*/, err_lvl_t level, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  std::string_view msg(buf, std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.remove_suffix(1);
  if (msg.empty()) return;
  if (level >= ERR_ERROR) {
    HLOG_WARN("pocketsphinx: {}", msg);
  } else {
    HLOG_DEBUG("pocketsphinx: {}", msg);
  }
}

std::once_flag g_log_once;

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// A word of pocketsphinx output worth keeping: not silence, sentence marks or fillers; without
// the "(2)" alternate-pronunciation suffix.
bool CleanWord(const char* raw, std::string& out) {
  if (raw == nullptr) return false;
  std::string_view w(raw);
  if (w.empty() || w[0] == '<' || w[0] == '[' || w[0] == '+') return false;
  if (size_t p = w.find('('); p != std::string_view::npos && p > 0) w = w.substr(0, p);
  out.assign(w);
  return true;
}

std::string CleanText(const char* hyp) {
  std::string out;
  if (hyp == nullptr) return out;
  std::string_view s(hyp);
  std::string word;
  while (!s.empty()) {
    size_t sp = s.find(' ');
    std::string token(s.substr(0, sp));
    s = sp == std::string_view::npos ? std::string_view() : s.substr(sp + 1);
    if (CleanWord(token.c_str(), word)) {
      if (!out.empty()) out += ' ';
      out += word;
    }
  }
  return out;
}

// Fills the empty 4-8 kHz band of upsampled telephone audio with faint noise (see
// PocketsphinxConfig::telephone_band_fill_dbfs): white noise from a fixed-seed generator through
// a 63-tap windowed-sinc high-pass at 4.2 kHz. No allocation after construction.
class BandFill {
 public:
  explicit BandFill(double level_dbfs) {
    constexpr double kPi = 3.14159265358979323846;
    constexpr double kCutoff = 4200.0 / kModelRateHz;  // cycles per sample
    double energy = 0;
    for (int n = 0; n < kTaps; ++n) {
      const int m = n - kTaps / 2;
      const double window = 0.54 - 0.46 * std::cos(2 * kPi * n / (kTaps - 1));
      const double lowpass = m == 0 ? 2 * kCutoff : std::sin(2 * kPi * kCutoff * m) / (kPi * m);
      taps_[n] = static_cast<float>(((m == 0 ? 1.0 : 0.0) - lowpass * window));
      energy += static_cast<double>(taps_[n]) * taps_[n];
    }
    // Uniform noise in [-1, 1) has RMS 1/sqrt(3); scale the filtered noise to the target level.
    gain_ = static_cast<float>(32768.0 * std::pow(10.0, level_dbfs / 20.0) * std::sqrt(3.0) /
                               std::sqrt(energy));
  }

  void Apply(std::vector<int16_t>& samples) {
    for (auto& s : samples) {
      state_ = state_ * 1103515245u + 12345u;
      history_[pos_] = static_cast<float>(static_cast<int32_t>(state_) >> 8) / 8388608.0f;
      float acc = 0;
      size_t k = pos_;
      for (int n = 0; n < kTaps; ++n) {
        acc += taps_[n] * history_[k];
        k = k == 0 ? kTaps - 1 : k - 1;
      }
      pos_ = (pos_ + 1) % kTaps;
      s = audio::SaturateToInt16(static_cast<int32_t>(s + std::lrint(acc * gain_)));
    }
  }

 private:
  static constexpr int kTaps = 63;
  std::array<float, kTaps> taps_{};
  std::array<float, kTaps> history_{};
  size_t pos_ = 0;
  uint32_t state_ = 20240229u;
  float gain_ = 0;
};

struct DecoderDeleter {
  void operator()(ps_decoder_t* ps) const { ps_free(ps); }
};
using DecoderPtr = std::unique_ptr<ps_decoder_t, DecoderDeleter>;

struct ConfigDeleter {
  void operator()(cmd_ln_t* c) const { cmd_ln_free_r(c); }
};
struct NgramDeleter {
  void operator()(ngram_model_t* m) const { ngram_model_free(m); }
};
using NgramPtr = std::unique_ptr<ngram_model_t, NgramDeleter>;

Status CheckReadable(const std::string& path, const char* what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFoundError(std::string(what) + " '" + path +
                         "' does not exist (install pocketsphinx-en-us, or fix the path)");
  }
  return Status::Ok();
}

}  // namespace

struct PocketsphinxRecognizer::Pool {
  PocketsphinxConfig config;
  int stable_ms = 300;
  mutable std::mutex mu;
  std::vector<DecoderPtr> idle;  // guarded by mu
  int built = 0;                 // decoders in existence or being built; guarded by mu
  // The acoustic model's initial cepstral mean (-cmninit); empty when it has none. Written once
  // by Create() before any stream exists.
  std::vector<mfcc_t> cmn_prior;

  // Reads -cmninit ("41.00,-5.29,...") from a decoder's configuration.
  static std::vector<mfcc_t> ReadCmnPrior(ps_decoder_t* ps) {
    std::vector<mfcc_t> prior;
    const char* text = cmd_ln_str_r(ps_get_config(ps), "-cmninit");
    if (text == nullptr) return prior;
    std::string_view rest(text);
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string item(rest.substr(0, comma));
      char* end = nullptr;
      float value = std::strtof(item.c_str(), &end);
      if (end == item.c_str()) return {};  // not a number list: leave CMN alone
      prior.push_back(static_cast<mfcc_t>(value));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return prior;
  }

  // Builds a decoder with its own copy of the configuration (ps_init writes into it).
  Result<DecoderPtr> Build() const {
    std::unique_ptr<cmd_ln_t, ConfigDeleter> cfg(cmd_ln_init(
        nullptr, ps_args(), TRUE, "-hmm", config.acoustic_model.c_str(), "-dict",
        config.dictionary.c_str(), "-lw", Fmt(config.language_weight).c_str(), "-beam",
        Fmt(config.beam).c_str(), "-wbeam", Fmt(config.word_beam).c_str(), "-samprate", "16000",
        "-fwdflat", config.fwdflat ? "yes" : "no", "-bestpath", config.bestpath ? "yes" : "no",
        "-ascale", Fmt(config.posterior_scale).c_str(), nullptr));
    if (!cfg) return InternalError("pocketsphinx rejected the decoder arguments");
    DecoderPtr ps(ps_init(cfg.get()));
    if (!ps) {
      return InvalidArgumentError("pocketsphinx could not load the acoustic model '" +
                                  config.acoustic_model + "' or dictionary '" + config.dictionary +
                                  "' (check the paths; run with --log-level debug for details)");
    }
    // Language models: read with the decoder's log-math so that they can be combined.
    auto read = [&](const std::string& path) -> Result<NgramPtr> {
      // ngram_model_read() takes its own reference on the log-math (LeakSanitizer-checked).
      NgramPtr lm(ngram_model_read(ps_get_config(ps.get()), path.c_str(), NGRAM_AUTO,
                                   ps_get_logmath(ps.get())));
      if (!lm) {
        return InvalidArgumentError("cannot read language model '" + path +
                                    "' (ARPA text or sphinx binary; rebuild it with "
                                    "`hotline asr build-lm`)");
      }
      return lm;
    };
    NgramPtr lm;
    if (config.domain_lm.empty()) {
      ASSIGN_OR_RETURN(lm, read(config.generic_lm));
    } else if (config.lm_mode == "switched") {
      ASSIGN_OR_RETURN(lm, read(config.domain_lm));
    } else {
      ASSIGN_OR_RETURN(NgramPtr generic, read(config.generic_lm));
      ASSIGN_OR_RETURN(NgramPtr domain, read(config.domain_lm));
      ngram_model_t* models[2] = {domain.get(), generic.get()};
      char domain_name[] = "domain";
      char generic_name[] = "generic";
      char* names[2] = {domain_name, generic_name};
      const float32 weights[2] = {static_cast<float32>(config.domain_weight),
                                  static_cast<float32>(1.0 - config.domain_weight)};
      lm.reset(ngram_model_set_init(ps_get_config(ps.get()), models, names, weights, 2));
      if (!lm) return InternalError("pocketsphinx could not interpolate the language models");
      // The set takes its own references on the two models; ours go with domain/generic.
    }
    if (ps_set_lm(ps.get(), "hotline", lm.get()) != 0 || ps_set_search(ps.get(), "hotline") != 0) {
      return InvalidArgumentError(
          "pocketsphinx could not build a search over the language model (do its words appear "
          "in the dictionary '" + config.dictionary + "'?)");
    }
    return ps;
  }

  Result<DecoderPtr> Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        DecoderPtr ps = std::move(idle.back());
        idle.pop_back();
        return ps;
      }
      if (built >= config.max_streams) {
        return ResourceExhaustedError("all " + std::to_string(config.max_streams) +
                                      " pocketsphinx streams are busy (raise "
                                      "asr.pocketsphinx.max_streams, or shed calls)");
      }
      ++built;
    }
    Result<DecoderPtr> ps = Build();
    if (!ps.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      --built;
    }
    return ps;
  }

  void Release(DecoderPtr ps) {
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(ps));
  }
};

namespace {

class PocketsphinxStream : public RecognizerStream {
 public:
  PocketsphinxStream(std::shared_ptr<PocketsphinxRecognizer::Pool> pool, DecoderPtr ps,
                     int input_rate_hz, std::unique_ptr<audio::Resampler> resampler)
      : pool_(std::move(pool)),
        ps_(std::move(ps)),
        input_rate_hz_(input_rate_hz),
        resampler_(std::move(resampler)) {
    if (resampler_ && pool_->config.telephone_band_fill_dbfs < 0) {
      band_fill_ = std::make_unique<BandFill>(pool_->config.telephone_band_fill_dbfs);
    }
    max_samples_ = static_cast<int64_t>(pool_->config.max_utterance_s) * kModelRateHz;
    partial_every_ = static_cast<int64_t>(pool_->config.partial_interval_ms) * kModelRateHz / 1000;
    stable_samples_ = static_cast<int64_t>(pool_->stable_ms) * kModelRateHz / 1000;
    resampled_.reserve(static_cast<size_t>(kModelRateHz / 5));
  }

  ~PocketsphinxStream() override {
    if (ps_ == nullptr) return;
    if (started_) ps_end_utt(ps_.get());
    pool_->Release(std::move(ps_));
  }

  Status Start() {
    if (pool_->config.cmn_per_stream && !pool_->cmn_prior.empty()) {
      feat_t* feat = ps_get_feat(ps_.get());
      if (feat != nullptr && feat->cmn_struct != nullptr &&
          feat->cmn_struct->veclen == static_cast<int32>(pool_->cmn_prior.size())) {
        cmn_live_set(feat->cmn_struct, pool_->cmn_prior.data());
      }
    }
    if (ps_start_utt(ps_.get()) != 0) return InternalError("pocketsphinx could not start an utterance");
    started_ = true;
    return Status::Ok();
  }

  Status AcceptFrames(audio::AudioView pcm) override {
    if (finished_) return FailedPreconditionError("stream already finished; create a new one");
    if (pcm.sample_rate_hz != input_rate_hz_) {
      return InvalidArgumentError("stream was created for " + std::to_string(input_rate_hz_) +
                                  " Hz audio, got " + std::to_string(pcm.sample_rate_hz) + " Hz");
    }
    std::span<const int16_t> samples = pcm.samples;
    if (resampler_) {
      resampled_.clear();
      RETURN_IF_ERROR(resampler_->Process(pcm.samples, resampled_));
      if (band_fill_) band_fill_->Apply(resampled_);
      samples = resampled_;
    }
    return Decode(samples);
  }

  const AsrPartial& partial() const override { return partial_; }

  Result<AsrResult> Finish() override {
    if (finished_) return FailedPreconditionError("stream already finished; create a new one");
    if (resampler_) {
      resampled_.clear();
      RETURN_IF_ERROR(resampler_->Flush(resampled_));
      if (band_fill_) band_fill_->Apply(resampled_);
      RETURN_IF_ERROR(Decode(resampled_));
    }
    finished_ = true;
    started_ = false;
    if (ps_end_utt(ps_.get()) < 0) return InternalError("pocketsphinx could not end the utterance");

    AsrResult result;
    result.audio_ms = samples_ * 1000 / kModelRateHz;
    int32 score = 0;
    result.text = CleanText(ps_get_hyp(ps_.get(), &score));
    if (result.text.empty()) return result;
    // ps_get_prob runs the lattice's forward-backward pass (with asr.pocketsphinx.bestpath):
    // the arcs' posteriors below come from it.
    ps_get_prob(ps_.get());
    logmath_t* lmath = ps_get_logmath(ps_.get());
    std::vector<HypothesisWord> spans;
    std::string word;
    // Segment frames count from the decoder's first utterance (pocketsphinx's stream), the
    // lattice's from this utterance's start, where its "<s>" is: the "<s>" segment gives the
    // offset, for word times from this stream's start and for the lattice arcs.
    int offset = 0;
    for (ps_seg_t* seg = ps_seg_iter(ps_.get()); seg != nullptr; seg = ps_seg_next(seg)) {
      int sf = 0, ef = 0;
      ps_seg_frames(seg, &sf, &ef);
      const char* raw = ps_seg_word(seg);
      if (raw != nullptr && std::string_view(raw) == "<s>") offset = sf;
      if (!CleanWord(raw, word)) continue;
      sf -= offset;
      ef -= offset;
      result.words.push_back(
          {word, int64_t{sf} * 1000 / kFrameRateHz, int64_t{ef + 1} * 1000 / kFrameRateHz, 0});
      spans.push_back({word, sf, ef});
    }
    // Without a lattice (asr.pocketsphinx.bestpath off) there is no estimate: 1, as the decoder
    // itself reports, so that no confidence floor turns every caller away.
    std::optional<std::vector<LatticeArc>> arcs = LatticeArcs(lmath);
    std::vector<float> confidences = arcs ? FramePosteriorConfidences(*arcs, spans)
                                          : std::vector<float>(spans.size(), 1.0f);
    for (size_t i = 0; i < confidences.size(); ++i) result.words[i].confidence = confidences[i];
    result.confidence = UtteranceConfidence(confidences);
    return result;
  }

 private:
  // The word arcs of the utterance's lattice with their posteriors; nullopt without a lattice
  // (no bestpath pass). Fillers and silences are left out; alternate pronunciations count as
  // their base word.
  std::optional<std::vector<LatticeArc>> LatticeArcs(logmath_t* lmath) {
    if (!pool_->config.bestpath) return std::nullopt;
    ps_lattice_t* dag = ps_get_lattice(ps_.get());  // owned by the decoder
    if (dag == nullptr) return std::nullopt;
    std::vector<LatticeArc> arcs;
    std::string word;
    for (ps_latlink_t* link = ps_lattice_traverse_edges(dag, nullptr, nullptr); link != nullptr;
         link = ps_lattice_traverse_next(dag, nullptr)) {
      if (!CleanWord(ps_latlink_baseword(dag, link), word)) continue;
      int16 sf = 0;
      int ef = ps_latlink_times(link, &sf);
      arcs.push_back({word, sf, ef, logmath_exp(lmath, ps_latlink_prob(dag, link, nullptr))});
    }
    return arcs;
  }

  Status Decode(std::span<const int16_t> samples) {
    if (samples.empty()) return Status::Ok();
    if (samples_ + static_cast<int64_t>(samples.size()) > max_samples_) {
      return ResourceExhaustedError("utterance longer than asr.pocketsphinx.max_utterance_s = " +
                                    std::to_string(pool_->config.max_utterance_s) + " s");
    }
    if (ps_process_raw(ps_.get(), samples.data(), samples.size(), FALSE, FALSE) < 0) {
      return InternalError("pocketsphinx failed to decode audio");
    }
    samples_ += static_cast<int64_t>(samples.size());
    if (samples_ - last_partial_at_ >= partial_every_) UpdatePartial();
    return Status::Ok();
  }

  // Partial hypotheses allocate (a string per update, every partial_interval_ms, not per frame).
  void UpdatePartial() {
    last_partial_at_ = samples_;
    int32 score = 0;
    std::string text = CleanText(ps_get_hyp(ps_.get(), &score));
    if (text != partial_.text) {
      partial_.text = std::move(text);
      partial_.stable = false;
      changed_at_ = samples_;
      ++partial_.revision;
    } else if (!partial_.stable && !partial_.text.empty() &&
               samples_ - changed_at_ >= stable_samples_) {
      partial_.stable = true;
      ++partial_.revision;
    }
  }

  std::shared_ptr<PocketsphinxRecognizer::Pool> pool_;
  DecoderPtr ps_;
  int input_rate_hz_;
  std::unique_ptr<audio::Resampler> resampler_;
  std::unique_ptr<BandFill> band_fill_;
  std::vector<int16_t> resampled_;
  bool started_ = false;
  bool finished_ = false;
  int64_t samples_ = 0;  // at 16 kHz
  int64_t max_samples_ = 0;
  int64_t partial_every_ = 0;
  int64_t stable_samples_ = 0;
  int64_t last_partial_at_ = 0;
  int64_t changed_at_ = 0;
  AsrPartial partial_;
};

}  // namespace

Result<std::unique_ptr<PocketsphinxRecognizer>> PocketsphinxRecognizer::Create(
    const PocketsphinxConfig& config, int stable_ms) {
  RETURN_IF_ERROR(config.Validate().WithContext("asr.pocketsphinx"));
  std::call_once(g_log_once, [] {
    err_set_logfp(nullptr);  // the configuration dump goes to the log file, not stderr
    err_set_callback(SphinxLog, nullptr);
  });
  RETURN_IF_ERROR(CheckReadable(config.acoustic_model, "acoustic model"));
  RETURN_IF_ERROR(CheckReadable(config.dictionary, "dictionary"));
  if (config.domain_lm.empty() || config.lm_mode == "interpolated") {
    RETURN_IF_ERROR(CheckReadable(config.generic_lm, "generic language model"));
  }
  if (!config.domain_lm.empty()) {
    RETURN_IF_ERROR(CheckReadable(config.domain_lm, "domain language model"));
  }
  auto pool = std::make_shared<Pool>();
  pool->config = config;
  pool->stable_ms = stable_ms;
  ASSIGN_OR_RETURN(DecoderPtr first, pool->Acquire());
  pool->cmn_prior = Pool::ReadCmnPrior(first.get());
  pool->Release(std::move(first));
  return std::unique_ptr<PocketsphinxRecognizer>(new PocketsphinxRecognizer(std::move(pool)));
}

PocketsphinxRecognizer::~PocketsphinxRecognizer() = default;

int PocketsphinxRecognizer::decoders() const {
  std::lock_guard<std::mutex> lock(pool_->mu);
  return pool_->built;
}

Result<std::unique_ptr<RecognizerStream>> PocketsphinxRecognizer::CreateStream(int input_rate_hz) {
  if (input_rate_hz != 8000 && input_rate_hz != kModelRateHz) {
    return InvalidArgumentError("pocketsphinx streams take 8000 or 16000 Hz audio, got " +
                                std::to_string(input_rate_hz) + " Hz");
  }
  std::unique_ptr<audio::Resampler> resampler;
  if (input_rate_hz != kModelRateHz) {
    ASSIGN_OR_RETURN(resampler, audio::Resampler::Create(input_rate_hz, kModelRateHz));
  }
  ASSIGN_OR_RETURN(DecoderPtr ps, pool_->Acquire());
  auto stream = std::make_unique<PocketsphinxStream>(pool_, std::move(ps), input_rate_hz,
                                                     std::move(resampler));
  RETURN_IF_ERROR(stream->Start());
  return std::unique_ptr<RecognizerStream>(std::move(stream));
}

}  // namespace hotline::asr
