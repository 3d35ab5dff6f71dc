#include "tts/flite/flite_synthesizer.h"

extern "C" {
#include <flite/flite.h>
}

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>

#include "tts/chunk_emitter.h"

extern "C" {
cst_voice* register_cmu_us_slt(const char* voxdir);
cst_voice* register_cmu_us_rms(const char* voxdir);
cst_voice* register_cmu_us_awb(const char* voxdir);
cst_voice* register_cmu_us_kal16(const char* voxdir);
cst_voice* register_cmu_us_kal(const char* voxdir);
}

namespace hotline::tts {
namespace {

struct FliteVoice {
  cst_voice* voice = nullptr;
  int sample_rate_hz = 0;
};

std::mutex g_registry_mu;
std::map<std::string, FliteVoice>& Registry() {
  static auto* registry = new std::map<std::string, FliteVoice>();  // lives as long as flite's voices
  return *registry;
}
std::atomic<bool> g_serialized{false};
std::mutex g_synth_mu;  // taken around synthesis only when g_serialized

using RegisterFn = cst_voice* (*)(const char*);
RegisterFn FindRegister(const std::string& name) {
  if (name == "cmu_us_slt") return register_cmu_us_slt;
  if (name == "cmu_us_rms") return register_cmu_us_rms;
  if (name == "cmu_us_awb") return register_cmu_us_awb;
  if (name == "cmu_us_kal16") return register_cmu_us_kal16;
  if (name == "cmu_us_kal") return register_cmu_us_kal;
  return nullptr;
}

Result<FliteVoice> LoadVoice(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_registry_mu);
  auto& registry = Registry();
  if (auto it = registry.find(name); it != registry.end()) return it->second;
  RegisterFn reg = FindRegister(name);
  if (reg == nullptr) {
    std::string known;
    for (const auto& n : FliteVoiceNames()) known += (known.empty() ? "" : ", ") + n;
    return NotFoundError("unknown flite voice '" + name + "' (known: " + known + ")");
  }
  static std::once_flag init_once;
  std::call_once(init_once, [] { flite_init(); });
  FliteVoice v;
  v.voice = reg(nullptr);
  if (v.voice == nullptr) return InternalError("flite could not register voice '" + name + "'");
  // The voice's native rate: synthesize one short word once (this also warms its tables).
  cst_wave* w = flite_text_to_wave("a", v.voice);
  if (w == nullptr || w->sample_rate <= 0) {
    if (w) delete_wave(w);
    return InternalError("flite voice '" + name + "' produced no audio");
  }
  v.sample_rate_hz = w->sample_rate;
  delete_wave(w);
  registry[name] = v;
  return v;
}

class FliteSynthesizer : public Synthesizer {
 public:
  FliteSynthesizer(FliteVoice voice, const FliteConfig& config, int max_text_bytes)
      : voice_(voice),
        config_(config),
        max_text_bytes_(max_text_bytes),
        voice_id_("flite/" + config.voice +
                  (config.rate != 1.0 ? "@" + std::to_string(config.rate) : "")) {}

  std::string_view backend() const override { return "flite"; }
  const std::string& voice_id() const override { return voice_id_; }
  int sample_rate_hz() const override { return voice_.sample_rate_hz; }

  Status Synthesize(std::string_view text, const AudioChunkCallback& on_chunk,
                    const CancelToken* cancel) override {
    RETURN_IF_ERROR(CheckSynthesisText(text, max_text_bytes_));
    if (IsCancelled(cancel)) return CancelledError("speech synthesis cancelled");
    std::string input(text);
    bool blank = input.find_first_not_of(" \t\r\n") == std::string::npos;
    if (blank) return Status::Ok();

    ChunkEmitter emitter(audio::SamplesForMs(voice_.sample_rate_hz, config_.chunk_ms), on_chunk,
                         cancel);
    std::unique_lock<std::mutex> serial(g_synth_mu, std::defer_lock);
    if (config_.serialize || g_serialized.load()) serial.lock();

    cst_utterance* utt = new_utterance();
    utt_set_input_text(utt, input.c_str());
    utt_init(utt, voice_.voice);
    // Per-utterance settings: the shared voice's features stay untouched.
    cst_audio_streaming_info* asi = new_audio_streaming_info();
    asi->min_buffsize = static_cast<int>(audio::SamplesForMs(voice_.sample_rate_hz, 10));
    asi->asc = &FliteSynthesizer::OnAudio;
    asi->userdata = &emitter;
    feat_set(utt->features, "streaming_info", audio_streaming_info_val(asi));  // utt owns asi
    if (config_.rate != 1.0) {
      feat_set_float(utt->features, "duration_stretch", static_cast<float>(1.0 / config_.rate));
    }
    cst_utterance* done = utt_synth(utt);
    delete_utterance(utt);
    if (serial.owns_lock()) serial.unlock();
    RETURN_IF_ERROR(emitter.status());
    if (done == nullptr) return InternalError("flite failed to synthesize the text");
    return emitter.Finish();
  }

 private:
  static int OnAudio(const cst_wave* w, int start, int size, int /*last*/,
                     cst_audio_streaming_info* asi) {
    auto* emitter = static_cast<ChunkEmitter*>(asi->userdata);
    if (size > 0 && start >= 0 && start + size <= w->num_samples) {
      Status s = emitter->Add(std::span<const int16_t>(w->samples + start, static_cast<size_t>(size)));
      if (!s.ok()) return CST_AUDIO_STREAM_STOP;
    }
    return emitter->status().ok() ? CST_AUDIO_STREAM_CONT : CST_AUDIO_STREAM_STOP;
  }

  FliteVoice voice_;
  FliteConfig config_;
  int max_text_bytes_;
  std::string voice_id_;
};

}  // namespace

const std::vector<std::string>& FliteVoiceNames() {
  static const std::vector<std::string> names = {"cmu_us_slt", "cmu_us_rms", "cmu_us_awb",
                                                 "cmu_us_kal16", "cmu_us_kal"};
  return names;
}

void SetFliteSerialized(bool serialized) { g_serialized.store(serialized); }

Result<std::unique_ptr<Synthesizer>> CreateFliteSynthesizer(const FliteConfig& config,
                                                            int max_text_bytes) {
  ASSIGN_OR_RETURN(FliteVoice voice, LoadVoice(config.voice));
  return std::unique_ptr<Synthesizer>(new FliteSynthesizer(voice, config, max_text_bytes));
}

}  // namespace hotline::tts
