#include "asr/turn_eval.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "asr/lm_builder.h"

namespace hotline::asr {

Result<TurnTrace> TraceUtterance(const TurnUtterance& u, audio::Vad& vad, RecognizerStream& stream,
                                 std::shared_ptr<const TurnEndModel> model,
                                 const LooksCompleteFn& looks_complete) {
  const int rate = u.audio.sample_rate_hz;
  if (rate != vad.sample_rate_hz()) {
    return InvalidArgumentError("utterance at " + std::to_string(rate) + " Hz, VAD at " +
                                std::to_string(vad.sample_rate_hz()) + " Hz");
  }
  vad.Reset();
  const size_t frame = audio::SamplesForMs(rate, audio::kFrameMs);
  TurnDetector detector(TurnDetectorConfig{}, std::move(model));
  TurnTrace trace;
  trace.frames.reserve(u.audio.samples.size() / frame + 1);
  uint64_t revision = 0;
  std::string hinted;  // normalized text of the partial the hint was set for
  std::unordered_map<std::string, bool> answerable;
  int64_t changed_ms = -1;
  std::string last_text;
  for (size_t i = 0; i + frame <= u.audio.samples.size(); i += frame) {
    audio::AudioView view(std::span<const int16_t>(u.audio.samples).subspan(i, frame), rate);
    ASSIGN_OR_RETURN(audio::VadFrame v, vad.Process(view));
    TurnFrame f;
    f.speech = v.speech;
    f.now_ms = static_cast<int64_t>((i + frame) * 1000 / static_cast<size_t>(rate));
    RETURN_IF_ERROR(stream.AcceptFrames(view));
    detector.OnFrame(view, v.speech, f.now_ms);
    const AsrPartial& p = stream.partial();
    if (p.revision != revision) {
      revision = p.revision;
      detector.OnPartial(p.text, f.now_ms);
      if (p.text != last_text) {
        last_text = p.text;
        changed_ms = f.now_ms;
      }
      const std::string phrase = NormalizeTranscriptText(p.text);
      // The pipeline drops the hint once the caller says more than the hinted phrase...
      if (!hinted.empty() && phrase != hinted) hinted.clear();
      // ... and sets it when a stable partial is answered by the cached tiers.
      if (p.stable && looks_complete && !phrase.empty()) {
        auto it = answerable.find(phrase);
        if (it == answerable.end()) it = answerable.emplace(phrase, looks_complete(p.text)).first;
        if (it->second) hinted = phrase;
      }
    }
    f.lexical_p = detector.lexical_p();
    f.partial_changed_ms = changed_ms;
    f.partial_empty = last_text.empty();
    f.hint = !hinted.empty();
    f.prosody = detector.prosody();
    trace.frames.push_back(f);
  }
  trace.final_partial = last_text;
  return trace;
}

TurnOutcome ReplayPolicy(const TurnUtterance& u, const TurnTrace& trace, const TurnPolicy& policy) {
  audio::Endpointer ep(policy.endpointer);
  TurnOutcome out;
  for (const TurnFrame& f : trace.frames) {
    const audio::EndpointUpdate up = ep.Push(f.speech);
    if (up.event == audio::EndpointEvent::kEndOfTurn ||
        up.event == audio::EndpointEvent::kMaxLength) {
      out.ended = true;
      out.end_ms = f.now_ms;
      break;
    }
    if (!ep.in_utterance()) continue;
    // What the call does after the frame's partial: the next frame is judged with it.
    if (policy.use_detector) {
      const TurnEvidence e = TurnDetector::Decide(
          policy.detector, f.lexical_p, f.partial_empty,
          f.partial_changed_ms < 0 ? -1 : f.now_ms - f.partial_changed_ms, f.prosody);
      ep.SetSilenceNeededMs(e.wait_ms);
    } else if (policy.use_hint) {
      ep.SetLooksComplete(f.hint);
    }
  }
  if (!out.ended) out.end_ms = trace.frames.empty() ? 0 : trace.frames.back().now_ms;
  out.cut_off = out.ended && out.end_ms < u.speech_end_ms;
  if (!out.cut_off) out.delay_ms = out.end_ms - u.speech_end_ms;
  return out;
}

double TurnStats::DelayPercentile(double q) const {
  if (delays_ms.empty()) return -1;
  std::vector<int64_t> v = delays_ms;
  std::sort(v.begin(), v.end());
  // Nearest rank.
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return static_cast<double>(v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)]);
}

}  // namespace hotline::asr
