#include "pipeline/speaker.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "audio/vad.h"

namespace hotline::pipeline {
namespace {

// Audio handed on at once from a cached phrase: small enough that a cancelled token stops it
// within one piece.
constexpr size_t kCachedPieceMs = 100;

bool Blank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

Result<std::unique_ptr<Speaker>> Speaker::Create(const SpeakerOptions& options,
                                                 std::unique_ptr<tts::Synthesizer> synth,
                                                 tts::TextNormalizer normalizer,
                                                 tts::AudioCache* cache, const Clock* clock) {
  if (synth == nullptr) return InvalidArgumentError("a speaker needs a synthesizer");
  if (options.line_rate_hz <= 0 || options.output_chunk_ms <= 0 ||
      options.output_chunk_ms % audio::kFrameMs != 0) {
    return InvalidArgumentError(
        "speaker: line rate and output_chunk_ms (a multiple of 20) must be "
        "positive");
  }
  std::unique_ptr<Speaker> s(
      new Speaker(options, std::move(synth), std::move(normalizer), cache, clock));
  if (s->synth_->sample_rate_hz() != options.line_rate_hz) {
    ASSIGN_OR_RETURN(s->resampler_,
                     audio::Resampler::Create(s->synth_->sample_rate_hz(), options.line_rate_hz,
                                              options.resampler));
  }
  s->Reset();
  return s;
}

Speaker::Speaker(const SpeakerOptions& options, std::unique_ptr<tts::Synthesizer> synth,
                 tts::TextNormalizer normalizer, tts::AudioCache* cache, const Clock* clock)
    : options_(options),
      synth_(std::move(synth)),
      normalizer_(std::move(normalizer)),
      cache_(cache),
      clock_(clock != nullptr ? clock : &SystemClock::Get()) {}

std::vector<std::string> Speaker::ChunksOf(bool first_piece, const std::string& piece) const {
  tts::SentenceChunkerConfig config = options_.chunker;
  if (!first_piece) {
    config.first_chunk_min_words = std::numeric_limits<int>::max();
    config.first_chunk_max_words = std::numeric_limits<int>::max();
  }
  tts::SentenceChunker chunker(config);
  std::vector<std::string> chunks = chunker.Push(piece);
  for (std::string& c : chunker.Flush()) chunks.push_back(std::move(c));
  return chunks;
}

Status Speaker::Say(const std::string& chunk, const CancelToken& token, const Output& out) {
  const std::string text = normalizer_.Normalize(chunk);
  if (Blank(text)) return Status::Ok();
  if (out.speaking) out.speaking();
  // A look-up never stores anything, so it is safe before the answer is known to be shareable.
  if (cache_ != nullptr) {
    if (tts::SharedAudio hit = cache_->Lookup(synth_->voice_id(), text)) {
      if (out.first_audio) out.first_audio();
      const size_t step = audio::SamplesForMs(hit->sample_rate_hz, kCachedPieceMs);
      std::span<const int16_t> all(hit->samples);
      for (size_t at = 0; at < all.size(); at += step) {
        RETURN_IF_ERROR(Emit(token, out, all.subspan(at, std::min(step, all.size() - at))));
      }
      return Status::Ok();
    }
  }
  std::vector<int16_t> whole;
  const MonoTime started = clock_->Now();
  bool first = true;
  Status s = synth_->Synthesize(
      text,
      [&](std::span<const int16_t> samples) -> Status {
        if (first) {
          first = false;
          if (MillisBetween(started, clock_->Now()) > options_.tts_timeout_ms) {
            return DeadlineExceededError("synthesis took longer than call.tts_timeout_ms to start");
          }
          if (out.first_audio) out.first_audio();
        }
        if (cache_ != nullptr) whole.insert(whole.end(), samples.begin(), samples.end());
        return Emit(token, out, samples);
      },
      &token);
  if (s.ok() && cache_ != nullptr && !whole.empty()) {
    uncommitted_.emplace_back(text, audio::AudioBuffer(std::move(whole), synth_->sample_rate_hz()));
  }
  if (s.code() == StatusCode::kCancelled) return s;
  return s.ok() ? Status::Ok() : s.WithContext("synthesis");
}

Status Speaker::Finish(const CancelToken& token, const Output& out) {
  Status s;
  if (resampler_) {
    scratch_.clear();
    if (resampler_->Flush(scratch_).ok()) pcm_.insert(pcm_.end(), scratch_.begin(), scratch_.end());
  }
  const size_t frame = audio::SamplesForMs(options_.line_rate_hz, audio::kFrameMs);
  if (!pcm_.empty() && !token.cancelled()) {
    pcm_.resize((pcm_.size() + frame - 1) / frame * frame, 0);
    std::vector<int16_t> rest;
    rest.swap(pcm_);
    s = Send(out, rest);
  }
  ResetAudio();  // what was synthesized waits for Commit
  return s;
}

void Speaker::Commit(bool shareable) {
  if (cache_ != nullptr && shareable) {
    for (auto& [text, buffer] : uncommitted_) {
      cache_->Insert(synth_->voice_id(), text,
                     std::make_shared<const audio::AudioBuffer>(std::move(buffer)));
    }
  }
  uncommitted_.clear();
}

void Speaker::Reset() {
  ResetAudio();
  uncommitted_.clear();
}

void Speaker::ResetAudio() {
  lead_trimmed_ = 0;
  lead_done_ = options_.lead_trim_max_ms == 0;
  pcm_.clear();
  if (resampler_) resampler_->Reset();
}

Status Speaker::Prepare(const std::vector<std::string>& sentences) {
  if (cache_ == nullptr) return Status::Ok();
  bool first_piece = true;
  for (const std::string& sentence : sentences) {
    std::vector<std::string> chunks = ChunksOf(first_piece, sentence);
    first_piece = false;
    for (const std::string& chunk : chunks) {
      const std::string text = normalizer_.Normalize(chunk);
      if (Blank(text)) continue;
      if (cache_->Lookup(synth_->voice_id(), text) != nullptr) continue;
      ASSIGN_OR_RETURN(audio::AudioBuffer buffer, tts::SynthesizeToBuffer(*synth_, text));
      cache_->Insert(synth_->voice_id(), text,
                     std::make_shared<const audio::AudioBuffer>(std::move(buffer)));
    }
  }
  return Status::Ok();
}

Status Speaker::Emit(const CancelToken& token, const Output& out,
                     std::span<const int16_t> samples) {
  if (token.cancelled()) return CancelledError("speech cancelled");
  if (!lead_done_) {
    samples = TrimLead(samples);
    if (samples.empty()) return Status::Ok();
  }
  if (resampler_) {
    scratch_.clear();
    RETURN_IF_ERROR(resampler_->Process(samples, scratch_));
    pcm_.insert(pcm_.end(), scratch_.begin(), scratch_.end());
  } else {
    pcm_.insert(pcm_.end(), samples.begin(), samples.end());
  }
  const size_t chunk = audio::SamplesForMs(options_.line_rate_hz, options_.output_chunk_ms);
  size_t sent = 0;
  Status s;
  while (s.ok() && pcm_.size() - sent >= chunk) {
    s = Send(out, std::span<const int16_t>(pcm_).subspan(sent, chunk));
    sent += chunk;
  }
  pcm_.erase(pcm_.begin(), pcm_.begin() + static_cast<ptrdiff_t>(sent));
  return s;
}

Status Speaker::Send(const Output& out, std::span<const int16_t> pcm) {
  const size_t frame = audio::SamplesForMs(options_.line_rate_hz, audio::kFrameMs);
  if (pcm.size() < frame) return Status::Ok();  // callers send whole frames
  bytes_.resize(audio::EncodedBytes(options_.codec, pcm.size()));
  audio::Encode(options_.codec, pcm, bytes_);
  const size_t frame_bytes = bytes_.size() / pcm.size() * frame;  // whole frames only
  std::deque<Playout::Frame> frames;
  for (size_t at = 0, k = 0; at + frame <= pcm.size(); at += frame, ++k) {
    Playout::Frame f;
    f.level_dbfs = audio::LevelDbfs(pcm.subspan(at, frame));
    f.bytes.assign(bytes_.begin() + static_cast<ptrdiff_t>(k * frame_bytes),
                   bytes_.begin() + static_cast<ptrdiff_t>((k + 1) * frame_bytes));
    frames.push_back(std::move(f));
  }
  return out.frames ? out.frames(std::move(frames)) : Status::Ok();
}

std::span<const int16_t> Speaker::TrimLead(std::span<const int16_t> samples) {
  const int rate = synth_->sample_rate_hz();
  const int64_t max_samples = static_cast<int64_t>(options_.lead_trim_max_ms) * rate / 1000;
  if (max_samples == 0) {
    lead_done_ = true;
    return samples;
  }
  const size_t window = static_cast<size_t>(std::max(1, rate / 200));  // 5 ms
  const double amplitude = std::pow(10.0, options_.lead_trim_dbfs / 20.0) * 32768.0;
  const double threshold = amplitude * amplitude * static_cast<double>(window);
  for (size_t at = 0; at + window <= samples.size(); at += window) {
    if (lead_trimmed_ + static_cast<int64_t>(at) >= max_samples) {
      lead_done_ = true;
      return samples.subspan(at);
    }
    double energy = 0;
    for (size_t k = at; k < at + window; ++k) {
      energy += static_cast<double>(samples[k]) * samples[k];
    }
    if (energy > threshold) {
      lead_done_ = true;
      return samples.subspan(at >= window ? at - window : 0);  // 5 ms of onset kept
    }
  }
  lead_trimmed_ += static_cast<int64_t>(samples.size());
  if (lead_trimmed_ >= max_samples) lead_done_ = true;
  return {};
}

}  // namespace hotline::pipeline
