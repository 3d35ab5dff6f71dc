// Barge-in detector: is the caller talking over Hotline?
//
// While Hotline speaks, the inbound channel carries the caller and the echo of Hotline's own
// voice (the telephone hybrid, a speakerphone). The detector counts an inbound frame as the
// caller's only if the VAD calls it speech AND it is louder than the loudest outbound frame of
// the last `echo_tail_ms` minus `echo_return_loss_db` (echo arrives delayed and attenuated, so it
// stays below that line). Barge-in fires once such frames add up to `min_speech_ms`, with gaps of
// up to `max_gap_ms` forgiven; one stray loud frame never interrupts the agent.
//
// Two stages, so the agent falls silent fast without being cut off by a cough: after
// `pause_after_ms` of such speech the detector says kPause (the transport stops playback at once
// and the unplayed audio is kept); reaching `min_speech_ms` confirms it (kBargeIn: the turn is
// cancelled); speech that stops short of that, or is not confirmed within `resume_after_ms` of
// the pause, gives kResume (the kept audio plays on).
//
// Speech alone does not tell an interruption from a backchannel: "uh-huh", "okay", "right" last
// as long as "wait, what?". With `check_words`, reaching `min_speech_ms` does not confirm: the
// pause is held while the caller speaks, and the caller of Process says what the words so far
// are (Words, from the partial transcript). Words other than backchannel words confirm once the
// caller has spoken `backchannel_max_ms` (a backchannel is short, and the recognizer often hears
// a short "uh huh" as words of its domain); `max_hold_ms` of speech confirms whatever its words.
// When the caller stops (`hold_release_ms` of silence), an interruption cue ("stop", "wait",
// "no") confirms; anything else resumes the agent's audio (kResume), the count starting afresh.
// So a real interruption silences the agent as fast as before (the pause) and only its
// confirmation waits for the words.
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
  // Caller speech after which playback pauses pending confirmation (0 = no pause stage: the
  // agent stops only at min_speech_ms). Must be below min_speech_ms.
  int pause_after_ms = 80;
  // A pause whose speech has not reached min_speech_ms within this long resumes the agent's audio
  // where it stopped (a held pause, with check_words, ends by the hold's rules instead).
  int resume_after_ms = 300;
  // Confirm only once the caller's words interrupt (see above); false: min_speech_ms confirms.
  bool check_words = true;
  // Longest caller speech still taken for a backchannel when its words are not backchannel
  // words (the recognizer often mishears a short "uh huh"): longer speech with such words
  // confirms.
  int backchannel_max_ms = 900;
  // Caller speech that confirms whatever the words.
  int max_hold_ms = 1200;
  // Silence after backchannel-only speech that ends the hold: the agent's audio resumes.
  int hold_release_ms = 200;

  template <class V>
  void Visit(V& v) {
    v.Field("min_speech_ms", min_speech_ms, "Caller speech that interrupts the agent (ms)");
    v.Field("max_gap_ms", max_gap_ms, "Gaps forgiven inside that speech (ms)");
    v.Field("echo_tail_ms", echo_tail_ms, "How long outbound audio may echo back (ms)");
    v.Field("echo_return_loss_db", echo_return_loss_db,
            "Least echo attenuation assumed (dB); inbound must beat outbound peak minus this");
    v.Field("pause_after_ms", pause_after_ms,
            "Caller speech that pauses playback pending confirmation (ms; 0 = no pause stage)");
    v.Field("resume_after_ms", resume_after_ms,
            "A pause still short of min_speech_ms resumes the agent's audio after this long "
            "(ms); a held pause ends by the hold's rules");
    v.Field("check_words", check_words,
            "Confirm only when the caller's words interrupt: a backchannel (uh-huh, okay) or "
            "the agent's own words said back hold the pause instead");
    v.Field("backchannel_max_ms", backchannel_max_ms,
            "Longest speech taken for a backchannel when its words are not backchannel words "
            "(ms)");
    v.Field("max_hold_ms", max_hold_ms, "Caller speech that confirms whatever the words (ms)");
    v.Field("hold_release_ms", hold_release_ms,
            "Silence after backchannel-only speech that resumes the agent (ms)");
  }
  Status Validate() const;
};

enum class BargeInEvent : uint8_t {
  kNone,
  kPause,    // probable caller speech: stop playback, keep the unplayed audio
  kResume,   // the pause was not confirmed: play the kept audio
  kBargeIn,  // confirmed: cancel the agent's turn (implies the end of any pause)
};
const char* BargeInEventName(BargeInEvent e);

class BargeInDetector {
 public:
  // REQUIRES: config.Validate().ok().
  explicit BargeInDetector(const BargeInConfig& config);

  // What the caller's words so far do, as far as the caller of Process knows them.
  enum class Words : uint8_t {
    kUnknown,  // nothing recognized yet, or only backchannel words ("uh huh", "okay")
    kOther,    // other words: an interruption if the caller says them at length
    kCue,      // a word that interrupts however short ("stop", "wait", "no", "sorry")
  };

  // One 20 ms frame: the VAD verdict on the inbound frame, the level (dBFS) of the outbound
  // frame sent at the same time (-120 or lower when Hotline is silent or paused), and what the
  // caller's words so far do (read only with check_words). kBargeIn comes once (call Reset() to
  // re-arm, e.g. when the agent speaks again); kPause is always followed by kResume or kBargeIn.
  BargeInEvent Process(const VadFrame& inbound, float outbound_level_dbfs,
                       Words words = Words::kUnknown);

  // The last frame was the caller's speech: speech, and above the echo of the agent's audio.
  bool caller_speech() const { return caller_speech_; }
  // Qualifying caller speech counted so far (ms).
  int speech_ms() const { return speech_ms_; }
  bool triggered() const { return triggered_; }
  bool paused() const { return paused_; }
  // Speech reached min_speech_ms but its words have not yet interrupted (check_words).
  bool holding() const { return holding_; }
  // Re-arms and forgets the outbound history.
  void Reset();

 private:
  BargeInEvent Confirm();

  BargeInConfig config_;
  std::vector<float> outbound_history_;  // ring of the last echo_tail_ms outbound levels
  size_t next_ = 0;
  int speech_ms_ = 0;
  int gap_ms_ = 0;
  bool triggered_ = false;
  bool paused_ = false;
  int paused_ms_ = 0;
  bool holding_ = false;
  int held_speech_ms_ = 0;
  bool caller_speech_ = false;  // caller speech since the pause, while holding
};

}  // namespace hotline::audio
