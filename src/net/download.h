// DownloadFile: a large file over HTTP(S) into a local path, resumable, checked.
//
//   net::DownloadOptions o;
//   o.expected_sha256 = "9f2c...";          // hex; "" when unknown (the digest is reported)
//   o.on_progress = [](int64_t done, int64_t total) { ... };
//   auto r = net::DownloadFile("http://host/model.gguf", "models/model.gguf", o);
//
// The bytes go to PATH.part. An interrupted download (connection lost, timeout, cancelled) keeps
// PATH.part, and the next call asks for the rest with "Range: bytes=N-": a 206 reply whose
// Content-Range starts at N is appended; a 200 reply (the server ignores ranges) starts over.
// Before writing, the free space of PATH's folder must hold the rest of the file plus
// `free_space_margin_bytes`. When the body is complete it is checked: its length against
// Content-Length / Content-Range and `expected_bytes`, its SHA-256 against `expected_sha256`,
// then `verify` (e.g. "is this a GGUF file"); only then is PATH.part renamed to PATH. A file
// that fails a check is deleted (resuming it would keep the bad bytes) and the error says so.
//
// Errors (the message names the URL and what to do): kNotFound (HTTP 404), kPermissionDenied
// (401/403), kUnavailable (cannot connect, connection lost: run again to resume),
// kDeadlineExceeded, kDataLoss (truncated body, a server that lies about the length, wrong
// checksum, verify failed), kResourceExhausted (not enough disk space), kInvalidArgument (bad
// URL, https:// — the client speaks plain HTTP), kFailedPrecondition (other HTTP statuses).
// Redirects (301/302/303/307/308) to http:// URLs are followed, at most 5.
//
// Threads: blocks the calling thread; the progress callback runs on it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "common/cancel_token.h"
#include "net/http_client.h"

namespace hotline::net {

struct DownloadOptions {
  // Lower-case or upper-case hex SHA-256 of the whole file; "" = not checked (reported).
  std::string expected_sha256;
  // Exact size of the file; -1 = not checked beyond what the server announces.
  int64_t expected_bytes = -1;
  // Free space that must remain on the disk after the download.
  int64_t free_space_margin_bytes = 64ll << 20;
  // Called after each written piece with bytes present in PATH.part and the total (-1 unknown).
  std::function<void(int64_t done, int64_t total)> on_progress;
  // Last check of the complete PATH.part before it becomes PATH; a non-OK status deletes it.
  std::function<Status(const std::string& part_path)> verify;
  // Connection limits; the body limit and total timeout are raised to fit large files.
  HttpClientConfig http{.connect_timeout_ms = 5000,
                        .idle_timeout_ms = 60000,
                        .total_timeout_ms = 24 * 3600 * 1000,
                        .max_response_bytes = 1ll << 40,
                        .ca_file = {}};
};

struct DownloadResult {
  int64_t bytes = 0;             // size of the file at PATH
  std::string sha256;            // lower-case hex of the whole file
  int64_t resumed_from = 0;      // bytes that were already in PATH.part (0: fresh)
  bool already_present = false;  // PATH existed with the expected size and checksum: no transfer
};

Result<DownloadResult> DownloadFile(const std::string& url, const std::string& path,
                                    const DownloadOptions& options,
                                    const CancelToken* cancel = nullptr);

// Lower-case hex SHA-256 of a file's contents.
Result<std::string> Sha256OfFile(const std::string& path);

}  // namespace hotline::net
