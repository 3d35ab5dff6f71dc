#include "app/speech_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "audio/pcm.h"
#include "audio/resampler.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "pipeline/call_stack.h"
#include "tts/synthesizer.h"

namespace hotline::cli::speech_bench {

Result<Voice> MakeVoice(const std::string& name, bool tuning) {
  Voice v{name, tuning, {}};
  if (name == "espeak") {
    v.config.backend = "espeak-ng";
    v.config.espeak_ng.voice = "en-us";
  } else if (name == "slt" || name == "rms" || name == "awb" || name == "kal16" || name == "kal") {
    v.config.backend = "flite";
    v.config.flite.voice = "cmu_us_" + name;
  } else {
    return InvalidArgumentError("unknown voice '" + name +
                                "' (slt, rms, awb, kal16, kal: flite; espeak: espeak-ng en-us)");
  }
  return v;
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<int16_t> TrimSilence(const std::vector<int16_t>& x) {
  const size_t f = 160;
  std::vector<float> db;
  for (size_t i = 0; i + f <= x.size(); i += f) {
    db.push_back(audio::LevelDbfs(std::span<const int16_t>(x).subspan(i, f)));
  }
  if (db.empty()) return x;
  const float floor = std::max(*std::max_element(db.begin(), db.end()) - 40.0f, -55.0f);
  size_t b = 0, e = db.size();
  while (b < e && db[b] < floor) ++b;
  while (e > b && db[e - 1] < floor) --e;
  return std::vector<int16_t>(x.begin() + static_cast<ptrdiff_t>(b * f),
                              x.begin() + static_cast<ptrdiff_t>(e * f));
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

Result<std::vector<int16_t>> VoiceCache::Get(const Voice& voice, const std::string& text) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.wav",
                static_cast<unsigned long long>(Fnv1a(voice.name + "|" + text)));
  const std::filesystem::path path = std::filesystem::path(dir_) / voice.name / name;
  if (std::filesystem::exists(path)) {
    auto read = audio::ReadWavFile(path.string());
    if (read.ok() && read->audio.sample_rate_hz == 8000) return read->audio.samples;
  }
  ASSIGN_OR_RETURN(auto synth, tts::CreateSynthesizer(voice.config));
  ASSIGN_OR_RETURN(audio::AudioBuffer speech, tts::SynthesizeToBuffer(*synth, text));
  ASSIGN_OR_RETURN(audio::AudioBuffer narrow, audio::Resample(audio::AudioView(speech), 8000));
  std::vector<int16_t> trimmed = TrimSilence(narrow.samples);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const std::string tmp = path.string() + ".tmp" + std::to_string(::getpid()) + "_" +
                          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  if (audio::WriteWavFile(tmp, audio::AudioView(trimmed, 8000), audio::Codec::kPcm16).ok()) {
    std::filesystem::rename(tmp, path, ec);
  }
  return trimmed;
}

Status ParseCommonOptions(Args& args, CommonOptions& o) {
  o.data = args.GetOr("--data", "../shared/data");
  o.cache_dir = args.GetOr("--cache", "");
  const std::string tuning_arg = args.GetOr("--tuning-voices", "slt,rms");
  const std::string report_arg = args.GetOr("--report-voices", "awb,kal16,espeak");
  auto threads = args.GetInt("--threads", 2, 1, 64);
  o.config_path = args.GetOr("--config", "");
  o.overrides = args.GetAll("--set");
  o.json = args.Has("--json");
  o.out_path = args.Get("-o");
  RETURN_IF_ERROR(args.Finish());
  RETURN_IF_ERROR(threads.status());
  if (!args.positional().empty()) return InvalidArgumentError("unexpected argument");
  o.threads = static_cast<int>(*threads);
  for (const auto& [list, tuning] : {std::pair{tuning_arg, true}, std::pair{report_arg, false}}) {
    for (const std::string& name : SplitList(list)) {
      ASSIGN_OR_RETURN(Voice v, MakeVoice(name, tuning));
      o.voices.push_back(std::move(v));
    }
  }
  if (o.voices.empty()) return InvalidArgumentError("no voices");
  if (o.cache_dir.empty()) {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    o.cache_dir = xdg && *xdg ? std::string(xdg) + "/hotline/turns"
                  : home      ? std::string(home) + "/.cache/hotline/turns"
                              : "/tmp/hotline-turns-cache";
  }
  return Status::Ok();
}

KbRecognizer::~KbRecognizer() {
  recognizer.reset();
  if (lm.empty()) return;
  std::error_code ec;
  std::filesystem::remove(lm, ec);
  std::filesystem::remove(lm + ".dict", ec);
}

Result<std::unique_ptr<KbRecognizer>> BuildKbRecognizer(const asr::AsrConfig& config,
                                                        const std::string& tag) {
  auto o = std::make_unique<KbRecognizer>();
  const std::string kb_csv = std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv";
  asr::AsrConfig asr_cfg = config;
  const std::string lm = (std::filesystem::temp_directory_path() /
                          ("hotline_" + tag + "_" + std::to_string(::getpid()) + ".lm"))
                             .string();
  RETURN_IF_ERROR(pipeline::UseKnowledgeBaseLm(asr_cfg, kb_csv, lm).status());
  o->lm = lm;
  auto recognizer = asr::CreateRecognizer(asr_cfg);
  if (!recognizer.ok()) return recognizer.status().WithContext("recognizer");
  o->recognizer = std::move(*recognizer);
  return o;
}

}  // namespace hotline::cli::speech_bench
