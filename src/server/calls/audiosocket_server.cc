#include "server/calls/audiosocket_server.h"

#include <array>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <deque>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "common/log.h"
#include "server/calls/call_connection.h"
#include "transport/audiosocket/packet.h"

namespace hotline::server {

namespace asio = boost::asio;
namespace as = transport::audiosocket;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr auto kFramePeriod = std::chrono::milliseconds(20);
// Timer lateness past this is a stall: resynchronize instead of bursting the missed frames.
constexpr auto kMaxLateness = std::chrono::milliseconds(200);
// After a close is decided, the time left for queued packets (error, hang-up) to reach the peer.
constexpr auto kCloseGrace = std::chrono::milliseconds(2000);
constexpr size_t kBytesPerMs = as::kSampleRateHz * 2 / 1000;

}  // namespace

class AudioSocketConnection;

struct AudioSocketServer::Shared {
  const pipeline::CallResources* resources = nullptr;
  AudioSocketConfig config;
  std::unique_ptr<CallTransport> calls;  // the call cap (shared with other transports), metrics
  std::string busy_pcm;  // the registry's over-capacity text, 8 kHz PCM16 LE
  // Owned here but destroyed by Stop(): its queued handlers hold references to this struct.
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>();
  std::unique_ptr<tcp::acceptor> acceptor;
  std::atomic<bool> stopping{false};

  std::mutex mu;
  std::set<std::shared_ptr<AudioSocketConnection>> connections;  // guarded by mu

  Counter* peer_errors = nullptr;
  Counter* refused = nullptr;
  Counter* peers_refused = nullptr;
  Counter* audio_dropped_bytes = nullptr;
  Counter* pacer_resyncs = nullptr;
  Counter* frames_out = nullptr;
};

namespace {

// What the session has handed over for the caller, waiting for the pacer (I/O thread). Shared by
// the sink (session workers) and the connection; everything under `mu`.
struct Outbox {
  std::mutex mu;
  std::string audio;  // PCM16 LE bytes not yet sent, from `head`
  size_t head = 0;
  uint64_t queued_total = 0;                           // bytes ever queued (minus those cleared)
  uint64_t sent_total = 0;                             // bytes sent
  std::deque<std::pair<uint64_t, std::string>> marks;  // (queued_total at the mark, name)
  std::vector<std::string> cleared_marks;              // to report played (dropped by a clear)
  bool hangup = false;
  std::string hangup_reason;
  bool detached = false;
  size_t max_bytes = 0;
  Counter* dropped = nullptr;
};

class AudioSocketSink final : public DetachableCallSink {
 public:
  AudioSocketSink(std::shared_ptr<Outbox> outbox, std::string call_id, Counter* transfers)
      : outbox_(std::move(outbox)), call_id_(std::move(call_id)), transfers_(transfers) {}

  // The call is over: audio and marks from a session still finishing are ignored.
  void Detach() override {
    std::lock_guard<std::mutex> lock(outbox_->mu);
    outbox_->detached = true;
  }

  void SendAudio(std::span<const uint8_t> payload) override {
    std::lock_guard<std::mutex> lock(outbox_->mu);
    Outbox& o = *outbox_;
    if (o.detached || o.hangup) return;
    if (o.audio.size() - o.head + payload.size() > o.max_bytes) {
      o.dropped->Increment(payload.size());
      return;
    }
    if (o.head > 0 && o.head * 2 >= o.audio.size()) {
      o.audio.erase(0, o.head);
      o.head = 0;
    }
    o.audio.append(reinterpret_cast<const char*>(payload.data()), payload.size());
    o.queued_total += payload.size();
  }
  void SendMark(std::string_view name) override {
    std::lock_guard<std::mutex> lock(outbox_->mu);
    if (outbox_->detached) return;
    outbox_->marks.emplace_back(outbox_->queued_total, std::string(name));
  }
  void Clear() override {
    std::lock_guard<std::mutex> lock(outbox_->mu);
    Outbox& o = *outbox_;
    o.audio.clear();
    o.head = 0;
    o.queued_total = o.sent_total;
    for (auto& m : o.marks) o.cleared_marks.push_back(std::move(m.second));
    o.marks.clear();
  }
  void Hangup(std::string_view reason) override {
    HLOG_INFO("call {}: agent hung up ({})", call_id_, reason);
    Finish("hangup: " + std::string(reason));
  }
  void Transfer(std::string_view reason) override {
    // AudioSocket has no transfer of its own: the call leaves AudioSocket() and the dialplan
    // after it (a Queue() or Dial() to the agents) carries on.
    HLOG_INFO("call {}: transfer to an agent ({})", call_id_, reason);
    transfers_->Increment();
    Finish("transfer: " + std::string(reason));
  }
  void Event(std::string_view type, std::string_view json) override {
    HLOG_DEBUG("call {}: {} {}", call_id_, type, json);
  }

 private:
  void Finish(std::string reason) {
    std::lock_guard<std::mutex> lock(outbox_->mu);
    if (outbox_->hangup) return;
    outbox_->hangup = true;
    outbox_->hangup_reason = std::move(reason);
  }

  std::shared_ptr<Outbox> outbox_;
  const std::string call_id_;
  Counter* transfers_;
};

}  // namespace

class AudioSocketConnection : public std::enable_shared_from_this<AudioSocketConnection> {
 public:
  AudioSocketConnection(std::shared_ptr<AudioSocketServer::Shared> shared, tcp::socket socket)
      : shared_(std::move(shared)),
        socket_(std::move(socket)),
        strand_(socket_.get_executor()),
        pacer_(strand_),
        parser_(as::PacketLimits{static_cast<size_t>(shared_->config.max_audio_bytes)}),
        outbox_(std::make_shared<Outbox>()),
        call_(*shared_->calls) {
    boost::system::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    remote_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
    outbox_->max_bytes = static_cast<size_t>(shared_->config.max_queued_audio_ms) * kBytesPerMs;
    outbox_->dropped = shared_->audio_dropped_bytes;
    socket_.set_option(tcp::no_delay(true), ec);
  }

  void Start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      self->accepted_ = SteadyClock::now();
      self->last_packet_ = self->accepted_;
      self->next_tick_ = self->accepted_ + kFramePeriod;
      self->ArmPacer();
      self->Read();
    });
  }

  // Any thread: hang up from the server's side (0x00 after nothing more), e.g. on Stop().
  void ServerHangup(std::string reason) {
    std::lock_guard<std::mutex> lock(outbox_->mu);
    outbox_->audio.clear();
    outbox_->head = 0;
    outbox_->hangup = true;
    outbox_->hangup_reason = std::move(reason);
  }

  // Refuses the connection at once (over max_connections): an error packet, then close.
  void Refuse(const std::string& why) {
    asio::dispatch(strand_, [self = shared_from_this(), why] {
      self->accepted_ = SteadyClock::now();
      self->next_tick_ = self->accepted_ + kFramePeriod;
      self->ArmPacer();
      self->Fail(why, /*protocol=*/false);
    });
  }

 private:
  enum class State { kAwaitUuid, kInCall, kBusy, kClosing, kClosed };

  void Read() {
    socket_.async_read_some(asio::buffer(read_buf_),
                            asio::bind_executor(strand_, [self = shared_from_this()](
                                                             boost::system::error_code ec,
                                                             size_t n) { self->OnRead(ec, n); }));
  }

  void OnRead(boost::system::error_code ec, size_t n) {
    if (state_ == State::kClosed) return;
    if (ec) {
      if (state_ == State::kClosing) return;  // closing anyway
      Status tail = parser_.Finish();
      if (ec == asio::error::eof) {
        if (!tail.ok()) {
          HLOG_WARN("audiosocket {}: {}", Who(), tail.message());
        } else if (state_ == State::kInCall) {
          HLOG_INFO("call {}: connection closed without a hang-up packet", call_id_);
        }
      } else if (ec != asio::error::operation_aborted) {
        HLOG_INFO("audiosocket {}: read failed: {}", Who(), ec.message());
      }
      CloseNow();
      return;
    }
    if (state_ == State::kClosing) return;  // stop reading; the close is under way
    last_packet_ = SteadyClock::now();
    Status s = parser_.Feed(std::string_view(read_buf_.data(), n));
    while (s.ok() && state_ != State::kClosing && state_ != State::kClosed) {
      auto next = parser_.Next(packet_);
      if (!next.ok()) {
        s = next.status();
        break;
      }
      if (!*next) break;
      OnPacket();
    }
    if (!s.ok()) return Fail(s.message(), /*protocol=*/true);
    if (state_ != State::kClosing && state_ != State::kClosed) Read();
  }

  void OnPacket() {
    using T = as::PacketType;
    if (state_ == State::kAwaitUuid) {
      if (packet_.type != T::kUuid) {
        return Fail("the first packet must be the call UUID (0x01), got " +
                        std::string(as::PacketTypeName(packet_.type)),
                    true);
      }
      return OnUuid();
    }
    switch (packet_.type) {
      case T::kUuid:
        return Fail("a second uuid packet", true);
      case T::kAudio:
        if (!packet_.payload.empty()) call_.NoteAudio();
        if (auto* session = call_.session(); session != nullptr && !packet_.payload.empty()) {
          const auto* p = reinterpret_cast<const uint8_t*>(packet_.payload.data());
          pipeline::MediaFormat format{audio::Codec::kPcm16, as::kSampleRateHz};
          Status pushed =
              session->PushAudio(std::span<const uint8_t>(p, packet_.payload.size()), format);
          if (!pushed.ok() && pushed.code() == StatusCode::kInvalidArgument) {
            return Fail(pushed.message(), true);
          }
          if (!pushed.ok()) HLOG_DEBUG("call {}: {}", call_id_, pushed.message());
        }
        return;
      case T::kDtmf:
        if (auto* session = call_.session()) {
          Status pushed = session->PushDtmf(packet_.payload[0]);
          if (!pushed.ok()) HLOG_INFO("call {}: dtmf ignored: {}", call_id_, pushed.message());
        }
        return;
      case T::kHangup:
        HLOG_INFO("call {}: caller hung up", call_id_);
        EndSession();
        CloseNow();
        return;
      case T::kError:
        shared_->peer_errors->Increment();
        HLOG_WARN("call {}: Asterisk reported an error{}", call_id_,
                  packet_.payload.empty()
                      ? std::string()
                      : " (code " + std::to_string(static_cast<uint8_t>(packet_.payload[0])) + ")");
        return;
    }
  }

  void OnUuid() {
    call_id_ = as::FormatUuid(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(packet_.payload.data()), packet_.payload.size()));
    ActiveCall entry;
    entry.id = call_id_;
    entry.transport = "audiosocket";
    entry.remote = remote_;
    std::weak_ptr<Outbox> weak_outbox = outbox_;
    const bool admitted = call_.Admit(std::move(entry), [weak_outbox](std::string_view why) {
      auto outbox = weak_outbox.lock();
      if (outbox == nullptr) return;
      std::lock_guard<std::mutex> lock(outbox->mu);
      outbox->audio.clear();
      outbox->head = 0;
      outbox->hangup = true;
      outbox->hangup_reason = "ended: " + std::string(why);
    });
    if (!admitted) {
      state_ = State::kBusy;
      std::lock_guard<std::mutex> lock(outbox_->mu);
      outbox_->audio = shared_->busy_pcm;
      outbox_->queued_total = outbox_->audio.size();
      outbox_->hangup = true;
      outbox_->hangup_reason = "over capacity";
      return;
    }
    state_ = State::kInCall;

    pipeline::CallInfo info;
    info.call_id = call_id_;
    info.format = pipeline::MediaFormat{audio::Codec::kPcm16, as::kSampleRateHz};
    auto sink = std::make_shared<AudioSocketSink>(outbox_, call_id_, &shared_->calls->transfers());
    Status opened = call_.Open(*shared_->resources, std::move(info), std::move(sink));
    if (!opened.ok()) return Fail("cannot open the call: " + opened.message(), false);
    HLOG_INFO("call {}: started ({})", call_id_, remote_);
    call_.session()->Start();
  }

  // The pacer: one 20 ms frame per tick on an absolute schedule; also the connection's clock
  // for time-outs and for carrying out a hang-up once the queued audio has gone.
  void ArmPacer() {
    pacer_.expires_at(next_tick_);
    pacer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->OnTick();
    });
  }

  void OnTick() {
    if (state_ == State::kClosed) return;
    const auto now = SteadyClock::now();
    if (now - next_tick_ > kMaxLateness) {
      shared_->pacer_resyncs->Increment();
      next_tick_ = now;
    }
    next_tick_ += kFramePeriod;

    if (state_ == State::kClosing) {
      if (now >= close_deadline_) return CloseNow();
      return ArmPacer();
    }
    if (state_ == State::kAwaitUuid &&
        now - accepted_ > std::chrono::milliseconds(shared_->config.uuid_timeout_ms)) {
      return Fail(
          "no uuid packet within " + std::to_string(shared_->config.uuid_timeout_ms) + " ms", true);
    }
    if (now - last_packet_ > std::chrono::milliseconds(shared_->config.idle_timeout_ms)) {
      HLOG_WARN("audiosocket {}: no packet for {} ms, closing", Who(),
                shared_->config.idle_timeout_ms);
      EndSession();
      return CloseNow();
    }

    bool have_frame = false;
    bool hangup = false;
    std::string reason;
    marks_due_.clear();
    {
      std::lock_guard<std::mutex> lock(outbox_->mu);
      Outbox& o = *outbox_;
      const size_t queued = o.audio.size() - o.head;
      if (queued >= as::kFrameBytes || (queued > 0 && o.hangup)) {
        const size_t take = std::min(queued, as::kFrameBytes);
        frame_.assign(o.audio, o.head, take);
        frame_.resize(as::kFrameBytes, '\0');  // a short tail before a hang-up: pad with silence
        o.head += take;
        o.sent_total += take;
        have_frame = true;
      }
      while (!o.marks.empty() && o.marks.front().first <= o.sent_total) {
        marks_due_.push_back(std::move(o.marks.front().second));
        o.marks.pop_front();
      }
      for (auto& m : o.cleared_marks) marks_due_.push_back(std::move(m));
      o.cleared_marks.clear();
      if (o.hangup && o.audio.size() == o.head) {
        hangup = true;
        reason = o.hangup_reason;
      }
    }
    if (have_frame) {
      (void)as::AppendPacket(
          as::PacketType::kAudio,
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(frame_.data()), frame_.size()),
          pending_out_);
      shared_->frames_out->Increment();
    }
    if (auto* session = call_.session()) {
      for (const auto& m : marks_due_) session->MarkPlayed(m);
    }
    if (hangup) {
      // The last frame just went out: hang up after it has played (one period).
      if (!hangup_armed_) {
        hangup_armed_ = true;
        hangup_at_ = now + kFramePeriod;
      }
      if (now >= hangup_at_) {
        HLOG_INFO("call {}: hanging up ({})", Who(), reason);
        pending_out_ += as::EncodeHangup();
        EndSession();
        BeginClose();
      }
    }
    if (!Flush()) return;
    ArmPacer();
  }

  // Starts writing pending_out_ if no write is in flight. False when the peer has too much
  // unread (the connection is then closed).
  bool Flush() {
    if (state_ == State::kClosed) return false;
    if (pending_out_.size() > static_cast<size_t>(shared_->config.max_send_queue_bytes)) {
      HLOG_WARN("audiosocket {}: peer does not read ({} bytes waiting), cutting it off", Who(),
                pending_out_.size());
      EndSession();
      CloseNow();
      return false;
    }
    if (writing_ || pending_out_.empty()) return true;
    writing_ = true;
    in_flight_.swap(pending_out_);
    asio::async_write(
        socket_, asio::buffer(in_flight_),
        asio::bind_executor(
            strand_, [self = shared_from_this()](boost::system::error_code ec, size_t) {
              self->writing_ = false;
              self->in_flight_.clear();
              if (ec) {
                if (self->state_ != State::kClosed) {
                  HLOG_INFO("audiosocket {}: write failed: {}", self->Who(), ec.message());
                  self->EndSession();
                  self->CloseNow();
                }
                return;
              }
              if (self->state_ == State::kClosing && self->pending_out_.empty()) {
                return self->CloseNow();
              }
              self->Flush();
            }));
    return true;
  }

  // Protocol error (or refusal): error packet, close, count.
  void Fail(const std::string& why, bool protocol) {
    if (protocol) shared_->calls->protocol_errors().Increment();
    if (!protocol) shared_->refused->Increment();
    HLOG_WARN("audiosocket {}: closing: {}", Who(), why);
    pending_out_ += as::EncodeError();
    EndSession();
    BeginClose();
    Flush();
  }

  void BeginClose() {
    if (state_ == State::kClosing || state_ == State::kClosed) return;
    state_ = State::kClosing;
    close_deadline_ = SteadyClock::now() + kCloseGrace;
    if (!writing_ && pending_out_.empty()) CloseNow();
  }

  void CloseNow() {
    if (state_ == State::kClosed) return;
    auto self = shared_from_this();  // the set below may hold the last other reference
    state_ = State::kClosed;
    EndSession();
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    pacer_.cancel();
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->connections.erase(shared_from_this());
  }

  // Hangs the session up (never blocks) and gives back its place.
  void EndSession() { call_.End(); }

  std::string Who() const { return call_id_.empty() ? remote_ : call_id_; }

  std::shared_ptr<AudioSocketServer::Shared> shared_;
  tcp::socket socket_;
  asio::strand<asio::any_io_executor> strand_;
  asio::steady_timer pacer_;
  std::array<char, 4096> read_buf_;
  as::PacketParser parser_;
  as::Packet packet_;  // reused: steady-state audio does not allocate
  std::shared_ptr<Outbox> outbox_;
  CallConnection call_;  // admission, session and sink; ended by its destructor
  std::string remote_;
  std::string call_id_;
  State state_ = State::kAwaitUuid;
  bool writing_ = false;
  bool hangup_armed_ = false;
  std::string frame_;        // reused
  std::string pending_out_;  // packets waiting for the write in flight; keeps its capacity
  std::string in_flight_;    // the bytes of the write in flight
  std::vector<std::string> marks_due_;
  SteadyClock::time_point accepted_{};
  SteadyClock::time_point last_packet_{};
  SteadyClock::time_point next_tick_{};
  SteadyClock::time_point close_deadline_{};
  SteadyClock::time_point hangup_at_{};
};

namespace {

void Accept(const std::shared_ptr<AudioSocketServer::Shared>& shared) {
  shared->acceptor->async_accept(
      asio::make_strand(*shared->io), [shared](boost::system::error_code ec, tcp::socket socket) {
        if (ec) {
          if (ec == asio::error::operation_aborted || shared->stopping) return;
          HLOG_WARN("audiosocket: accept failed: {}", ec.message());
          return Accept(shared);
        }
        boost::system::error_code peer_ec;
        const auto peer = socket.remote_endpoint(peer_ec);
        if (peer_ec ||
            !AudioSocketPeerAllowed(peer.address().to_string(), shared->config.allowed_peers)) {
          shared->peers_refused->Increment();
          HLOG_WARN("audiosocket: refused {}: not in audiosocket.allowed_peers",
                    peer_ec ? std::string("an unknown peer") : peer.address().to_string());
          socket.close(peer_ec);
          if (!shared->stopping) Accept(shared);
          return;
        }
        auto conn = std::make_shared<AudioSocketConnection>(shared, std::move(socket));
        bool refuse = false;
        {
          std::lock_guard<std::mutex> lock(shared->mu);
          refuse = static_cast<int>(shared->connections.size()) >= shared->config.max_connections;
          shared->connections.insert(conn);
        }
        if (refuse) {
          conn->Refuse("over audiosocket.max_connections (" +
                       std::to_string(shared->config.max_connections) + ")");
        } else {
          conn->Start();
        }
        if (!shared->stopping) Accept(shared);
      });
}

}  // namespace

Result<std::unique_ptr<AudioSocketServer>> AudioSocketServer::Create(
    const pipeline::CallResources& resources, AudioSocketConfig config, MetricsRegistry* metrics,
    std::shared_ptr<CallRegistry> registry) {
  RETURN_IF_ERROR(config.Validate());
  RETURN_IF_ERROR(resources.Validate());
  auto shared = std::make_shared<Shared>();
  shared->resources = &resources;
  shared->config = std::move(config);
  if (registry == nullptr) registry = std::make_shared<CallRegistry>(CallsConfig{});
  ASSIGN_OR_RETURN(
      std::vector<int16_t> busy,
      SynthesizeAnnouncement(resources, registry->over_capacity_text(), as::kSampleRateHz));
  shared->busy_pcm = EncodePcm16Le(busy);
  MetricsRegistry& m = metrics != nullptr ? *metrics : MetricsRegistry::Global();
  shared->calls =
      std::make_unique<CallTransport>("audiosocket", "AudioSocket", std::move(registry), m);
  shared->peer_errors = &m.GetCounter("hotline_audiosocket_peer_errors_total",
                                      "Error packets (0xff) received from Asterisk");
  shared->refused = &m.GetCounter("hotline_audiosocket_refused_total",
                                  "AudioSocket connections refused (connection cap, no session)");
  shared->peers_refused =
      &m.GetCounter("hotline_audiosocket_peers_refused_total",
                    "Connections refused: peer not in audiosocket.allowed_peers");
  shared->audio_dropped_bytes =
      &m.GetCounter("hotline_audiosocket_audio_dropped_bytes_total",
                    "Reply audio dropped over audiosocket.max_queued_audio_ms");
  shared->pacer_resyncs = &m.GetCounter("hotline_audiosocket_pacer_resyncs_total",
                                        "Pacer stalls over 200 ms (schedule reset to now)");
  shared->frames_out =
      &m.GetCounter("hotline_audiosocket_frames_out_total", "20 ms audio packets sent to Asterisk");
  return std::unique_ptr<AudioSocketServer>(new AudioSocketServer(std::move(shared)));
}

AudioSocketServer::~AudioSocketServer() { Stop(); }

Status AudioSocketServer::Start() {
  if (started_) return FailedPreconditionError("the AudioSocket server is already started");
  boost::system::error_code ec;
  auto address = asio::ip::make_address(shared_->config.host, ec);
  if (ec)
    return InvalidArgumentError("audiosocket.host '" + shared_->config.host + "': " + ec.message());
  const int wanted = std::max(0, shared_->config.port);
  tcp::endpoint ep(address, static_cast<unsigned short>(wanted));
  auto acceptor = std::make_unique<tcp::acceptor>(*shared_->io);
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return UnavailableError("cannot listen for AudioSocket on " + shared_->config.host + ":" +
                            std::to_string(wanted) + ": " + ec.message());
  }
  port_ = acceptor->local_endpoint().port();
  shared_->acceptor = std::move(acceptor);
  Accept(shared_);
  started_ = true;
  io_thread_ = std::thread([io = shared_->io.get()] {
    for (;;) {
      try {
        io->run();
        return;
      } catch (const std::exception& e) {
        // A handler that throws (std::bad_alloc included) loses its own work only; the other
        // calls on this thread carry on.
        HLOG_ERROR("audiosocket: I/O handler threw: {}", e.what());
      } catch (...) {
        HLOG_ERROR("audiosocket: I/O handler threw a non-standard exception");
      }
    }
  });
  return Status::Ok();
}

void AudioSocketServer::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  shared_->stopping = true;
  asio::post(*shared_->io, [shared = shared_] {
    boost::system::error_code ec;
    shared->acceptor->close(ec);
  });
  std::vector<std::shared_ptr<AudioSocketConnection>> open;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    open.assign(shared_->connections.begin(), shared_->connections.end());
  }
  for (auto& c : open) c->ServerHangup("server shutting down");
  open.clear();
  const auto deadline = SteadyClock::now() + std::chrono::seconds(2);
  while (open_connections() > 0 && SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  shared_->io->stop();
  if (io_thread_.joinable()) io_thread_.join();
  // Whatever did not close in time is cut. The handlers still queued (and the connections they
  // hold) are destroyed with the io_context; they hold references to Shared, so without this
  // Shared and its io_context would keep each other alive.
  shared_->acceptor.reset();
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->connections.clear();
  }
  shared_->io.reset();
}

int AudioSocketServer::active_calls() const { return shared_->calls->active(); }

int AudioSocketServer::open_connections() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return static_cast<int>(shared_->connections.size());
}

}  // namespace hotline::server
