// AudioSocketConfig's validation and the peer allow-list (declared in audiosocket_server.h).
#include "server/calls/audiosocket_server.h"

#include <boost/asio/ip/address.hpp>
#include <string>
#include <vector>

#include "transport/audiosocket/packet.h"

namespace hotline::server {

namespace as = transport::audiosocket;

namespace {

// True when `peer` is in `allowed` (addresses or CIDR blocks; empty: everyone). parse_only: only
// checks that every entry parses (true when all do).
bool PeerMatches(const boost::asio::ip::address& peer, const std::vector<std::string>& allowed,
                 bool parse_only = false) {
  if (allowed.empty()) return true;
  for (const auto& entry : allowed) {
    const size_t slash = entry.find('/');
    boost::system::error_code ec;
    auto net = boost::asio::ip::make_address(entry.substr(0, slash), ec);
    if (ec) return false;
    int bits = net.is_v4() ? 32 : 128;
    if (slash != std::string::npos) {
      const std::string b = entry.substr(slash + 1);
      if (b.empty() || b.size() > 3 || b.find_first_not_of("0123456789") != std::string::npos) {
        return false;
      }
      const int n = std::stoi(b);
      if (n > bits) return false;
      bits = n;
    }
    if (parse_only) continue;
    auto addr = peer;
    // An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d.
    if (addr.is_v6() && addr.to_v6().is_v4_mapped() && net.is_v4()) {
      addr = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, addr.to_v6());
    }
    if (addr.is_v4() != net.is_v4()) continue;
    auto bytes_of = [](const boost::asio::ip::address& x) {
      if (x.is_v4()) {
        const auto b = x.to_v4().to_bytes();
        return std::vector<unsigned char>(b.begin(), b.end());
      }
      const auto b = x.to_v6().to_bytes();
      return std::vector<unsigned char>(b.begin(), b.end());
    };
    const std::vector<unsigned char> a = bytes_of(addr);
    const std::vector<unsigned char> n = bytes_of(net);
    bool match = true;
    for (int i = 0; i < bits && match; ++i) {
      const int byte = i / 8, bit = 7 - i % 8;
      match = ((a[byte] >> bit) & 1) == ((n[byte] >> bit) & 1);
    }
    if (match) return true;
  }
  return parse_only;
}

}  // namespace

bool AudioSocketPeerAllowed(std::string_view peer_ip, const std::vector<std::string>& allowed) {
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(std::string(peer_ip), ec);
  if (ec) return allowed.empty();
  return PeerMatches(addr, allowed);
}

Status AudioSocketConfig::Validate() const {
  if (port < -1 || port > 65535) return InvalidArgumentError("port must be -1 (off) or 0..65535");
  if (host.empty()) return InvalidArgumentError("host must not be empty");
  if (max_audio_bytes < static_cast<int>(as::kFrameBytes) || max_audio_bytes > 65534 ||
      max_audio_bytes % 2 != 0) {
    return InvalidArgumentError("max_audio_bytes must be even and in [320, 65534], got " +
                                std::to_string(max_audio_bytes));
  }
  if (uuid_timeout_ms < 100 || uuid_timeout_ms > 600000) {
    return InvalidArgumentError("uuid_timeout_ms must be in [100, 600000]");
  }
  if (idle_timeout_ms < 100 || idle_timeout_ms > 3600000) {
    return InvalidArgumentError("idle_timeout_ms must be in [100, 3600000]");
  }
  if (max_queued_audio_ms < 1000 || max_queued_audio_ms > 3600000) {
    return InvalidArgumentError("max_queued_audio_ms must be in [1000, 3600000]");
  }
  if (max_send_queue_bytes < 4096 || max_send_queue_bytes > (64 << 20)) {
    return InvalidArgumentError("max_send_queue_bytes must be in [4096, 64 MiB]");
  }
  if (max_connections < 1 || max_connections > 100000) {
    return InvalidArgumentError("max_connections must be in [1, 100000]");
  }
  if (allowed_peers.size() > 1000)
    return InvalidArgumentError("allowed_peers: at most 1000 entries");
  for (const auto& p : allowed_peers) {
    if (!PeerMatches(boost::asio::ip::address(), {p}, /*parse_only=*/true)) {
      return InvalidArgumentError("allowed_peers entry '" + p +
                                  "' is not an IP address or CIDR block (\"10.0.0.0/8\")");
    }
  }
  return Status::Ok();
}

}  // namespace hotline::server
