// TwilioCaller: the telephony side of a Twilio Media Streams call, for end-to-end tests and the
// call benchmark. It speaks the protocol over its own small WebSocket client (raw loopback
// socket, masked client frames, a reader thread), plays the agent's audio in real time the way
// Twilio does (queued, `mark` echoed when playback reaches it, `clear` drops what is queued), and
// records, on its own clock, when each agent frame arrived and whether it was audible.
//
//   TwilioCaller caller;
//   caller.Connect(port, "/twilio");
//   caller.Start("CA123", {{"caller", "+15550100"}});
//   caller.SendAudio(mulaw_8k, /*realtime=*/true);    // 20 ms media messages, paced
//   caller.WaitForQuiet(...);                         // the agent finished speaking
//   caller.FirstAudibleAfter(t)                       // latency as the caller hears it
//
// Thread-safety: the public methods are meant for one driving thread; the reader thread only
// touches state under the mutex. The socket has one owner per direction: only the reader thread
// reads it; every write (the driver's frames, the reader's pong and close reply) and Abort's
// shutdown happen under send_mu_, none after a close frame went out; the descriptor is closed only
// by the destructor, after the reader is joined. Not production code: it trusts the server it
// tests.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hotline::server::testing {

class TwilioCaller {
 public:
  using Clock = std::chrono::steady_clock;

  TwilioCaller() = default;
  ~TwilioCaller();
  TwilioCaller(const TwilioCaller&) = delete;
  TwilioCaller& operator=(const TwilioCaller&) = delete;

  // Opens the WebSocket (HTTP upgrade) to 127.0.0.1:port, or to `host` (an IPv4 address or a
  // name resolved to one). False with error() on failure; once per caller.
  bool Connect(int port, const std::string& path);
  // An extra header of the upgrade request (X-Twilio-Signature, Origin). Before Connect.
  void AddUpgradeHeader(std::string name, std::string value) {
    upgrade_headers_.emplace_back(std::move(name), std::move(value));
  }
  bool Connect(const std::string& host, int port, const std::string& path);
  // `connected` + `start` for an 8 kHz μ-law stream.
  bool Start(const std::string& call_sid,
             const std::vector<std::pair<std::string, std::string>>& custom_parameters = {});
  // Sends μ-law audio as 20 ms media messages; realtime: one every 20 ms (on a steady schedule).
  // Returns the send time of the last frame.
  Clock::time_point SendAudio(const std::string& mulaw, bool realtime = true);
  // Sends `ms` of μ-law silence (0xFF), paced.
  Clock::time_point SendSilence(int ms, bool realtime = true);
  bool SendDtmf(char digit);
  bool SendStop();
  // Raw text/binary frames (malformed-input tests).
  bool SendRawText(const std::string& text);
  bool SendRawBinary(const std::string& bytes);
  // Closes the socket without a close frame (abrupt hang-up).
  void Abort();

  // Agent audio received so far as 8 kHz PCM16, and per received frame (20 ms of μ-law) its
  // arrival time and whether it is audible (RMS above about -50 dBFS).
  std::vector<int16_t> ReceivedAudio() const;
  // When the first audible agent frame after `t` plays (Twilio plays queued audio in real
  // time, so this is what the caller hears, not when the bytes arrived), if any.
  std::optional<Clock::time_point> FirstAudibleAfter(Clock::time_point t) const;
  // Time of the first `clear` after `t`, if any.
  std::optional<Clock::time_point> FirstClearAfter(Clock::time_point t) const;
  // Waits until the agent has sent nothing audible for `quiet_ms` and its queued audio has
  // played, or `timeout_ms` passed; keeps sending silence in real time meanwhile (a line never
  // stops carrying audio). True when quiet.
  bool WaitForQuiet(int quiet_ms, int timeout_ms);
  // Sends silence until an audible agent frame arrives after `t` or `timeout_ms` passes.
  std::optional<Clock::time_point> WaitForAudio(Clock::time_point t, int timeout_ms);

  bool closed() const;
  int close_code() const;
  std::string close_reason() const;
  bool WaitClosed(int timeout_ms);
  int clears() const;
  int marks_echoed() const;
  const std::string& error() const { return error_; }
  const std::string& stream_sid() const { return stream_sid_; }

 private:
  bool SendFrame(uint8_t opcode, const std::string& payload);
  void ReadLoop();
  void OnText(const std::string& text, Clock::time_point at);
  void EchoDueMarks(Clock::time_point now);  // under mu_

  int fd_ = -1;
  std::string error_;
  std::vector<std::pair<std::string, std::string>> upgrade_headers_;
  std::string stream_sid_;
  int64_t sequence_ = 0;
  int64_t media_ms_ = 0;
  Clock::time_point next_send_{};  // when the next 20 ms frame is due
  std::thread reader_;
  std::mutex send_mu_;
  bool close_sent_ = false;  // under send_mu_: no frame may follow a close frame

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int close_code_ = 0;
  std::string close_reason_;
  std::vector<int16_t> received_;
  struct Frame {
    Clock::time_point at;  // when it plays (Twilio's real-time playout of the queued audio)
    bool audible;
  };
  std::vector<Frame> frames_;
  std::vector<Clock::time_point> clears_;
  Clock::time_point play_end_{};  // when the queued agent audio finishes playing
  std::vector<std::pair<Clock::time_point, std::string>> pending_marks_;
  int marks_echoed_ = 0;
};

}  // namespace hotline::server::testing
