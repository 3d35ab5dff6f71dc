#include "net/download.h"

#include <openssl/evp.h>
#include <sys/statvfs.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "net/url.h"

namespace hotline::net {

namespace {

namespace fs = std::filesystem;

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 15]);
  }
  return out;
}

std::string LowerHex(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Mib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Parses a decimal header value; -1 when absent or malformed.
int64_t ParseLength(const std::string& v) {
  if (v.empty() || v.size() > 18) return -1;
  int64_t n = 0;
  for (char c : v) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// "bytes START-END/TOTAL" -> {start, total}; total -1 for "*". False when malformed.
bool ParseContentRange(const std::string& v, int64_t& start, int64_t& total) {
  if (v.rfind("bytes ", 0) != 0) return false;
  const size_t dash = v.find('-', 6), slash = v.find('/', 6);
  if (dash == std::string::npos || slash == std::string::npos || dash > slash) return false;
  start = ParseLength(v.substr(6, dash - 6));
  const std::string t = v.substr(slash + 1);
  total = t == "*" ? -1 : ParseLength(t);
  return start >= 0 && (t == "*" || total >= 0);
}

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(n);
}

Status CheckFreeSpace(const std::string& path, int64_t needed, int64_t margin) {
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) {
    return UnavailableError("cannot read the free space of " + dir.string());
  }
  const int64_t free_bytes = static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize);
  if (needed + margin > free_bytes) {
    return ResourceExhaustedError("not enough disk space in " + dir.string() +
                                  ": the download needs " + Mib(needed) + " more (plus " +
                                  Mib(margin) + " to spare), " + Mib(free_bytes) +
                                  " are free; free some space or use --dir");
  }
  return Status::Ok();
}

struct EvpMdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

}  // namespace

Result<std::string> Sha256OfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::unique_ptr<EVP_MD_CTX, EvpMdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return InternalError("SHA-256 unavailable");
  }
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize got = in.gcount();
    if (got > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(got));
  }
  if (in.bad()) return DataLossError("error reading " + path);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  return Hex(md, n);
}

namespace {

// PATH exists already: done when it has the expected length and checksum (a checksum is needed
// to tell), an error otherwise; nullopt when there is no PATH.
Result<std::optional<DownloadResult>> CheckExisting(const std::string& path,
                                                    const DownloadOptions& options,
                                                    const std::string& want_sha) {
  const int64_t have = FileSize(path);
  if (have < 0) return std::optional<DownloadResult>();
  if ((options.expected_bytes < 0 || have == options.expected_bytes) && !want_sha.empty()) {
    ASSIGN_OR_RETURN(std::string sha, Sha256OfFile(path));
    if (sha == want_sha) {
      DownloadResult result;
      result.bytes = have;
      result.sha256 = sha;
      result.already_present = true;
      return std::optional<DownloadResult>(std::move(result));
    }
  }
  return FailedPreconditionError(path + " already exists; remove it to download it again");
}

// One GET of the file: a redirect, the whole file, or the rest of PATH.part (a range from
// `offset`), written to PATH.part as it arrives.
struct Exchange {
  Exchange(std::string u, const std::string& part_path, const std::string& final_path,
           const DownloadOptions& opts, int64_t kept)
      : url(std::move(u)), part(part_path), path(final_path), options(opts), offset(kept) {}

  std::string url;
  const std::string& part;
  const std::string& path;
  const DownloadOptions& options;
  int64_t offset = 0;          // bytes of PATH.part kept (0 once the server sends the whole file)
  std::string location;        // a redirect's target
  int64_t total = -1;          // the whole file's size as announced
  int64_t written = 0;         // body bytes written in this exchange
  int64_t body_expected = -1;  // the announced Content-Length
  bool complete_already = false;  // PATH.part held the whole file (416 at its end)
  std::ofstream out;

  Status OnHead(const HttpResponseHead& head) {
    const int s = head.status;
    if (s == 301 || s == 302 || s == 303 || s == 307 || s == 308) {
      location = head.Header("Location");
      if (location.empty()) return DataLossError(url + ": redirect without a Location");
      return CancelledError("redirect");  // followed by DownloadFile
    }
    if (s == 404) return NotFoundError(url + ": 404 Not Found; check the model name or URL");
    if (s == 401 || s == 403) {
      return PermissionDeniedError(url + ": HTTP " + std::to_string(s) +
                                   "; the file needs credentials or is gated: download it by "
                                   "hand and pass its local path");
    }
    if (s == 416 && offset > 0) return OnRangeNotSatisfiable(head);
    if (s != 200 && s != 206) {
      return FailedPreconditionError(url + ": HTTP " + std::to_string(s) +
                                     " (expected 200 or 206)");
    }
    return OnContent(head);
  }

  // The range starts at or past the end: PATH.part may already hold the whole file.
  Status OnRangeNotSatisfiable(const HttpResponseHead& head) {
    int64_t t = -1;
    const std::string cr = head.Header("Content-Range");
    if (cr.rfind("bytes */", 0) == 0) t = ParseLength(cr.substr(8));
    if (t == offset) {
      complete_already = true;
      total = t;
      return Status::Ok();
    }
    return DataLossError(url + ": the server has no bytes past " + std::to_string(offset) +
                         " but " + part + " is not the whole file; delete it and run again");
  }

  // 200 (the whole file: PATH.part rewritten) or 206 (the rest: appended).
  Status OnContent(const HttpResponseHead& head) {
    const int64_t length = ParseLength(head.Header("Content-Length"));
    if (head.status == 206) {
      int64_t start = 0, t = -1;
      if (!ParseContentRange(head.Header("Content-Range"), start, t) || start != offset) {
        return DataLossError(url + ": 206 reply with Content-Range '" +
                             head.Header("Content-Range") + "' does not continue at byte " +
                             std::to_string(offset));
      }
      total = t >= 0 ? t : (length >= 0 ? offset + length : -1);
      out.open(part, std::ios::binary | std::ios::app);
    } else {
      offset = 0;  // the whole file again (no range asked, or the server ignores ranges)
      total = length;
      out.open(part, std::ios::binary | std::ios::trunc);
    }
    if (!out) return UnavailableError("cannot write " + part);
    body_expected = length;
    if (options.expected_bytes >= 0 && total >= 0 && total != options.expected_bytes) {
      return DataLossError(url + ": the server announces " + std::to_string(total) +
                           " bytes, the model is " + std::to_string(options.expected_bytes));
    }
    const int64_t rest = (total >= 0 ? total : options.expected_bytes) - offset;
    if (rest > 0) RETURN_IF_ERROR(CheckFreeSpace(path, rest, options.free_space_margin_bytes));
    if (options.on_progress) options.on_progress(offset, total);
    return Status::Ok();
  }

  Status OnBody(std::string_view bytes) {
    if (!out.is_open()) return Status::Ok();  // a redirect's or error's body
    if (body_expected >= 0 && written + static_cast<int64_t>(bytes.size()) > body_expected) {
      return DataLossError(url + ": more body than the announced Content-Length");
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return UnavailableError("cannot write " + part + " (disk full?)");
    written += static_cast<int64_t>(bytes.size());
    if (options.on_progress) options.on_progress(offset + written, total);
    return Status::Ok();
  }

  // The exchange's end (not a redirect), given the transfer's status: an interruption says how
  // to resume; a body shorter than announced is an error.
  Status Outcome(const Status& st) const {
    if (!st.ok()) {
      const int64_t have = std::max<int64_t>(0, FileSize(part));
      if (st.code() == StatusCode::kUnavailable || st.code() == StatusCode::kDeadlineExceeded ||
          st.code() == StatusCode::kCancelled ||
          (st.code() == StatusCode::kDataLoss && body_expected >= 0 && written < body_expected)) {
        return Status(st.code(),
                      st.message() + "; download interrupted at " + std::to_string(have) +
                          (total >= 0 ? " of " + std::to_string(total) : "") + " bytes (kept in " +
                          part + "): run the same command again to resume");
      }
      return st;
    }
    if (!complete_already && body_expected >= 0 && written != body_expected) {
      return DataLossError(url + ": truncated: " + std::to_string(written) + " of " +
                           std::to_string(body_expected) + " body bytes; run again to resume");
    }
    return Status::Ok();
  }
};

// The complete PATH.part: its length, checksum and contents checked (deleted when wrong), then
// renamed to PATH.
Result<DownloadResult> Complete(const std::string& url, const std::string& part,
                                const std::string& path, const DownloadOptions& options,
                                const std::string& want_sha, DownloadResult result) {
  const int64_t size = FileSize(part);
  auto reject = [&](const std::string& why) {
    std::error_code ec;
    fs::remove(part, ec);
    return DataLossError(why + "; the downloaded file was deleted");
  };
  if (options.expected_bytes >= 0 && size != options.expected_bytes) {
    return reject(url + ": " + std::to_string(size) + " bytes, expected " +
                  std::to_string(options.expected_bytes));
  }
  ASSIGN_OR_RETURN(result.sha256, Sha256OfFile(part));
  if (!want_sha.empty() && result.sha256 != want_sha) {
    return reject(url + ": wrong checksum: SHA-256 " + result.sha256 + ", expected " + want_sha +
                  " (corrupted in transfer, or the file changed upstream)");
  }
  if (options.verify) {
    if (Status v = options.verify(part); !v.ok()) return reject(url + ": " + v.message());
  }
  std::error_code ec;
  fs::rename(part, path, ec);
  if (ec) return UnavailableError("cannot rename " + part + " to " + path + ": " + ec.message());
  result.bytes = size;
  return result;
}

}  // namespace

Result<DownloadResult> DownloadFile(const std::string& url, const std::string& path,
                                    const DownloadOptions& options, const CancelToken* cancel) {
  if (path.empty()) return InvalidArgumentError("download: empty destination path");
  const std::string want_sha = LowerHex(options.expected_sha256);
  if (!want_sha.empty() && want_sha.size() != 64) {
    return InvalidArgumentError("expected SHA-256 '" + options.expected_sha256 +
                                "' is not 64 hex digits");
  }
  ASSIGN_OR_RETURN(std::optional<DownloadResult> present, CheckExisting(path, options, want_sha));
  if (present.has_value()) return std::move(*present);

  const std::string part = path + ".part";
  const HttpClient client(options.http);
  DownloadResult result;
  std::string current_url = url;
  for (int redirects = 0;; ++redirects) {
    RETURN_IF_ERROR(ParseHttpUrl(current_url).status());
    Exchange ex(current_url, part, path, options, std::max<int64_t>(0, FileSize(part)));
    HttpRequest req = HttpRequest::Get(current_url);
    if (ex.offset > 0) {
      req.headers.push_back({"Range", "bytes=" + std::to_string(ex.offset) + "-"});
    }
    HttpStreamCallbacks cb;
    cb.on_head = [&ex](const HttpResponseHead& head) { return ex.OnHead(head); };
    cb.on_body = [&ex](std::string_view bytes) { return ex.OnBody(bytes); };
    const Status st = client.Stream(req, cb, cancel);
    if (ex.out.is_open()) ex.out.close();
    result.resumed_from = ex.offset;
    if (!ex.location.empty()) {
      if (redirects >= 5) return UnavailableError(url + ": more than 5 redirects");
      if (ex.location.rfind("/", 0) == 0) {
        auto u = ParseHttpUrl(current_url);
        if (!u.ok()) return u.status();
        ex.location = "http://" + u->host + ":" + std::to_string(u->port) + ex.location;
      }
      current_url = ex.location;
      continue;
    }
    RETURN_IF_ERROR(ex.Outcome(st));
    break;
  }
  return Complete(url, part, path, options, want_sha, std::move(result));
}

}  // namespace hotline::net
