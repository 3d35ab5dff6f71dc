// `hotline tts say TEXT... -o OUT.wav [--backend flite|espeak-ng|openai] [--voice NAME]
//  [--rate HZ] [--codec pcm16|mulaw|alaw] [--url URL] [--raw]`: speak text into a WAV file.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli.h"
#include "audio/resampler.h"
#include "audio/wav.h"
#include "tts/synthesizer.h"
#include "tts/text_normalizer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline tts say TEXT... -o OUT.wav [--backend flite|espeak-ng|openai] [--voice NAME]\n"
    "                       [--rate HZ] [--codec pcm16|mulaw|alaw] [--url URL] [--raw]\n"
    "\n"
    "Normalizes TEXT for speech (numbers, currency, dates, codes, abbreviations, markdown),\n"
    "synthesizes it with streaming and writes a mono WAV file.\n"
    "  -o OUT.wav        output file (required)\n"
    "  --backend NAME    flite (default), espeak-ng or openai\n"
    "  --voice NAME      flite: cmu_us_slt (default), cmu_us_rms, cmu_us_awb, cmu_us_kal16,\n"
    "                    cmu_us_kal; espeak-ng: en-us (default), de, fr, cmn, ...;\n"
    "                    openai: the server's voice name (default alloy)\n"
    "  --rate HZ         output sample rate (default: the voice's own), e.g. 8000 for telephony\n"
    "  --codec NAME      pcm16 (default), mulaw or alaw\n"
    "  --url URL         openai: server base URL (default http://127.0.0.1:8000/v1)\n"
    "  --raw             do not normalize TEXT\n";

int RunSay(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"-o", "--backend", "--voice", "--rate", "--codec", "--url"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  auto out_path = args.Get("-o");
  tts::TtsConfig config;
  config.backend = args.GetOr("--backend", config.backend);
  if (auto voice = args.Get("--voice")) {
    config.flite.voice = *voice;
    config.espeak_ng.voice = *voice;
    config.openai.voice = *voice;
  }
  config.openai.url = args.GetOr("--url", config.openai.url);
  auto rate = args.GetInt("--rate", 0, audio::kMinSampleRateHz, audio::kMaxSampleRateHz);
  if (!rate.ok()) return UsageError(rate.status().message(), kUsage);
  auto codec = audio::ParseCodec(args.GetOr("--codec", "pcm16"));
  if (!codec.ok()) return UsageError(codec.status().message(), kUsage);
  const bool raw = args.Has("--raw");
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!out_path) return UsageError("tts say needs -o OUT.wav", kUsage);
  if (args.positional().empty()) return UsageError("tts say needs the TEXT to speak", kUsage);
  std::string text;
  for (const auto& word : args.positional()) text += (text.empty() ? "" : " ") + word;
  if (!raw) text = tts::TextNormalizer().Normalize(text);

  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto synth = tts::CreateSynthesizer(config);
  if (!synth.ok()) return Fail(synth.status());
  const auto t_ready = Clock::now();
  const int voice_rate = (*synth)->sample_rate_hz();
  const int out_rate = *rate > 0 ? static_cast<int>(*rate) : voice_rate;
  auto resampler = audio::Resampler::Create(voice_rate, out_rate);
  if (!resampler.ok()) return Fail(resampler.status());

  audio::AudioBuffer out;
  out.sample_rate_hz = out_rate;
  Clock::time_point first_chunk{};
  int chunks = 0;
  int64_t voice_samples = 0;
  Status s = (*synth)->Synthesize(text, [&](std::span<const int16_t> chunk) {
    if (chunks++ == 0) first_chunk = Clock::now();
    voice_samples += static_cast<int64_t>(chunk.size());
    return (*resampler)->Process(chunk, out.samples);  // what a transport does per chunk
  });
  if (!s.ok()) return Fail(s);
  const auto t_done = Clock::now();
  if (Status f = (*resampler)->Flush(out.samples); !f.ok()) return Fail(f);
  if (out.samples.empty()) return Fail("nothing to say: the text is empty after normalization");
  if (Status w = audio::WriteWavFile(*out_path, out, *codec); !w.ok()) return Fail(w);

  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const double audio_s = static_cast<double>(voice_samples) / voice_rate;
  char summary[512];
  std::snprintf(summary, sizeof summary,
                "%s, %d Hz -> %d Hz %s, %.3f s of audio in %d chunks; voice load %.1f ms, first "
                "chunk %.1f ms, synthesis %.1f ms (real-time factor %.3f)",
                (*synth)->voice_id().c_str(), voice_rate, out_rate,
                std::string(audio::CodecName(*codec)).c_str(), audio_s, chunks, ms(t_ready - t0),
                ms(first_chunk - t_ready), ms(t_done - t_ready),
                ms(t_done - t_ready) / 1000.0 / audio_s);
  std::cout << *out_path << ": " << summary << "\n";
  if (!raw) std::cout << "spoken text: " << text << "\n";
  return 0;
}

const CommandRegistrar kSay({"tts say", "speak text into a WAV file (flite, espeak-ng, openai)",
                             kUsage, RunSay});

}  // namespace
}  // namespace hotline::cli
