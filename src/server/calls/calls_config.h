// CallsConfig: the `calls` section of config/hotline.yaml — what every call transport of one
// process shares (Twilio Media Streams, AudioSocket, the browser softphone): the concurrent-call
// cap and what a caller over it hears, and the timers that end a call independently of its
// audio (no audio, longest call). Held by the CallRegistry that the transports share.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace hotline::server {

struct CallsConfig {
  // Calls served at once, all transports together. Over it a caller hears over_capacity_text
  // and is let go: a clear answer instead of every call slowing down. Size it from the call
  // benchmark (docs/benchmarks.md, docs/capacity.md).
  int max_calls = 32;
  std::string over_capacity_text =
      "All our lines are busy right now. Please call again in a few minutes. Goodbye.";
  // On SIGTERM `hotline serve` first drains: /readyz answers 503 (a balancer stops sending new
  // calls) and the calls in progress run on until they end or this long has passed; then it
  // stops. 0: stop at once, ending the calls in progress. Keep it under the service manager's
  // stop timeout (TimeoutStopSec in hotline.service). SIGINT always stops at once.
  int drain_timeout_ms = 0;
  // A call whose transport carries no caller audio for this long is ended, whatever else it
  // sends (pings, DTMF, marks): a telephone line carries audio all the time, even silence, so a
  // stream without any holds a call slot for nothing. 0: never. Short frees squatted slots
  // sooner; too short ends calls over a network that stalls for a few seconds.
  int no_audio_timeout_ms = 10000;
  // The longest call, from admission. Then the session lets the turn in progress finish (up to
  // 10 s), says call.time_limit_text and hangs up; a call still open 30 s later (no audio
  // flowing to play the goodbye) is ended by the call timer. 0: no limit.
  int max_call_ms = 30 * 60 * 1000;
  // Origins ("https://app.example.com") whose pages may open /twilio and /softphone/ws besides
  // the server's own; "*" allows any. An upgrade with another Origin header is refused (403), so
  // a page on a foreign site cannot place calls from its visitors' browsers. Upgrades without an
  // Origin header (Twilio, other servers) are not browsers and are not affected.
  std::vector<std::string> allowed_origins = {};
  // When set, /softphone/ws requires it (?token=...); only then is the softphone's caller_id
  // believed (a browser can claim any number). Empty: no token, anonymous softphone callers.
  std::string softphone_token = {};

  template <class V>
  void Visit(V& v) {
    v.Field("max_calls", max_calls, "Concurrent calls at most, every transport together");
    v.Field("over_capacity_text", over_capacity_text,
            "Said to a call over max_calls, on any transport");
    v.Field("drain_timeout_ms", drain_timeout_ms,
            "On SIGTERM, how long calls in progress may run on before the server stops (ms; "
            "0: stop at once); /readyz answers 503 meanwhile");
    v.Field("no_audio_timeout_ms", no_audio_timeout_ms,
            "End a call whose transport sends no audio for this long (0: never)");
    v.Field("max_call_ms", max_call_ms,
            "Longest call: then call.time_limit_text and a hang-up (0: no limit)");
    v.Field("allowed_origins", allowed_origins,
            "Browser origins allowed to open /twilio and /softphone/ws besides the server's own");
    v.Field("softphone_token", softphone_token,
            "Token /softphone/ws requires (?token=); empty: none, caller_id ignored");
  }
  Status Validate() const;
};

}  // namespace hotline::server
