// The in-process Whisper recognizer: the engine's Whisper encoder and decoder (engine/whisper_*)
// over a GGUF made by `hotline engine convert-whisper`, greedy decoding without timestamps.
//
// Sharing: the model, tokenizer and mel front end are loaded once by Create() and read by every
// stream (they are immutable). What a pass writes (a ComputePool, encoder and decoder workspaces,
// the decoder's caches, the logits) lives in a slot; the recognizer keeps a bounded set of slots
// (at most WhisperConfig::max_streams), and a stream borrows one for its lifetime and returns it
// on destruction, like the pocketsphinx decoders. A reused slot's workspaces are already grown, so
// a pass allocates nothing per token, and its pool threads are not restarted per call.
//
// A pass (partial or final) over the audio so far:
//   mel = WhisperMel::ComputePadded(pcm) (even frame count) -> encoder on the actual length ->
//   decoder: <|startoftranscript|> alone first (its logits give the <|nospeech|> probability and,
//   for language "auto", the language: the best of the language tokens), then <|lang|>
//   <|transcribe|> <|notimestamps|>, then greedy tokens until <|endoftext|>, max_tokens, or a
//   loop (the same n-gram three times in a row: decoding stops and the repeats are dropped, one
//   copy kept).
// Suppression at every step: every special token except <|endoftext|> (no timestamps in this
// mode), and Whisper's non-speech symbols (tokenizer.py non_speech_tokens(), what its default
// suppress_tokens="-1" selects); at the first step also " " and <|endoftext|> (SuppressBlank).
// Silence: no_speech_prob > no_speech_threshold and avg_logprob < -1 gives empty text
// (transcribe.py: its logprob_threshold -1 vetoes the skip when avg_logprob is above it).
//
// Result text (the AsrResult contract): Whisper's cased, punctuated text becomes lower-case words
// separated by single spaces: ASCII letters are lower-cased; punctuation and symbols (ASCII,
// CJK or other) separate words and are dropped; an apostrophe (' or ’) is kept inside a word
// ("it's", not "dogs'"); a run of Han characters is one word, kept as is (the answer module's
// normalizer splits it further). Word confidence is the mean probability of the tokens that
// make up the word (as Whisper's word_timestamps does); utterance confidence is exp(mean token
// log-probability). There are no word timings (notimestamps mode): start_ms/end_ms are 0.
//
// Partials: every partial_interval_ms of new audio the whole utterance so far is decoded again;
// partial().text is the prefix of words the last two passes agree on (it can shrink when a later
// pass disagrees), and becomes stable once it survived a pass unchanged and AsrConfig::stable_ms
// of audio. Finish() decodes the whole utterance once more (the final result does not depend on
// the partials).
//
// Threads: CreateStream() from any thread (the slot set is locked; a new slot is built outside
// the lock). AcceptFrames() (when a partial pass is due) and Finish() run a pass on the calling
// thread and the slot's pool: block for CPU, worker threads only.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asr/recognizer.h"

namespace hotline::asr {

// Counters over all streams of a recognizer (monotonic).
struct WhisperRecognizerStats {
  uint64_t passes_partial = 0;
  uint64_t passes_final = 0;
  uint64_t tokens_decoded = 0;  // sampled tokens (the <|endoftext|> that ends a pass included)
  uint64_t encode_us = 0;       // mel + encoder
  uint64_t decode_us = 0;       // decoder, prompt and sampled tokens
};

class WhisperRecognizer : public Recognizer {
 public:
  // Loads the model (errors name the file and how to make one) and builds one slot, so that a bad
  // model fails here and the first stream is quick. `stable_ms`: see AsrConfig.
  static Result<std::unique_ptr<WhisperRecognizer>> Create(const WhisperConfig& config,
                                                           int stable_ms);
  ~WhisperRecognizer() override;

  Result<std::unique_ptr<RecognizerStream>> CreateStream(int input_rate_hz) override;
  std::string name() const override { return "whisper"; }

  // Slots built so far (idle or lent).
  int slots() const;
  WhisperRecognizerStats stats() const;

  struct Shared;

 private:
  explicit WhisperRecognizer(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
};

// Words of Whisper's text (see above). `text` is the decoded bytes; token i covers bytes
// [token_begin[i], token_begin[i + 1]) (token_begin has one entry per token plus the end) and
// has probability token_prob[i]. Invalid UTF-8 (a token sequence cut inside a character)
// separates words. Exposed for tests.
std::vector<AsrWord> WhisperTextToWords(std::string_view text, std::span<const size_t> token_begin,
                                        std::span<const float> token_prob);

// Length n of the n-gram (n <= 32 tokens) that the end of `tokens` repeats three times in a row,
// or 0: the recognizer then stops decoding and drops the last two copies. Exposed for tests.
int WhisperLoopLength(std::span<const int32_t> tokens);

}  // namespace hotline::asr
