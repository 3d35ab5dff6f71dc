#include "server/server_config.h"

namespace hotline::server {
namespace {

Status Range(const char* name, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return InvalidArgumentError(std::string(name) + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::to_string(v));
  }
  return Status::Ok();
}

}  // namespace

Status OpenAiApiConfig::Validate() const {
  RETURN_IF_ERROR(Range("max_tokens_limit", max_tokens_limit, 1, 1 << 20));
  RETURN_IF_ERROR(Range("default_max_tokens", default_max_tokens, 1, max_tokens_limit));
  RETURN_IF_ERROR(Range("max_messages", max_messages, 1, 100000));
  return Status::Ok();
}

Status ServerConfig::Validate() const {
  if (host.empty()) return InvalidArgumentError("host must not be empty (e.g. 127.0.0.1)");
  RETURN_IF_ERROR(Range("port", port, 0, 65535));
  RETURN_IF_ERROR(Range("io_threads", io_threads, 1, 64));
  RETURN_IF_ERROR(Range("worker_threads", worker_threads, 1, 1024));
  RETURN_IF_ERROR(Range("worker_queue", worker_queue, 1, 1 << 20));
  RETURN_IF_ERROR(Range("max_request_body_bytes", max_request_body_bytes, 0, int64_t{1} << 32));
  RETURN_IF_ERROR(Range("max_header_bytes", max_header_bytes, 256, 1 << 20));
  RETURN_IF_ERROR(Range("max_ws_message_bytes", max_ws_message_bytes, 16, int64_t{1} << 30));
  RETURN_IF_ERROR(Range("max_send_queue_bytes", max_send_queue_bytes, 1024, int64_t{1} << 32));
  RETURN_IF_ERROR(Range("idle_timeout_ms", idle_timeout_ms, 10, 24 * 3600 * 1000));
  RETURN_IF_ERROR(Range("max_connections", max_connections, 1, 1 << 20));
  RETURN_IF_ERROR(Range("max_connections_per_address", max_connections_per_address, 1, 1 << 20));
  RETURN_IF_ERROR(Range("max_ws_buffered_bytes", max_ws_buffered_bytes, max_ws_message_bytes,
                        int64_t{1} << 40));
  RETURN_IF_ERROR(Range("stop_timeout_ms", stop_timeout_ms, 0, 600000));
  return Status::Ok();
}

}  // namespace hotline::server
