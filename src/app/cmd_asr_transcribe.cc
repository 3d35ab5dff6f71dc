// `hotline asr transcribe IN.wav [--backend pocketsphinx|openai|whisper] [--lm DOMAIN_LM]
//  [--lm-mode interpolated|switched] [--url URL] [--model NAME|GGUF] [--language CODE] [--json]`
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli.h"
#include "asr/recognizer.h"
#include "audio/resampler.h"
#include "audio/wav.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline asr transcribe IN.wav|IN.raw [--backend pocketsphinx|openai|whisper]\n"
    "                              [--lm DOMAIN_LM] [--lm-mode interpolated|switched] [--url URL]\n"
    "                              [--model NAME|GGUF] [--language CODE] [--json]\n"
    "\n"
    "Transcribes one utterance (the whole file, streamed in 20 ms frames as a call would be).\n"
    "IN is a WAV file (any rate; resampled to 16 kHz unless it is 8 or 16 kHz) or headerless\n"
    "16 kHz 16-bit mono PCM (.raw).\n"
    "  --backend NAME  pocketsphinx (default, embedded), openai (remote server) or whisper\n"
    "                  (embedded Whisper model)\n"
    "  --lm PATH       domain language model from `hotline asr build-lm` (pocketsphinx); in\n"
    "                  switched mode PATH.dict, when present, is used as the dictionary\n"
    "  --lm-mode MODE  interpolated (default: mixed with the generic model) or switched (the\n"
    "                  domain model alone: less memory and CPU per stream)\n"
    "  --url URL       openai: base URL of the server (default http://127.0.0.1:8000/v1)\n"
    "  --model NAME    openai: model name (default whisper-1); whisper: the GGUF from\n"
    "                  `hotline engine convert-whisper`\n"
    "  --language CODE whisper: language code (default en) or auto\n"
    "  --json          print text, confidence, word timings and timing figures as JSON\n";

int RunTranscribe(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--backend", "--lm", "--lm-mode", "--url", "--model", "--language"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  asr::AsrConfig config;
  config.backend = args.GetOr("--backend", config.backend);
  config.pocketsphinx.domain_lm = args.GetOr("--lm", "");
  config.pocketsphinx.lm_mode = args.GetOr("--lm-mode", config.pocketsphinx.lm_mode);
  config.openai.url = args.GetOr("--url", config.openai.url);
  config.openai.model = args.GetOr("--model", config.openai.model);
  config.whisper.model_path = args.GetOr("--model", "");
  config.whisper.language = args.GetOr("--language", config.whisper.language);
  const bool json = args.Has("--json");
  // build-lm writes the model's own dictionary next to it: in switched mode it is all the
  // decoder needs, and it loads far faster than the full one.
  if (!config.pocketsphinx.domain_lm.empty() && config.pocketsphinx.lm_mode == "switched") {
    std::string dict = config.pocketsphinx.domain_lm + ".dict";
    if (std::FILE* f = std::fopen(dict.c_str(), "rb")) {
      std::fclose(f);
      config.pocketsphinx.dictionary = dict;
    }
  }
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args.positional().size() != 1) return UsageError("asr transcribe needs one input file", kUsage);
  const std::string& path = args.positional()[0];

  const bool raw = path.size() >= 4 && path.compare(path.size() - 4, 4, ".raw") == 0;
  auto decoded = raw ? audio::ReadRawFile(path, 16000) : audio::ReadWavFile(path);
  if (!decoded.ok()) return Fail(decoded.status());
  audio::AudioBuffer pcm = std::move(decoded->audio);
  if (pcm.sample_rate_hz != 8000 && pcm.sample_rate_hz != 16000) {
    auto resampled = audio::Resample(pcm, 16000);
    if (!resampled.ok()) return Fail(resampled.status());
    pcm = std::move(*resampled);
  }

  auto t0 = std::chrono::steady_clock::now();
  auto recognizer = asr::CreateRecognizer(config);
  if (!recognizer.ok()) return Fail(recognizer.status());
  auto t1 = std::chrono::steady_clock::now();
  auto stream = (*recognizer)->CreateStream(pcm.sample_rate_hz);
  if (!stream.ok()) return Fail(stream.status());
  const size_t frame = audio::SamplesForMs(pcm.sample_rate_hz, audio::kFrameMs);
  for (size_t i = 0; i < pcm.size(); i += frame) {
    size_t n = std::min(frame, pcm.size() - i);
    Status s = (*stream)->AcceptFrames(
        audio::AudioView(std::span<const int16_t>(pcm.samples).subspan(i, n), pcm.sample_rate_hz));
    if (!s.ok()) return Fail(s);
  }
  auto result = (*stream)->Finish();
  if (!result.ok()) return Fail(result.status());
  auto t2 = std::chrono::steady_clock::now();
  const double load_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double decode_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();

  if (!json) {
    std::cout << result->text << "\n";
    return 0;
  }
  nlohmann::json out;
  out["text"] = result->text;
  out["confidence"] = result->confidence;
  out["backend"] = (*recognizer)->name();
  out["audio_ms"] = result->audio_ms;
  out["load_ms"] = load_ms;
  out["decode_ms"] = decode_ms;
  out["real_time_factor"] = pcm.duration_s() > 0 ? decode_ms / 1000.0 / pcm.duration_s() : 0.0;
  out["words"] = nlohmann::json::array();
  for (const auto& w : result->words) {
    out["words"].push_back(
        {{"word", w.word}, {"start_ms", w.start_ms}, {"end_ms", w.end_ms}, {"confidence", w.confidence}});
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

const CommandRegistrar kTranscribe({"asr transcribe", "transcribe a WAV/raw file (pocketsphinx, openai or whisper)",
                                    kUsage, RunTranscribe});

}  // namespace
}  // namespace hotline::cli
