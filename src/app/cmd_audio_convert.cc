// `hotline audio convert IN OUT [--rate HZ] [--codec pcm16|mulaw|alaw] [--raw-rate HZ]
//  [--trim] [--converter NAME]`: any supported WAV (or raw PCM16) to a mono WAV file.
#include <cstdio>
#include <iostream>

#include "app/cli.h"
#include "audio/level.h"
#include "audio/resampler.h"
#include "audio/wav.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline audio convert IN.wav OUT.wav [--rate HZ] [--codec pcm16|mulaw|alaw]\n"
    "                             [--raw-rate HZ] [--trim] [--converter NAME]\n"
    "\n"
    "Converts IN (WAV: PCM 8/16/24/32-bit, float, mu-law, A-law, extensible; any channels,\n"
    "mixed to mono) to a mono WAV file OUT.\n"
    "  --rate HZ         output sample rate (default: the input's), 4000..192000\n"
    "  --codec NAME      output codec: pcm16 (default), mulaw or alaw (G.711, 8 bits)\n"
    "  --raw-rate HZ     IN is headerless 16-bit little-endian mono PCM at HZ\n"
    "  --trim            remove leading and trailing silence (below -45 dBFS)\n"
    "  --converter NAME  resampler: sinc_medium (default), sinc_best, sinc_fastest, linear,\n"
    "                    zero_order_hold\n";

int RunConvert(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--rate", "--codec", "--raw-rate", "--converter"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  auto rate = args.GetInt("--rate", 0, audio::kMinSampleRateHz, audio::kMaxSampleRateHz);
  if (!rate.ok()) return UsageError(rate.status().message(), kUsage);
  auto raw_rate = args.GetInt("--raw-rate", 0, audio::kMinSampleRateHz, audio::kMaxSampleRateHz);
  if (!raw_rate.ok()) return UsageError(raw_rate.status().message(), kUsage);
  auto codec = audio::ParseCodec(args.GetOr("--codec", "pcm16"));
  if (!codec.ok()) return UsageError(codec.status().message(), kUsage);
  audio::ResamplerConfig resampler;
  resampler.converter = args.GetOr("--converter", resampler.converter);
  const bool trim = args.Has("--trim");
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args.positional().size() != 2) {
    return UsageError("audio convert needs an input and an output file", kUsage);
  }
  const std::string& in_path = args.positional()[0];
  const std::string& out_path = args.positional()[1];

  auto in = audio::ReadAudioFile(in_path, static_cast<int>(*raw_rate));
  if (!in.ok()) return Fail(in.status());
  audio::AudioBuffer audio = std::move(in->audio);
  if (trim) audio = audio::TrimSilence(audio);
  const int out_rate = *rate > 0 ? static_cast<int>(*rate) : audio.sample_rate_hz;
  if (out_rate != audio.sample_rate_hz) {
    auto converted = audio::Resample(audio, out_rate, resampler);
    if (!converted.ok()) return Fail(converted.status());
    audio = std::move(*converted);
  } else if (Status s = resampler.Validate(); !s.ok()) {
    return UsageError(s.message(), kUsage);
  }
  if (Status s = audio::WriteWavFile(out_path, audio, *codec); !s.ok()) return Fail(s);

  char summary[256];
  std::snprintf(summary, sizeof summary, "%s, %d ch, %d Hz, %.3f s -> %s, 1 ch, %d Hz, %.3f s",
                std::string(audio::SampleFormatName(in->format.sample_format)).c_str(),
                in->format.channels, in->format.sample_rate_hz,
                static_cast<double>(in->format.frames) / in->format.sample_rate_hz,
                std::string(audio::CodecName(*codec)).c_str(), audio.sample_rate_hz,
                audio.duration_s());
  std::cout << out_path << ": " << summary << "\n";
  return 0;
}

const CommandRegistrar kConvert({"audio convert",
                                 "convert a WAV/raw file to a mono WAV (rate, pcm16/mulaw/alaw)",
                                 kUsage, RunConvert});

}  // namespace
}  // namespace hotline::cli
