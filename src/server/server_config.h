// ServerConfig: the HTTP/WebSocket server's address, threads and limits (the `server` section of
// config/hotline.yaml), and OpenAiApiConfig for the OpenAI-compatible API served over it.
//
// Every limit exists so that one bad or slow client costs the server a bounded amount of memory
// and time, and gets a clear answer: a request head over max_header_bytes gets 431, a body over
// max_request_body_bytes 413, a connection over max_connections or max_connections_per_address
// 503 (or WebSocket close 1013), a WebSocket message over max_ws_message_bytes close 1009, a
// partial message past the server-wide max_ws_buffered_bytes close 1013.
//
// Thread-safety: a value; load once, share const.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"
#include "common/status.h"

namespace hotline::server {

// The OpenAI-compatible chat API (/v1/chat/completions, /v1/models).
struct OpenAiApiConfig {
  // The model id /v1/models lists and completions report. Empty: the model's own name.
  std::string model_id;
  // Upper bound on a request's max_tokens; requests above it get 400. Bounds one request's cost.
  int max_tokens_limit = 4096;
  // max_tokens when a request gives none.
  int default_max_tokens = 256;
  // Most messages one request may carry; more gets 400.
  int max_messages = 256;

  template <class V>
  void Visit(V& v) {
    v.Field("model_id", model_id, "Model id listed by /v1/models (empty: the model's name)");
    v.Field("max_tokens_limit", max_tokens_limit, "Largest max_tokens a request may ask for");
    v.Field("default_max_tokens", default_max_tokens, "max_tokens when a request gives none");
    v.Field("max_messages", max_messages, "Most chat messages in one request");
  }
  Status Validate() const;
};

struct ServerConfig {
  // Address to listen on. 127.0.0.1 serves this machine only; 0.0.0.0 every interface.
  std::string host = "127.0.0.1";
  // TCP port; 0 picks a free one (tests), the bound port is reported after start.
  int port = 8080;
  // Threads running network I/O. I/O never blocks, so 1-2 carry thousands of connections;
  // more only helps with many TLS-free small requests per second.
  int io_threads = 2;
  // Threads running blocking HTTP handlers (LLM generations, knowledge-base queries). Each
  // streaming generation holds one for its whole length, so this bounds concurrent generations.
  int worker_threads = 8;
  // Handler calls queued for a free worker before new requests get 503.
  int worker_queue = 256;
  // Largest request body (bytes); larger gets 413.
  int64_t max_request_body_bytes = 1 << 20;
  // Largest request line + headers (bytes); larger gets 431.
  int max_header_bytes = 16 << 10;
  // Largest WebSocket message (bytes); larger closes the socket with 1009.
  int64_t max_ws_message_bytes = 1 << 20;
  // Bytes a WebSocket connection or streamed HTTP response may have queued for a slow client;
  // a WebSocket send beyond it fails with ResourceExhausted, a streamed response waits for room.
  int64_t max_send_queue_bytes = 4 << 20;
  // A connection with no request (HTTP) or no frame (WebSocket, which pings half-way) for this
  // long is closed; a write that makes no progress for this long closes it too.
  int idle_timeout_ms = 30000;
  // Open connections (HTTP and WebSocket together); more get 503 / close 1013.
  int max_connections = 1024;
  // Open connections from one client address; more get 503 / close 1013, so that one host
  // cannot take every place. Raise it when many clients share an address (a proxy, Twilio's
  // edge behind a NAT).
  int max_connections_per_address = 256;
  // Bytes of unfinished WebSocket messages buffered across all connections; a connection whose
  // partial message would take the total past it is closed (1013). One socket may buffer up to
  // max_ws_message_bytes, so without a server-wide budget many sockets could hold
  // connections × max_ws_message_bytes.
  int64_t max_ws_buffered_bytes = 64ll << 20;
  // On Stop(): how long open connections get to finish before they are cut.
  int stop_timeout_ms = 5000;
  OpenAiApiConfig openai;

  template <class V>
  void Visit(V& v) {
    v.Field("host", host, "Listen address (127.0.0.1: this machine only; 0.0.0.0: all)");
    v.Field("port", port, "Listen TCP port (0: any free port)");
    v.Field("io_threads", io_threads, "Network I/O threads (never block)");
    v.Field("worker_threads", worker_threads,
            "Threads for blocking handlers; bounds concurrent LLM generations");
    v.Field("worker_queue", worker_queue, "Handler calls waiting for a worker before 503");
    v.Field("max_request_body_bytes", max_request_body_bytes, "Largest request body (413 above)");
    v.Field("max_header_bytes", max_header_bytes, "Largest request line + headers (431 above)");
    v.Field("max_ws_message_bytes", max_ws_message_bytes,
            "Largest WebSocket message (close 1009 above)");
    v.Field("max_send_queue_bytes", max_send_queue_bytes,
            "Bytes queued for one slow client before sends fail or wait");
    v.Field("idle_timeout_ms", idle_timeout_ms, "Close connections idle this long (ms)");
    v.Field("max_connections", max_connections, "Open connections (503 / close 1013 above)");
    v.Field("max_connections_per_address", max_connections_per_address,
            "Open connections from one client address (503 / close 1013 above)");
    v.Field("max_ws_buffered_bytes", max_ws_buffered_bytes,
            "Unfinished WebSocket message bytes buffered, all connections together");
    v.Field("stop_timeout_ms", stop_timeout_ms, "Grace period for connections on stop (ms)");
    v.Section("openai", openai);
  }
  Status Validate() const;
};

}  // namespace hotline::server
