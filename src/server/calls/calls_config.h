// CallsConfig: the `calls` section of config/hotline.yaml — what every call transport of one
// process shares (Twilio Media Streams, AudioSocket, the browser softphone): the concurrent-call
// cap and what a caller over it hears. Held by the CallRegistry that the transports share.
#pragma once

#include <string>

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

  template <class V>
  void Visit(V& v) {
    v.Field("max_calls", max_calls, "Concurrent calls at most, every transport together");
    v.Field("over_capacity_text", over_capacity_text,
            "Said to a call over max_calls, on any transport");
    v.Field("drain_timeout_ms", drain_timeout_ms,
            "On SIGTERM, how long calls in progress may run on before the server stops (ms; "
            "0: stop at once); /readyz answers 503 meanwhile");
  }
  Status Validate() const;
};

}  // namespace hotline::server
