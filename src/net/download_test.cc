#include "net/download.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "net/testing/loopback_http_server.h"

namespace hotline::net {
namespace {

using testing::LoopbackHttpServer;
using testing::LoopbackRequest;
using testing::LoopbackResponder;
namespace fs = std::filesystem;

std::string Payload(size_t n) {
  std::mt19937 rng(7);
  std::string s = "GGUF";
  while (s.size() < n) s.push_back(static_cast<char>(rng() & 0xff));
  return s;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The temporary folder of one test, removed afterwards.
class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hotline_download_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Serves `file` honouring "Range: bytes=N-" (206), or the whole file (200).
void ServeRanges(const std::string& file, const LoopbackRequest& req, LoopbackResponder& r) {
  const std::string range = req.Header("Range");
  if (range.rfind("bytes=", 0) == 0) {
    const size_t from = std::stoul(range.substr(6));
    if (from >= file.size()) {
      r.WriteRaw("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" +
                 std::to_string(file.size()) +
                 "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    r.WriteRaw(
        "HTTP/1.1 206 Partial Content\r\nContent-Length: " + std::to_string(file.size() - from) +
        "\r\nContent-Range: bytes " + std::to_string(from) + "-" + std::to_string(file.size() - 1) +
        "/" + std::to_string(file.size()) + "\r\nConnection: close\r\n\r\n" + file.substr(from));
    return;
  }
  r.Send(200, "application/octet-stream", file);
}

TEST_F(DownloadTest, DownloadsAndChecksTheChecksum) {
  const std::string file = Payload(300000);
  auto server = LoopbackHttpServer::Start(
      [&](const LoopbackRequest& req, LoopbackResponder& r) { ServeRanges(file, req, r); });
  ASSERT_TRUE(server.ok()) << server.status();
  std::ofstream(Path("ref")) << file;
  auto sha = Sha256OfFile(Path("ref"));
  ASSERT_TRUE(sha.ok());
  DownloadOptions o;
  o.expected_sha256 = *sha;
  int64_t last_done = -1, last_total = -2;
  o.on_progress = [&](int64_t done, int64_t total) {
    last_done = done;
    last_total = total;
  };
  auto r = DownloadFile((*server)->Url("/m.gguf"), Path("m.gguf"), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bytes, 300000);
  EXPECT_EQ(r->sha256, *sha);
  EXPECT_EQ(r->resumed_from, 0);
  EXPECT_EQ(last_done, 300000);
  EXPECT_EQ(last_total, 300000);
  EXPECT_EQ(ReadAll(Path("m.gguf")), file);
  EXPECT_FALSE(fs::exists(Path("m.gguf.part")));
  // Present and good: no transfer.
  const int before = (*server)->requests();
  auto again = DownloadFile((*server)->Url("/m.gguf"), Path("m.gguf"), o);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_present);
  EXPECT_EQ((*server)->requests(), before);
}

// The first request's connection drops halfway; the second call resumes with a Range request.
TEST_F(DownloadTest, ResumesAfterTheConnectionDropsHalfway) {
  const std::string file = Payload(400000);
  std::atomic<int> calls{0};
  std::string second_range;
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    if (calls++ == 0) {
      r.WriteRaw("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(file.size()) +
                 "\r\nConnection: close\r\n\r\n" + file.substr(0, 150000));
      return;  // connection closed with 250000 bytes unsent
    }
    second_range = req.Header("Range");
    ServeRanges(file, req, r);
  });
  ASSERT_TRUE(server.ok()) << server.status();
  std::ofstream(Path("ref")) << file;
  DownloadOptions o;
  o.expected_sha256 = *Sha256OfFile(Path("ref"));
  auto first = DownloadFile((*server)->Url("/m.gguf"), Path("m.gguf"), o);
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().message().find("resume"), std::string::npos) << first.status();
  EXPECT_EQ(fs::file_size(Path("m.gguf.part")), 150000u);
  EXPECT_FALSE(fs::exists(Path("m.gguf")));
  auto second = DownloadFile((*server)->Url("/m.gguf"), Path("m.gguf"), o);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second_range, "bytes=150000-");
  EXPECT_EQ(second->resumed_from, 150000);
  EXPECT_EQ(ReadAll(Path("m.gguf")), file);
}

// A server that announces more bytes than it sends: never a complete file.
TEST_F(DownloadTest, AServerThatLiesAboutTheLengthNeverGivesAFile) {
  const std::string file = Payload(100000);
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.WriteRaw("HTTP/1.1 200 OK\r\nContent-Length: 180000\r\nConnection: close\r\n\r\n" + file);
  });
  ASSERT_TRUE(server.ok()) << server.status();
  auto r = DownloadFile((*server)->Url("/m.gguf"), Path("m.gguf"), DownloadOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status();
  EXPECT_FALSE(fs::exists(Path("m.gguf")));
  // Told less than it sends: the file is short, and its checksum refuses it.
  auto short_server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.WriteRaw("HTTP/1.1 200 OK\r\nContent-Length: 60000\r\nConnection: close\r\n\r\n" + file);
  });
  ASSERT_TRUE(short_server.ok());
  std::ofstream(Path("ref")) << file;
  DownloadOptions o;
  o.expected_sha256 = *Sha256OfFile(Path("ref"));
  auto s = DownloadFile((*short_server)->Url("/m.gguf"), Path("n.gguf"), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(s.status().message().find("checksum"), std::string::npos) << s.status();
  EXPECT_FALSE(fs::exists(Path("n.gguf")));
  EXPECT_FALSE(fs::exists(Path("n.gguf.part")));
}

TEST_F(DownloadTest, CorruptedBytesAreRefusedAndDeleted) {
  std::string file = Payload(50000);
  std::ofstream(Path("ref")) << file;
  DownloadOptions o;
  o.expected_sha256 = *Sha256OfFile(Path("ref"));
  file[25000] ^= 0x20;
  auto server = LoopbackHttpServer::Start(
      [&](const LoopbackRequest& req, LoopbackResponder& r) { ServeRanges(file, req, r); });
  ASSERT_TRUE(server.ok());
  auto r = DownloadFile((*server)->Url("/m.gguf"), Path("m.gguf"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("wrong checksum"), std::string::npos) << r.status();
  EXPECT_FALSE(fs::exists(Path("m.gguf")));
  EXPECT_FALSE(fs::exists(Path("m.gguf.part")));
}

TEST_F(DownloadTest, NotFoundVerifyAndDiskSpaceErrors) {
  const std::string file = Payload(20000);
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    if (req.target == "/missing.gguf") {
      r.Send(404, "text/plain", "no such file");
      return;
    }
    if (req.target == "/moved.gguf") {
      r.WriteRaw("HTTP/1.1 302 Found\r\nLocation: /m.gguf\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    ServeRanges(file, req, r);
  });
  ASSERT_TRUE(server.ok());
  auto missing = DownloadFile((*server)->Url("/missing.gguf"), Path("x.gguf"), DownloadOptions{});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("404"), std::string::npos);

  DownloadOptions verify;
  verify.verify = [](const std::string&) { return InvalidArgumentError("not a GGUF file"); };
  auto bad = DownloadFile((*server)->Url("/moved.gguf"), Path("y.gguf"), verify);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a GGUF file"), std::string::npos) << bad.status();
  EXPECT_FALSE(fs::exists(Path("y.gguf.part")));

  DownloadOptions huge;
  huge.free_space_margin_bytes = 1ll << 60;  // more than any disk
  auto full = DownloadFile((*server)->Url("/m.gguf"), Path("z.gguf"), huge);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted) << full.status();
  EXPECT_NE(full.status().message().find("disk space"), std::string::npos);

  auto https = DownloadFile("https://127.0.0.1/m.gguf", Path("w.gguf"), DownloadOptions{});
  EXPECT_FALSE(https.ok());

  auto redirected = DownloadFile((*server)->Url("/moved.gguf"), Path("v.gguf"), DownloadOptions{});
  ASSERT_TRUE(redirected.ok()) << redirected.status();
  EXPECT_EQ(ReadAll(Path("v.gguf")), file);
}

}  // namespace
}  // namespace hotline::net
