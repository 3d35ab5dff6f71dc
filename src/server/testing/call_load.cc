#include "server/testing/call_load.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <span>

#include "audio/g711.h"
#include "audio/resampler.h"
#include "server/testing/twilio_caller.h"
#include "tts/synthesizer.h"

namespace hotline::server::testing {

namespace {

constexpr size_t kFrameSamples = 160;  // 20 ms at 8 kHz
// A frame is speech when its RMS is above this (about -40 dBFS): the end of the question.
constexpr double kSpeechRms = 300.0;
constexpr size_t kMaxQuestions = 1000;
constexpr size_t kMaxQuestionBytes = 300;
constexpr std::streamsize kMaxQuestionFileBytes = 1 << 20;

}  // namespace

Result<CallerQuestion> SynthesizeCallerQuestion(tts::Synthesizer& synth, const std::string& text) {
  auto speech = tts::SynthesizeToBuffer(synth, text);
  if (!speech.ok()) return speech.status().WithContext("synthesizing \"" + text + "\"");
  auto narrow = audio::Resample(audio::AudioView(speech->samples, speech->sample_rate_hz), 8000);
  if (!narrow.ok()) return narrow.status().WithContext("resampling \"" + text + "\"");
  std::string mulaw(narrow->samples.size(), '\0');
  audio::EncodeMulaw(narrow->samples,
                     std::span<uint8_t>(reinterpret_cast<uint8_t*>(mulaw.data()), mulaw.size()));
  size_t last = 0;
  for (size_t i = 0; i + kFrameSamples <= narrow->samples.size(); i += kFrameSamples) {
    double power = 0;
    for (size_t k = i; k < i + kFrameSamples; ++k) {
      power += static_cast<double>(narrow->samples[k]) * narrow->samples[k];
    }
    if (std::sqrt(power / kFrameSamples) > kSpeechRms) last = i + kFrameSamples;
  }
  if (last == 0) {
    return InvalidArgumentError("the caller voice said \"" + text + "\" without an audible frame");
  }
  return CallerQuestion{text, mulaw.substr(0, last), mulaw.substr(last)};
}

const std::vector<std::string>& BuiltInCallerQuestions() {
  static const std::vector<std::string> kQuestions = {"how can i cancel my order",
                                                      "i want to change my shipping address",
                                                      "what payment methods do you accept",
                                                      "how do i get a refund",
                                                      "how can i create an account",
                                                      "i forgot my password",
                                                      "where can i see the delivery options",
                                                      "how do i subscribe to your newsletter"};
  return kQuestions;
}

Result<std::vector<std::string>> ReadCallerQuestions(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open questions file " + path);
  std::string content(static_cast<size_t>(kMaxQuestionFileBytes) + 1, '\0');
  in.read(content.data(), kMaxQuestionFileBytes + 1);
  content.resize(static_cast<size_t>(in.gcount()));
  if (content.size() > static_cast<size_t>(kMaxQuestionFileBytes)) {
    return InvalidArgumentError(path + ": larger than 1 MiB; give at most 1,000 questions");
  }
  std::vector<std::string> questions;
  size_t line_no = 0, pos = 0;
  while (pos < content.size()) {
    size_t end = content.find('\n', pos);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.pop_back();
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    line.erase(0, first);
    if (line.size() > kMaxQuestionBytes) {
      return InvalidArgumentError(path + ":" + std::to_string(line_no) +
                                  ": question longer than 300 bytes");
    }
    for (unsigned char c : line) {
      if (c < 0x20 || c == 0x7F) {
        return InvalidArgumentError(path + ":" + std::to_string(line_no) +
                                    ": control character in question");
      }
    }
    if (questions.size() == kMaxQuestions) {
      return InvalidArgumentError(path + ": more than 1,000 questions");
    }
    questions.push_back(std::move(line));
  }
  if (questions.empty()) return InvalidArgumentError(path + ": no questions (one per line)");
  return questions;
}

CallOutcome RunScriptedCall(const CallScript& script) {
  using Clock = TwilioCaller::Clock;
  CallOutcome outcome;
  const auto t0 = Clock::now();
  auto finish = [&]() -> CallOutcome {
    outcome.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::move(outcome);
  };
  if (script.questions == nullptr || script.questions->empty()) {
    outcome.failure = "no questions to ask";
    return finish();
  }
  TwilioCaller caller;
  if (!caller.Connect(script.host, script.port, script.path)) {
    outcome.failure = "connect: " + caller.error();
    return finish();
  }
  outcome.connected = true;
  auto closed_failure = [&] {
    return "agent closed the stream (code " + std::to_string(caller.close_code()) +
           "): " + caller.close_reason();
  };
  if (!caller.Start(script.call_sid, {{"caller", script.caller_number}})) {
    outcome.failure = "sending start failed";
    return finish();
  }
  if (!caller.WaitForAudio(Clock::now(), script.greeting_timeout_ms)) {
    outcome.failure = caller.closed() ? closed_failure() : "no greeting";
    return finish();
  }
  if (!caller.WaitForQuiet(script.quiet_ms, script.quiet_timeout_ms) || caller.closed()) {
    outcome.failure = caller.closed() ? closed_failure() : "greeting never ended";
    return finish();
  }
  const int n = static_cast<int>(script.questions->size());
  for (int round = 0; round < script.rounds && outcome.failure.empty(); ++round) {
    for (int k = 0; k < script.questions_per_call && outcome.failure.empty(); ++k) {
      if (Clock::now() >= script.stop_asking_at) break;
      const int index = (script.first_question + k) % n;
      const auto end = caller.SendAudio((*script.questions)[static_cast<size_t>(index)].speech);
      auto first = caller.WaitForAudio(end, script.reply_timeout_ms);
      if (!first) {
        ++outcome.missing_replies;
        outcome.failure = caller.closed() ? closed_failure()
                                          : "no reply to question " + std::to_string(index + 1);
        break;
      }
      outcome.turns.push_back(
          {index, round, std::chrono::duration<double, std::milli>(*first - end).count(), end});
      if (!caller.WaitForQuiet(script.quiet_ms, script.quiet_timeout_ms)) {
        outcome.failure = "reply never ended";
      } else if (caller.closed()) {
        outcome.failure = closed_failure();
      }
    }
    if (Clock::now() >= script.stop_asking_at) break;
  }
  caller.SendStop();
  if (!caller.WaitClosed(5000) && outcome.failure.empty()) {
    outcome.failure = "the agent did not close the stream within 5 s of stop";
  }
  return finish();
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const double idx = std::clamp(p, 0.0, 100.0) / 100 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(idx));
  const size_t hi = static_cast<size_t>(std::ceil(idx));
  return values[lo] + (values[hi] - values[lo]) * (idx - static_cast<double>(lo));
}

namespace {

// Least-squares slope of rss_mb over t_s, in MiB per minute (0 for fewer than 2 distinct times).
double SlopePerMinute(std::vector<RssSample>::const_iterator begin,
                      std::vector<RssSample>::const_iterator end) {
  const double n = static_cast<double>(end - begin);
  if (n < 2) return 0.0;
  double mean_t = 0, mean_m = 0;
  for (auto it = begin; it != end; ++it) {
    mean_t += it->t_s;
    mean_m += it->rss_mb;
  }
  mean_t /= n;
  mean_m /= n;
  double sxy = 0, sxx = 0;
  for (auto it = begin; it != end; ++it) {
    sxy += (it->t_s - mean_t) * (it->rss_mb - mean_m);
    sxx += (it->t_s - mean_t) * (it->t_s - mean_t);
  }
  return sxx > 0 ? sxy / sxx * 60.0 : 0.0;
}

}  // namespace

std::optional<RssTrend> AnalyzeRssTrend(const std::vector<RssSample>& timeline,
                                        double window_start_s) {
  std::vector<RssSample> w;
  for (const RssSample& s : timeline) {
    if (s.t_s >= window_start_s && std::isfinite(s.t_s) && std::isfinite(s.rss_mb)) w.push_back(s);
  }
  std::sort(w.begin(), w.end(),
            [](const RssSample& a, const RssSample& b) { return a.t_s < b.t_s; });
  if (w.size() < 4 || !(w.back().t_s > w.front().t_s)) return std::nullopt;
  RssTrend t;
  t.samples = static_cast<int>(w.size());
  t.window_start_s = w.front().t_s;
  t.window_end_s = w.back().t_s;
  const size_t quarter = (w.size() + 3) / 4;
  double first = 0, last = 0;
  for (size_t i = 0; i < quarter; ++i) {
    first += w[i].rss_mb;
    last += w[w.size() - 1 - i].rss_mb;
  }
  t.first_quartile_mb = first / static_cast<double>(quarter);
  t.last_quartile_mb = last / static_cast<double>(quarter);
  t.growth_mb = t.last_quartile_mb - t.first_quartile_mb;
  t.slope_mb_per_min = SlopePerMinute(w.begin(), w.end());
  const auto half = w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2);
  t.late_slope_mb_per_min = SlopePerMinute(half, w.end());
  return t;
}

}  // namespace hotline::server::testing
