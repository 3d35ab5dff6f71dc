#include "server/testing/audiosocket_caller.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "transport/audiosocket/packet.h"

namespace hotline::server::testing {

namespace as = transport::audiosocket;

namespace {
constexpr double kAudibleRms = 103.0;  // about -50 dBFS
constexpr size_t kFrameSamples = 160;
}  // namespace

AudioSocketCaller::~AudioSocketCaller() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) ::close(fd_);
}

bool AudioSocketCaller::Connect(int port) {
  if (fd_ >= 0) return error_ = "already connected", false;
  if (port <= 0 || port > 65535) return error_ = "port out of range", false;
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return error_ = std::string("socket failed: ") + std::strerror(errno), false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    error_ = "connect to 127.0.0.1:" + std::to_string(port) + " failed: " + std::strerror(errno);
    return false;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  reader_ = std::thread([this] { ReadLoop(); });
  return true;
}

bool AudioSocketCaller::SendRaw(const std::string& bytes) {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ < 0) return false;
  std::string_view left(bytes);
  while (!left.empty()) {
    ssize_t n = ::send(fd_, left.data(), left.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    left.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool AudioSocketCaller::SendUuid(const std::string& uuid) {
  auto u = as::ParseUuid(uuid);
  if (!u.ok()) {
    error_ = u.status().message();
    return false;
  }
  return SendRaw(as::EncodeUuid(*u));
}

AudioSocketCaller::Clock::time_point AudioSocketCaller::SendAudio(const std::vector<int16_t>& pcm,
                                                                  bool realtime) {
  const auto now = Clock::now();
  if (next_send_ < now - std::chrono::milliseconds(40)) next_send_ = now;
  Clock::time_point last = now;
  std::vector<uint8_t> bytes(kFrameSamples * 2);
  for (size_t i = 0; i < pcm.size(); i += kFrameSamples) {
    if (realtime) std::this_thread::sleep_until(next_send_);
    std::fill(bytes.begin(), bytes.end(), 0);
    for (size_t k = 0; k < kFrameSamples && i + k < pcm.size(); ++k) {
      const auto v = static_cast<uint16_t>(pcm[i + k]);
      bytes[2 * k] = static_cast<uint8_t>(v & 0xff);
      bytes[2 * k + 1] = static_cast<uint8_t>(v >> 8);
    }
    last = Clock::now();
    if (!SendRaw(as::EncodeAudio(bytes))) break;
    next_send_ += std::chrono::milliseconds(20);
  }
  return last;
}

AudioSocketCaller::Clock::time_point AudioSocketCaller::SendSilence(int ms, bool realtime) {
  return SendAudio(std::vector<int16_t>(static_cast<size_t>(ms / 20) * kFrameSamples, 0), realtime);
}

bool AudioSocketCaller::SendDtmf(char digit) { return SendRaw(as::EncodeDtmf(digit)); }
bool AudioSocketCaller::SendHangup() { return SendRaw(as::EncodeHangup()); }

void AudioSocketCaller::Abort() {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ < 0) return;
  linger l{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  ::shutdown(fd_, SHUT_RDWR);
}

void AudioSocketCaller::ReadLoop() {
  as::PacketParser parser;
  as::Packet packet;
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    const auto at = Clock::now();
    if (n <= 0) break;
    std::lock_guard<std::mutex> lock(mu_);
    Status s = parser.Feed(std::string_view(buf, static_cast<size_t>(n)));
    while (s.ok()) {
      auto next = parser.Next(packet);
      if (!next.ok()) {
        s = next.status();
        break;
      }
      if (!*next) break;
      switch (packet.type) {
        case as::PacketType::kAudio: {
          const size_t samples = packet.payload.size() / 2;
          double power = 0;
          for (size_t i = 0; i < samples; ++i) {
            const auto lo = static_cast<uint8_t>(packet.payload[2 * i]);
            const auto hi = static_cast<uint8_t>(packet.payload[2 * i + 1]);
            const auto v = static_cast<int16_t>(static_cast<uint16_t>(lo | (hi << 8)));
            received_.push_back(v);
            power += static_cast<double>(v) * v;
          }
          frames_.push_back({at, packet.payload.size(),
                             std::sqrt(power / std::max<size_t>(1, samples)) > kAudibleRms});
          break;
        }
        case as::PacketType::kHangup:
          hangup_ = true;
          break;
        case as::PacketType::kError:
          ++errors_;
          break;
        default:
          malformed_ = "unexpected " + std::string(as::PacketTypeName(packet.type)) + " packet";
      }
    }
    if (!s.ok()) {
      malformed_ = s.message();
      break;
    }
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

std::vector<int16_t> AudioSocketCaller::ReceivedAudio() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

std::vector<AudioSocketCaller::Clock::time_point> AudioSocketCaller::FrameTimes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Clock::time_point> out;
  for (const auto& f : frames_) out.push_back(f.at);
  return out;
}

std::vector<size_t> AudioSocketCaller::FrameSizes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<size_t> out;
  for (const auto& f : frames_) out.push_back(f.bytes);
  return out;
}

std::optional<AudioSocketCaller::Clock::time_point> AudioSocketCaller::FirstAudibleAfter(
    Clock::time_point t) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : frames_) {
    if (f.at > t && f.audible) return f.at;
  }
  return std::nullopt;
}

std::optional<AudioSocketCaller::Clock::time_point> AudioSocketCaller::WaitForAudio(
    Clock::time_point t, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline && !closed()) {
    if (auto at = FirstAudibleAfter(t)) return at;
    SendSilence(20);
  }
  return FirstAudibleAfter(t);
}

bool AudioSocketCaller::WaitForQuiet(int quiet_ms, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (closed()) return true;
    SendSilence(100);
    std::lock_guard<std::mutex> lock(mu_);
    Clock::time_point last_audible{};
    for (const auto& f : frames_) {
      if (f.audible) last_audible = f.at;
    }
    if (Clock::now() - last_audible >= std::chrono::milliseconds(quiet_ms)) return true;
  }
  return false;
}

bool AudioSocketCaller::WaitClosed(int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline && !closed()) SendSilence(20);
  return closed();
}

bool AudioSocketCaller::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}
bool AudioSocketCaller::hangup_received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hangup_;
}
int AudioSocketCaller::errors_received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}
std::string AudioSocketCaller::malformed_reply() const {
  std::lock_guard<std::mutex> lock(mu_);
  return malformed_;
}

}  // namespace hotline::server::testing
