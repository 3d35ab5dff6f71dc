// What the speech benchmarks `hotline eval turns` and `hotline eval barge` share: the voices they
// synthesize with, the on-disk cache of 8 kHz synthesized speech, and the recognizer a call uses
// (the configured one with the shipped knowledge base's domain model, as a call stack builds it).
//
// Thread-safety: VoiceCache is safe to share between threads (each entry is one file written to
// a temporary name and renamed); KbRecognizer's recognizer is as thread-safe as the recognizer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli.h"
#include "asr/asr_config.h"
#include "asr/recognizer.h"
#include "common/status.h"
#include "tts/synthesizer.h"

namespace hotline::cli::speech_bench {

struct Voice {
  std::string name;  // slt, rms, awb, kal16, kal: flite; espeak: espeak-ng en-us
  bool tuning = false;
  tts::TtsConfig config;
};
// InvalidArgument for an unknown name (the message lists the known ones).
Result<Voice> MakeVoice(const std::string& name, bool tuning);

// 64-bit FNV-1a: cache file names and per-item seeds.
uint64_t Fnv1a(std::string_view s);

// 20 ms frames at 8 kHz: leading and trailing frames below max(peak - 40 dB, -55 dBFS) go.
std::vector<int16_t> TrimSilence(const std::vector<int16_t>& x);

// "a,b,,c" → {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& s);

class VoiceCache {
 public:
  // `dir`: DIR/<voice>/<16 hex digits>.wav.
  explicit VoiceCache(std::string dir) : dir_(std::move(dir)) {}

  // 8 kHz speech of `text` by `voice`, trimmed to its speech; synthesized once, then read back.
  Result<std::vector<int16_t>> Get(const Voice& voice, const std::string& text) const;

 private:
  std::string dir_;
};

// The options every speech benchmark takes.
struct CommonOptions {
  std::string data;           // --data: the shared data folder
  std::string cache_dir;      // --cache
  std::vector<Voice> voices;  // --tuning-voices, then --report-voices
  int threads = 2;
  std::string config_path;
  std::vector<std::string> overrides;  // --set a.b=v
  bool json = false;
  std::optional<std::string> out_path;  // -o
};
// Reads the common options from `args` (--cache defaults to $XDG_CACHE_HOME or ~/.cache, then
// /hotline/turns: the benchmarks share synthesized speech), then finishes `args`: the command
// reads its own options first. Errors are usage errors.
Status ParseCommonOptions(Args& args, CommonOptions& o);

// The recognizer of a call on the shipped knowledge base (assets/kb/bitext_kb.csv): the domain
// model is written to a temporary file that lives as long as this.
struct KbRecognizer {
  ~KbRecognizer();
  std::string lm;
  std::unique_ptr<asr::Recognizer> recognizer;
};
// `tag` names the temporary model file (one per process and tag).
Result<std::unique_ptr<KbRecognizer>> BuildKbRecognizer(const asr::AsrConfig& config,
                                                        const std::string& tag);

}  // namespace hotline::cli::speech_bench
