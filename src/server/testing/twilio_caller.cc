#include "server/testing/twilio_caller.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "audio/g711.h"
#include "transport/base64.h"

namespace hotline::server::testing {

namespace {

constexpr size_t kFrameBytes = 160;    // 20 ms of 8 kHz μ-law
constexpr double kAudibleRms = 103.0;  // about -50 dBFS
constexpr size_t kMaxMessageBytes = 1 << 20;
// Agent audio kept per call: 10 minutes of frames (9.6 MB of PCM); beyond it frames are dropped
// (a call this long is not one a test or the load generator places).
constexpr size_t kMaxFrames = 30000;

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

TwilioCaller::~TwilioCaller() {
  Abort();
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) ::close(fd_);
}

bool TwilioCaller::Connect(int port, const std::string& path) {
  return Connect("127.0.0.1", port, path);
}

bool TwilioCaller::Connect(const std::string& host, int port, const std::string& path) {
  if (fd_ >= 0) return error_ = "already connected", false;
  if (port <= 0 || port > 65535) return error_ = "port out of range", false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (rc != 0 || found == nullptr) {
      return error_ = "cannot resolve " + host + ": " + ::gai_strerror(rc), false;
    }
    addr.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
    ::freeaddrinfo(found);
  }
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return error_ = "socket failed", false;
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error_ = "connect to " + host + ":" + std::to_string(port) + " failed: " + std::strerror(errno);
    return false;
  }
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
                        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        "Sec-WebSocket-Version: 13\r\n";
  for (const auto& [name, value] : upgrade_headers_) request += name + ": " + value + "\r\n";
  request += "\r\n";
  if (!WriteAll(fd_, request.data(), request.size())) return error_ = "send failed", false;
  std::string head;
  char c;
  while (head.size() < 8192 && head.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return error_ = "no upgrade response", false;
    if (::recv(fd_, &c, 1, 0) != 1) return error_ = "connection closed during upgrade", false;
    head.push_back(c);
  }
  if (head.compare(0, 12, "HTTP/1.1 101") != 0) {
    error_ = "upgrade refused: " + head.substr(0, head.find("\r\n"));
    return false;
  }
  reader_ = std::thread([this] { ReadLoop(); });
  return true;
}

bool TwilioCaller::SendFrame(uint8_t opcode, const std::string& payload) {
  std::string frame;
  frame.push_back(static_cast<char>(0x80 | opcode));
  const size_t n = payload.size();
  if (n < 126) {
    frame.push_back(static_cast<char>(0x80 | n));
  } else if (n <= 0xFFFF) {
    frame.push_back(static_cast<char>(0x80 | 126));
    frame.push_back(static_cast<char>(n >> 8));
    frame.push_back(static_cast<char>(n & 0xFF));
  } else {
    frame.push_back(static_cast<char>(0x80 | 127));
    for (int i = 7; i >= 0; --i)
      frame.push_back(static_cast<char>((static_cast<uint64_t>(n) >> (8 * i)) & 0xFF));
  }
  const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  frame.append(reinterpret_cast<const char*>(mask), 4);
  for (size_t i = 0; i < n; ++i) frame.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ < 0 || close_sent_) return false;
  if (opcode == 0x8) close_sent_ = true;
  return WriteAll(fd_, frame.data(), frame.size());
}

bool TwilioCaller::SendRawText(const std::string& text) { return SendFrame(0x1, text); }
bool TwilioCaller::SendRawBinary(const std::string& bytes) { return SendFrame(0x2, bytes); }

bool TwilioCaller::Start(
    const std::string& call_sid,
    const std::vector<std::pair<std::string, std::string>>& custom_parameters) {
  stream_sid_ = "MZ" + call_sid;
  nlohmann::json connected = {{"event", "connected"}, {"protocol", "Call"}, {"version", "1.0.0"}};
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : custom_parameters) params[k] = v;
  nlohmann::json start = {
      {"event", "start"},
      {"sequenceNumber", std::to_string(++sequence_)},
      {"streamSid", stream_sid_},
      {"start",
       {{"streamSid", stream_sid_},
        {"accountSid", "AC0000"},
        {"callSid", call_sid},
        {"tracks", {"inbound"}},
        {"customParameters", params},
        {"mediaFormat", {{"encoding", "audio/x-mulaw"}, {"sampleRate", 8000}, {"channels", 1}}}}}};
  return SendRawText(connected.dump()) && SendRawText(start.dump());
}

TwilioCaller::Clock::time_point TwilioCaller::SendAudio(const std::string& mulaw, bool realtime) {
  // One schedule across calls: a line carries one frame every 20 ms however the audio is split
  // into calls (after a pause in sending, the schedule restarts at now).
  const auto now = Clock::now();
  if (next_send_ < now - std::chrono::milliseconds(40)) next_send_ = now;
  auto& next = next_send_;
  Clock::time_point last = now;
  for (size_t i = 0; i < mulaw.size(); i += kFrameBytes) {
    if (realtime) std::this_thread::sleep_until(next);
    std::string chunk = mulaw.substr(i, kFrameBytes);
    nlohmann::json media = {{"event", "media"},
                            {"sequenceNumber", std::to_string(++sequence_)},
                            {"streamSid", stream_sid_},
                            {"media",
                             {{"track", "inbound"},
                              {"chunk", std::to_string(sequence_)},
                              {"timestamp", std::to_string(media_ms_)},
                              {"payload", transport::Base64Encode(chunk)}}}};
    media_ms_ += 20;
    last = Clock::now();
    if (!SendRawText(media.dump())) break;
    EchoDueMarks(last);
    next += std::chrono::milliseconds(20);
  }
  return last;
}

TwilioCaller::Clock::time_point TwilioCaller::SendSilence(int ms, bool realtime) {
  return SendAudio(std::string(static_cast<size_t>(ms / 20) * kFrameBytes, static_cast<char>(0xFF)),
                   realtime);
}

bool TwilioCaller::SendDtmf(char digit) {
  nlohmann::json m = {{"event", "dtmf"},
                      {"streamSid", stream_sid_},
                      {"sequenceNumber", std::to_string(++sequence_)},
                      {"dtmf", {{"track", "inbound_track"}, {"digit", std::string(1, digit)}}}};
  return SendRawText(m.dump());
}

bool TwilioCaller::SendStop() {
  nlohmann::json m = {{"event", "stop"},
                      {"streamSid", stream_sid_},
                      {"sequenceNumber", std::to_string(++sequence_)},
                      {"stop", {{"accountSid", "AC0000"}, {"callSid", "CA"}}}};
  return SendRawText(m.dump());
}

void TwilioCaller::Abort() {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ >= 0) {
    ::shutdown(fd_, SHUT_RDWR);
  }
}

void TwilioCaller::ReadLoop() {
  std::string buf;
  std::string message;
  char chunk[16384];
  auto finish = [&](int code, std::string reason) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      closed_ = true;
      close_code_ = code;
      close_reason_ = std::move(reason);
    }
    cv_.notify_all();
  };
  for (;;) {
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return finish(1006, "connection dropped");
    buf.append(chunk, static_cast<size_t>(n));
    for (;;) {
      if (buf.size() < 2) break;
      const uint8_t b0 = static_cast<uint8_t>(buf[0]), b1 = static_cast<uint8_t>(buf[1]);
      size_t len = b1 & 0x7F, pos = 2;
      if (len == 126) {
        if (buf.size() < 4) break;
        len = (static_cast<uint8_t>(buf[2]) << 8) | static_cast<uint8_t>(buf[3]);
        pos = 4;
      } else if (len == 127) {
        if (buf.size() < 10) break;
        len = 0;
        for (int i = 0; i < 8; ++i) len = (len << 8) | static_cast<uint8_t>(buf[2 + i]);
        pos = 10;
      }
      if (b1 & 0x80) pos += 4;  // servers do not mask; tolerate it anyway (unmasked below)
      // The load generator points this at servers it does not control: bound what one message
      // may make it hold.
      if (len > kMaxMessageBytes || message.size() + len > kMaxMessageBytes) {
        return finish(1009, "agent message larger than 1 MiB");
      }
      if (buf.size() < pos + len) break;
      std::string payload = buf.substr(pos, len);
      if (b1 & 0x80) {
        for (size_t i = 0; i < len; ++i) payload[i] ^= buf[pos - 4 + i % 4];
      }
      buf.erase(0, pos + len);
      const uint8_t opcode = b0 & 0x0F;
      const auto at = Clock::now();
      if (opcode == 0x8) {
        int code = payload.size() >= 2
                       ? (static_cast<uint8_t>(payload[0]) << 8) | static_cast<uint8_t>(payload[1])
                       : 1005;
        SendFrame(0x8, payload.substr(0, 2));
        return finish(code, payload.size() > 2 ? payload.substr(2) : "");
      }
      if (opcode == 0x9) {
        SendFrame(0xA, payload);
        continue;
      }
      if (opcode == 0x1 || opcode == 0x0) {
        message += payload;
        if (b0 & 0x80) {
          OnText(message, at);
          message.clear();
        }
      }
    }
  }
}

void TwilioCaller::OnText(const std::string& text, Clock::time_point at) {
  nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
  if (m.is_discarded() || !m.is_object() || !m.contains("event") || !m["event"].is_string()) return;
  const std::string event = m["event"].get<std::string>();
  // Fields of the wrong shape are ignored rather than trusted (the reader thread must not throw).
  auto text_at = [&m](const char* object, const char* field) -> std::optional<std::string> {
    if (!m.contains(object) || !m[object].is_object()) return std::nullopt;
    const auto& o = m[object];
    if (!o.contains(field) || !o[field].is_string()) return std::nullopt;
    return o[field].get<std::string>();
  };
  std::lock_guard<std::mutex> lock(mu_);
  if (event == "media") {
    const auto payload = text_at("media", "payload");
    if (!payload || frames_.size() >= kMaxFrames) return;
    auto bytes = transport::Base64Decode(*payload);
    if (!bytes.ok()) return;
    std::vector<int16_t> pcm(bytes->size());
    audio::DecodeMulaw(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()),
        pcm);
    // Twilio plays what it is sent in real time, after what is already queued: a frame is
    // heard when the frames before it have played, not when it arrives.
    for (size_t i = 0; i < pcm.size(); i += kFrameBytes) {
      const size_t end = std::min(pcm.size(), i + kFrameBytes);
      double power = 0;
      for (size_t k = i; k < end; ++k) power += static_cast<double>(pcm[k]) * pcm[k];
      const bool audible = std::sqrt(power / std::max<size_t>(1, end - i)) > kAudibleRms;
      const Clock::time_point start = std::max(play_end_, at);
      frames_.push_back({start, audible});
      play_end_ = start + std::chrono::microseconds(static_cast<int64_t>(end - i) * 125);
    }
    received_.insert(received_.end(), pcm.begin(), pcm.end());
  } else if (event == "mark") {
    const auto name = text_at("mark", "name");
    if (!name) return;
    pending_marks_.emplace_back(std::max(play_end_, at), *name);
  } else if (event == "clear") {
    clears_.push_back(at);
    // Queued frames that had not started playing are never heard.
    while (!frames_.empty() && frames_.back().at > at) frames_.pop_back();
    play_end_ = at;
    for (auto& pm : pending_marks_) pm.first = at;
  }
  cv_.notify_all();
}

void TwilioCaller::EchoDueMarks(Clock::time_point now) {
  std::vector<std::string> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = pending_marks_.begin(); it != pending_marks_.end();) {
      if (it->first <= now) {
        due.push_back(std::move(it->second));
        it = pending_marks_.erase(it);
      } else {
        ++it;
      }
    }
    marks_echoed_ += static_cast<int>(due.size());
  }
  for (const auto& name : due) {
    nlohmann::json mark = {{"event", "mark"},
                           {"streamSid", stream_sid_},
                           {"sequenceNumber", std::to_string(++sequence_)},
                           {"mark", {{"name", name}}}};
    SendRawText(mark.dump());
  }
}

std::vector<int16_t> TwilioCaller::ReceivedAudio() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

std::optional<TwilioCaller::Clock::time_point> TwilioCaller::FirstAudibleAfter(
    Clock::time_point t) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : frames_) {
    if (f.at >= t && f.audible) return f.at;
  }
  return std::nullopt;
}

std::optional<TwilioCaller::Clock::time_point> TwilioCaller::FirstClearAfter(
    Clock::time_point t) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& c : clears_) {
    if (c >= t) return c;
  }
  return std::nullopt;
}

bool TwilioCaller::WaitForQuiet(int quiet_ms, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (closed()) return true;
    SendSilence(100);
    std::lock_guard<std::mutex> lock(mu_);
    Clock::time_point last_audible{};
    for (const auto& f : frames_) {
      if (f.audible) last_audible = f.at;
    }
    const auto now = Clock::now();
    if (now - last_audible >= std::chrono::milliseconds(quiet_ms) && play_end_ <= now) return true;
  }
  return false;
}

std::optional<TwilioCaller::Clock::time_point> TwilioCaller::WaitForAudio(Clock::time_point t,
                                                                          int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline && !closed()) {
    if (auto at = FirstAudibleAfter(t)) return at;
    SendSilence(20);
  }
  return FirstAudibleAfter(t);
}

bool TwilioCaller::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}
int TwilioCaller::close_code() const {
  std::lock_guard<std::mutex> lock(mu_);
  return close_code_;
}
std::string TwilioCaller::close_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return close_reason_;
}
bool TwilioCaller::WaitClosed(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return closed_; });
}
int TwilioCaller::clears() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(clears_.size());
}
int TwilioCaller::marks_echoed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return marks_echoed_;
}

}  // namespace hotline::server::testing
