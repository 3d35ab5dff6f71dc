// Configuration of speech recognition (section `asr` of hotline.yaml).
#pragma once

#include <string>

#include "common/status.h"

namespace hotline::asr {

struct PocketsphinxConfig {
  // Acoustic model folder (16 kHz continuous US English from Debian's pocketsphinx-en-us).
  std::string acoustic_model = "/usr/share/pocketsphinx/model/en-us/en-us";
  // Pronunciation dictionary. Must cover every word of the language models.
  std::string dictionary = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";
  // General English trigram model. Broad coverage, but weak on call-centre phrasing.
  std::string generic_lm = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";
  // Domain model from `hotline asr build-lm` (ARPA). Empty: generic model only.
  std::string domain_lm;
  // How the domain model is used: "interpolated" mixes it with the generic model (robust to
  // out-of-domain words, slower: two models per decoder), "switched" uses it alone (fastest,
  // most accurate in domain, cannot recognise words outside it). See docs/speech-in.md.
  // Default switched: on the held-out test set it has the lower WER and runs ~8x cheaper
  // (bench/asr, docs/speech-in.md).
  std::string lm_mode = "switched";
  // Weight of the domain model when interpolated. Higher trusts the domain phrasing more
  // (0.95 beat 0.8 when tuned).
  double domain_weight = 0.95;
  // Language-model weight (pocketsphinx -lw). Higher favours likely word sequences over the
  // acoustics; the domain model tolerates more.
  double language_weight = 6.5;
  // Beam widths (pocketsphinx -beam / -wbeam, as probabilities). Narrower is faster and
  // loses more correct hypotheses.
  double beam = 1e-48;
  double word_beam = 7e-29;
  // Decoders kept (one per concurrent stream; each holds the models, ~see docs). Bounds memory;
  // CreateStream() fails with kResourceExhausted beyond it.
  int max_streams = 32;
  // How often a partial hypothesis is computed (ms of audio). Shorter gives fresher partials at
  // some CPU per call.
  int partial_interval_ms = 100;
  // Longest utterance one stream accepts (s).
  int max_utterance_s = 60;
  // Level (dBFS) of the noise added above 4 kHz to 8 kHz streams after upsampling; 0 disables.
  // The wideband model never saw the empty 4-8 kHz band of telephone audio and misreads it
  // ("go forward ten meters" → "one one years"); a faint noise floor there, like the room noise
  // of its training recordings, restores recognition. Measured in docs/speech-in.md.
  double telephone_band_fill_dbfs = -48.0;
  // Start every stream's cepstral mean normalization from the acoustic model's prior (-cmninit).
  // On: a turn decodes the same whatever its pooled decoder heard before. Off: the channel
  // estimate (13 averaged cepstra, no content) carries over from the decoder's previous streams,
  // which suits telephone audio far better than the wideband prior: on the ASR benchmark, WER
  // 15.9 % carried vs 18.3 % reset (docs/speech-in.md).
  bool cmn_per_stream = false;
  // The decoder's passes after the streaming (tree) search, run when the caller's turn ends:
  // `fwdflat` re-decodes the whole utterance with a flat lexicon, `bestpath` rescores its word
  // lattice. Each makes the final transcript a little more accurate and costs time between the
  // end of the turn and the answer. On the ASR benchmark (docs/speech-in.md) fwdflat takes the
  // final from 3.7 to 67 ms of CPU (P50) for 6.4 % WER instead of 7.1 %, and bestpath costs
  // 2 ms for 7.1 % instead of 10.1 %: bestpath is on, fwdflat off.
  bool fwdflat = false;
  bool bestpath = true;
  // Inverse scale of the acoustic scores in the lattice's posteriors (pocketsphinx -ascale): the
  // word confidences (asr/word_confidence.h) come from them, the transcript does not. Lower
  // sharpens the posteriors, higher flattens them. Needs bestpath; without it every confidence
  // is 1 (no estimate).
  double posterior_scale = 20.0;

  template <class V>
  void Visit(V& v) {
    v.Field("acoustic_model", acoustic_model, "Acoustic model folder");
    v.Field("dictionary", dictionary, "Pronunciation dictionary");
    v.Field("generic_lm", generic_lm, "General English language model");
    v.Field("domain_lm", domain_lm, "Domain language model (ARPA from `hotline asr build-lm`)");
    v.Field("lm_mode", lm_mode, "Domain model use: interpolated | switched");
    v.Field("domain_weight", domain_weight, "Domain model weight when interpolated");
    v.Field("language_weight", language_weight, "Language-model weight (-lw)");
    v.Field("beam", beam, "Main search beam (-beam)");
    v.Field("word_beam", word_beam, "Word-exit beam (-wbeam)");
    v.Field("max_streams", max_streams, "Concurrent streams (decoders) at most");
    v.Field("partial_interval_ms", partial_interval_ms, "Audio between partial hypotheses (ms)");
    v.Field("max_utterance_s", max_utterance_s, "Longest utterance per stream (s)");
    v.Field("telephone_band_fill_dbfs", telephone_band_fill_dbfs,
            "Noise level above 4 kHz added to upsampled 8 kHz audio (dBFS); 0 disables");
    v.Field("fwdflat", fwdflat, "Second, flat-lexicon pass over the utterance at its end");
    v.Field("bestpath", bestpath, "Lattice rescoring of the final transcript");
    v.Field("posterior_scale", posterior_scale,
            "Inverse acoustic scale of the word-confidence posteriors (-ascale)");
    v.Field("cmn_per_stream", cmn_per_stream,
            "Restart cepstral mean normalization from the model's prior at every stream");
  }
  Status Validate() const;
};

struct OpenAiAsrConfig {
  // Base URL of an OpenAI-compatible server (whisper.cpp server, faster-whisper, vLLM...).
  std::string url = "http://127.0.0.1:8000/v1";
  // Model name sent with each request.
  std::string model = "whisper-1";
  // ISO-639-1 language hint. Empty lets the server detect it (slower, less reliable on short
  // utterances).
  std::string language = "en";
  // Name of the environment variable holding the API key ("" = no Authorization header). The
  // key itself never sits in the config file.
  std::string api_key_env = "";
  // Limit for one transcription request. Longer tolerates a busy server; shorter fails over sooner.
  int timeout_ms = 10000;
  // Longest utterance sent (s); audio is buffered until Finish().
  int max_utterance_s = 60;
  // Streams open at once. Bounds buffered audio and requests in flight.
  int max_streams = 256;
  // For an https:// url: PEM file of the trusted authorities ("" = the system's store).
  std::string ca_file;

  template <class V>
  void Visit(V& v) {
    v.Field("url", url, "Base URL of the OpenAI-compatible server");
    v.Field("model", model, "Model name");
    v.Field("language", language, "Language hint (ISO-639-1), empty to auto-detect");
    v.Field("api_key_env", api_key_env, "Environment variable with the API key");
    v.Field("timeout_ms", timeout_ms, "Request timeout (ms)");
    v.Field("max_utterance_s", max_utterance_s, "Longest utterance sent (s)");
    v.Field("max_streams", max_streams, "Concurrent streams at most");
    v.Field("ca_file", ca_file,
            "PEM file of the authorities trusted for https:// (empty: the system's store)");
  }
  Status Validate() const;
};

// The in-process Whisper backend (asr/whisper/whisper_recognizer.h): the engine's Whisper encoder
// and decoder on this machine's CPU, greedy decoding without timestamps.
struct WhisperConfig {
  // Whisper GGUF from `hotline engine convert-whisper ggml-base.bin -o base.gguf` (whisper.cpp's
  // ggml models, any size or quantization). Required: the backend has no default model.
  std::string model_path;
  // Language code of the callers ("en", "zh", ... any of Whisper's 99), or "auto": identify it
  // per pass from the decoder's first step over the language tokens (costs nothing extra, but a
  // short or noisy utterance can be misidentified; a fixed code is more reliable). English-only
  // models (*.en) take only "en" or "auto".
  std::string language = "en";
  // Compute threads per stream. Calls run in parallel, so 1 uses the cores best under load; more
  // shortens one call's final pass (latency) when cores are idle.
  int threads = 1;
  // Streams open at once; each holds a compute pool and encoder/decoder workspaces (a few MB to
  // tens of MB with the model size), kept for reuse. CreateStream() fails with
  // kResourceExhausted beyond it.
  int max_streams = 8;
  // Audio (ms) between partial passes: each re-decodes the whole utterance so far, so a shorter
  // interval gives fresher partials for proportionally more CPU. 0: no partials (Finish() only,
  // the cheapest).
  int partial_interval_ms = 500;
  // Longest utterance one stream accepts (s). Whisper reads at most one 30 s window; longer turns
  // are refused rather than cut.
  int max_utterance_s = 30;
  // Tokens decoded per pass at most (a 3 s question is ~10-20). Bounds the time of a pass on
  // audio that makes the model loop; text past it is lost.
  int max_tokens = 128;
  // Whisper's temperature fallback (re-decoding with sampling when the greedy result looks
  // degenerate). Not implemented: the backend decodes greedily (temperature 0) only, and true is
  // refused.
  bool temperature_fallback = false;
  // Whisper's silence rule: a pass whose <|nospeech|> probability (after <|startoftranscript|>)
  // is above this and whose mean token log-probability is below -1 gives empty text. Lower drops
  // more doubtful speech; 1 disables the rule.
  double no_speech_threshold = 0.6;

  template <class V>
  void Visit(V& v) {
    v.Field("model_path", model_path, "Whisper GGUF (`hotline engine convert-whisper`)");
    v.Field("language", language, "Language code (en, zh, ...) or auto");
    v.Field("threads", threads, "Compute threads per stream");
    v.Field("max_streams", max_streams, "Concurrent streams at most");
    v.Field("partial_interval_ms", partial_interval_ms,
            "Audio between partial passes (ms); 0 disables partials");
    v.Field("max_utterance_s", max_utterance_s, "Longest utterance per stream (s, at most 30)");
    v.Field("max_tokens", max_tokens, "Tokens decoded per pass at most");
    v.Field("temperature_fallback", temperature_fallback,
            "Re-decode with sampling on degenerate output (not implemented: must be false)");
    v.Field("no_speech_threshold", no_speech_threshold,
            "No-speech probability above which a low-confidence pass gives empty text");
  }
  Status Validate() const;
};

// The end-of-turn decision (asr/turn_detector.h): how long a silence ends the caller's turn,
// chosen per 20 ms frame from the partial transcript, the recognizer's state and the voice.
// Off by default: on the turn-taking benchmark (`hotline eval turns`, docs/speech-in.md) it stops
// the cut-offs at 600 ms pauses but waits longer than the fixed rule after complete questions the
// recognizer mishears. The weights are a hand-set starting point; `--tune` searches them on the
// tuning voices.
struct TurnDetectorConfig {
  // On: the detector sets the endpointer's silence every frame (endpointer.trailing_silence_ms and
  // complete_silence_ms no longer apply); only with a backend that streams partials
  // (pocketsphinx). Off: the endpointer's fixed rule.
  bool enabled = false;
  // Turn-end model from `hotline asr train-turns`; empty: the one shipped in assets/turns/.
  std::string model;
  // Silence that ends a turn that is clearly over. Lower answers sooner; below ~100 ms a
  // stressed word's stop closure can end the turn.
  int min_wait_ms = 100;
  // Silence that ends a turn that is clearly not over (a caller stopped after "my order number
  // is"). Higher never cuts a slow caller; it is also what a caller waits who really stops there.
  int max_wait_ms = 1400;
  // Silence at even odds (log-odds 0 that the turn is over).
  int center_wait_ms = 520;
  // Wait taken off (added) per unit of log-odds for (against) the end of the turn. Larger makes
  // the detector more decisive.
  double ms_per_logit = 110;
  // Log-odds offset and weight of the words' end probability (logit of TurnEndModel).
  double bias = 0.0;
  double lexical_weight = 1.0;
  // Log-odds added while the recognizer is still revising the last words (its partial changed
  // within open_word_ms): a word is still open.
  double open_word_logit = -1.5;
  int open_word_ms = 160;
  // Log-odds per semitone of final pitch fall, per dB of energy drop in the last 100 ms of speech,
  // and per unit of final lengthening above 1.
  double pitch_fall_weight = 0.0;
  double energy_drop_weight = 0.0;
  double lengthening_weight = 0.0;

  template <class V>
  void Visit(V& v) {
    v.Field("enabled", enabled, "Learned end-of-turn decision (off: endpointer's fixed silence)");
    v.Field("model", model, "Turn-end model file (empty: assets/turns/turn_end.model)");
    v.Field("min_wait_ms", min_wait_ms, "Silence that ends a turn that is clearly over (ms)");
    v.Field("max_wait_ms", max_wait_ms, "Silence that ends a turn that is clearly not over (ms)");
    v.Field("center_wait_ms", center_wait_ms, "Silence at even odds (ms)");
    v.Field("ms_per_logit", ms_per_logit, "Wait change per unit of log-odds (ms)");
    v.Field("bias", bias, "Log-odds offset of the end of turn");
    v.Field("lexical_weight", lexical_weight, "Weight of the words' end log-odds");
    v.Field("open_word_logit", open_word_logit, "Log-odds while the recognizer revises words");
    v.Field("open_word_ms", open_word_ms, "A partial changed this recently means an open word (ms)");
    v.Field("pitch_fall_weight", pitch_fall_weight, "Log-odds per semitone of final pitch fall");
    v.Field("energy_drop_weight", energy_drop_weight, "Log-odds per dB of final energy drop");
    v.Field("lengthening_weight", lengthening_weight, "Log-odds per unit of final lengthening");
  }
  Status Validate() const;
};

struct AsrConfig {
  // "pocketsphinx" (embedded, streaming), "openai" (remote, whole utterance) or "whisper"
  // (embedded Whisper model, partials by re-decoding).
  std::string backend = "pocketsphinx";
  // Audio (ms) over which a partial must stay unchanged to be marked stable. Shorter lets the
  // pipeline start work earlier and risks acting on words that later change.
  int stable_ms = 300;
  PocketsphinxConfig pocketsphinx;
  OpenAiAsrConfig openai;
  WhisperConfig whisper;
  TurnDetectorConfig turn;

  template <class V>
  void Visit(V& v) {
    v.Field("backend", backend, "Recognizer backend: pocketsphinx | openai | whisper");
    v.Field("stable_ms", stable_ms, "Audio a partial must survive unchanged to be stable (ms)");
    v.Section("pocketsphinx", pocketsphinx);
    v.Section("openai", openai);
    v.Section("whisper", whisper);
    v.Section("turn", turn);
  }
  Status Validate() const;
};

}  // namespace hotline::asr
