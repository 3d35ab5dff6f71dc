#include "asr/whisper/whisper_recognizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "audio/resampler.h"
#include "common/utf8.h"
#include "engine/compute_pool.h"
#include "engine/unicode.h"
#include "engine/whisper_format.h"
#include "engine/whisper_forward.h"
#include "engine/whisper_mel.h"
#include "engine/whisper_model.h"
#include "engine/whisper_tokenizer.h"

namespace hotline::asr {
namespace {

using engine::TokenId;
using Clock = std::chrono::steady_clock;

constexpr int kModelRateHz = engine::kWhisperSampleRateHz;
// transcribe.py's default logprob_threshold: a pass whose avg_logprob is above it is kept even
// when <|nospeech|> is likely.
constexpr double kLogprobThreshold = -1.0;
// A loop: the same n-gram (n <= kMaxLoopNgram tokens) kLoopRepeats times in a row at the end.
constexpr int kLoopRepeats = 3;
constexpr int kMaxLoopNgram = 32;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

uint64_t MicrosSince(Clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

// log(sum(exp(x))) given m = max(x). Once per decoded token over the whole vocabulary: float
// exp is ~1.5x faster than double here (0.21 vs 0.31 ms for 51865 logits), and the float sum's
// rounding (~1e-5 relative) is far below what a confidence needs.
float LogSumExp(std::span<const float> x, float m) {
  if (m == kNegInf) return m;
  float sum = 0;
  for (float v : x) sum += std::exp(v - m);
  return m + std::log(sum);
}

float LogSumExp(std::span<const float> x) {
  return LogSumExp(x, *std::max_element(x.begin(), x.end()));
}

// openai/whisper tokenizer.py non_speech_tokens(): speaker tags, music notes and brackets that
// its default suppress_tokens="-1" keeps out of transcripts. A symbol counts when it (or " " +
// it) is one token; for the music symbols the first token is enough (their UTF-8 forms share
// the first two bytes). " -" and " '" go too (hyphens and quotes only inside words).
std::vector<TokenId> NonSpeechTokens(const engine::WhisperTokenizer& tok) {
  std::vector<std::string> symbols;
  for (char c : std::string_view("\"#()*+/:;<=>@[\\]^_`{|}~")) symbols.emplace_back(1, c);
  for (const char* s :
       {"「", "」",  "『", "』", "<<",  ">>",  "<<<", ">>>", "--", "---", "-(", "-[",
        "('", "(\"", "((", "))", "(((", ")))", "[[",  "]]",  "{{", "}}",  "♪♪", "♪♪♪"}) {
    symbols.emplace_back(s);
  }
  std::vector<TokenId> out;
  for (const char* s : {" -", " '"}) {
    std::vector<TokenId> ids = tok.Encode(s);
    if (!ids.empty()) out.push_back(ids[0]);
  }
  auto add = [&](const std::string& symbol, bool first_is_enough) {
    for (const std::string& text : {symbol, " " + symbol}) {
      std::vector<TokenId> ids = tok.Encode(text);
      if (ids.size() == 1 || (first_is_enough && !ids.empty())) out.push_back(ids[0]);
    }
  };
  for (const std::string& s : symbols) add(s, false);
  for (const char* s : {"♩", "♪", "♫", "♬", "♭", "♮", "♯"}) add(s, true);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// What one pass writes: a ComputePool and the encoder/decoder workspaces, borrowed by a stream
// for its lifetime (see the header). Vectors keep their capacity across streams.
struct Slot {
  Slot(const engine::WhisperModel& model, int threads, int decoder_tokens, size_t max_samples)
      : pool(threads), encoder(model, pool), decoder(model, pool, decoder_tokens) {
    pcm.reserve(max_samples);
    tokens.reserve(static_cast<size_t>(decoder_tokens));
    logprobs.reserve(static_cast<size_t>(decoder_tokens));
  }

  engine::ComputePool pool;  // before the encoder/decoder, which borrow it
  engine::WhisperEncoder encoder;
  engine::WhisperDecoder decoder;
  std::vector<float> pcm;     // the utterance so far, 16 kHz, [-1, 1]
  std::vector<float> audio;   // encoder output
  std::vector<float> logits;  // n_vocab
  std::vector<TokenId> prompt;
  std::vector<TokenId> tokens;  // sampled text tokens of the current pass
  std::vector<float> logprobs;  // theirs
};

// One pass's outcome.
struct PassResult {
  std::vector<AsrWord> words;
  std::string text;
  float confidence = 0;
};

}  // namespace

struct WhisperRecognizer::Shared {
  WhisperConfig config;
  int stable_ms = 300;
  std::unique_ptr<engine::WhisperModel> model;
  std::unique_ptr<const engine::WhisperTokenizer> tokenizer;
  std::unique_ptr<engine::WhisperMel> mel;
  std::vector<TokenId> prompt;  // sot [lang transcribe] notimestamps
  int language_at = -1;         // index of the language token in `prompt`, -1 when none
  bool detect_language = false;
  std::vector<TokenId> suppress;        // at every step
  std::vector<TokenId> suppress_first;  // at the first sampled step too (SuppressBlank)
  int decoder_tokens = 0;
  size_t max_samples = 0;  // 16 kHz

  std::atomic<uint64_t> passes_partial{0}, passes_final{0}, tokens_decoded{0}, encode_us{0},
      decode_us{0};

  mutable std::mutex mu;
  int built = 0;                            // guarded by mu
  std::vector<std::unique_ptr<Slot>> idle;  // guarded by mu; declared after `model` (uses it)

  Result<std::unique_ptr<Slot>> Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!idle.empty()) {
        std::unique_ptr<Slot> s = std::move(idle.back());
        idle.pop_back();
        return s;
      }
      if (built >= config.max_streams) {
        return ResourceExhaustedError("all " + std::to_string(config.max_streams) +
                                      " whisper streams are busy (raise asr.whisper.max_streams, "
                                      "or shed calls)");
      }
      ++built;
    }
    return std::make_unique<Slot>(*model, config.threads, decoder_tokens, max_samples);
  }

  void Release(std::unique_ptr<Slot> s) {
    s->pcm.clear();
    std::lock_guard<std::mutex> lock(mu);
    idle.push_back(std::move(s));
  }

  // Decodes s.pcm (see the header for the steps and rules).
  Result<PassResult> Pass(Slot& s, bool final_pass) {
    PassResult out;
    const Clock::time_point t0 = Clock::now();
    ASSIGN_OR_RETURN(engine::WhisperMelOutput mel_out, mel->ComputePadded(s.pcm));
    if (mel_out.n_frames == 0) return out;
    RETURN_IF_ERROR(
        s.encoder.Encode(mel_out.mel, mel_out.n_frames, &s.audio).WithContext("whisper encoder"));
    const uint64_t encode = MicrosSince(t0);
    const Clock::time_point t1 = Clock::now();
    RETURN_IF_ERROR(
        s.decoder.SetAudio(s.audio, engine::WhisperEncoder::PositionsForFrames(mel_out.n_frames))
            .WithContext("whisper decoder"));

    const engine::WhisperSpecialTokens& sp = tokenizer->special();
    // decoding.py DecodingTask._main_loop: no_speech_prob is the softmax of the logits at the
    // <|startoftranscript|> position, before any filter; detect_language() takes the best language
    // token from the same logits. Decoding sot alone first gives both.
    s.prompt.assign(prompt.begin(), prompt.end());
    RETURN_IF_ERROR(s.decoder.Decode(std::span<const TokenId>(s.prompt.data(), 1), &s.logits)
                        .WithContext("whisper decoder"));
    const float no_speech_prob = std::exp(s.logits[sp.no_speech] - LogSumExp(s.logits));
    if (detect_language) {
      TokenId best = sp.first_language;
      for (TokenId id = sp.first_language; id < sp.first_language + sp.n_languages; ++id) {
        if (s.logits[id] > s.logits[best]) best = id;
      }
      s.prompt[language_at] = best;
    }
    if (s.prompt.size() > 1) {
      RETURN_IF_ERROR(s.decoder.Decode(std::span<const TokenId>(s.prompt).subspan(1), &s.logits)
                          .WithContext("whisper decoder"));
    }

    // Greedy loop (decoding.py GreedyDecoder at temperature 0): the log-probabilities are those
    // of the filtered logits, and the <|endoftext|> that ends the pass counts in the sum.
    s.tokens.clear();
    s.logprobs.clear();
    double sum_logprob = 0;
    int sampled = 0;
    const int max_tokens = config.max_tokens;
    for (int step = 0; step < max_tokens; ++step) {
      float* l = s.logits.data();
      for (TokenId id : suppress) l[id] = kNegInf;
      if (step == 0) {
        for (TokenId id : suppress_first) l[id] = kNegInf;
      }
      const TokenId best = static_cast<TokenId>(std::max_element(s.logits.begin(), s.logits.end()) -
                                                s.logits.begin());
      const float logprob = l[best] - LogSumExp(s.logits, l[best]);
      sum_logprob += logprob;
      tokens_decoded.fetch_add(1, std::memory_order_relaxed);
      if (best == sp.eot) break;
      ++sampled;
      s.tokens.push_back(best);
      s.logprobs.push_back(logprob);
      if (const int n = WhisperLoopLength(s.tokens); n > 0) {
        // A loop (a greedy decoder's usual failure on silence or noise): keep one copy.
        s.tokens.resize(s.tokens.size() - static_cast<size_t>(n) * (kLoopRepeats - 1));
        s.logprobs.resize(s.tokens.size());
        break;
      }
      if (step + 1 == max_tokens) break;  // no logits needed after the last token
      RETURN_IF_ERROR(s.decoder.Decode(std::span<const TokenId>(&best, 1), &s.logits)
                          .WithContext("whisper decoder"));
    }
    const uint64_t decode = MicrosSince(t1);
    encode_us.fetch_add(encode, std::memory_order_relaxed);
    decode_us.fetch_add(decode, std::memory_order_relaxed);
    (final_pass ? passes_final : passes_partial).fetch_add(1, std::memory_order_relaxed);

    // decoding.py: avg_logprob = sum_logprob / (len(tokens) + 1), tokens without the eot.
    // transcribe.py: skip when no_speech_prob > no_speech_threshold, unless avg_logprob is above
    // logprob_threshold.
    const double avg_logprob = sum_logprob / (sampled + 1);
    if (no_speech_prob > config.no_speech_threshold && !(avg_logprob > kLogprobThreshold)) {
      return out;
    }
    std::string bytes;
    std::vector<size_t> begin;
    std::vector<float> probs;
    begin.reserve(s.tokens.size() + 1);
    probs.reserve(s.tokens.size());
    double sum_kept = 0;
    for (size_t i = 0; i < s.tokens.size(); ++i) {
      begin.push_back(bytes.size());
      bytes.append(tokenizer->TokenBytes(s.tokens[i]));
      probs.push_back(std::exp(s.logprobs[i]));
      sum_kept += s.logprobs[i];
    }
    begin.push_back(bytes.size());
    out.words = WhisperTextToWords(bytes, begin, probs);
    for (const AsrWord& w : out.words) {
      if (!out.text.empty()) out.text += ' ';
      out.text += w.word;
    }
    if (!out.text.empty()) {
      out.confidence = static_cast<float>(std::exp(sum_kept / static_cast<double>(probs.size())));
    }
    return out;
  }
};

int WhisperLoopLength(std::span<const int32_t> t) {
  const int len = static_cast<int>(t.size());
  for (int n = 1; n <= kMaxLoopNgram && n * kLoopRepeats <= len; ++n) {
    bool loop = true;
    for (int j = len - 1; j >= len - n * (kLoopRepeats - 1) && loop; --j) loop = t[j] == t[j - n];
    if (loop) return n;
  }
  return 0;
}

std::vector<AsrWord> WhisperTextToWords(std::string_view text, std::span<const size_t> token_begin,
                                        std::span<const float> token_prob) {
  std::vector<AsrWord> words;
  std::string word;
  size_t word_begin = 0, word_end = 0;
  bool han = false;         // the current word is a run of Han characters
  bool apostrophe = false;  // an apostrophe followed the current word
  size_t first_token = 0;   // tokens before it end before the current word
  const size_t n_tokens =
      std::min(token_prob.size(), token_begin.empty() ? 0 : token_begin.size() - 1);
  auto flush = [&] {
    apostrophe = false;
    if (word.empty()) return;
    while (first_token < n_tokens && token_begin[first_token + 1] <= word_begin) ++first_token;
    double sum = 0;
    int n = 0;
    for (size_t t = first_token; t < n_tokens && token_begin[t] < word_end; ++t) {
      sum += token_prob[t];
      ++n;
    }
    words.push_back({std::move(word), 0, 0, n > 0 ? static_cast<float>(sum / n) : 0.0f});
    word.clear();
  };
  for (size_t pos = 0; pos < text.size();) {
    const size_t at = pos;
    const char32_t cp = engine::DecodeUtf8(text, &pos);
    if (cp == U'\'' || cp == U'\u2019') {
      if (!word.empty() && !han) {
        apostrophe = true;
      } else {
        flush();
      }
      continue;
    }
    const engine::UnicodeCategory cat = engine::CategoryOf(cp);
    const bool letter =
        cp != engine::kReplacementChar &&
        (cat == engine::UnicodeCategory::kLetter || cat == engine::UnicodeCategory::kNumber ||
         cat == engine::UnicodeCategory::kMark);
    if (!letter) {
      flush();
      continue;
    }
    const bool is_han = IsHan(cp);
    if (!word.empty() && is_han != han) flush();
    if (word.empty()) {
      word_begin = at;
      han = is_han;
    }
    if (apostrophe) {
      word += '\'';
      apostrophe = false;
    }
    if (cp < 0x80) {
      word += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp);
    } else {
      word.append(text.substr(at, pos - at));
    }
    word_end = pos;
  }
  flush();
  return words;
}

namespace {

class WhisperStream : public RecognizerStream {
 public:
  WhisperStream(std::shared_ptr<WhisperRecognizer::Shared> shared, std::unique_ptr<Slot> slot,
                int input_rate_hz, std::unique_ptr<audio::Resampler> resampler)
      : shared_(std::move(shared)),
        slot_(std::move(slot)),
        input_rate_hz_(input_rate_hz),
        resampler_(std::move(resampler)) {
    const WhisperConfig& c = shared_->config;
    max_input_samples_ = static_cast<int64_t>(c.max_utterance_s) * input_rate_hz_;
    partial_every_ = static_cast<int64_t>(c.partial_interval_ms) * kModelRateHz / 1000;
    stable_samples_ = static_cast<int64_t>(shared_->stable_ms) * kModelRateHz / 1000;
    resampled_.reserve(static_cast<size_t>(kModelRateHz / 5));
    slot_->pcm.clear();
  }

  ~WhisperStream() override { shared_->Release(std::move(slot_)); }

  Status AcceptFrames(audio::AudioView pcm) override {
    if (finished_) return FailedPreconditionError("stream already finished; create a new one");
    if (pcm.sample_rate_hz != input_rate_hz_) {
      return InvalidArgumentError("stream was created for " + std::to_string(input_rate_hz_) +
                                  " Hz audio, got " + std::to_string(pcm.sample_rate_hz) + " Hz");
    }
    if (input_samples_ + static_cast<int64_t>(pcm.samples.size()) > max_input_samples_) {
      return ResourceExhaustedError(
          "utterance longer than asr.whisper.max_utterance_s = " +
          std::to_string(shared_->config.max_utterance_s) +
          " s (Whisper reads one 30 s window); end the turn sooner or lower the endpointer's "
          "max turn length");
    }
    input_samples_ += static_cast<int64_t>(pcm.samples.size());
    if (resampler_) {
      resampled_.clear();
      RETURN_IF_ERROR(resampler_->Process(pcm.samples, resampled_));
      Append(resampled_);
    } else {
      Append(pcm.samples);
    }
    const int64_t samples = static_cast<int64_t>(slot_->pcm.size());
    if (partial_every_ > 0 && samples - last_pass_at_ >= partial_every_) {
      return UpdatePartial(samples);
    }
    return Status::Ok();
  }

  const AsrPartial& partial() const override { return partial_; }

  Result<AsrResult> Finish() override {
    if (finished_) return FailedPreconditionError("stream already finished; create a new one");
    finished_ = true;
    if (resampler_) {
      resampled_.clear();
      RETURN_IF_ERROR(resampler_->Flush(resampled_));
      Append(resampled_);
    }
    AsrResult result;
    result.audio_ms = static_cast<int64_t>(slot_->pcm.size()) * 1000 / kModelRateHz;
    if (slot_->pcm.empty()) return result;
    ASSIGN_OR_RETURN(PassResult pass, shared_->Pass(*slot_, /*final_pass=*/true));
    result.text = std::move(pass.text);
    result.confidence = pass.confidence;
    result.words = std::move(pass.words);
    return result;
  }

 private:
  void Append(std::span<const int16_t> samples) {
    for (int16_t v : samples) slot_->pcm.push_back(static_cast<float>(v) / 32768.0f);
  }

  // A partial pass: the agreed prefix of this pass's words and the previous pass's. Allocates
  // (the words of a pass), once per partial_interval_ms, not per frame.
  Status UpdatePartial(int64_t samples) {
    last_pass_at_ = samples;
    ASSIGN_OR_RETURN(PassResult pass, shared_->Pass(*slot_, /*final_pass=*/false));
    std::vector<std::string> words;
    words.reserve(pass.words.size());
    for (AsrWord& w : pass.words) words.push_back(std::move(w.word));
    std::string agreed;
    for (size_t i = 0; i < words.size() && i < previous_words_.size(); ++i) {
      if (words[i] != previous_words_[i]) break;
      if (!agreed.empty()) agreed += ' ';
      agreed += words[i];
    }
    previous_words_ = std::move(words);
    if (agreed != partial_.text) {
      partial_.text = std::move(agreed);
      partial_.stable = false;
      changed_at_ = samples;
      ++partial_.revision;
    } else if (!partial_.stable && !partial_.text.empty() &&
               samples - changed_at_ >= stable_samples_) {
      partial_.stable = true;
      ++partial_.revision;
    }
    return Status::Ok();
  }

  std::shared_ptr<WhisperRecognizer::Shared> shared_;
  std::unique_ptr<Slot> slot_;
  int input_rate_hz_;
  std::unique_ptr<audio::Resampler> resampler_;
  std::vector<int16_t> resampled_;
  bool finished_ = false;
  int64_t input_samples_ = 0;  // at input_rate_hz_
  int64_t max_input_samples_ = 0;
  int64_t partial_every_ = 0;  // 16 kHz samples; 0 = no partials
  int64_t stable_samples_ = 0;
  int64_t last_pass_at_ = 0;
  int64_t changed_at_ = 0;
  std::vector<std::string> previous_words_;
  AsrPartial partial_;
};

}  // namespace

Result<std::unique_ptr<WhisperRecognizer>> WhisperRecognizer::Create(const WhisperConfig& config,
                                                                     int stable_ms) {
  RETURN_IF_ERROR(config.Validate().WithContext("asr.whisper"));
  const std::string where = "asr.whisper.model_path '" + config.model_path + "'";
  auto shared = std::make_shared<Shared>();
  shared->config = config;
  shared->stable_ms = stable_ms;
  {
    auto model = engine::WhisperModel::Load(config.model_path);
    if (!model.ok()) {
      return model.status().WithContext(
          where +
          " (a Whisper GGUF from `hotline engine convert-whisper ggml-MODEL.bin -o OUT.gguf`)");
    }
    shared->model = std::move(*model);
  }
  const engine::GgufFile& file = shared->model->file();
  {
    auto tokenizer = engine::WhisperTokenizer::FromGguf(file);
    if (!tokenizer.ok()) return tokenizer.status().WithContext(where);
    shared->tokenizer = std::move(*tokenizer);
  }
  auto filters_or = engine::WhisperMelFilters::FromGguf(file);
  if (!filters_or.ok()) return filters_or.status().WithContext(where);
  engine::WhisperMelFilters filters = std::move(*filters_or);
  const engine::WhisperHparams& hp = shared->model->hparams();
  if (filters.n_mels != hp.n_mels) {
    return InvalidArgumentError(where + ": its mel filterbank has " +
                                std::to_string(filters.n_mels) + " bands, the model reads " +
                                std::to_string(hp.n_mels));
  }
  shared->mel = std::make_unique<engine::WhisperMel>(std::move(filters));
  // The encoder reads at most 2 * n_audio_ctx frames (100 a second).
  if (static_cast<int64_t>(config.max_utterance_s) * 100 >
      2 * static_cast<int64_t>(hp.n_audio_ctx)) {
    return InvalidArgumentError(
        where + ": the model's audio context holds " + std::to_string(hp.n_audio_ctx / 50) +
        " s; lower asr.whisper.max_utterance_s (" + std::to_string(config.max_utterance_s) + ")");
  }
  shared->max_samples = static_cast<size_t>(config.max_utterance_s) * kModelRateHz;

  const engine::WhisperTokenizer& tok = *shared->tokenizer;
  engine::WhisperPromptOptions opts;
  if (tok.multilingual()) {
    shared->detect_language = config.language == "auto";
    opts.language = shared->detect_language ? "en" : config.language;
  } else if (config.language != "en" && config.language != "auto") {
    return InvalidArgumentError(where +
                                " is an English-only model; set asr.whisper.language to "
                                "'en' (or use a multilingual model for '" +
                                config.language + "')");
  }
  {
    auto prompt = tok.Prompt(opts);
    if (!prompt.ok()) return prompt.status().WithContext("asr.whisper.language");
    shared->prompt = std::move(*prompt);
  }
  if (shared->prompt.empty() || shared->prompt[0] != tok.special().sot) {
    return InternalError("whisper prompt does not start with <|startoftranscript|>");
  }
  if (tok.multilingual()) {
    if (shared->prompt.size() < 2 || tok.LanguageCode(shared->prompt[1]).empty()) {
      return InternalError("whisper prompt has no language token after <|startoftranscript|>");
    }
    shared->language_at = 1;
  }
  shared->decoder_tokens = static_cast<int>(shared->prompt.size()) + config.max_tokens;
  if (shared->decoder_tokens > hp.n_text_ctx) {
    return InvalidArgumentError(where + ": its text context holds " +
                                std::to_string(hp.n_text_ctx) +
                                " tokens, fewer than the prompt and asr.whisper.max_tokens (" +
                                std::to_string(config.max_tokens) + ")");
  }
  if (hp.n_vocab != tok.n_vocab()) {
    return InvalidArgumentError(where + ": whisper.vocab_size disagrees with the tokenizer");
  }

  // Every special token but <|endoftext|> (notimestamps mode: timestamps too, as whisper.cpp
  // does; decoding.py's SuppressTokens covers task, sot, sot_prev, sot_lm and no_speech), and
  // the non-speech symbols. SuppressBlank: " " and <|endoftext|> as the first token.
  const engine::WhisperSpecialTokens& sp = tok.special();
  for (TokenId id = sp.eot + 1; id < sp.n_vocab; ++id) shared->suppress.push_back(id);
  for (TokenId id : NonSpeechTokens(tok)) shared->suppress.push_back(id);
  shared->suppress_first = tok.Encode(" ");
  shared->suppress_first.push_back(sp.eot);

  ASSIGN_OR_RETURN(std::unique_ptr<Slot> first, shared->Acquire());
  shared->Release(std::move(first));
  return std::unique_ptr<WhisperRecognizer>(new WhisperRecognizer(std::move(shared)));
}

WhisperRecognizer::~WhisperRecognizer() = default;

int WhisperRecognizer::slots() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->built;
}

WhisperRecognizerStats WhisperRecognizer::stats() const {
  WhisperRecognizerStats s;
  s.passes_partial = shared_->passes_partial.load(std::memory_order_relaxed);
  s.passes_final = shared_->passes_final.load(std::memory_order_relaxed);
  s.tokens_decoded = shared_->tokens_decoded.load(std::memory_order_relaxed);
  s.encode_us = shared_->encode_us.load(std::memory_order_relaxed);
  s.decode_us = shared_->decode_us.load(std::memory_order_relaxed);
  return s;
}

Result<std::unique_ptr<RecognizerStream>> WhisperRecognizer::CreateStream(int input_rate_hz) {
  if (input_rate_hz != 8000 && input_rate_hz != kModelRateHz) {
    return InvalidArgumentError("whisper streams take 8000 or 16000 Hz audio, got " +
                                std::to_string(input_rate_hz) + " Hz");
  }
  std::unique_ptr<audio::Resampler> resampler;
  if (input_rate_hz != kModelRateHz) {
    ASSIGN_OR_RETURN(resampler, audio::Resampler::Create(input_rate_hz, kModelRateHz));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Slot> slot, shared_->Acquire());
  return std::unique_ptr<RecognizerStream>(
      new WhisperStream(shared_, std::move(slot), input_rate_hz, std::move(resampler)));
}

}  // namespace hotline::asr
