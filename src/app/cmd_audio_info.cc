// `hotline audio info IN [--json] [--raw-rate HZ]`: what a recording is and how it sounds.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli.h"
#include "audio/level.h"
#include "audio/speech_share.h"
#include "audio/wav.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline audio info IN.wav [--json] [--raw-rate HZ]\n"
    "\n"
    "Prints the container, codec, channels, sample rate, duration, RMS level (dBFS), peak,\n"
    "and the share of 20 ms frames that sound like speech (energy above an adaptive noise\n"
    "floor). Levels are measured after mixing to mono; 0 dBFS is a full-scale square wave.\n"
    "  --json         one JSON object instead of text\n"
    "  --raw-rate HZ  IN is headerless 16-bit little-endian mono PCM at HZ\n";

int RunInfo(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--raw-rate"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  const bool json = args.Has("--json");
  auto raw_rate = args.GetInt("--raw-rate", 0, audio::kMinSampleRateHz, audio::kMaxSampleRateHz);
  if (!raw_rate.ok()) return UsageError(raw_rate.status().message(), kUsage);
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args.positional().size() != 1) return UsageError("audio info needs one input file", kUsage);
  const std::string& path = args.positional()[0];

  auto in = audio::ReadAudioFile(path, static_cast<int>(*raw_rate));
  if (!in.ok()) return Fail(in.status());
  const audio::WavFormat& f = in->format;
  const audio::AudioBuffer& a = in->audio;
  const double rms = audio::RmsDbfs(a.samples);
  const int peak = audio::PeakAbs(a.samples);
  const audio::SpeechShare speech = audio::MeasureSpeechShare(a);
  const std::string container = f.raw ? "raw" : (f.extensible ? "wav-extensible" : "wav");
  const std::string codec(audio::SampleFormatName(f.sample_format));

  if (json) {
    nlohmann::ordered_json j;
    j["file"] = path;
    j["container"] = container;
    j["codec"] = codec;
    j["format_tag"] = f.format_tag;
    j["bits_per_sample"] = f.bits_per_sample;
    j["channels"] = f.channels;
    j["sample_rate_hz"] = f.sample_rate_hz;
    j["samples"] = a.size();
    j["duration_s"] = a.duration_s();
    j["duration_ms"] = a.duration_ms();
    j["rms_dbfs"] = rms;
    j["peak"] = peak;
    j["peak_dbfs"] = audio::PeakDbfs(peak);
    j["frames"] = speech.frames;
    j["speech_like_frames"] = speech.speech_like_frames;
    j["speech_like_share"] = speech.share;
    j["noise_floor_dbfs"] = speech.noise_floor_dbfs;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "file:         %s\n"
                "container:    %s\n"
                "codec:        %s (%d bits, format tag %d)\n"
                "channels:     %d%s\n"
                "sample rate:  %d Hz\n"
                "duration:     %.3f s (%zu samples)\n"
                "rms level:    %.1f dBFS\n"
                "peak:         %d (%.1f dBFS)\n"
                "speech-like:  %.1f %% of %lld frames of 20 ms (noise floor %.1f dBFS)\n",
                path.c_str(), container.c_str(), codec.c_str(), f.bits_per_sample, f.format_tag,
                f.channels, f.channels > 1 ? " (mixed to mono)" : "", f.sample_rate_hz,
                a.duration_s(), a.size(), rms, peak, audio::PeakDbfs(peak), 100.0 * speech.share,
                static_cast<long long>(speech.frames), speech.noise_floor_dbfs);
  std::cout << buf;
  return 0;
}

const CommandRegistrar kInfo({"audio info",
                              "describe a recording: format, duration, level, speech share",
                              kUsage, RunInfo});

}  // namespace
}  // namespace hotline::cli
