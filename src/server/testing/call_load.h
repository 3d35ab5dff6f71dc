// Call load: what one synthetic Twilio caller does in the call benchmark (bench/calls) and in
// `hotline bench calls` — ask spoken questions in real time over a TwilioCaller and time, from
// the caller's side, the end of each question to the first audible reply frame as Twilio would
// play it (queued audio plays in real time, so a reply queued behind the greeting is heard late).
//
//   ASSIGN_OR_RETURN(auto synth, tts::CreateSynthesizer(cfg));
//   ASSIGN_OR_RETURN(CallerQuestion q, SynthesizeCallerQuestion(*synth, "i forgot my password"));
//   CallScript script{.host = "127.0.0.1", .port = 8080, .questions = &questions, ...};
//   CallOutcome outcome = RunScriptedCall(script);   // blocks for the whole call
//
// Thread-safety: RunScriptedCall blocks its thread for the call's length (real time) and touches
// only its own caller; run one per thread for concurrent calls. `questions` is shared read-only.
#pragma once

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace hotline::tts {
class Synthesizer;
}

namespace hotline::server::testing {

// A question as a caller says it: 8 kHz μ-law, split at the last audible 20 ms frame so that
// "end of speech" is a frame boundary the caller knows.
struct CallerQuestion {
  std::string text;
  std::string speech;   // up to and including the last audible frame
  std::string trailer;  // the rest (near silence)
};

// Synthesizes `text` with `synth`, resamples to 8 kHz and encodes μ-law. Errors: the synthesizer
// failed, or the text produced no audible frame.
Result<CallerQuestion> SynthesizeCallerQuestion(tts::Synthesizer& synth, const std::string& text);

// Customer-service questions answerable from the bundled knowledge base (assets/kb).
const std::vector<std::string>& BuiltInCallerQuestions();

// Reads questions from a text file, one per line; blank lines and lines starting with '#' are
// skipped. Bounded: at most 1,000 questions of at most 300 bytes each, file at most 1 MiB.
Result<std::vector<std::string>> ReadCallerQuestions(const std::string& path);

struct CallScript {
  std::string host = "127.0.0.1";  // IPv4 address or name
  int port = 0;
  std::string path = "/twilio";
  std::string call_sid = "CA0";
  std::string caller_number = "+15550100";
  const std::vector<CallerQuestion>* questions = nullptr;  // not owned; non-empty
  int first_question = 0;  // index of the first question asked (then the next ones, cyclic)
  int questions_per_call = 3;
  // Each question list is asked `rounds` times (the second round can be answered from caches).
  int rounds = 1;
  // No question is started at or after this time (the current turn still completes); the call
  // then hangs up. Default: never.
  std::chrono::steady_clock::time_point stop_asking_at =
      std::chrono::steady_clock::time_point::max();
  int greeting_timeout_ms = 20000;  // connect → first audible greeting frame
  int reply_timeout_ms = 20000;     // end of question → first audible reply frame
  int quiet_ms = 700;               // silence after which the agent is taken to have finished
  int quiet_timeout_ms = 60000;     // longest an agent turn may take to finish playing
};

struct CallTurn {
  int question = 0;       // index into the question list
  int round = 0;          // 0 first ask, 1.. repeats
  double latency_ms = 0;  // end of speech → first audible reply frame as played
  std::chrono::steady_clock::time_point spoken_end{};  // when the question's audio ended
};

struct CallOutcome {
  bool connected = false;  // the WebSocket upgrade succeeded
  // Empty when the call went as scripted; otherwise why it did not ("connect: ...", "no greeting",
  // "no reply to question N", "reply never ended", "agent closed the stream (code C): reason").
  std::string failure;
  std::vector<CallTurn> turns;
  int missing_replies = 0;  // questions with no audible reply within reply_timeout_ms
  double duration_s = 0;
};

// Places one call and runs `script` in real time. Never throws; failures are in the outcome.
CallOutcome RunScriptedCall(const CallScript& script);

// The p-th percentile (0..100) of `values` with linear interpolation; NaN when empty.
double Percentile(std::vector<double> values, double p);

// One reading of the server's resident memory during a load run (the soak's timeline).
struct RssSample {
  double t_s = 0;     // seconds since the run started
  double rss_mb = 0;  // server resident set, MiB
  // Of it, anonymous memory (heap, stacks: what a leak grows), MiB; NaN when unknown. The rest
  // is mapped files (models, voices, libraries), counted once per mapping and bounded by them.
  double rss_anon_mb = NAN;
  int active_calls = 0;
};

// Whether memory stays flat once the load is steady: over the samples at or after
// `window_start_s` (in time order), the mean of the first and of the last quarter of them
// (at least one sample each), their difference, and the least-squares slope in MiB per minute.
struct RssTrend {
  int samples = 0;
  double window_start_s = 0;  // first and last sample time in the window
  double window_end_s = 0;
  double first_quartile_mb = 0;
  double last_quartile_mb = 0;
  double growth_mb = 0;  // last_quartile_mb - first_quartile_mb
  double slope_mb_per_min = 0;
  // The slope over the later half of the samples alone: a leak keeps growing there, while a
  // one-off step (an allocator arena, a pool reaching its size) early in the window does not.
  double late_slope_mb_per_min = 0;
};

// nullopt when the window holds fewer than 4 samples or spans no time.
std::optional<RssTrend> AnalyzeRssTrend(const std::vector<RssSample>& timeline,
                                        double window_start_s);

}  // namespace hotline::server::testing
