#include "engine/whisper_mel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>

#include "engine/whisper_format.h"

namespace hotline::engine {
namespace {

constexpr int kN = kWhisperFftSize;        // 400
constexpr int kHop = kWhisperHopSize;      // 160
constexpr int kPad = kWhisperFftSize / 2;  // 200: torch.stft(center=True)
// 400 = 4 * 4 * 5 * 5; the recursion splits by these factors in order.
constexpr int kFactors[] = {4, 4, 5, 5};
constexpr size_t kMaxSamples = size_t{1} << 29;  // keeps every index in int range

// Slaney's mel scale as librosa implements it (htk=False): linear below 1 kHz, 200/3 Hz a mel,
// logarithmic above with 27 mels per factor 6.4.
constexpr double kFsp = 200.0 / 3.0;
constexpr double kMinLogHz = 1000.0;
constexpr double kMinLogMel = kMinLogHz / kFsp;  // 15
const double kLogStep = std::log(6.4) / 27.0;

double HzToMel(double hz) {
  if (hz >= kMinLogHz) return kMinLogMel + std::log(hz / kMinLogHz) / kLogStep;
  return hz / kFsp;
}
double MelToHz(double mel) {
  if (mel >= kMinLogMel) return kMinLogHz * std::exp(kLogStep * (mel - kMinLogMel));
  return kFsp * mel;
}

struct Cplx {
  double re;
  double im;
};

// Decimation in time over kFactors: `out` (n values) receives the DFT of in[0], in[stride], ...
// tw[j] = exp(-2 pi i j / 400); at this level W_n = tw[stride].
void FftRec(const Cplx* in, int stride, Cplx* out, int n, const int* factor, const Cplx* tw) {
  const int p = *factor;
  const int m = n / p;
  if (m == 1) {
    for (int j = 0; j < p; ++j) out[j] = in[j * stride];
  } else {
    for (int q = 0; q < p; ++q) FftRec(in + q * stride, stride * p, out + q * m, m, factor + 1, tw);
  }
  // X[k + r m] = sum_q (W_n^{q k} Y_q[k]) W_p^{q r}, W_p = tw[400 / p].
  const int wp = kN / p;
  Cplx t[5];
  for (int k = 0; k < m; ++k) {
    for (int q = 0; q < p; ++q) {
      const Cplx y = out[q * m + k];
      const Cplx w = tw[q * k * stride];
      t[q] = {y.re * w.re - y.im * w.im, y.re * w.im + y.im * w.re};
    }
    for (int r = 0; r < p; ++r) {
      double re = t[0].re, im = t[0].im;
      for (int q = 1; q < p; ++q) {
        const Cplx w = tw[((q * r) % p) * wp];
        re += t[q].re * w.re - t[q].im * w.im;
        im += t[q].re * w.im + t[q].im * w.re;
      }
      out[k + r * m] = {re, im};
    }
  }
}

}  // namespace

WhisperMelFilters WhisperMelFilters::Compute(int n_mels) {
  WhisperMelFilters f;
  n_mels = std::clamp(n_mels, 1, 512);
  f.n_mels = n_mels;
  f.weights.assign(static_cast<size_t>(n_mels) * kWhisperFftBins, 0.0f);
  // librosa.filters.mel: band edges equally spaced in mel from 0 Hz to sr / 2.
  const double min_mel = HzToMel(0.0);
  const double max_mel = HzToMel(kWhisperSampleRateHz / 2.0);
  std::vector<double> edges(static_cast<size_t>(n_mels) + 2);
  const double step = (max_mel - min_mel) / static_cast<double>(n_mels + 1);
  for (size_t i = 0; i < edges.size(); ++i) {
    edges[i] = MelToHz(min_mel + step * static_cast<double>(i));
  }
  edges.back() = MelToHz(max_mel);  // np.linspace ends exactly on stop
  for (int m = 0; m < n_mels; ++m) {
    const double lo = edges[static_cast<size_t>(m)];
    const double mid = edges[static_cast<size_t>(m) + 1];
    const double hi = edges[static_cast<size_t>(m) + 2];
    const double enorm = 2.0 / (hi - lo);  // Slaney: constant area per band
    for (int k = 0; k < kWhisperFftBins; ++k) {
      const double hz = k * static_cast<double>(kWhisperSampleRateHz) / kN;
      const double lower = (hz - lo) / (mid - lo);
      const double upper = (hi - hz) / (hi - mid);
      const double w = std::max(0.0, std::min(lower, upper)) * enorm;
      f.weights[static_cast<size_t>(m) * kWhisperFftBins + static_cast<size_t>(k)] =
          static_cast<float>(w);
    }
  }
  return f;
}

Result<WhisperMelFilters> WhisperMelFilters::FromGguf(const GgufFile& file) {
  const GgufTensorInfo* t = file.FindTensor("mel_filters");
  if (t == nullptr) {
    ASSIGN_OR_RETURN(int64_t n_mels, file.GetInt("whisper.n_mels"));
    if (n_mels != 80 && n_mels != 128) {
      return InvalidArgumentError(file.name() + ": whisper.n_mels is " + std::to_string(n_mels) +
                                  ", expected 80 or 128");
    }
    return Compute(static_cast<int>(n_mels));
  }
  if (t->type != GgmlType::F32 || t->n_dims != 2 || t->ne[0] != kWhisperFftBins || t->ne[1] < 1 ||
      t->ne[1] > 512) {
    return InvalidArgumentError(file.name() +
                                ": tensor mel_filters must be F32 with dims {201, "
                                "n_mels}; it is " +
                                std::string(TypeName(t->type)) + " {" + std::to_string(t->ne[0]) +
                                ", " + std::to_string(t->ne[1]) + "}");
  }
  if (Result<int64_t> n_mels = file.GetInt("whisper.n_mels"); n_mels.ok() && *n_mels != t->ne[1]) {
    return InvalidArgumentError(file.name() + ": mel_filters has " + std::to_string(t->ne[1]) +
                                " bands but whisper.n_mels is " + std::to_string(*n_mels));
  }
  WhisperMelFilters f;
  f.n_mels = static_cast<int>(t->ne[1]);
  f.weights.resize(static_cast<size_t>(t->num_elements()));
  std::memcpy(f.weights.data(), t->data, f.weights.size() * sizeof(float));
  for (float w : f.weights) {
    if (!std::isfinite(w)) return InvalidArgumentError(file.name() + ": mel_filters holds NaN/inf");
  }
  return f;
}

WhisperMel::WhisperMel(WhisperMelFilters filters) : filters_(std::move(filters)) {
  const int n_mels = filters_.n_mels;
  band_begin_.assign(static_cast<size_t>(n_mels), 0);
  band_end_.assign(static_cast<size_t>(n_mels), 0);
  for (int m = 0; m < n_mels; ++m) {
    const float* w = filters_.weights.data() + static_cast<size_t>(m) * kWhisperFftBins;
    int b = 0, e = kWhisperFftBins;
    while (b < e && w[b] == 0.0f) ++b;
    while (e > b && w[e - 1] == 0.0f) --e;
    band_begin_[static_cast<size_t>(m)] = b;
    band_end_[static_cast<size_t>(m)] = e;
  }
  window_.resize(kN);
  tw_re_.resize(kN);
  tw_im_.resize(kN);
  for (int i = 0; i < kN; ++i) {
    const double a = 2.0 * std::numbers::pi * i / kN;
    window_[static_cast<size_t>(i)] = 0.5 - 0.5 * std::cos(a);  // torch.hann_window(periodic)
    tw_re_[static_cast<size_t>(i)] = std::cos(a);
    tw_im_[static_cast<size_t>(i)] = -std::sin(a);
  }
}

void WhisperMel::LogMelFrames(std::span<const float> padded, int n_frames, float* out) const {
  const int n_mels = filters_.n_mels;
  Cplx tw[kN], in[kN], spec[kN];
  for (int i = 0; i < kN; ++i)
    tw[i] = {tw_re_[static_cast<size_t>(i)], tw_im_[static_cast<size_t>(i)]};
  double power[kWhisperFftBins];
  for (int t = 0; t < n_frames; ++t) {
    const float* x = padded.data() + static_cast<size_t>(t) * kHop;
    for (int i = 0; i < kN; ++i) in[i] = {x[i] * window_[static_cast<size_t>(i)], 0.0};
    FftRec(in, 1, spec, kN, kFactors, tw);
    for (int k = 0; k < kWhisperFftBins; ++k)
      power[k] = spec[k].re * spec[k].re + spec[k].im * spec[k].im;
    float* row = out + static_cast<size_t>(t) * static_cast<size_t>(n_mels);
    for (int m = 0; m < n_mels; ++m) {
      const float* w = filters_.weights.data() + static_cast<size_t>(m) * kWhisperFftBins;
      double sum = 0.0;
      for (int k = band_begin_[static_cast<size_t>(m)]; k < band_end_[static_cast<size_t>(m)];
           ++k) {
        sum += static_cast<double>(w[k]) * power[k];
      }
      row[m] = static_cast<float>(std::log10(std::max(sum, 1e-10)));
    }
  }
}

void WhisperMel::Normalize(std::span<float> log_mel, float max_value) {
  const float floor = max_value - 8.0f;
  for (float& v : log_mel) v = (std::max(v, floor) + 4.0f) / 4.0f;
}

Result<WhisperMelOutput> WhisperMel::Compute(std::span<const float> pcm) const {
  const size_t n = pcm.size();
  if (n <= static_cast<size_t>(kPad)) {
    return InvalidArgumentError("whisper mel: " + std::to_string(n) +
                                " samples are too few; the 200-sample reflect padding needs at "
                                "least 201 (use ComputePadded for short audio)");
  }
  if (n > kMaxSamples) {
    return InvalidArgumentError("whisper mel: " + std::to_string(n) + " samples are too many");
  }
  const int n_frames = static_cast<int>(n / kHop);
  // Reflect padding as torch's "reflect" (the edge sample is not repeated).
  std::vector<float> padded(n + 2 * kPad);
  for (size_t i = 0; i < padded.size(); ++i) {
    const int64_t j = static_cast<int64_t>(i) - kPad;
    const int64_t last = static_cast<int64_t>(n) - 1;
    const int64_t src = j < 0 ? -j : (j > last ? 2 * last - j : j);
    padded[i] = pcm[static_cast<size_t>(src)];
  }
  WhisperMelOutput out;
  out.n_frames = n_frames;
  out.n_mels = filters_.n_mels;
  out.mel.resize(static_cast<size_t>(n_frames) * static_cast<size_t>(out.n_mels));
  LogMelFrames(padded, n_frames, out.mel.data());
  const float max_value =
      out.mel.empty() ? 0.0f : *std::max_element(out.mel.begin(), out.mel.end());
  Normalize(out.mel, max_value);
  return out;
}

Result<WhisperMelOutput> WhisperMel::ComputePadded(std::span<const float> pcm) const {
  const size_t n = pcm.size();
  if (n > kMaxSamples) {
    return InvalidArgumentError("whisper mel: " + std::to_string(n) + " samples are too many");
  }
  WhisperMelOutput out;
  out.n_mels = filters_.n_mels;
  if (n == 0) return out;
  const int n_frames = static_cast<int>(2 * ((n + 2 * kHop - 1) / (2 * kHop)));
  // Frames that touch the audio (t * 160 - 200 < n) also count for the maximum, as in Whisper's
  // spectrogram of the whole zero-padded signal; later frames are all zeros (log10 = -10), which
  // never raise the maximum.
  const int touching = static_cast<int>((n + kPad - 1) / kHop) + 1;
  const int n_computed = std::max(n_frames, touching);
  // The signal is pcm followed by zeros; the left reflection reads it (zeros past the audio),
  // and no computed frame reaches the right end, so no right reflection is needed.
  const size_t len = static_cast<size_t>(n_computed - 1) * kHop + kN;
  std::vector<float> padded(len, 0.0f);
  auto signal = [&](size_t i) { return i < n ? pcm[i] : 0.0f; };
  for (size_t i = 0; i < len; ++i) {
    padded[i] = i < static_cast<size_t>(kPad) ? signal(static_cast<size_t>(kPad) - i)
                                              : signal(i - static_cast<size_t>(kPad));
  }
  std::vector<float> all(static_cast<size_t>(n_computed) * static_cast<size_t>(out.n_mels));
  LogMelFrames(padded, n_computed, all.data());
  const float max_value = std::max(*std::max_element(all.begin(), all.end()), -10.0f);
  all.resize(static_cast<size_t>(n_frames) * static_cast<size_t>(out.n_mels));
  Normalize(all, max_value);
  out.n_frames = n_frames;
  out.mel = std::move(all);
  return out;
}

}  // namespace hotline::engine
