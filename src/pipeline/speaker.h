// Speaker: a call's voice — text to the line's encoded audio. One piece of text at a time it
// normalizes the words for speech, takes their audio from the shared audio cache or synthesizes
// it (streaming: the first samples go out before the sentence is done), drops the quiet the
// synthesizer leads a turn with, resamples to the line rate and encodes whole 20 ms frames in the
// line's codec. It knows nothing of turns, barge-in or the playout timeline: CallSession's speak
// strand (call_session_speak.cc) says what to speak and hands the frames on.
//
//   auto speaker = Speaker::Create(options, std::move(synth), normalizer, &audio_cache);
//   for (const std::string& chunk : speaker->ChunksOf(/*first_piece=*/true, sentence)) {
//     RETURN_IF_ERROR(speaker->Say(chunk, token, output));
//   }
//   speaker->Finish(token, output);   // the last partial frame, padded
//   speaker->Commit(/*shareable=*/true);
//
// What Say synthesizes is kept until Commit: only an answer known not to carry the caller's data
// may be shared with other calls through the audio cache. A cached piece is sent in 100 ms steps,
// so a cancelled token stops it within one.
//
// Thread-safety: none; one speak strand owns it.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "audio/codec.h"
#include "audio/pcm.h"
#include "audio/resampler.h"
#include "common/cancel_token.h"
#include "common/clock.h"
#include "common/status.h"
#include "pipeline/playout.h"
#include "tts/audio_cache.h"
#include "tts/sentence_chunker.h"
#include "tts/synthesizer.h"
#include "tts/text_normalizer.h"

namespace hotline::pipeline {

struct SpeakerOptions {
  audio::Codec codec = audio::Codec::kMulaw;  // the line's
  int line_rate_hz = 8000;
  int output_chunk_ms = 20;   // audio handed on at a time (a multiple of 20)
  int tts_timeout_ms = 5000;  // synthesis must start within this
  // Leading quiet of a turn dropped until a 5 ms window is louder than lead_trim_dbfs, at most
  // lead_trim_max_ms of it (0: none dropped).
  double lead_trim_dbfs = -50.0;
  int lead_trim_max_ms = 400;
  tts::SentenceChunkerConfig chunker;
  audio::ResamplerConfig resampler;
};

class Speaker {
 public:
  // Where a piece's audio goes, as it is made (on the caller's thread, inside Say and Finish).
  struct Output {
    // Whole encoded frames at the line rate, in order. An error (a cancelled turn) stops the
    // piece and is returned by Say.
    std::function<Status(std::deque<Playout::Frame> frames)> frames;
    // The piece has words to say (before any of its audio exists).
    std::function<void()> speaking;
    // The piece's first samples exist (from the cache or the synthesizer).
    std::function<void()> first_audio;
  };

  // `cache` may be null (no audio cache); it and `clock` (null: the system clock) must outlive
  // the speaker.
  static Result<std::unique_ptr<Speaker>> Create(const SpeakerOptions& options,
                                                 std::unique_ptr<tts::Synthesizer> synth,
                                                 tts::TextNormalizer normalizer,
                                                 tts::AudioCache* cache,
                                                 const Clock* clock = nullptr);

  // The chunks to synthesize for one piece of a turn's text. Only a turn's first piece may end
  // its first chunk early (the chunker's first-chunk rule: the caller hears the first words
  // sooner); later pieces are whole sentences of the same answer, cut only at sentence ends, so
  // every sentence keeps its prosody and a replayed answer (one piece) is cut as the streamed one
  // was (one piece per sentence), which keeps its audio-cache entries.
  std::vector<std::string> ChunksOf(bool first_piece, const std::string& piece) const;

  // Speaks one chunk. Errors: Cancelled (the token, or `out.frames` refused), DeadlineExceeded
  // (synthesis did not start within tts_timeout_ms), the synthesizer's or resampler's.
  Status Say(const std::string& chunk, const CancelToken& token, const Output& out);
  // End of a turn's speech: the resampler's tail and the last partial frame, padded with
  // silence; the next Say starts a new turn (lead trim, resampler). Uncommitted audio stays for
  // Commit.
  Status Finish(const CancelToken& token, const Output& out);
  // The audio synthesized since the last Commit or Reset goes into the audio cache when
  // `shareable` (not the caller's own data); dropped either way.
  void Commit(bool shareable);
  // Forgets the turn in progress: unsent samples, the resampler's state, uncommitted audio, the
  // lead trim (a cancelled turn, or the start of the next).
  void Reset();
  // Synthesizes `sentences` into the audio cache without sending them (work ahead of the caller's
  // end of turn); chunks already cached are skipped. Error: the first synthesis that failed.
  Status Prepare(const std::vector<std::string>& sentences);

  int sample_rate_hz() const { return synth_->sample_rate_hz(); }

 private:
  Speaker(const SpeakerOptions& options, std::unique_ptr<tts::Synthesizer> synth,
          tts::TextNormalizer normalizer, tts::AudioCache* cache, const Clock* clock);
  // Samples at the synthesizer's rate: lead trim, resampling, whole output chunks handed on.
  Status Emit(const CancelToken& token, const Output& out, std::span<const int16_t> samples);
  // Encodes `pcm` (line rate, whole frames) and hands the frames on.
  Status Send(const Output& out, std::span<const int16_t> pcm);
  // The part of `samples` to send, minus the turn's leading quiet.
  std::span<const int16_t> TrimLead(std::span<const int16_t> samples);
  // Reset() but for the uncommitted audio.
  void ResetAudio();

  SpeakerOptions options_;
  std::unique_ptr<tts::Synthesizer> synth_;
  std::unique_ptr<audio::Resampler> resampler_;  // null when the rates match
  tts::TextNormalizer normalizer_;
  tts::AudioCache* cache_;
  const Clock* clock_;
  std::vector<int16_t> pcm_;      // line-rate samples not yet handed on
  std::vector<int16_t> scratch_;  // resampler output
  std::vector<uint8_t> bytes_;    // encoder output
  int64_t lead_trimmed_ = 0;      // samples of leading quiet dropped this turn
  bool lead_done_ = false;        // the turn's first audible sample has been sent
  // Audio synthesized for the turn being spoken, stored in the audio cache by Commit.
  std::vector<std::pair<std::string, audio::AudioBuffer>> uncommitted_;
};

}  // namespace hotline::pipeline
