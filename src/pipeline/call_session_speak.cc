// The speaking half of CallSession::Core (speak strand): sentences → audio cache or streaming
// TTS → resample to the line rate → encode → CallSink, with the playout timeline that barge-in
// detection and hang-up-after-goodbye read.
#include <algorithm>
#include <cmath>
#include <limits>

#include "audio/codec.h"
#include "common/log.h"
#include "pipeline/call_session_core.h"

namespace hotline::pipeline {
namespace {

// Audio handed to EmitPcm at once from a cached phrase: small enough that barge-in stops it
// within one piece.
constexpr size_t kCachedPieceMs = 100;

// The chunks to synthesize for one piece of a turn's text. Only the turn's first piece may end
// its first chunk early (the chunker's first-chunk rule: the caller hears the first words
// sooner); the pieces after it are whole sentences of the same answer, cut only at sentence ends,
// so every sentence keeps its prosody and a replayed answer (one piece) is cut the same way as
// the streamed one (one piece per sentence), which keeps its audio-cache entries.
std::vector<std::string> ChunksOf(tts::SentenceChunkerConfig config, bool first_piece,
                                  const std::string& piece) {
  if (!first_piece) {
    config.first_chunk_min_words = std::numeric_limits<int>::max();
    config.first_chunk_max_words = std::numeric_limits<int>::max();
  }
  tts::SentenceChunker chunker(config);
  std::vector<std::string> chunks = chunker.Push(piece);
  for (std::string& c : chunker.Flush()) chunks.push_back(std::move(c));
  return chunks;
}

}  // namespace

void CallSession::Core::PaceModel(int idx) {
  const MonoTime now = clock->Now();
  std::shared_ptr<llm::GenerationSchedule> schedule;
  int64_t ahead_ms = 0;
  MonoTime previous;
  {
    std::lock_guard lock(mu);
    if (idx < 0 || idx != answer_turn || answer_schedule == nullptr) return;
    schedule = answer_schedule;
    ahead_ms = std::max<int64_t>(0, playout.end_ms() - stream_ms.load());
    previous = answer_paced_at;
    answer_paced_at = now;
  }
  // The next sentence is due when the queued audio ends, less the time the last one took to
  // arrive (generation and synthesis on this machine now), so it is ready before the silence.
  const MonoTime::duration lead = now - previous;
  schedule->Playing(now + std::chrono::milliseconds(ahead_ms) - lead, now);
}

void CallSession::Core::Stamp(int idx, double TurnLedger::*field) {
  std::lock_guard lock(mu);
  if (idx >= 0 && turns[idx].ledger.*field < 0) turns[idx].ledger.*field = NowMs();
}

void CallSession::Core::PostSpeak(int idx, std::shared_ptr<CancelToken> token,
                                  std::vector<std::string> pieces, bool personal, bool finish,
                                  AfterSpeech after, std::string reason,
                                  std::shared_ptr<void> busy) {
  auto self = shared_from_this();
  Status s = speak.Post([self, idx, token, pieces = std::move(pieces), personal, finish, after,
                         reason = std::move(reason), busy] {
    self->RunSpeak(idx, token, pieces, personal, finish, after, reason);
  });
  if (!s.ok()) {
    Error(idx, "overload", s);
    FinishTurn(idx);
  }
}

void CallSession::Core::RunSpeak(int idx, const std::shared_ptr<CancelToken>& token,
                                 const std::vector<std::string>& pieces, bool personal,
                                 bool finish, AfterSpeech after, const std::string& reason) {
  if (closed.load() || token->cancelled()) {
    ResetOutput();
    FinishTurn(idx);
    return;
  }
  Status status;
  for (const std::string& text : pieces) {
    const bool first_piece = chunked_turn != idx;
    chunked_turn = idx;
    for (const std::string& chunk : ChunksOf(res.chunker, first_piece, text)) {
      status = SpeakPiece(idx, *token, chunk);
      if (!status.ok()) break;
    }
    if (!status.ok()) break;
    PaceModel(idx);
  }
  if (token->cancelled() || closed.load()) {
    ResetOutput();
    FinishTurn(idx);
    return;
  }
  if (!status.ok()) {
    const bool timeout = status.code() == StatusCode::kDeadlineExceeded;
    Error(idx, timeout ? "tts_timeout" : "tts", status);
    // One spoken fallback; if the fallback itself fails the turn ends silently.
    bool is_fallback = pieces.size() == 1 && pieces[0] == res.call.error_text;
    if (!is_fallback) (void)SpeakPiece(idx, *token, res.call.error_text);
  }
  if (!finish) return;
  // The turn's audio may now be shared with other calls, unless it carries this caller's data.
  if (res.audio_cache != nullptr && !personal) {
    for (auto& [text, buffer] : pending_cache) {
      res.audio_cache->Insert(synth->voice_id(), text,
                              std::make_shared<const audio::AudioBuffer>(std::move(buffer)));
    }
  }
  pending_cache.clear();
  // End of the turn's speech: flush the resampler, send the last partial frame, mark.
  if (out_resampler) {
    out_scratch.clear();
    if (out_resampler->Flush(out_scratch).ok()) {
      out_pcm.insert(out_pcm.end(), out_scratch.begin(), out_scratch.end());
    }
  }
  const size_t frame = audio::SamplesForMs(info.format.sample_rate_hz, audio::kFrameMs);
  if (!out_pcm.empty()) {
    out_pcm.resize((out_pcm.size() + frame - 1) / frame * frame, 0);
    std::vector<int16_t> rest;
    rest.swap(out_pcm);
    (void)SendFrames(idx, *token, rest);
  }
  ResetOutput();
  {
    std::lock_guard lock(mu);
    if (!token->cancelled() && !closed.load()) {
      playout.Mark("turn-" + std::to_string(idx));  // after held audio, if a pause holds any
      if (after != AfterSpeech::kNone) {
        action = after;
        action_reason = reason;
        action_armed = true;
        action_at_ms = playout.StartOfNext(stream_ms.load());
      }
    }
  }
  Stamp(idx, &TurnLedger::turn_done);
  FinishTurn(idx);
}

Status CallSession::Core::SpeakPiece(int idx, const CancelToken& token,
                                     const std::string& piece) {
  const std::string text = normalizer.Normalize(piece);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Ok();
  Stamp(idx, &TurnLedger::first_sentence);
  tts::AudioCache* cache = res.audio_cache;
  // A look-up never stores anything, so it is safe before the answer is known to be shareable.
  if (cache != nullptr) {
    if (tts::SharedAudio hit = cache->Lookup(synth->voice_id(), text)) {
      Stamp(idx, &TurnLedger::tts_first_audio);
      const size_t step = audio::SamplesForMs(hit->sample_rate_hz, kCachedPieceMs);
      std::span<const int16_t> all(hit->samples);
      for (size_t at = 0; at < all.size(); at += step) {
        RETURN_IF_ERROR(EmitPcm(idx, token, all.subspan(at, std::min(step, all.size() - at))));
      }
      return Status::Ok();
    }
  }
  std::vector<int16_t> whole;
  const MonoTime started = clock->Now();
  bool first = true;
  Status s = synth->Synthesize(
      text,
      [&](std::span<const int16_t> chunk) -> Status {
        if (first) {
          first = false;
          if (MillisBetween(started, clock->Now()) > res.call.tts_timeout_ms) {
            return DeadlineExceededError("synthesis took longer than call.tts_timeout_ms to start");
          }
          Stamp(idx, &TurnLedger::tts_first_audio);
        }
        if (cache != nullptr) whole.insert(whole.end(), chunk.begin(), chunk.end());
        return EmitPcm(idx, token, chunk);
      },
      &token);
  if (s.ok() && cache != nullptr && !whole.empty()) {
    pending_cache.emplace_back(text, audio::AudioBuffer(std::move(whole), synth->sample_rate_hz()));
  }
  if (s.code() == StatusCode::kCancelled) return s;
  return s.ok() ? Status::Ok() : s.WithContext("synthesis");
}

void CallSession::Core::Prepare(const std::vector<std::string>& sentences) {
  tts::AudioCache* cache = res.audio_cache;
  if (cache == nullptr || closed.load()) return;
  bool first_piece = true;
  for (const std::string& sentence : sentences) {
    std::vector<std::string> chunks = ChunksOf(res.chunker, first_piece, sentence);
    first_piece = false;
    for (const std::string& chunk : chunks) {
      const std::string text = normalizer.Normalize(chunk);
      if (text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
      if (cache->Lookup(synth->voice_id(), text) != nullptr) continue;
      auto buffer = tts::SynthesizeToBuffer(*synth, text);
      if (!buffer.ok()) {
        Error(-1, "tts", buffer.status().WithContext("pre-work synthesis"));
        return;
      }
      cache->Insert(synth->voice_id(), text,
                    std::make_shared<const audio::AudioBuffer>(std::move(*buffer)));
    }
  }
}

Status CallSession::Core::EmitPcm(int idx, const CancelToken& token,
                                  std::span<const int16_t> samples) {
  if (token.cancelled() || closed.load()) return CancelledError("speech cancelled");
  if (!lead_done) {
    samples = TrimLead(samples);
    if (samples.empty()) return Status::Ok();
  }
  if (out_resampler) {
    out_scratch.clear();
    RETURN_IF_ERROR(out_resampler->Process(samples, out_scratch));
    out_pcm.insert(out_pcm.end(), out_scratch.begin(), out_scratch.end());
  } else {
    out_pcm.insert(out_pcm.end(), samples.begin(), samples.end());
  }
  const size_t chunk = audio::SamplesForMs(info.format.sample_rate_hz, res.call.output_chunk_ms);
  size_t sent = 0;
  while (out_pcm.size() - sent >= chunk) {
    RETURN_IF_ERROR(SendFrames(idx, token, std::span<const int16_t>(out_pcm).subspan(sent, chunk)));
    sent += chunk;
  }
  out_pcm.erase(out_pcm.begin(), out_pcm.begin() + static_cast<ptrdiff_t>(sent));
  return Status::Ok();
}

Status CallSession::Core::SendFrames(int idx, const CancelToken& token,
                                     std::span<const int16_t> pcm) {
  const size_t frame = audio::SamplesForMs(info.format.sample_rate_hz, audio::kFrameMs);
  if (pcm.size() < frame) return Status::Ok();  // callers send whole frames
  out_bytes.resize(audio::EncodedBytes(info.format.codec, pcm.size()));
  audio::Encode(info.format.codec, pcm, out_bytes);
  const size_t frame_bytes = out_bytes.size() / pcm.size() * frame;  // whole frames only
  std::deque<Playout::Frame> frames;
  for (size_t at = 0, k = 0; at + frame <= pcm.size(); at += frame, ++k) {
    Playout::Frame f;
    f.level_dbfs = audio::LevelDbfs(pcm.subspan(at, frame));
    f.bytes.assign(out_bytes.begin() + static_cast<ptrdiff_t>(k * frame_bytes),
                   out_bytes.begin() + static_cast<ptrdiff_t>((k + 1) * frame_bytes));
    frames.push_back(std::move(f));
  }
  bool first = false;
  {
    // Under mu so that a barge-in's Clear() is never overtaken by audio of the cancelled turn.
    std::lock_guard lock(mu);
    if (token.cancelled() || closed.load()) return CancelledError("speech cancelled");
    playout.Send(frames, stream_ms.load());  // held instead while a pause lasts
    if (idx >= 0 && turns[idx].ledger.first_audio_sent < 0) {
      turns[idx].ledger.first_audio_sent = NowMs();
      first = true;
    }
  }
  frames_out.fetch_add(pcm.size() / frame);
  if (first) HLOG_DEBUG("call {}: turn {} first audio sent", info.call_id, idx);
  return Status::Ok();
}

std::span<const int16_t> CallSession::Core::TrimLead(std::span<const int16_t> samples) {
  const int rate = synth->sample_rate_hz();
  const int64_t max_samples = static_cast<int64_t>(res.call.lead_trim_max_ms) * rate / 1000;
  if (max_samples == 0) {
    lead_done = true;
    return samples;
  }
  const size_t window = static_cast<size_t>(std::max(1, rate / 200));  // 5 ms
  const double amplitude = std::pow(10.0, res.call.lead_trim_dbfs / 20.0) * 32768.0;
  const double threshold = amplitude * amplitude * static_cast<double>(window);
  for (size_t at = 0; at + window <= samples.size(); at += window) {
    if (lead_trimmed + static_cast<int64_t>(at) >= max_samples) {
      lead_done = true;
      return samples.subspan(at);
    }
    double energy = 0;
    for (size_t k = at; k < at + window; ++k) {
      energy += static_cast<double>(samples[k]) * samples[k];
    }
    if (energy > threshold) {
      lead_done = true;
      return samples.subspan(at >= window ? at - window : 0);  // 5 ms of onset kept
    }
  }
  lead_trimmed += static_cast<int64_t>(samples.size());
  if (lead_trimmed >= max_samples) lead_done = true;
  return {};
}

void CallSession::Core::ResetOutput() {
  lead_trimmed = 0;
  lead_done = res.call.lead_trim_max_ms == 0;
  out_pcm.clear();
  pending_cache.clear();
  if (out_resampler) out_resampler->Reset();
}

}  // namespace hotline::pipeline
