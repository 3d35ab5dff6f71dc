#include "app/call_runner.h"

namespace hotline::cli {

pipeline::CallStackOptions CallStackOptionsFrom(const HotlineConfig& cfg) {
  pipeline::CallStackOptions o;
  o.asr = cfg.asr;
  o.tts = cfg.tts;
  o.answer = cfg.answer;
  o.store = cfg.store;
  o.llm = cfg.llm;
  o.call = cfg.call;
  o.vad = cfg.speech_in.vad;
  o.endpointer = cfg.speech_in.endpointer;
  o.barge_in = cfg.speech_in.barge_in;
  o.resampler = cfg.audio.resampler;
  return o;
}

}  // namespace hotline::cli
