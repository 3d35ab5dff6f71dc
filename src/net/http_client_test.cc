#include "net/http_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "net/sse_parser.h"
#include "net/testing/loopback_http_server.h"

namespace hotline::net {
namespace {

using testing::LoopbackHttpServer;
using testing::LoopbackRequest;
using testing::LoopbackResponder;
using namespace std::chrono_literals;

std::unique_ptr<LoopbackHttpServer> StartServer(testing::LoopbackHandler h) {
  auto s = LoopbackHttpServer::Start(std::move(h));
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

TEST(HttpClient, PostEchoesBodyAndHeaders) {
  auto server = StartServer([](const LoopbackRequest& req, LoopbackResponder& r) {
    r.Send(201, "text/plain",
           req.method + " " + req.target + " " + req.Header("X-Key") + " " + req.body);
  });
  HttpRequest req = HttpRequest::Post(server->Url("/v1/echo?q=1"), "{\"x\":1}", "application/json");
  req.headers.push_back({"X-Key", "abc"});
  auto resp = HttpClient().Send(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->Header("content-type"), "text/plain");
  EXPECT_EQ(resp->body, "POST /v1/echo?q=1 abc {\"x\":1}");
}

TEST(HttpClient, StreamsChunkedBodyPieceByPieceForSse) {
  auto server = StartServer([](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    for (int i = 0; i < 5; ++i) {
      r.WriteChunk("data: {\"n\":" + std::to_string(i) + "}\n\n");
      std::this_thread::sleep_for(2ms);
    }
    r.WriteChunk("data: [DONE]\n\n");
    r.EndChunked();
  });
  std::vector<std::string> data;
  int head_status = 0;
  SseParser sse([&](const SseEvent& e) {
    data.push_back(e.data);
    return Status::Ok();
  });
  HttpStreamCallbacks cb;
  cb.on_head = [&](const HttpResponseHead& h) {
    head_status = h.status;
    return Status::Ok();
  };
  cb.on_body = [&](std::string_view bytes) { return sse.Feed(bytes); };
  Status s = HttpClient().Stream(HttpRequest::Post(server->Url("/v1/chat"), "{}", "application/json"), cb);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(head_status, 200);
  ASSERT_EQ(data.size(), 6u);
  EXPECT_EQ(data[0], "{\"n\":0}");
  EXPECT_EQ(data[5], "[DONE]");
}

TEST(HttpClient, BodyUntilEofAndErrorStatusesAreReturned) {
  auto server = StartServer([](const LoopbackRequest& req, LoopbackResponder& r) {
    if (req.target == "/eof") {
      r.WriteRaw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end");
    } else {
      r.Send(404, "application/json", "{\"error\":\"no such model\"}");
    }
  });
  auto eof = HttpClient().Send(HttpRequest::Get(server->Url("/eof")));
  ASSERT_TRUE(eof.ok()) << eof.status();
  EXPECT_EQ(eof->body, "until the end");
  auto missing = HttpClient().Send(HttpRequest::Get(server->Url("/missing")));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST(HttpClient, CancelStopsAStreamWithinAPollPeriod) {
  auto server = StartServer([](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "audio/pcm");
    for (int i = 0; i < 500; ++i) {
      if (!r.WriteChunk(std::string(320, 'a'))) return;  // client closed
      std::this_thread::sleep_for(10ms);
    }
    r.EndChunked();
  });
  CancelToken cancel;
  int pieces = 0;
  std::chrono::steady_clock::time_point cancelled_at;
  HttpStreamCallbacks cb;
  cb.on_body = [&](std::string_view) {
    if (++pieces == 3) {
      cancel.Cancel();
      cancelled_at = std::chrono::steady_clock::now();
    }
    return Status::Ok();
  };
  Status s = HttpClient().Stream(HttpRequest::Get(server->Url("/")), cb, &cancel);
  auto took = std::chrono::steady_clock::now() - cancelled_at;
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s;
  EXPECT_EQ(pieces, 3);
  EXPECT_LT(took, 1s);  // generous: the server sends every 10 ms; a hang would take 5 s
}

TEST(HttpClient, CallbackErrorAbortsTheExchange) {
  auto server = StartServer([](const LoopbackRequest&, LoopbackResponder& r) {
    r.Send(200, "text/plain", "hello");
  });
  HttpStreamCallbacks cb;
  cb.on_head = [](const HttpResponseHead&) { return InvalidArgumentError("wrong type"); };
  EXPECT_EQ(HttpClient().Stream(HttpRequest::Get(server->Url("/")), cb).code(),
            StatusCode::kInvalidArgument);
}

TEST(HttpClient, IdleTimeout) {
  auto server = StartServer([](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/plain");
    std::this_thread::sleep_for(400ms);  // silence longer than the client's idle timeout
    r.EndChunked();
  });
  HttpClientConfig cfg;
  cfg.idle_timeout_ms = 100;
  auto resp = HttpClient(cfg).Send(HttpRequest::Get(server->Url("/")));
  EXPECT_EQ(resp.status().code(), StatusCode::kDeadlineExceeded) << resp.status();
}

TEST(HttpClient, TotalTimeoutBoundsATricklingStream) {
  auto server = StartServer([](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/plain");
    for (int i = 0; i < 100; ++i) {
      if (!r.WriteChunk("x")) return;
      std::this_thread::sleep_for(10ms);
    }
    r.EndChunked();
  });
  HttpClientConfig cfg;
  cfg.total_timeout_ms = 150;
  auto resp = HttpClient(cfg).Send(HttpRequest::Get(server->Url("/")));
  EXPECT_EQ(resp.status().code(), StatusCode::kDeadlineExceeded) << resp.status();
}

TEST(HttpClient, ResponseSizeIsBounded) {
  auto server = StartServer([](const LoopbackRequest& req, LoopbackResponder& r) {
    if (req.target == "/chunked") {
      r.BeginChunked(200, "text/plain");
      for (int i = 0; i < 10; ++i) r.WriteChunk(std::string(1000, 'x'));
      r.EndChunked();
    } else {
      r.Send(200, "text/plain", std::string(5000, 'x'));
    }
  });
  HttpClientConfig cfg;
  cfg.max_response_bytes = 4096;
  EXPECT_EQ(HttpClient(cfg).Send(HttpRequest::Get(server->Url("/"))).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(HttpClient(cfg).Send(HttpRequest::Get(server->Url("/chunked"))).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(HttpClient, MalformedAndTruncatedResponses) {
  auto server = StartServer([](const LoopbackRequest& req, LoopbackResponder& r) {
    if (req.target == "/garbage") {
      r.WriteRaw("NOT HTTP AT ALL\r\n\r\n");
    } else {
      r.WriteRaw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
    }
  });
  auto garbage = HttpClient().Send(HttpRequest::Get(server->Url("/garbage")));
  EXPECT_EQ(garbage.status().code(), StatusCode::kDataLoss) << garbage.status();
  auto truncated = HttpClient().Send(HttpRequest::Get(server->Url("/truncated")));
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss) << truncated.status();
}

TEST(HttpClient, ConnectionRefusedIsUnavailable) {
  int port = 0;
  {
    auto server = StartServer([](const LoopbackRequest&, LoopbackResponder&) {});
    port = server->port();
  }  // closed: nothing listens there now
  auto resp = HttpClient().Send(HttpRequest::Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  EXPECT_EQ(resp.status().code(), StatusCode::kUnavailable) << resp.status();
}

TEST(HttpClient, RejectsBadRequests) {
  HttpRequest frob = HttpRequest::Get("http://127.0.0.1:1/");
  frob.method = "FROB";
  EXPECT_EQ(HttpClient().Send(frob).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpClient().Send(HttpRequest::Get("no-url")).status().code(), StatusCode::kInvalidArgument);
  HttpRequest injected = HttpRequest::Get("http://127.0.0.1:1/");
  injected.headers.push_back({"X", "a\r\nEvil: 1"});
  CancelToken t;
  EXPECT_FALSE(HttpClient().Send(injected, &t).ok());
  HttpClientConfig bad;
  bad.poll_ms = 0;
  EXPECT_EQ(HttpClient(bad).Send(HttpRequest::Get("http://127.0.0.1:1/")).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hotline::net
