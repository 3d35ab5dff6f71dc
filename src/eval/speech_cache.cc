#include "eval/speech_cache.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "audio/wav.h"

namespace hotline::eval {

namespace {

uint64_t Fnv1a64(const std::string& a, const std::string& b) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  };
  mix(a);
  mix(std::string(1, '\n'));
  mix(b);
  return h;
}

}  // namespace

std::string SpeechCache::PathFor(const std::string& voice_id, const std::string& text) const {
  std::string folder = voice_id;
  for (char& c : folder) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".wav", Fnv1a64(voice_id, text));
  return (std::filesystem::path(dir_) / folder / name).string();
}

Result<audio::AudioBuffer> SpeechCache::Get(tts::Synthesizer& synth, const std::string& text) {
  std::string path;
  if (!dir_.empty()) {
    path = PathFor(synth.voice_id(), text);
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      auto wav = audio::ReadWavFile(path);
      if (wav.ok() && wav->audio.sample_rate_hz == synth.sample_rate_hz()) {
        ++hits_;
        return std::move(wav->audio);
      }
    }
  }
  ++misses_;
  ASSIGN_OR_RETURN(audio::AudioBuffer speech, tts::SynthesizeToBuffer(synth, text));
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) return InternalError("speech cache: cannot create " + path + ": " + ec.message());
    // WriteWavFile writes a temporary file and renames it into place.
    RETURN_IF_ERROR(audio::WriteWavFile(
        path, audio::AudioView(speech.samples, speech.sample_rate_hz), audio::Codec::kPcm16));
  }
  return speech;
}

}  // namespace hotline::eval
