// HotlineConfig: the root of config/hotline.yaml. Each module owns its section's struct; this
// file only nests them, so `--set asr.pocketsphinx.beam=...` reaches any field.
//
// Load with LoadHotlineConfig (file, then --set overrides, then Validate of every section).
#pragma once

#include <string>
#include <vector>

#include "answer/answerer.h"
#include "answer/cache/store.h"
#include "asr/asr_config.h"
#include "audio/audio_config.h"
#include "audio/barge_in.h"
#include "audio/endpointer.h"
#include "audio/vad.h"
#include "common/config.h"
#include "engine/engine.h"
#include "llm/llm_config.h"
#include "pipeline/call_config.h"
#include "server/admin/admin_api.h"
#include "server/calls/audiosocket_server.h"
#include "server/calls/calls_config.h"
#include "server/calls/twilio_endpoint.h"
#include "server/server_config.h"
#include "tts/synthesizer.h"

namespace hotline {

// The speech-in front end: voice activity, end of turn, barge-in.
struct SpeechInConfig {
  audio::VadConfig vad;
  audio::EndpointerConfig endpointer;
  audio::BargeInConfig barge_in;
  template <class V>
  void Visit(V& v) {
    v.Section("vad", vad);
    v.Section("endpointer", endpointer);
    v.Section("barge_in", barge_in);
  }
};

// The demo support-agent model shipped with Hotline (assets/models/demo-agent.q8_0.gguf under
// the assets folder the build names, HOTLINE_ASSETS_DIR, like the demo knowledge base).
std::string DemoModelPath();

// Embedded defaults that differ from the modules' own: the language model is the demo model on
// the engine backend (llm.engine.model_path "" stands for DemoModelPath(), filled in by
// LoadHotlineConfig), and the answerer's prompt fits what that model was trained on: a single
// question after the system prompt (no passages, no history) in its 160-token context.
llm::LlmConfig DemoLlmConfig();
answer::AnswererConfig DemoAnswererConfig();

// The `log` section: how log lines are written (the level is log_level).
struct LogConfig {
  // "text" (time, level, message) or "json" (one JSON object per line, for log shippers).
  std::string format = "text";

  template <class V>
  void Visit(V& v) {
    v.Field("format", format, "text | json (one JSON object per log line)");
  }
  Status Validate() const;
};

struct HotlineConfig {
  // trace|debug|info|warn|error|off. debug logs every turn's stages; info is for production.
  std::string log_level = "info";
  audio::AudioConfig audio;
  SpeechInConfig speech_in;
  asr::AsrConfig asr;
  tts::TtsConfig tts;
  llm::LlmConfig llm = DemoLlmConfig();
  answer::AnswererConfig answer = DemoAnswererConfig();
  answer::StoreConfig store;
  pipeline::CallConfig call;
  server::ServerConfig server;
  server::CallsConfig calls;
  server::TwilioConfig twilio;
  server::AudioSocketConfig audiosocket;
  server::AdminConfig admin;
  LogConfig log;

  template <class V>
  void Visit(V& v) {
    v.Field("log_level", log_level, "trace|debug|info|warn|error|off");
    v.Section("audio", audio);
    v.Section("speech_in", speech_in);
    v.Section("asr", asr);
    v.Section("tts", tts);
    v.Section("llm", llm);
    v.Section("answer", answer);
    v.Section("store", store);
    v.Section("call", call);
    v.Section("server", server);
    v.Section("calls", calls);
    v.Section("twilio", twilio);
    v.Section("audiosocket", audiosocket);
    v.Section("admin", admin);
    v.Section("log", log);
  }
  Status Validate() const;
};

// Reads `path` (empty: defaults only), applies each "a.b=value" of `overrides` in order, fills
// an empty llm.engine.model_path of the engine backend with DemoModelPath(), then validates
// and applies log.format to the process's log.
// Errors name the file line or the override. Keys that moved (twilio.max_calls,
// twilio.over_capacity_text, audiosocket.over_capacity_text -> calls.*) are still read, with a
// warning naming the new key; the old and the new key both set is an error. Keys that were
// removed (the top-level engine section, llm.engine.prefix_cache_sequences) are an error that
// says why and what to do.
Result<HotlineConfig> LoadHotlineConfig(const std::string& path,
                                        const std::vector<std::string>& overrides);

// The configuration as YAML with its secrets replaced by "<redacted>": values of keys named
// token, password, secret or api_key (any section), and the user:password part of URLs.
std::string RedactedConfigYaml(const HotlineConfig& cfg);

}  // namespace hotline
