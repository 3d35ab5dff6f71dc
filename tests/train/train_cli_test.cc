// Runs `hotline train` as a user would (a few steps of a tiny model), then loads what it wrote:
// the Q8_0 model through `hotline engine run`, the checkpoint through --resume.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/gguf.h"

namespace hotline::train {
namespace {

namespace fs = std::filesystem;

const std::string kHotline = std::string(HOTLINE_BINARY_DIR) + "/hotline";
const std::string kCsv =
    std::string(HOTLINE_SHARED_DATA_DIR) + "/support/bitext/customer_support.csv";

struct CmdResult {
  int exit_code = -1;
  std::string out, err;
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kHotline)) << kHotline << " missing: build the `hotline` target";
    ASSERT_TRUE(fs::exists(kCsv)) << kCsv << " missing (../shared/data)";
    // One folder per process: CTest runs the tests of this file in parallel.
    dir_ = fs::path(::testing::TempDir()) / ("hotline_train_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  CmdResult Sh(const std::string& cmd) const {
    const std::string out = Path("stdout.txt"), err = Path("stderr.txt");
    const int status = std::system((cmd + " >" + out + " 2>" + err).c_str());
    CmdResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }
  fs::path dir_;
};

TEST_F(TrainCli, TrainsExportsAndResumes) {
  const std::string model = Path("m.gguf");
  const std::string tiny =
      " --dim 32 --layers 1 --heads 2 --vocab 400 --seq-len 64 --batch 4 --threads 2";
  auto r = Sh(kHotline + " train --data " + kCsv + " --out " + model + " --steps 4" + tiny);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("held-out loss"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("step 4/4 loss"), std::string::npos) << r.err;
  for (const char* f : {"m.gguf", "m.q8_0.gguf", "m.loss.svg", "m.ckpt", "m.heldout.tsv"}) {
    EXPECT_TRUE(fs::exists(Path(f))) << f;
  }
  EXPECT_EQ(Slurp(Path("m.loss.svg")).rfind("<svg", 0), 0u);
  auto q8 = engine::GgufFile::Open(Path("m.q8_0.gguf"));
  ASSERT_TRUE(q8.ok()) << q8.status();
  EXPECT_EQ((*q8)->FindTensor("blk.0.ffn_up.weight")->type, engine::GgmlType::Q8_0);
  const std::string heldout = Slurp(Path("m.heldout.tsv"));
  EXPECT_GT(std::count(heldout.begin(), heldout.end(), '\n'), 100);

  // The engine loads the quantized model with its own tokenizer and chat template.
  r = Sh(kHotline + " engine run -m " + Path("m.q8_0.gguf") +
         " --chat -p 'how do I cancel my order?' -n 8");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("prompt tokens"), std::string::npos) << r.err;

  // Resume from the checkpoint for two more steps.
  r = Sh(kHotline + " train --data " + kCsv + " --out " + Path("r.gguf") + " --resume " +
         Path("m.ckpt") + " --steps 6 --batch 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("step 6/6 loss"), std::string::npos) << r.err;
}

TEST_F(TrainCli, RefusesBadArguments) {
  EXPECT_NE(Sh(kHotline + " train --out " + Path("x.gguf")).exit_code, 0);
  auto r = Sh(kHotline + " train --data " + Path("missing.csv") + " --out " + Path("x.gguf"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing.csv"), std::string::npos) << r.err;
  r = Sh(kHotline + " train --data " + kCsv + " --out " + Path("x.gguf") + " --dim 48");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("multiples of 32"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("x.gguf")));
}

}  // namespace
}  // namespace hotline::train
