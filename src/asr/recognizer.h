// Streaming speech recognition: the Recognizer interface and its factory.
//
// A Recognizer holds what all calls share (models, connection settings) and hands out one
// RecognizerStream per utterance:
//
//   ASSIGN_OR_RETURN(auto recognizer, CreateRecognizer(config.asr));
//   ASSIGN_OR_RETURN(auto stream, recognizer->CreateStream(8000));
//   stream->AcceptFrames(frame);            // every 20 ms while the caller speaks
//   if (stream->partial().revision != seen) ...  // new partial hypothesis
//   ASSIGN_OR_RETURN(AsrResult result, stream->Finish());  // at end of turn
//
// Backends (AsrConfig::backend): "pocketsphinx" (embedded, streaming partials, optional domain
// language model), "openai" (POST /v1/audio/transcriptions of the whole utterance at Finish()),
// "whisper" (a Whisper GGUF in process on the engine's kernels, any of its languages, partials
// from re-decoding the growing utterance; asr/whisper/whisper_recognizer.h).
//
// Threads: a Recognizer is shared by all calls and its methods may be called from any thread.
// A stream belongs to one call and is used from one thread at a time; different streams run in
// parallel. AcceptFrames() and Finish() block for CPU (pocketsphinx) or the network (openai):
// call them from a worker thread, never from an I/O thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "asr/asr_config.h"
#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::asr {

struct AsrWord {
  std::string word;
  int64_t start_ms = 0;  // from the start of the stream
  int64_t end_ms = 0;
  float confidence = 0;  // posterior in [0, 1] where the backend gives one, else 0
};

// The latest partial hypothesis. `revision` grows whenever `text` or `stable` changes.
struct AsrPartial {
  std::string text;
  // True once `text` has not changed for AsrConfig::stable_ms of audio: safe to act on (e.g. look
  // up the answer cache) before the turn ends.
  bool stable = false;
  uint64_t revision = 0;
};

struct AsrResult {
  std::string text;      // lower-case words separated by single spaces; "" when nothing heard
  float confidence = 0;  // utterance confidence in [0, 1] (backend-specific estimate)
  std::vector<AsrWord> words;  // word timings where the backend gives them
  int64_t audio_ms = 0;        // audio accepted by the stream
};

class RecognizerStream {
 public:
  virtual ~RecognizerStream() = default;

  // Feeds audio at the rate given to CreateStream(), any length (20 ms frames are typical).
  // Errors: wrong rate, stream already finished, utterance longer than the backend's bound,
  // decoder failure.
  virtual Status AcceptFrames(audio::AudioView pcm) = 0;

  // The current partial hypothesis (empty for backends without partials). Valid until the next
  // call on this stream.
  virtual const AsrPartial& partial() const = 0;

  // Ends the utterance and returns the final result. The stream accepts nothing afterwards.
  virtual Result<AsrResult> Finish() = 0;
};

class Recognizer {
 public:
  virtual ~Recognizer() = default;

  // A stream for one utterance of audio at `input_rate_hz` (8000 or 16000; the backend
  // resamples to its own rate). kResourceExhausted when the backend's stream limit is reached.
  virtual Result<std::unique_ptr<RecognizerStream>> CreateStream(int input_rate_hz) = 0;

  // The backend's name ("pocketsphinx", "openai").
  virtual std::string name() const = 0;
};

// Builds the backend named by config.backend (validating the config first).
Result<std::unique_ptr<Recognizer>> CreateRecognizer(const AsrConfig& config);

}  // namespace hotline::asr
