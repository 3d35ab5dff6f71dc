// `hotline model pull` and `hotline model list` against a loopback HTTP server serving a real
// GGUF model (made by `hotline engine gen-random`), and `hotline kb lint` on the shipped and a
// broken knowledge base. Runs the binary: build `hotline` first.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "net/download.h"
#include "common/build_paths.h"
#include "net/testing/loopback_http_server.h"
#include "run_hotline.h"

namespace hotline {
namespace {

using e2e::RunHotline;
using net::testing::LoopbackHttpServer;
using net::testing::LoopbackRequest;
using net::testing::LoopbackResponder;
namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void ServeRanges(const std::string& file, const LoopbackRequest& req, LoopbackResponder& r) {
  const std::string range = req.Header("Range");
  if (range.rfind("bytes=", 0) == 0) {
    const size_t from = std::stoul(range.substr(6));
    r.WriteRaw(
        "HTTP/1.1 206 Partial Content\r\nContent-Length: " + std::to_string(file.size() - from) +
        "\r\nContent-Range: bytes " + std::to_string(from) + "-" + std::to_string(file.size() - 1) +
        "/" + std::to_string(file.size()) + "\r\nConnection: close\r\n\r\n" + file.substr(from));
    return;
  }
  r.Send(200, "application/octet-stream", file);
}

class ModelPullCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hotline_model_pull_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ModelPullCli, ResumesAnInterruptedDownloadAndListsTheModel) {
  const std::string model = (dir_ / "source.gguf").string();
  auto made = RunHotline("engine gen-random --arch qwen2 --shape tiny --type q8_0 -o " + model);
  ASSERT_EQ(made.exit_code, 0) << made.all();
  const std::string file = ReadAll(model);
  ASSERT_GT(file.size(), 100000u);
  auto sha = net::Sha256OfFile(model);
  ASSERT_TRUE(sha.ok());
  std::atomic<int> calls{0};
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    if (calls++ == 0) {  // the first connection drops halfway
      r.WriteRaw("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(file.size()) +
                 "\r\nConnection: close\r\n\r\n" + file.substr(0, file.size() / 2));
      return;
    }
    ServeRanges(file, req, r);
  });
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string models = (dir_ / "models").string();
  const std::string pull =
      "model pull " + (*server)->Url("/tiny-qwen2.gguf") + " --dir " + models + " --sha256 " + *sha;
  auto first = RunHotline(pull);
  EXPECT_NE(first.exit_code, 0);
  EXPECT_NE(first.err.find("run the same command again to resume"), std::string::npos)
      << first.all();
  auto listed_part = RunHotline("model list --dir " + models);
  EXPECT_NE(listed_part.out.find("tiny-qwen2.gguf.part"), std::string::npos) << listed_part.all();
  auto second = RunHotline(pull);
  ASSERT_EQ(second.exit_code, 0) << second.all();
  EXPECT_NE(second.out.find("resumed from"), std::string::npos) << second.all();
  EXPECT_NE(second.out.find(*sha), std::string::npos);
  EXPECT_EQ(ReadAll(models + "/tiny-qwen2.gguf"), file);
  auto list = RunHotline("model list --dir " + models);
  ASSERT_EQ(list.exit_code, 0) << list.all();
  EXPECT_NE(list.out.find("tiny-qwen2.gguf"), std::string::npos);
  EXPECT_NE(list.out.find("qwen2"), std::string::npos);
  EXPECT_NE(list.out.find("qwen2.5-0.5b"), std::string::npos);  // the presets
}

TEST_F(ModelPullCli, RefusesWhatIsNotAGgufAndEveryFailureSaysWhy) {
  const std::string junk(200000, 'x');
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    if (req.target == "/missing.gguf") {
      r.Send(404, "text/plain", "not here");
      return;
    }
    ServeRanges(junk, req, r);
  });
  ASSERT_TRUE(server.ok());
  const std::string models = (dir_ / "models").string();
  auto junk_pull = RunHotline("model pull " + (*server)->Url("/junk.gguf") + " --dir " + models);
  EXPECT_NE(junk_pull.exit_code, 0);
  EXPECT_NE(junk_pull.err.find("not a GGUF"), std::string::npos) << junk_pull.all();
  EXPECT_FALSE(fs::exists(models + "/junk.gguf"));
  EXPECT_FALSE(fs::exists(models + "/junk.gguf.part"));
  auto missing = RunHotline("model pull " + (*server)->Url("/missing.gguf") + " --dir " + models);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("404"), std::string::npos) << missing.all();
  auto wrong_sum = RunHotline("model pull " + (*server)->Url("/junk2.gguf") + " --dir " + models +
                              " --sha256 " + std::string(64, '0'));
  EXPECT_NE(wrong_sum.exit_code, 0);
  EXPECT_NE(wrong_sum.err.find("wrong checksum"), std::string::npos) << wrong_sum.all();
  auto unknown = RunHotline("model pull no-such-model --dir " + models);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("qwen2.5-0.5b"), std::string::npos) << unknown.all();
  // https:// goes through TLS (net/https_test.cc); nothing listens here, and the error says so.
  auto https = RunHotline("model pull https://127.0.0.1:1/m.gguf --dir " + models);
  EXPECT_NE(https.exit_code, 0);
  EXPECT_NE(https.err.find("connecting"), std::string::npos) << https.all();
}

TEST(KbLintCli, ShippedKnowledgeBasePassesABrokenOneFailsWithLines) {
  auto ok = RunHotline("kb lint " + std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv");
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
  const std::string bad =
      (fs::temp_directory_path() / ("hotline_kb_lint_" + std::to_string(::getpid()) + ".csv"))
          .string();
  std::ofstream(bad) << "id,title,body\n"
                        "a,A,\"We are committed to helping you successfully cancel your order.\"\n"
                        "b,B,\"Log in at https://shop.example and open {{Order Page}}.\"\n";
  auto r = RunHotline("kb lint " + bad);
  fs::remove(bad);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find(":2: a: filler"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(":3: b: placeholder"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace hotline
