// HttpServer's WebSocket sessions over real loopback sockets: echo and close in both directions,
// a client reading while another thread sends, read time-outs, the message size limit (1009)
// and the budget that unfinished messages of all connections share.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "server/http_server.h"
#include "server/testing/server_test_helpers.h"
#include "server/testing/test_clients.h"

namespace hotline::server {
namespace {

using testing::EchoFactory;
using testing::EchoHandler;
using testing::MustCreate;
using testing::RawClient;
using testing::StatusOf;
using testing::TestConfig;
using testing::WaitFor;
using Clock = std::chrono::steady_clock;
using testing::WsClient;

TEST(HttpServer, WebSocketEchoAndServerSideClose) {
  auto server = MustCreate(TestConfig());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  WsClient ws(server->port(), "/ws?call=1");
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  ASSERT_TRUE(ws.SendText("hello"));
  std::string got;
  ASSERT_TRUE(ws.Read(got));
  EXPECT_EQ(got, "hello");
  std::string bin("\x00\x01\xff", 3);
  ASSERT_TRUE(ws.SendBinary(bin));
  ASSERT_TRUE(ws.Read(got));
  EXPECT_EQ(got, bin);
  ASSERT_TRUE(ws.SendText("close-me"));
  EXPECT_EQ(ws.ReadUntilClosed(), 1000);
  EXPECT_EQ(ws.close_reason(), "as asked");
  std::unique_lock lock(log->mu);
  ASSERT_TRUE(log->cv.wait_for(lock, std::chrono::seconds(3), [&] { return log->closes == 1; }));
  EXPECT_EQ(log->last_code, 1000);
}

// The test client reads on one thread while another sends, and the server's close arrives in the
// reader while the sender's last write returns (the pattern of a test caller): every echo and the
// close frame come through, and a send after the close fails cleanly.
TEST(HttpServer, WebSocketClientReadsWhileAnotherThreadSends) {
  auto server = MustCreate(TestConfig());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  for (int round = 0; round < 5; ++round) {
    WsClient ws(server->port(), "/ws");
    ASSERT_TRUE(ws.ok()) << ws.error().message();
    ws.SetReadTimeout(std::chrono::seconds(5));
    constexpr int kMessages = 200;
    int echoed = 0;
    int code = -1;
    std::thread reader([&] {
      std::string in;
      while (ws.Read(in)) ++echoed;
      code = ws.close_code();
    });
    // EXPECT, not ASSERT: the reader must be joined on every path.
    for (int i = 0; i < kMessages; ++i) {
      EXPECT_TRUE(i % 2 ? ws.SendBinary(std::string(100 + i, 'b'))
                        : ws.SendText("m" + std::to_string(i)));
    }
    EXPECT_TRUE(ws.SendText("close-me"));
    reader.join();
    EXPECT_EQ(echoed, kMessages);
    EXPECT_EQ(code, 1000);
    EXPECT_EQ(ws.close_reason(), "as asked");
    // After the close handshake, a send fails instead of touching a finished stream.
    EXPECT_FALSE(ws.SendText("late"));
  }
}

// A silent server: the read time-out ends the read with timed_out instead of blocking.
TEST(HttpServer, WebSocketClientReadTimesOut) {
  auto server = MustCreate(TestConfig());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  WsClient ws(server->port(), "/ws");
  ASSERT_TRUE(ws.ok());
  ws.SetReadTimeout(std::chrono::milliseconds(100));
  const auto t0 = Clock::now();
  std::string in;
  EXPECT_FALSE(ws.Read(in));
  EXPECT_EQ(ws.error(), boost::asio::error::timed_out);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(2000));
}

TEST(HttpServer, OversizedWebSocketMessageClosesWith1009) {
  ServerConfig cfg = TestConfig();
  cfg.max_ws_message_bytes = 1000;
  auto server = MustCreate(cfg);
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  WsClient ws(server->port(), "/ws");
  ASSERT_TRUE(ws.ok());
  ASSERT_TRUE(ws.SendText(std::string(1000, 'a')));  // exactly the limit: fine
  std::string got;
  ASSERT_TRUE(ws.Read(got));
  EXPECT_EQ(got.size(), 1000u);
  ws.SendText(std::string(5000, 'b'));
  EXPECT_EQ(ws.ReadUntilClosed(), 1009);
  EXPECT_NE(ws.close_reason().find("max_ws_message_bytes=1000"), std::string::npos);
  std::unique_lock lock(log->mu);
  ASSERT_TRUE(log->cv.wait_for(lock, std::chrono::seconds(3), [&] { return log->closes == 1; }));
  EXPECT_EQ(log->last_code, 1009);
  EXPECT_EQ(log->messages, 1);  // the oversized message never reached the handler
}

TEST(HttpServer, PartialWebSocketMessagesShareOneBudget) {
  ServerConfig cfg = TestConfig();
  cfg.max_ws_message_bytes = 64 << 10;
  cfg.max_ws_buffered_bytes = 100 << 10;
  auto server = MustCreate(cfg);
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  // A masked text frame without FIN: the start of a message that never ends.
  auto partial = [](size_t n) {
    std::string f;
    f.push_back(static_cast<char>(0x01));        // FIN=0, opcode text
    f.push_back(static_cast<char>(0x80 | 126));  // masked, 16-bit length (n < 64 KiB)
    f.push_back(static_cast<char>((n >> 8) & 0xff));
    f.push_back(static_cast<char>(n & 0xff));
    f.append("\0\0\0\0", 4);  // zero mask
    f.append(n, 'x');
    return f;
  };
  auto upgrade = [&](RawClient& c) {
    EXPECT_TRUE(
        c.Send("GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
    std::string head =
        c.ReadUntil([](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; });
    EXPECT_EQ(StatusOf(head), 101) << head;
  };
  RawClient a(server->port());
  RawClient b(server->port());
  upgrade(a);
  upgrade(b);
  ASSERT_TRUE(a.Send(partial(60 << 10)));  // 60 KiB held
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(b.Send(partial(60 << 10)));  // 120 KiB > 100 KiB: b is closed
  std::string closed = b.ReadUntil(
      [](const std::string& buf) { return buf.find("unfinished") != std::string::npos; });
  EXPECT_NE(closed.find("\x03\xf5"), std::string::npos) << "close 1013";
  EXPECT_NE(closed.find("unfinished messages"), std::string::npos);
  // a is still open: it finishes its message and gets the echo.
  std::string fin;
  fin.push_back(static_cast<char>(0x80));  // FIN=1, continuation
  fin.push_back(static_cast<char>(0x80 | 2));
  fin.append("\0\0\0\0", 4);
  fin.append("!!");
  ASSERT_TRUE(a.Send(fin));
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(log->mu);
    return log->messages >= 1;
  }));
}

}  // namespace
}  // namespace hotline::server
