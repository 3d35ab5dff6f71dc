// AudioSocketCaller: Asterisk's side of an AudioSocket call, for end-to-end tests. It connects
// over TCP, sends the UUID, streams the caller's audio as 20 ms 0x10 packets on a steady
// real-time schedule, and records, on its own clock, each agent frame's arrival time and whether
// it was audible, plus the hang-up and error packets it got.
//
//   AudioSocketCaller caller;
//   caller.Connect(port);
//   caller.SendUuid("0b5a...");
//   caller.SendAudio(pcm_8k, /*realtime=*/true);   // 320-byte frames, one every 20 ms
//   caller.WaitForAudio(t, 15000);                 // the agent answers (sending silence meanwhile)
//
// Thread-safety: the public methods are meant for one driving thread; the reader thread only
// touches state under the mutex. The socket has one owner per direction: only the reader thread
// reads it; writes and Abort's shutdown happen under send_mu_; the descriptor is closed only by
// the destructor, after the reader is joined. Not production code: it trusts the server it tests,
// but parses its packets with the production codec, so a malformed reply is seen
// (malformed_reply()).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace hotline::server::testing {

class AudioSocketCaller {
 public:
  using Clock = std::chrono::steady_clock;

  AudioSocketCaller() = default;
  ~AudioSocketCaller();
  AudioSocketCaller(const AudioSocketCaller&) = delete;
  AudioSocketCaller& operator=(const AudioSocketCaller&) = delete;

  // Connects to 127.0.0.1:port and starts the reader. False with error() on failure; once per
  // caller.
  bool Connect(int port);
  // The UUID packet; `uuid` in text form.
  bool SendUuid(const std::string& uuid);
  // 8 kHz PCM as 320-byte packets; realtime: one every 20 ms on one schedule across calls (after
  // a pause in sending, it restarts at now). Returns the send time of the last frame.
  Clock::time_point SendAudio(const std::vector<int16_t>& pcm, bool realtime = true);
  Clock::time_point SendSilence(int ms, bool realtime = true);
  bool SendDtmf(char digit);
  bool SendHangup();
  bool SendRaw(const std::string& bytes);
  // Closes the socket (an abrupt end, no hang-up packet).
  void Abort();

  // Agent audio received so far (8 kHz).
  std::vector<int16_t> ReceivedAudio() const;
  // Arrival times of every agent audio packet, and their payload sizes.
  std::vector<Clock::time_point> FrameTimes() const;
  std::vector<size_t> FrameSizes() const;
  std::optional<Clock::time_point> FirstAudibleAfter(Clock::time_point t) const;
  // Sends silence until an audible agent frame arrives after `t` or `timeout_ms` passes.
  std::optional<Clock::time_point> WaitForAudio(Clock::time_point t, int timeout_ms);
  // Sends silence until nothing audible arrived for `quiet_ms` (or the line closed). True if so.
  bool WaitForQuiet(int quiet_ms, int timeout_ms);
  // Waits (sending silence) for the server to close the connection.
  bool WaitClosed(int timeout_ms);

  bool closed() const;
  bool hangup_received() const;
  int errors_received() const;
  // A reply the codec refused (empty when all were well-formed).
  std::string malformed_reply() const;
  const std::string& error() const { return error_; }

 private:
  void ReadLoop();

  int fd_ = -1;
  std::string error_;
  Clock::time_point next_send_{};
  std::thread reader_;
  std::mutex send_mu_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  bool hangup_ = false;
  int errors_ = 0;
  std::string malformed_;
  std::vector<int16_t> received_;
  struct Frame {
    Clock::time_point at;
    size_t bytes;
    bool audible;
  };
  std::vector<Frame> frames_;
};

}  // namespace hotline::server::testing
