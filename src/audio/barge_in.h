// Barge-in detector: is the caller talking over Hotline?
//
// While Hotline speaks, the inbound channel carries the caller and the echo of Hotline's own
// voice (the telephone hybrid, a speakerphone). The detector counts an inbound frame as the
// caller's only if the VAD calls it speech AND it is louder than the loudest outbound frame of
// the last `echo_tail_ms` minus `echo_return_loss_db` (echo arrives delayed and attenuated, so it
// stays below that line). Barge-in fires once such frames add up to `min_speech_ms`, with gaps of
// up to `max_gap_ms` forgiven; one stray loud frame never interrupts the agent.
//
// Thread-safety: one per call, one thread at a time. No allocation after construction.
#pragma once

#include <cstdint>
#include <vector>

#include "audio/vad.h"
#include "common/status.h"

namespace hotline::audio {

struct BargeInConfig {
  // Caller speech (sum of qualifying frames) that interrupts the agent. Longer ignores
  // "mm-hm"s and coughs, shorter stops the agent sooner.
  int min_speech_ms = 200;
  // Gaps between qualifying frames that do not reset the count. Larger bridges the dips between
  // syllables; smaller demands truly continuous speech.
  int max_gap_ms = 80;
  // How long outbound audio may keep echoing back (echo path delay plus tail).
  int echo_tail_ms = 300;
  // Least attenuation assumed on the echo path (dB). Inbound speech must be louder than the
  // recent outbound peak minus this. Larger lets softer callers interrupt but trusts the line
  // more; telephone hybrids give 6 dB or more (ITU-T G.168), typical lines 10-20 dB.
  double echo_return_loss_db = 10.0;

  template <class V>
  void Visit(V& v) {
    v.Field("min_speech_ms", min_speech_ms, "Caller speech that interrupts the agent (ms)");
    v.Field("max_gap_ms", max_gap_ms, "Gaps forgiven inside that speech (ms)");
    v.Field("echo_tail_ms", echo_tail_ms, "How long outbound audio may echo back (ms)");
    v.Field("echo_return_loss_db", echo_return_loss_db,
            "Least echo attenuation assumed (dB); inbound must beat outbound peak minus this");
  }
  Status Validate() const;
};

class BargeInDetector {
 public:
  // REQUIRES: config.Validate().ok().
  explicit BargeInDetector(const BargeInConfig& config);

  // One 20 ms frame: the VAD verdict on the inbound frame, and the level (dBFS) of the outbound
  // frame sent at the same time (-120 or lower when Hotline is silent). Returns true on the frame
  // where barge-in is detected (once; call Reset() to re-arm, e.g. when the agent speaks again).
  bool Process(const VadFrame& inbound, float outbound_level_dbfs);

  // Qualifying caller speech counted so far (ms).
  int speech_ms() const { return speech_ms_; }
  bool triggered() const { return triggered_; }
  // Re-arms and forgets the outbound history.
  void Reset();

 private:
  BargeInConfig config_;
  std::vector<float> outbound_history_;  // ring of the last echo_tail_ms outbound levels
  size_t next_ = 0;
  int speech_ms_ = 0;
  int gap_ms_ = 0;
  bool triggered_ = false;
};

}  // namespace hotline::audio
