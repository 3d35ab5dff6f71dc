// The embedded recognizer: CMU pocketsphinx (Debian's 0.8/5prealpha library) with the US English
// continuous acoustic model, a general trigram model and, optionally, a domain model built by
// `hotline asr build-lm` (used alone or interpolated with the general one).
//
// Sharing: the 0.8 API ties acoustic model, dictionary and search to one ps_decoder_t and lets no
// two decoders share them, and its n-gram models keep look-up caches that are not thread-safe.
// So each concurrent stream needs a decoder of its own. Decoders are expensive to build (models
// are read from disk) and cheap to reuse (ps_start_utt), so the recognizer keeps a pool: a stream
// borrows a decoder for its lifetime and returns it on destruction; at most `max_streams` exist.
// The acoustic model's mixture weights are memory-mapped, so that part is shared through the page
// cache; per-decoder memory is measured in docs/speech-in.md.
//
// Audio: the model is 16 kHz; 8 kHz streams are resampled up (libsamplerate, sinc_medium) and
// get a faint noise floor above 4 kHz (see PocketsphinxConfig::telephone_band_fill_dbfs).
//
// Threads: CreateStream() may be called from any thread (the pool is locked; building a new
// decoder happens outside the lock). A stream is used from one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "asr/recognizer.h"

namespace hotline::asr {

class PocketsphinxRecognizer : public Recognizer {
 public:
  // Builds and keeps one decoder, so that bad model paths fail here and the first stream is
  // quick. `stable_ms`: see AsrConfig.
  static Result<std::unique_ptr<PocketsphinxRecognizer>> Create(const PocketsphinxConfig& config,
                                                                int stable_ms);
  ~PocketsphinxRecognizer() override;

  Result<std::unique_ptr<RecognizerStream>> CreateStream(int input_rate_hz) override;
  std::string name() const override { return "pocketsphinx"; }

  // Decoders built so far (idle or lent).
  int decoders() const;

  struct Pool;

 private:
  explicit PocketsphinxRecognizer(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}
  std::shared_ptr<Pool> pool_;
};

}  // namespace hotline::asr
