// Remote recognizer for OpenAI-compatible servers: each utterance is buffered and sent at
// Finish() as POST {url}/audio/transcriptions (multipart/form-data: file = the utterance as a
// 16-bit WAV at the stream's rate, model, language, response_format = json); the reply's "text"
// is the result. No partials, no word timings. For deployments that trade locality and latency
// for accuracy (whisper-class models).
//
// Bounds: at most max_utterance_s of audio per stream and max_streams streams at once; the reply
// is limited to 1 MiB and must be JSON with a string "text".
// Threads: CreateStream() from any thread; Finish() blocks on the network (worker threads only).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "asr/recognizer.h"

namespace hotline::asr {

class OpenAiRecognizer : public Recognizer {
 public:
  static Result<std::unique_ptr<OpenAiRecognizer>> Create(const OpenAiAsrConfig& config);

  Result<std::unique_ptr<RecognizerStream>> CreateStream(int input_rate_hz) override;
  std::string name() const override { return "openai"; }

  struct Shared;

 private:
  explicit OpenAiRecognizer(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
};

// Builds the multipart/form-data body of a transcription request. Exposed for tests.
std::string BuildTranscriptionBody(const std::string& boundary, const std::string& wav_bytes,
                                   const std::string& model, const std::string& language);

}  // namespace hotline::asr
