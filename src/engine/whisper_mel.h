// Whisper's log-mel spectrogram, computed as openai/whisper whisper/audio.py log_mel_spectrogram()
// does:
//   16 kHz float PCM; STFT with a 400-point periodic Hann window, hop 160, center=True (reflect
//   padding of 200 samples on both sides); power |X|^2 of the 201 bins; the last STFT frame
//   dropped (stft[..., :-1]), so N samples give N / 160 frames; mel = filters . power;
//   log10(max(mel, 1e-10)); x = max(x, max_over_all_frames - 8); (x + 4) / 4.
//
// Filterbank: the model file's (`mel_filters`), or computed as librosa.filters.mel(sr=16000,
// n_fft=400, n_mels) with its defaults (Slaney mel scale, Slaney area normalization, fmin 0,
// fmax 8000), which is how Whisper's mel_filters.npz was made.
//
// FFT: a mixed-radix (4 x 4 x 5 x 5) complex FFT of the 400 windowed samples in double
// precision with precomputed twiddles; the filterbank product skips each band's zero weights.
// A 30 s buffer (3000 frames) takes a few tens of milliseconds on one core (see the test's
// printed figure), about 0.1% of real time.
//
// Output is frame-major: mel[t * n_mels + m].
//
// Threads: a WhisperMel is immutable after construction; Compute* are const and may run on many
// threads at once. Each call allocates the output and O(frames * n_mels) scratch.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/gguf.h"

namespace hotline::engine {

inline constexpr int kWhisperFftBins = 201;  // 400 / 2 + 1

struct WhisperMelFilters {
  int n_mels = 0;
  std::vector<float> weights;  // n_mels rows of kWhisperFftBins, mel-major

  // librosa.filters.mel(sr=16000, n_fft=400, n_mels=n_mels) (Slaney scale and normalization),
  // computed in double and rounded to float like librosa's float32 output. n_mels in 1..512.
  static WhisperMelFilters Compute(int n_mels);
  // The GGUF's `mel_filters` tensor (F32, ggml dims {201, n_mels}) when present; otherwise
  // computed for whisper.n_mels. InvalidArgument when the tensor has the wrong type or shape.
  static Result<WhisperMelFilters> FromGguf(const GgufFile& file);
};

struct WhisperMelOutput {
  int n_frames = 0;
  int n_mels = 0;
  std::vector<float> mel;  // n_frames * n_mels, frame-major
};

class WhisperMel {
 public:
  // REQUIRES: filters.weights.size() == n_mels * 201 and n_mels >= 1.
  explicit WhisperMel(WhisperMelFilters filters);

  int n_mels() const { return filters_.n_mels; }

  // Exactly log_mel_spectrogram(pcm) with padding=0: pcm.size() / 160 frames, normalized over
  // those frames. InvalidArgument when pcm has fewer than 201 samples (the 200-sample reflect
  // padding needs more input than its width, as in torch) or more than 2^31 / 4 samples.
  Result<WhisperMelOutput> Compute(std::span<const float> pcm) const;

  // What the encoder gets for an utterance of any length: the frames of Whisper's transcribe()
  // (log_mel_spectrogram(pcm, padding=30 s of zeros)) that cover the audio, padded to an even
  // count (the stride-2 convolution halves it): n_frames = 2 * ceil(N / 320). Frames past the
  // audio see zeros (not reflections), and the normalization maximum is taken over every frame
  // that touches the audio, exactly as Whisper's over the padded whole. Works for any N >= 0
  // (N = 0 gives no frames). The encoder then runs on n_frames instead of a fixed 3000.
  Result<WhisperMelOutput> ComputePadded(std::span<const float> pcm) const;

 private:
  // Frames [0, n_frames) of the padded signal, log10 only (before normalization), into `out`.
  void LogMelFrames(std::span<const float> padded, int n_frames, float* out) const;
  static void Normalize(std::span<float> log_mel, float max_value);

  WhisperMelFilters filters_;
  std::vector<int> band_begin_;  // first non-zero bin of each band
  std::vector<int> band_end_;    // one past the last
  std::vector<double> window_;   // 400-point periodic Hann
  std::vector<double> tw_re_;    // exp(-2 pi i k / 400)
  std::vector<double> tw_im_;
};

}  // namespace hotline::engine
