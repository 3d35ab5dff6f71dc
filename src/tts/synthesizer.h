// Synthesizer: text in, audio chunks out, as soon as the backend produces them.
//
// Streaming: Synthesize() calls `on_chunk` with PCM16 mono samples at sample_rate_hz() (the
// voice's native rate; the caller resamples for its transport with audio::Resampler) each time
// the backend has produced about `chunk_ms` of audio; the first chunk arrives long before the
// sentence is fully synthesized where the backend allows it (flite, espeak-ng, a streaming HTTP
// server).
//
// Cancellation: `cancel` is checked before every chunk is handed over. Once it is raised no
// further chunk is delivered, the backend is told to stop, and Synthesize() returns kCancelled —
// so barge-in stops the audio within one chunk.
//
// Text: already normalized for speech (see TextNormalizer); at most `max_text_bytes` of UTF-8.
//
// Threads: Synthesize() blocks the calling thread (a CPU worker, never an I/O thread) and runs
// `on_chunk` on it. One Synthesizer instance serves one call at a time; create one per call
// (cheap: voices and models are loaded once per process and shared). Which backends run
// concurrently across instances is stated in each backend's header (espeak-ng: serialized
// process-wide; flite: per voice, see flite_synthesizer.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "audio/pcm.h"
#include "common/status.h"
#include "common/cancel_token.h"
#include "net/http_client.h"

namespace hotline::tts {

// Receives one chunk of audio. `samples` is only valid during the call (copy what you keep).
// A non-OK return stops synthesis and becomes Synthesize()'s result.
using AudioChunkCallback = std::function<Status(std::span<const int16_t> samples)>;

class Synthesizer {
 public:
  virtual ~Synthesizer() = default;

  // "flite", "espeak-ng", "openai".
  virtual std::string_view backend() const = 0;
  // Identifies the voice and everything that changes its sound ("flite/cmu_us_slt",
  // "espeak-ng/en-us@175"): the audio cache keys on it.
  virtual const std::string& voice_id() const = 0;
  // Rate of the samples handed to on_chunk.
  virtual int sample_rate_hz() const = 0;

  // Synthesizes `text`, calling `on_chunk` for each chunk in order. Returns OK once all audio
  // was delivered (empty or blank text delivers nothing), kCancelled when `cancel` was raised,
  // the callback's error, or the backend's error (kInvalidArgument for text that is too long,
  // kUnavailable / kDeadlineExceeded for a remote backend).
  virtual Status Synthesize(std::string_view text, const AudioChunkCallback& on_chunk,
                            const CancelToken* cancel = nullptr) = 0;
};

// Synthesizes the whole text into one buffer (CLI, cache fill, tests).
Result<audio::AudioBuffer> SynthesizeToBuffer(Synthesizer& synth, std::string_view text,
                                              const CancelToken* cancel = nullptr);

struct FliteConfig {
  // Voice compiled into Debian's flite: cmu_us_slt (female, 16 kHz, clustergen: the clearest),
  // cmu_us_rms / cmu_us_awb (male, 16 kHz), cmu_us_kal16 (male diphone, 16 kHz, fastest),
  // cmu_us_kal (male diphone, 8 kHz: telephone rate, no resampling).
  std::string voice = "cmu_us_slt";
  // Audio per chunk. Smaller gets the first audio out sooner and reacts to cancel sooner; larger
  // means fewer callbacks.
  int chunk_ms = 40;
  // Speaking rate multiplier (duration_stretch = 1/rate). 1.0 is the voice's own pace.
  double rate = 1.0;
  // Run this instance's syntheses under one process-wide flite lock. Off: instances synthesize
  // in parallel on the shared voice (checked by test; see flite_synthesizer.h). On: safe even if
  // a flite build had hidden shared state, at the cost of one core's throughput for all calls.
  bool serialize = false;

  template <class V>
  void Visit(V& v) {
    v.Field("voice", voice, "flite voice: cmu_us_slt, cmu_us_rms, cmu_us_awb, cmu_us_kal16, cmu_us_kal");
    v.Field("chunk_ms", chunk_ms, "Audio per streamed chunk (ms)");
    v.Field("rate", rate, "Speaking rate multiplier (1.0 = natural)");
    v.Field("serialize", serialize, "Serialize flite synthesis process-wide (safety over throughput)");
  }
  Status Validate() const;
};

struct EspeakConfig {
  // espeak-ng voice or language name: "en-us", "en-gb", "de", "fr", "es", "cmn" (Mandarin), ...
  std::string voice = "en-us";
  // Words per minute (espeak-ng accepts 80-450). Faster finishes sooner but is harder to follow
  // on a telephone line.
  int rate_wpm = 175;
  // Audio per chunk (espeak-ng's internal buffer length). Same trade-off as flite.chunk_ms.
  int chunk_ms = 40;
  // espeak-ng-data folder; empty uses the library's default (Debian: /usr/lib/x86_64-linux-gnu/espeak-ng-data).
  std::string data_path;

  template <class V>
  void Visit(V& v) {
    v.Field("voice", voice, "espeak-ng voice/language (en-us, de, fr, cmn, ...)");
    v.Field("rate_wpm", rate_wpm, "Speaking rate in words per minute (80-450)");
    v.Field("chunk_ms", chunk_ms, "Audio per streamed chunk (ms)");
    v.Field("data_path", data_path, "espeak-ng-data folder (empty: library default)");
  }
  Status Validate() const;
};

struct OpenAiTtsConfig {
  // Base URL of an OpenAI-compatible server; "/audio/speech" is appended.
  std::string url = "http://127.0.0.1:8000/v1";
  std::string model = "tts-1";
  std::string voice = "alloy";
  // "pcm" (raw 16-bit little-endian mono, streams with no header: lowest latency) or "wav".
  std::string response_format = "pcm";
  // Rate of the server's audio (OpenAI: 24000). A "wav" response at another rate is an error
  // that names the rate to configure.
  int pcm_sample_rate_hz = 24000;
  // Environment variable holding the API key sent as "Authorization: Bearer"; empty or unset
  // sends none (local servers).
  std::string api_key_env = "OPENAI_API_KEY";
  // Audio per chunk handed to the caller (network pieces are regrouped to this size).
  int chunk_ms = 40;
  // Largest audio response accepted; bounds memory and time for one sentence.
  int64_t max_audio_bytes = 16ll << 20;
  net::HttpClientConfig http;

  template <class V>
  void Visit(V& v) {
    v.Field("url", url, "Base URL of the OpenAI-compatible server (http[s]://host:port/v1)");
    v.Field("model", model, "Model name sent to the server");
    v.Field("voice", voice, "Voice name sent to the server");
    v.Field("response_format", response_format, "pcm (streams, lowest latency) or wav");
    v.Field("pcm_sample_rate_hz", pcm_sample_rate_hz, "Sample rate of the server audio (wav must match)");
    v.Field("api_key_env", api_key_env, "Environment variable with the API key (Bearer)");
    v.Field("chunk_ms", chunk_ms, "Audio per chunk handed to the caller (ms)");
    v.Field("max_audio_bytes", max_audio_bytes, "Largest audio response accepted (bytes)");
    v.Section("http", http);
  }
  Status Validate() const;
};

struct TtsConfig {
  // Backend: "flite" (embedded, English, default), "espeak-ng" (embedded, many languages),
  // "openai" (remote /v1/audio/speech).
  std::string backend = "flite";
  // Longest text accepted per Synthesize() call; the sentence chunker keeps real input far below.
  int max_text_bytes = 4096;
  FliteConfig flite;
  EspeakConfig espeak_ng;
  OpenAiTtsConfig openai;

  template <class V>
  void Visit(V& v) {
    v.Field("backend", backend, "Synthesizer backend: flite, espeak-ng or openai");
    v.Field("max_text_bytes", max_text_bytes, "Longest text per synthesis call (bytes)");
    v.Section("flite", flite);
    v.Section("espeak_ng", espeak_ng);
    v.Section("openai", openai);
  }
  Status Validate() const;
};

// Creates the backend named by config.backend. Loads the voice on first use in the process
// (flite voice registration, espeak-ng initialization); later calls are cheap.
Result<std::unique_ptr<Synthesizer>> CreateSynthesizer(const TtsConfig& config);

// Shared by backends: text length and content check.
Status CheckSynthesisText(std::string_view text, int max_text_bytes);

}  // namespace hotline::tts
