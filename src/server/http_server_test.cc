// HttpServer over real loopback sockets: built-in endpoints, limits, misbehaving clients,
// concurrency and graceful stop (the WebSocket sessions: ws_session_test.cc).
#include "server/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/log.h"
#include "net/http_client.h"
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
using testing::WsClient;
using Clock = std::chrono::steady_clock;

TEST(HttpServer, HealthReadyAndMetrics) {
  auto server = MustCreate(TestConfig());
  std::atomic<bool> ready{false};
  server->SetReadinessCheck([&]() -> Status {
    if (ready) return Status::Ok();
    return UnavailableError("model still loading");
  });
  ASSERT_TRUE(server->Start().ok());
  ASSERT_GT(server->port(), 0);
  net::HttpClient client;

  auto health = client.Send(net::HttpRequest::Get(server->Url("/healthz")));
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto not_ready = client.Send(net::HttpRequest::Get(server->Url("/readyz")));
  ASSERT_TRUE(not_ready.ok());
  EXPECT_EQ(not_ready->status, 503);
  EXPECT_NE(not_ready->body.find("model still loading"), std::string::npos);
  ready = true;
  auto is_ready = client.Send(net::HttpRequest::Get(server->Url("/readyz")));
  ASSERT_TRUE(is_ready.ok());
  EXPECT_EQ(is_ready->status, 200);

  auto metrics = client.Send(net::HttpRequest::Get(server->Url("/metrics")));
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->Header("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
  EXPECT_NE(metrics->body.find("# TYPE hotline_server_connections_total counter"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("hotline_server_http_responses_total{class=\"5xx\"}"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("\nhotline_process_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(metrics->body.find("\nhotline_process_cpu_seconds "), std::string::npos);
}

TEST(HttpServer, NotFoundAndMethodNotAllowed) {
  auto server = MustCreate(TestConfig());
  ASSERT_TRUE(server->Handle("POST", "/echo", [](const Request& r, const CancelToken&) {
    return Response::Text(200, r.body);
  }).ok());
  EXPECT_FALSE(server->Handle("POST", "/echo", [](const Request&, const CancelToken&) {
    return Response();
  }).ok());
  EXPECT_FALSE(server->Handle("GET", "no-slash", [](const Request&, const CancelToken&) {
    return Response();
  }).ok());
  ASSERT_TRUE(server->Start().ok());
  EXPECT_FALSE(server->Handle("GET", "/late", [](const Request&, const CancelToken&) {
    return Response();
  }).ok());
  net::HttpClient client;
  auto missing = client.Send(net::HttpRequest::Get(server->Url("/nothing?x=1")));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("/nothing"), std::string::npos);
  auto wrong = client.Send(net::HttpRequest::Get(server->Url("/echo")));
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 405);
  EXPECT_EQ(wrong->Header("Allow"), "POST");
  auto echo = client.Send(net::HttpRequest::Post(server->Url("/echo?q"), "hello", "text/plain"));
  ASSERT_TRUE(echo.ok());
  EXPECT_EQ(echo->status, 200);
  EXPECT_EQ(echo->body, "hello");
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  auto server = MustCreate(TestConfig());
  std::atomic<int> calls{0};
  ASSERT_TRUE(server->Handle("GET", "/n", [&](const Request& r, const CancelToken&) {
    return Response::Text(200, std::to_string(++calls) + ":" + r.query);
  }).ok());
  ASSERT_TRUE(server->Start().ok());
  RawClient c(server->port());
  ASSERT_TRUE(c.connected());
  // Two requests at once (pipelined), then a third after the answers.
  ASSERT_TRUE(c.Send("GET /n?a HTTP/1.1\r\nHost: x\r\n\r\nGET /n?b HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string r1 = c.ReadResponse();
  std::string r2 = c.ReadResponse();
  EXPECT_EQ(StatusOf(r1), 200) << "[" << r1 << "] eof=" << c.eof();
  EXPECT_NE(r1.find("1:a"), std::string::npos) << r1;
  EXPECT_NE(r2.find("2:b"), std::string::npos) << r2;
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string r3 = c.ReadAll();
  EXPECT_EQ(StatusOf(r3), 200);
  EXPECT_NE(r3.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(c.eof());
}

TEST(HttpServer, OversizedBodyGets413AndOversizedHeadGets431) {
  ServerConfig cfg = TestConfig();
  cfg.max_request_body_bytes = 1000;
  cfg.max_header_bytes = 1024;
  auto server = MustCreate(cfg);
  std::atomic<int> calls{0};
  ASSERT_TRUE(server->Handle("POST", "/upload", [&](const Request&, const CancelToken&) {
    ++calls;
    return Response::Text(200, "stored");
  }).ok());
  ASSERT_TRUE(server->Start().ok());

  // Declared too large: refused from the head alone, while the client is still sending.
  RawClient big(server->port());
  ASSERT_TRUE(big.Send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                       std::string(4000, 'a')));
  std::string r = big.ReadAll();
  EXPECT_EQ(StatusOf(r), 413) << r;
  EXPECT_NE(r.find("max_request_body_bytes=1000"), std::string::npos);

  // Chunked body that grows past the limit.
  RawClient chunked(server->port());
  std::string body = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) body += "190\r\n" + std::string(400, 'b') + "\r\n";
  body += "0\r\n\r\n";
  ASSERT_TRUE(chunked.Send(body));
  EXPECT_EQ(StatusOf(chunked.ReadAll()), 413);

  RawClient head(server->port());
  ASSERT_TRUE(head.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'h') +
                        "\r\n\r\n"));
  r = head.ReadAll();
  EXPECT_EQ(StatusOf(r), 431) << r;
  EXPECT_NE(r.find("max_header_bytes=1024"), std::string::npos);

  RawClient garbage(server->port());
  ASSERT_TRUE(garbage.Send("NOT HTTP AT ALL\r\n\r\n"));
  EXPECT_EQ(StatusOf(garbage.ReadAll()), 400);

  // Within the limit it still works.
  net::HttpClient client;
  auto ok = client.Send(net::HttpRequest::Post(server->Url("/upload"), std::string(1000, 'c'),
                                               "text/plain"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpServer, IdleConnectionIsClosed) {
  ServerConfig cfg = TestConfig();
  cfg.idle_timeout_ms = 150;
  auto server = MustCreate(cfg);
  ASSERT_TRUE(server->Start().ok());
  RawClient c(server->port());
  ASSERT_TRUE(c.Send("GET /hea"));  // a head that never completes (slowloris)
  auto t0 = Clock::now();
  std::string r = c.ReadAll(3000);
  EXPECT_TRUE(c.eof());
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(2000));
  EXPECT_TRUE(WaitFor([&] { return server->active_connections() == 0; }));
}

TEST(HttpServer, BadUpgradesAreRefused) {
  auto server = MustCreate(TestConfig());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->HandleWebSocket("/private", [](const Request& r,
                                                      std::shared_ptr<WebSocketConnection>)
                                          -> Result<std::unique_ptr<WebSocketHandler>> {
    if (r.HeaderValue("Authorization") != "Bearer t") return PermissionDeniedError("bad token");
    return NotFoundError("unreachable");
  }).ok());
  ASSERT_TRUE(server->Start().ok());
  const std::string upgrade_headers =
      "Host: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  struct Case {
    std::string request;
    int status;
  } cases[] = {
      {"GET /nowhere HTTP/1.1\r\n" + upgrade_headers + "Sec-WebSocket-Version: 13\r\n\r\n", 404},
      {"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n", 426},
      {"GET /ws HTTP/1.1\r\n" + upgrade_headers + "Sec-WebSocket-Version: 8\r\n\r\n", 426},
      {"GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
       "Sec-WebSocket-Version: 13\r\n\r\n", 400},
      {"GET /private HTTP/1.1\r\n" + upgrade_headers + "Sec-WebSocket-Version: 13\r\n\r\n", 403},
  };
  for (const Case& c : cases) {
    RawClient client(server->port());
    ASSERT_TRUE(client.Send(c.request));
    std::string r = client.ReadResponse();
    EXPECT_EQ(StatusOf(r), c.status) << c.request << "\n--> " << r;
  }
  EXPECT_EQ(log->closes, 0);  // no handler was made for a refused upgrade
}

TEST(HttpServer, OneAddressCannotTakeEveryConnection) {
  ServerConfig cfg = TestConfig();
  cfg.max_connections_per_address = 2;
  auto server = MustCreate(cfg);
  ASSERT_TRUE(server->Start().ok());
  RawClient a(server->port());
  RawClient b(server->port());
  ASSERT_TRUE(WaitFor([&] { return server->active_connections() == 2; }));
  RawClient c(server->port());
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string r = c.ReadAll();
  EXPECT_EQ(StatusOf(r), 503) << r;
  EXPECT_NE(r.find("max_connections_per_address=2"), std::string::npos) << r;
  a.Close();
  ASSERT_TRUE(WaitFor([&] { return server->active_connections() == 1; }));
  RawClient d(server->port());
  ASSERT_TRUE(d.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(StatusOf(d.ReadAll()), 200);
}

// Unfinished messages are charged to a server-wide budget: the socket whose partial message
// takes the total past it is closed with 1013, and the others keep working.
TEST(HttpServer, ConnectionsOverTheLimitGet503AndClose1013) {
  ServerConfig cfg = TestConfig();
  cfg.max_connections = 2;
  auto server = MustCreate(cfg);
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  RawClient a(server->port());
  RawClient b(server->port());
  ASSERT_TRUE(WaitFor([&] { return server->active_connections() == 2; }));
  RawClient c(server->port());
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string r = c.ReadAll();
  EXPECT_EQ(StatusOf(r), 503) << r;
  EXPECT_NE(r.find("max_connections=2"), std::string::npos);

  WsClient ws(server->port(), "/ws");
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  EXPECT_EQ(ws.ReadUntilClosed(), 1013);
  EXPECT_NE(ws.close_reason().find("max_connections"), std::string::npos);

  // Once a slot frees up, requests are served again.
  a.Close();
  ASSERT_TRUE(WaitFor([&] { return server->active_connections() == 1; }));
  net::HttpClient client;
  auto ok = client.Send(net::HttpRequest::Get(server->Url("/healthz")));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpServer, ManyConcurrentClients) {
  auto server = MustCreate(TestConfig());
  ASSERT_TRUE(server->Handle("POST", "/sum", [](const Request& r, const CancelToken&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a blocking handler
    return Response::Text(200, std::to_string(r.body.size()));
  }).ok());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      net::HttpClient client;
      for (int i = 0; i < 10; ++i) {
        auto r = client.Send(net::HttpRequest::Post(server->Url("/sum"),
                                                    std::string(t * 10 + i, 'x'), "text/plain"));
        if (r.ok() && r->status == 200 && r->body == std::to_string(t * 10 + i)) ++good;
      }
      WsClient ws(server->port(), "/ws");
      std::string got;
      if (ws.ok() && ws.SendText("m" + std::to_string(t)) && ws.Read(got) &&
          got == "m" + std::to_string(t)) {
        ++good;
      }
      ws.Close();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 16 * 11);
  EXPECT_TRUE(WaitFor([&] { return server->active_connections() == 0; }));
}

TEST(HttpServer, AbruptDisconnectsLeaveTheServerServing) {
  auto server = MustCreate(TestConfig());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  ASSERT_TRUE(server->Start().ok());
  for (int i = 0; i < 5; ++i) {
    RawClient half(server->port());
    half.Send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc");
    half.Abort();
    RawClient reset(server->port());
    reset.Abort();
  }
  {
    WsClient ws(server->port(), "/ws");
    ASSERT_TRUE(ws.ok());
    ASSERT_TRUE(ws.SendText("x"));
    std::string got;
    ASSERT_TRUE(ws.Read(got));
    ws.Drop();  // no close frame
  }
  {
    std::unique_lock lock(log->mu);
    ASSERT_TRUE(log->cv.wait_for(lock, std::chrono::seconds(3), [&] { return log->closes == 1; }));
    EXPECT_EQ(log->last_code, kCloseAbnormal);
  }
  net::HttpClient client;
  auto ok = client.Send(net::HttpRequest::Get(server->Url("/healthz")));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
  EXPECT_TRUE(WaitFor([&] { return server->active_connections() == 0; }));
}

TEST(HttpServer, StreamingResponseAndDisconnectCancelsTheHandler) {
  auto server = MustCreate(TestConfig());
  std::atomic<bool> cancelled{false};
  std::atomic<int> pieces{0};
  ASSERT_TRUE(server->HandleStream("GET", "/stream", [&](const Request& r, ResponseStream& out) {
    out.Begin(200, "text/event-stream", {{"Cache-Control", "no-cache"}});
    int n = r.query == "n=3" ? 3 : 100000;
    for (int i = 0; i < n && !out.cancel().cancelled(); ++i) {
      if (!out.Write("data: " + std::to_string(i) + "\n\n")) break;
      ++pieces;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (out.cancel().cancelled()) cancelled = true;
    out.End();
  }).ok());
  ASSERT_TRUE(server->Start().ok());

  // A finite stream through the project's HTTP client, piece by piece.
  net::HttpClient client;
  std::string body;
  int status = 0;
  Status s = client.Stream(net::HttpRequest::Get(server->Url("/stream?n=3")),
                           {[&](const net::HttpResponseHead& h) {
                              status = h.status;
                              return Status::Ok();
                            },
                            [&](std::string_view b) {
                              body.append(b);
                              return Status::Ok();
                            }});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, "data: 0\n\ndata: 1\n\ndata: 2\n\n");

  // An endless stream: the client hangs up, the handler's token is raised.
  RawClient c(server->port());
  ASSERT_TRUE(c.Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string head = c.ReadUntil([](const std::string& b) { return b.find("data: 5") != b.npos; });
  EXPECT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(head.find("Cache-Control: no-cache"), std::string::npos);
  auto t0 = Clock::now();
  c.Close();
  ASSERT_TRUE(WaitFor([&] { return cancelled.load(); }));
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1000));
}

TEST(HttpServer, SlowClientDoesNotBlockOthers) {
  ServerConfig cfg = TestConfig();
  cfg.max_send_queue_bytes = 64 << 10;
  cfg.idle_timeout_ms = 1000;
  auto server = MustCreate(cfg);
  std::atomic<bool> writer_gave_up{false};
  ASSERT_TRUE(server->HandleStream("GET", "/firehose", [&](const Request&, ResponseStream& out) {
    out.Begin(200, "application/octet-stream");
    std::string block(16 << 10, 'z');
    while (out.Write(block)) {
    }
    writer_gave_up = true;
  }).ok());
  auto log = std::make_shared<EchoHandler::Log>();
  std::shared_ptr<WebSocketConnection> slow_ws;
  std::mutex mu;
  ASSERT_TRUE(server->HandleWebSocket("/slow", [&](const Request&,
                                                   std::shared_ptr<WebSocketConnection> c)
                                          -> Result<std::unique_ptr<WebSocketHandler>> {
    std::lock_guard lock(mu);
    slow_ws = c;
    return std::unique_ptr<WebSocketHandler>(std::make_unique<EchoHandler>(c, log));
  }).ok());
  ASSERT_TRUE(server->Start().ok());

  RawClient slow(server->port(), /*rcvbuf_bytes=*/4096);  // never reads
  ASSERT_TRUE(slow.Send("GET /firehose HTTP/1.1\r\nHost: x\r\n\r\n"));
  WsClient ws(server->port(), "/slow");  // never reads either
  ASSERT_TRUE(ws.ok());
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(mu);
    return slow_ws != nullptr;
  }));
  // The WebSocket's queue fills, and sends then fail fast instead of growing memory.
  Status last;
  std::string block(32 << 10, 'w');
  for (int i = 0; i < 10000 && last.ok(); ++i) {
    std::lock_guard lock(mu);
    last = slow_ws->SendBinary(block);
  }
  EXPECT_EQ(last.code(), StatusCode::kResourceExhausted) << last;
  {
    std::lock_guard lock(mu);
    EXPECT_LE(slow_ws->queued_bytes(), cfg.max_send_queue_bytes + (32 << 10));
  }

  // Meanwhile everyone else is served promptly.
  net::HttpClient client;
  for (int i = 0; i < 20; ++i) {
    auto t0 = Clock::now();
    auto r = client.Send(net::HttpRequest::Get(server->Url("/healthz")));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(500));
  }
  // The stuck stream is cut after the idle timeout, freeing its worker.
  EXPECT_TRUE(WaitFor([&] { return writer_gave_up.load(); }, 5000));
}

TEST(HttpServer, GracefulStopClosesWebSocketsAndCancelsHandlers) {
  auto server = MustCreate(TestConfig());
  auto log = std::make_shared<EchoHandler::Log>();
  ASSERT_TRUE(server->HandleWebSocket("/ws", EchoFactory(log)).ok());
  std::atomic<bool> handler_cancelled{false};
  std::atomic<bool> handler_started{false};
  ASSERT_TRUE(server->Handle("GET", "/slow", [&](const Request&, const CancelToken& cancel) {
    handler_started = true;
    while (!cancel.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    handler_cancelled = true;
    return Response::Text(200, "partial");
  }).ok());
  ASSERT_TRUE(server->Start().ok());
  WsClient ws(server->port(), "/ws");
  ASSERT_TRUE(ws.ok());
  RawClient slow(server->port());
  ASSERT_TRUE(slow.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return handler_started.load(); }));
  RawClient idle(server->port());
  ASSERT_TRUE(WaitFor([&] { return server->active_connections() == 3; }));

  int ws_code = -1;
  std::thread reader([&] { ws_code = ws.ReadUntilClosed(); });
  auto t0 = Clock::now();
  server->Stop();
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1500));
  reader.join();
  EXPECT_EQ(ws_code, 1001);
  EXPECT_EQ(ws.close_reason(), "server shutting down");
  EXPECT_TRUE(handler_cancelled.load());
  std::string r = slow.ReadAll();
  EXPECT_EQ(StatusOf(r), 200);  // the running request still got its answer
  EXPECT_NE(r.find("Connection: close"), std::string::npos);
  idle.ReadAll();
  EXPECT_TRUE(idle.eof());
  EXPECT_EQ(log->closes, 1);
  EXPECT_EQ(server->active_connections(), 0);
  RawClient after(server->port());
  EXPECT_FALSE(after.connected() && after.Send("GET /healthz HTTP/1.1\r\n\r\n") &&
               StatusOf(after.ReadAll(500)) == 200);
}

TEST(HttpServer, BusyWorkersAnswer503) {
  ServerConfig cfg = TestConfig();
  cfg.worker_threads = 1;
  cfg.worker_queue = 1;
  auto server = MustCreate(cfg);
  std::atomic<bool> release{false};
  std::atomic<int> started{0};
  ASSERT_TRUE(server->Handle("GET", "/block", [&](const Request&, const CancelToken& c) {
    ++started;
    while (!release && !c.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Response::Text(200, "done");
  }).ok());
  ASSERT_TRUE(server->Start().ok());
  RawClient a(server->port());
  ASSERT_TRUE(a.Send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return started.load() == 1; }));
  RawClient b(server->port());  // queued
  ASSERT_TRUE(b.Send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RawClient c(server->port());  // no room
  ASSERT_TRUE(c.Send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string r = c.ReadResponse();
  EXPECT_EQ(StatusOf(r), 503) << r;
  // Health checks answer on the I/O threads even now.
  net::HttpClient client;
  auto h = client.Send(net::HttpRequest::Get(server->Url("/healthz")));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->status, 200);
  release = true;
  EXPECT_EQ(StatusOf(a.ReadResponse()), 200);
  EXPECT_EQ(StatusOf(b.ReadResponse()), 200);
}

TEST(ServerConfig, ValidateNamesTheField) {
  ServerConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.port = 70000;
  EXPECT_NE(c.Validate().message().find("port"), std::string::npos);
  c = ServerConfig();
  c.max_header_bytes = 10;
  EXPECT_NE(c.Validate().message().find("max_header_bytes"), std::string::npos);
  c = ServerConfig();
  c.openai.default_max_tokens = c.openai.max_tokens_limit + 1;
  EXPECT_NE(ValidateConfig(c).message().find("openai: default_max_tokens"), std::string::npos)
      << ValidateConfig(c);
  EXPECT_FALSE(HttpServer::Create(c).ok());
}

TEST(HttpServer, PortInUseIsAClearError) {
  auto first = MustCreate(TestConfig());
  ASSERT_TRUE(first->Start().ok());
  ServerConfig cfg = TestConfig();
  cfg.port = first->port();
  auto second = MustCreate(cfg);
  Status s = second->Start();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find(std::to_string(first->port())), std::string::npos);
}

}  // namespace
}  // namespace hotline::server
