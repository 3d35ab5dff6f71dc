// `hotline train --data CSV --out MODEL.gguf [--steps N] [--dim D --layers L --heads H ...]`
// Trains the demo support-agent model on the Bitext corpus: a byte-level BPE tokenizer, then a
// small llama-architecture model on (caller question -> voice-length answer) chat examples.
// Writes MODEL.gguf (F32), MODEL.q8_0.gguf (Q8_0 matrices), MODEL.loss.svg and a checkpoint
// MODEL.ckpt (resumable with --resume), and the held-out questions as MODEL.heldout.tsv.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli.h"
#include "engine/compute_pool.h"
#include "engine/tokenizer.h"
#include "train/bpe_trainer.h"
#include "train/checkpoint.h"
#include "train/export.h"
#include "train/loss_plot.h"
#include "train/support_data.h"
#include "train/trainer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline train --data CSV --out MODEL.gguf [--steps N] [options]\n"
    "  Trains a small support-agent model on the Bitext customer-support corpus and writes\n"
    "  MODEL.gguf (F32), MODEL.q8_0.gguf (Q8_0), MODEL.loss.svg, the checkpoint MODEL.ckpt and\n"
    "  MODEL.heldout.tsv (held-out question, intent, reference answer per line).\n"
    "  --data CSV          Bitext customer_support.csv\n"
    "  --out FILE          output model (F32 GGUF)\n"
    "  --steps N           training steps (default 300)\n"
    "  --dim D             embedding width (default 128; a multiple of 32 for Q8_0)\n"
    "  --layers L          transformer blocks (default 4)\n"
    "  --heads H           attention heads (default 4)\n"
    "  --kv-heads K        key/value heads (default: heads)\n"
    "  --ff F              feed-forward width (default 3 * dim, rounded to 32)\n"
    "  --vocab V           tokenizer vocabulary size (default 2048)\n"
    "  --seq-len T         context length (default 128)\n"
    "  --batch B           examples per step (default 16)\n"
    "  --lr LR             peak learning rate (default 3e-3)\n"
    "  --warmup N          warmup steps (default steps / 20)\n"
    "  --weight-decay W    AdamW weight decay of matrices (default 0.1)\n"
    "  --seed S            seed of weights, batches and split (default 1)\n"
    "  --threads T         compute threads (default 2)\n"
    "  --eval-every N      steps between held-out evaluations (default steps / 5)\n"
    "  --checkpoint-every N  steps between checkpoints (default: at the end only)\n"
    "  --resume CKPT       continue a run from a checkpoint (shape and tokenizer from the file)\n";

int RunTrain(std::span<const std::string> argv) {
  auto args = Args::Parse(
      argv, {"--data", "--out", "--steps", "--dim", "--layers", "--heads", "--kv-heads", "--ff",
             "--vocab", "--seq-len", "--batch", "--lr", "--warmup", "--weight-decay", "--seed",
             "--threads", "--eval-every", "--checkpoint-every", "--resume"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  const std::optional<std::string> data_path = args->Get("--data");
  const std::optional<std::string> out = args->Get("--out");
  const std::optional<std::string> resume = args->Get("--resume");
  auto steps = args->GetInt("--steps", 300, 1, 10000000);
  auto dim = args->GetInt("--dim", 128, 8, 4096);
  auto layers = args->GetInt("--layers", 4, 1, 64);
  auto heads = args->GetInt("--heads", 4, 1, 256);
  auto kv_heads = args->GetInt("--kv-heads", 0, 0, 256);
  auto ff = args->GetInt("--ff", 0, 0, 65536);
  auto vocab_size = args->GetInt("--vocab", 2048, 300, 65536);
  auto seq_len = args->GetInt("--seq-len", 128, 16, 4096);
  auto batch = args->GetInt("--batch", 16, 1, 4096);
  auto lr = args->GetDouble("--lr", 3e-3, 1e-7, 1.0);
  auto warmup = args->GetInt("--warmup", -1, -1, 10000000);
  auto wd = args->GetDouble("--weight-decay", 0.1, 0.0, 10.0);
  auto seed = args->GetInt("--seed", 1, 0, INT64_MAX);
  auto threads = args->GetInt("--threads", 2, 1, 256);
  auto eval_every = args->GetInt("--eval-every", -1, -1, 10000000);
  auto ckpt_every = args->GetInt("--checkpoint-every", 0, 0, 10000000);
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  for (const auto* r : {&steps, &dim, &layers, &heads, &kv_heads, &ff, &vocab_size, &seq_len,
                        &batch, &warmup, &seed, &threads, &eval_every, &ckpt_every}) {
    if (!r->ok()) return UsageError(r->status().message(), kUsage);
  }
  if (!lr.ok()) return UsageError(lr.status().message(), kUsage);
  if (!wd.ok()) return UsageError(wd.status().message(), kUsage);
  if (!data_path || !out) return UsageError("--data and --out are required", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  const std::string stem = out->ends_with(".gguf") ? out->substr(0, out->size() - 5) : *out;
  auto log = [](const std::string& line) { std::cerr << line << "\n"; };

  auto csv = train::ReadTextFile(*data_path);
  if (!csv.ok()) return Fail(csv.status());
  train::SupportDataOptions dopt;
  auto data = train::BuildSupportData(*csv, dopt);
  if (!data.ok()) return Fail(data.status());
  std::cerr << "data: " << data->train.size() << " training and " << data->test.size()
            << " held-out questions\n";

  train::Checkpoint state;
  if (resume) {
    auto c = train::LoadCheckpoint(*resume);
    if (!c.ok()) return Fail(c.status());
    state = std::move(*c);
    std::cerr << "resuming " << *resume << " at step " << state.step << "\n";
  } else {
    train::BpeTrainOptions bopt;
    bopt.vocab_size = static_cast<int>(*vocab_size);
    bopt.chat_template = train::kChatMlTemplate;
    // The tokenizer learns from the training split only.
    auto vocab = train::TrainBpe(train::TokenizerCorpus(data->train), bopt);
    if (!vocab.ok()) return Fail(vocab.status());
    state.vocab = std::move(*vocab);
    train::ModelShape& s = state.shape;
    s.n_vocab = static_cast<int>(state.vocab.tokens.size());
    s.dim = static_cast<int>(*dim);
    s.n_layer = static_cast<int>(*layers);
    s.n_head = static_cast<int>(*heads);
    s.n_head_kv = *kv_heads > 0 ? static_cast<int>(*kv_heads) : s.n_head;
    s.n_ff = *ff > 0 ? static_cast<int>(*ff) : (3 * s.dim + 31) / 32 * 32;
    s.seq_len = static_cast<int>(*seq_len);
    if (Status st = s.Validate(); !st.ok()) return Fail(st);
    state.seed = static_cast<uint64_t>(*seed);
    state.params = train::InitParams(s, state.seed);
  }
  // Checked before training rather than at export: Q8_0 rows are blocks of 32 values.
  if (state.shape.dim % 32 != 0 || state.shape.n_ff % 32 != 0) {
    return UsageError("--dim and --ff must be multiples of 32 for the Q8_0 export", kUsage);
  }
  auto vocab = engine::Vocabulary::Create(state.vocab);
  if (!vocab.ok()) return Fail(vocab.status());
  auto tokenizer = engine::Tokenizer::Create(*vocab);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  std::vector<train::EncodedExample> train_set, test_set;
  int64_t answer_tokens = 0;
  for (const auto& [src, dst] : {std::pair{&data->train, &train_set}, {&data->test, &test_set}}) {
    for (const train::SupportExample& e : *src) {
      auto enc = train::EncodeChat(**tokenizer, e);
      if (!enc.ok()) return Fail(enc.status());
      answer_tokens += int64_t(enc->tokens.size()) - enc->prompt_tokens;
      dst->push_back(std::move(*enc));
    }
  }
  const train::ModelShape& s = state.shape;
  std::cerr << "model: llama dim " << s.dim << ", layers " << s.n_layer << ", heads " << s.n_head
            << "/" << s.n_head_kv << ", ff " << s.n_ff << ", vocab " << s.n_vocab << ", seq "
            << s.seq_len << ", " << train::ParamLayout(s).total() << " parameters; "
            << double(answer_tokens) / double(train_set.size() + test_set.size())
            << " answer tokens per example\n";

  train::TrainerOptions topt;
  topt.steps = static_cast<int>(*steps);
  topt.batch = static_cast<int>(*batch);
  topt.seed = state.seed;
  topt.eval_every = *eval_every >= 0 ? static_cast<int>(*eval_every) : std::max(1, topt.steps / 5);
  topt.checkpoint_path = stem + ".ckpt";
  topt.checkpoint_every = static_cast<int>(*ckpt_every);
  topt.adam.lr = static_cast<float>(*lr);
  topt.adam.weight_decay = static_cast<float>(*wd);
  topt.adam.total_steps = topt.steps;
  topt.adam.warmup_steps = *warmup >= 0 ? static_cast<int>(*warmup) : topt.steps / 20;
  topt.log_every = std::max(1, std::min(10, topt.steps / 50));

  engine::ComputePool pool(static_cast<int>(*threads));
  auto trainer = train::Trainer::Create(std::move(state), topt, pool);
  if (!trainer.ok()) return Fail(trainer.status());
  if (Status st = (*trainer)->Run(train_set, test_set, log); !st.ok()) return Fail(st);
  const train::Checkpoint& done = (*trainer)->state();
  const train::TrainStats& stats = (*trainer)->stats();

  auto train_loss = (*trainer)->Evaluate(train_set, 512);
  if (!train_loss.ok()) return Fail(train_loss.status());
  const double held_out = done.eval_loss.empty() ? 0.0 : done.eval_loss.back().loss;

  if (Status st =
          train::ExportGgufF32(done.shape, done.params, done.vocab, "hotline-demo-agent", *out);
      !st.ok()) {
    return Fail(st);
  }
  const std::string q8 = stem + ".q8_0.gguf";
  if (Status st = train::ExportGgufQ8(*out, q8, pool); !st.ok()) return Fail(st);
  const std::string svg_path = stem + ".loss.svg";
  {
    std::ofstream svg(svg_path);
    svg << train::LossCurveSvg(done.train_loss, done.eval_loss,
                               "hotline train: " + std::to_string(done.step) + " steps");
    if (!svg) return Fail("cannot write " + svg_path);
  }
  const std::string heldout_path = stem + ".heldout.tsv";
  {
    // Tabs and line breaks inside a field become spaces, so every line is one example.
    auto field = [](std::string v) {
      for (char& c : v) {
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
      }
      return v;
    };
    std::ofstream tsv(heldout_path);
    tsv << "question\tintent\tanswer\n";
    for (const train::SupportExample& e : data->test) {
      tsv << field(e.question) << '\t' << field(e.intent) << '\t' << field(e.answer) << '\n';
    }
    if (!tsv) return Fail("cannot write " + heldout_path);
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "done: %d steps in %.1f s (%.2f steps/s, %.0f tokens/s, %.0f padded tokens/s)\n"
                "train loss %.4f (first 512 training examples), held-out loss %.4f (%zu "
                "questions)\n",
                stats.steps_run, stats.seconds, stats.steps_run / std::max(1e-9, stats.seconds),
                double(stats.tokens) / std::max(1e-9, stats.seconds),
                double(stats.padded_tokens) / std::max(1e-9, stats.seconds), *train_loss, held_out,
                std::min<size_t>(test_set.size(), size_t(topt.eval_examples)));
  std::cout << buf << "wrote " << *out << ", " << q8 << ", " << svg_path << ", "
            << topt.checkpoint_path << ", " << heldout_path << "\n";
  return 0;
}

const CommandRegistrar kTrain({"train", "train the demo support-agent model on the Bitext corpus",
                               kUsage, RunTrain});

}  // namespace
}  // namespace hotline::cli
