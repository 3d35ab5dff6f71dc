// Runs `hotline train` as a user would (a few steps of a tiny model), then loads what it wrote:
// the Q8_0 model through `hotline engine run`, the checkpoint through --resume; and
// `hotline train eval` on a tiny model trained for seconds on three intents of the corpus.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "answer/kb/kb_csv.h"
#include "common/build_paths.h"
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
      " --dim 32 --layers 1 --heads 2 --vocab 400 --seq-len 256 --batch 4 --threads 2";
  auto r = Sh(kHotline + " train --data " + kCsv + " --out " + model + " --steps 4" + tiny);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // An untrained model's loss on the answers: about ln(vocabulary), far from 0.
  const size_t at = r.out.find("held-out loss ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_GT(std::stod(r.out.substr(at + 14)), 3.0) << r.out;
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
  // A sequence too short for any answer to start inside it would train on nothing.
  r = Sh(kHotline + " train --data " + kCsv + " --out " + Path("x.gguf") +
         " --dim 32 --layers 1 --heads 2 --vocab 400 --seq-len 64 --steps 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("raise --seq-len"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("x.gguf")));
}

// Three intents of the corpus, every field quoted: a data set a tiny model learns in seconds.
std::string CorpusSubset(const std::vector<std::string>& intents, int per_intent) {
  const std::string text = Slurp(kCsv);
  answer::CsvReader reader(text);
  answer::CsvRecord rec;
  auto quote = [](const std::string& f) {
    std::string q = "\"";
    for (char c : f) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out;
  size_t intent_col = 0;
  std::map<std::string, int> taken;
  for (int row = 0;; ++row) {
    auto more = reader.Next(rec);
    if (!more.ok() || !*more) break;
    if (row == 0) {
      intent_col = size_t(std::find(rec.fields.begin(), rec.fields.end(), "intent") -
                          rec.fields.begin());
    } else if (intent_col >= rec.fields.size() ||
               std::find(intents.begin(), intents.end(), rec.fields[intent_col]) ==
                   intents.end() ||
               taken[rec.fields[intent_col]]++ >= per_intent) {
      continue;
    }
    for (size_t i = 0; i < rec.fields.size(); ++i) out += (i ? "," : "") + quote(rec.fields[i]);
    out += "\n";
  }
  return out;
}

TEST_F(TrainCli, EvalScoresATrainedModelFarAboveAnUntrainedOne) {
  {
    std::ofstream f(Path("sub.csv"));
    f << CorpusSubset({"cancel_order", "track_order", "check_payment_methods"}, 150);
  }
  // The judges' knowledge base from the same rows.
  auto r = Sh(kHotline + " kb bitext --in " + Path("sub.csv") + " --out " + Path("kb.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string tiny =
      " --dim 32 --layers 1 --heads 2 --vocab 400 --seq-len 256 --batch 16 --lr 1e-2 "
      "--eval-every 1000 --threads 2";
  auto evaluate = [&](const std::string& name, int steps) {
    auto t = Sh(kHotline + " train --data " + Path("sub.csv") + " --out " + Path(name + ".gguf") +
                " --steps " + std::to_string(steps) + tiny);
    EXPECT_EQ(t.exit_code, 0) << t.err;
    auto e = Sh(kHotline + " train eval --model " + Path(name + ".q8_0.gguf") + " --heldout " +
                Path(name + ".heldout.tsv") + " --kb " + Path("kb.csv") +
                " --max-tokens 96 --threads 2 --json -o " + Path(name + ".json"));
    EXPECT_EQ(e.exit_code, 0) << e.err;
    EXPECT_EQ(Slurp(Path(name + ".json")), e.out);
    return nlohmann::json::parse(e.out, nullptr, /*allow_exceptions=*/false);
  };
  const nlohmann::json trained = evaluate("trained", 80);
  const nlohmann::json untrained = evaluate("untrained", 1);
  ASSERT_TRUE(trained.is_object());
  ASSERT_TRUE(untrained.is_object());

  // The report's figures are the items' own: recomputed here from every answer.
  for (const nlohmann::json* j : {&trained, &untrained}) {
    const auto& items = (*j)["items"];
    ASSERT_EQ(items.size(), (*j)["examples"].get<size_t>());
    ASSERT_GE(items.size(), 20u);
    double rouge = 0;
    size_t kb_ok = 0, exact = 0, loops = 0;
    for (const auto& it : items) {
      rouge += it["rouge_l_f1"].get<double>();
      kb_ok += it["kb_intent"] == it["intent"];
      exact += it["exact"].get<bool>();
      EXPECT_EQ(it["exact"].get<bool>(), it["answer"] == it["reference"]);
      loops += !it["repeated_ngram"].get<std::string>().empty() || it["hit_max_tokens"].get<bool>();
    }
    const double n = double(items.size());
    EXPECT_NEAR((*j)["rouge_l_f1_mean"].get<double>(), rouge / n, 1e-9);
    EXPECT_NEAR((*j)["intent_accuracy_kb_answer"].get<double>(), kb_ok / n, 1e-9);
    EXPECT_NEAR((*j)["exact_match"].get<double>(), exact / n, 1e-9);
    EXPECT_EQ((*j)["loops"].get<size_t>(), loops);
    // The judge recognizes every reference answer of these three intents.
    EXPECT_EQ((*j)["reference_intent_accuracy_kb_answer"].get<double>(), 1.0);
  }
  // Trained for seconds, the model answers on the right intent, close to the reference, without
  // looping; the untrained one does not.
  EXPECT_GE(trained["intent_accuracy_kb_answer"].get<double>(), 0.9) << trained.dump(1);
  EXPECT_GE(trained["rouge_l_f1_mean"].get<double>(), 0.7);
  EXPECT_EQ(trained["loops"].get<size_t>(), 0u);
  EXPECT_EQ(trained["errors"].get<size_t>(), 0u);
  EXPECT_LE(untrained["rouge_l_f1_mean"].get<double>(), 0.3) << untrained.dump(1);
  EXPECT_LE(untrained["intent_accuracy_kb_answer"].get<double>(),
            trained["intent_accuracy_kb_answer"].get<double>() - 0.3);

  // The text report and argument errors.
  r = Sh(kHotline + " train eval --model " + Path("trained.q8_0.gguf") + " --heldout " +
         Path("trained.heldout.tsv") + " --kb " + Path("kb.csv") + " --limit 5 --max-tokens 96");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("5 held-out questions"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ROUGE-L F1: mean"), std::string::npos) << r.out;
  r = Sh(kHotline + " train eval --model " + Path("trained.q8_0.gguf") + " --heldout " +
         Path("sub.csv"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("header"), std::string::npos) << r.err;
  EXPECT_NE(Sh(kHotline + " train eval --model " + Path("trained.q8_0.gguf")).exit_code, 0);
}

}  // namespace
}  // namespace hotline::train
