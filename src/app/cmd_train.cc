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

// The command line, checked.
struct TrainCommand {
  std::string data_path, out, stem;
  std::optional<std::string> resume;
  int steps = 300, dim = 128, layers = 4, heads = 4, kv_heads = 0, ff = 0, vocab_size = 2048;
  int seq_len = 128, batch = 16, warmup = -1, threads = 2, eval_every = -1, ckpt_every = 0;
  double lr = 3e-3, weight_decay = 0.1;
  uint64_t seed = 1;
};

// Errors are usage errors.
Result<TrainCommand> ParseTrainCommand(Args& args) {
  TrainCommand c;
  const std::optional<std::string> data_path = args.Get("--data");
  const std::optional<std::string> out = args.Get("--out");
  c.resume = args.Get("--resume");
  auto steps = args.GetInt("--steps", 300, 1, 10000000);
  auto dim = args.GetInt("--dim", 128, 8, 4096);
  auto layers = args.GetInt("--layers", 4, 1, 64);
  auto heads = args.GetInt("--heads", 4, 1, 256);
  auto kv_heads = args.GetInt("--kv-heads", 0, 0, 256);
  auto ff = args.GetInt("--ff", 0, 0, 65536);
  auto vocab_size = args.GetInt("--vocab", 2048, 300, 65536);
  auto seq_len = args.GetInt("--seq-len", 128, 16, 4096);
  auto batch = args.GetInt("--batch", 16, 1, 4096);
  auto lr = args.GetDouble("--lr", 3e-3, 1e-7, 1.0);
  auto warmup = args.GetInt("--warmup", -1, -1, 10000000);
  auto wd = args.GetDouble("--weight-decay", 0.1, 0.0, 10.0);
  auto seed = args.GetInt("--seed", 1, 0, INT64_MAX);
  auto threads = args.GetInt("--threads", 2, 1, 256);
  auto eval_every = args.GetInt("--eval-every", -1, -1, 10000000);
  auto ckpt_every = args.GetInt("--checkpoint-every", 0, 0, 10000000);
  RETURN_IF_ERROR(args.Finish());
  for (const auto* r : {&steps, &dim, &layers, &heads, &kv_heads, &ff, &vocab_size, &seq_len,
                        &batch, &warmup, &seed, &threads, &eval_every, &ckpt_every}) {
    RETURN_IF_ERROR(r->status());
  }
  RETURN_IF_ERROR(lr.status());
  RETURN_IF_ERROR(wd.status());
  if (!data_path || !out) return InvalidArgumentError("--data and --out are required");
  if (!args.positional().empty()) return InvalidArgumentError("unexpected argument");
  c.data_path = *data_path;
  c.out = *out;
  c.stem = out->ends_with(".gguf") ? out->substr(0, out->size() - 5) : *out;
  c.steps = static_cast<int>(*steps);
  c.dim = static_cast<int>(*dim);
  c.layers = static_cast<int>(*layers);
  c.heads = static_cast<int>(*heads);
  c.kv_heads = static_cast<int>(*kv_heads);
  c.ff = static_cast<int>(*ff);
  c.vocab_size = static_cast<int>(*vocab_size);
  c.seq_len = static_cast<int>(*seq_len);
  c.batch = static_cast<int>(*batch);
  c.lr = *lr;
  c.warmup = static_cast<int>(*warmup);
  c.weight_decay = *wd;
  c.seed = static_cast<uint64_t>(*seed);
  c.threads = static_cast<int>(*threads);
  c.eval_every = static_cast<int>(*eval_every);
  c.ckpt_every = static_cast<int>(*ckpt_every);
  return c;
}

// Where training starts: the checkpoint of --resume, or a new tokenizer (learnt from the training
// split only) and freshly initialized weights of the command's shape.
Result<train::Checkpoint> StartingState(const TrainCommand& c, const train::SupportData& data) {
  train::Checkpoint state;
  if (c.resume) {
    ASSIGN_OR_RETURN(state, train::LoadCheckpoint(*c.resume));
    std::cerr << "resuming " << *c.resume << " at step " << state.step << "\n";
    return state;
  }
  train::BpeTrainOptions bopt;
  bopt.vocab_size = c.vocab_size;
  bopt.chat_template = train::kChatMlTemplate;
  ASSIGN_OR_RETURN(state.vocab, train::TrainBpe(train::TokenizerCorpus(data.train), bopt));
  train::ModelShape& s = state.shape;
  s.n_vocab = static_cast<int>(state.vocab.tokens.size());
  s.dim = c.dim;
  s.n_layer = c.layers;
  s.n_head = c.heads;
  s.n_head_kv = c.kv_heads > 0 ? c.kv_heads : s.n_head;
  s.n_ff = c.ff > 0 ? c.ff : (3 * s.dim + 31) / 32 * 32;
  s.seq_len = c.seq_len;
  RETURN_IF_ERROR(s.Validate());
  state.seed = c.seed;
  state.params = train::InitParams(s, state.seed);
  return state;
}

// The training and held-out examples in the model's chat format. An example whose answer starts
// beyond the model's sequence teaches nothing (no answer token is inside the window): a
// warning names how many; none left to learn from is an error.
struct EncodedSets {
  std::vector<train::EncodedExample> train, test;
  double answer_tokens_per_example = 0;
};

Result<EncodedSets> EncodeSets(const train::Checkpoint& state, const train::SupportData& data) {
  ASSIGN_OR_RETURN(auto vocab, engine::Vocabulary::Create(state.vocab));
  ASSIGN_OR_RETURN(auto tokenizer, engine::Tokenizer::Create(vocab));
  EncodedSets sets;
  int64_t answer_tokens = 0;
  for (const auto& [src, dst] : {std::pair{&data.train, &sets.train}, {&data.test, &sets.test}}) {
    for (const train::SupportExample& e : *src) {
      ASSIGN_OR_RETURN(train::EncodedExample enc, train::EncodeChat(*tokenizer, e));
      answer_tokens += int64_t(enc.tokens.size()) - enc.prompt_tokens;
      dst->push_back(std::move(enc));
    }
  }
  sets.answer_tokens_per_example =
      double(answer_tokens) / double(sets.train.size() + sets.test.size());
  size_t beyond = 0;
  for (const train::EncodedExample& e : sets.train)
    beyond += e.prompt_tokens >= state.shape.seq_len;
  if (beyond == sets.train.size()) {
    return InvalidArgumentError("every training example's answer starts beyond the model's " +
                                std::to_string(state.shape.seq_len) +
                                "-token sequence, so nothing would be learnt: raise --seq-len");
  }
  if (beyond > 0) {
    std::cerr << "warning: " << beyond << " of " << sets.train.size()
              << " training examples' answers start beyond the " << state.shape.seq_len
              << "-token sequence and teach nothing (raise --seq-len)\n";
  }
  return sets;
}

// The F32 and Q8_0 models, the loss curve and the held-out questions beside them.
Status WriteOutputs(const TrainCommand& c, const train::Checkpoint& done,
                    const train::SupportData& data, engine::ComputePool& pool) {
  RETURN_IF_ERROR(
      train::ExportGgufF32(done.shape, done.params, done.vocab, "hotline-demo-agent", c.out));
  RETURN_IF_ERROR(train::ExportGgufQ8(c.out, c.stem + ".q8_0.gguf", pool));
  const std::string svg_path = c.stem + ".loss.svg";
  {
    std::ofstream svg(svg_path);
    svg << train::LossCurveSvg(done.train_loss, done.eval_loss,
                               "hotline train: " + std::to_string(done.step) + " steps");
    if (!svg) return InternalError("cannot write " + svg_path);
  }
  const std::string heldout_path = c.stem + ".heldout.tsv";
  // Tabs and line breaks inside a field become spaces, so every line is one example.
  auto field = [](std::string v) {
    for (char& ch : v) {
      if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
    }
    return v;
  };
  std::ofstream tsv(heldout_path);
  tsv << "question\tintent\tanswer\n";
  for (const train::SupportExample& e : data.test) {
    tsv << field(e.question) << '\t' << field(e.intent) << '\t' << field(e.answer) << '\n';
  }
  if (!tsv) return InternalError("cannot write " + heldout_path);
  return Status::Ok();
}

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
  auto command = ParseTrainCommand(*args);
  if (!command.ok()) return UsageError(command.status().message(), kUsage);
  const TrainCommand& c = *command;
  auto log = [](const std::string& line) { std::cerr << line << "\n"; };

  auto csv = train::ReadTextFile(c.data_path);
  if (!csv.ok()) return Fail(csv.status());
  train::SupportDataOptions dopt;
  auto data = train::BuildSupportData(*csv, dopt);
  if (!data.ok()) return Fail(data.status());
  std::cerr << "data: " << data->train.size() << " training and " << data->test.size()
            << " held-out questions\n";
  auto state = StartingState(c, *data);
  if (!state.ok()) return Fail(state.status());
  // Checked before training rather than at export: Q8_0 rows are blocks of 32 values.
  if (state->shape.dim % 32 != 0 || state->shape.n_ff % 32 != 0) {
    return UsageError("--dim and --ff must be multiples of 32 for the Q8_0 export", kUsage);
  }
  auto sets = EncodeSets(*state, *data);
  if (!sets.ok()) return Fail(sets.status());
  const train::ModelShape& s = state->shape;
  std::cerr << "model: llama dim " << s.dim << ", layers " << s.n_layer << ", heads " << s.n_head
            << "/" << s.n_head_kv << ", ff " << s.n_ff << ", vocab " << s.n_vocab << ", seq "
            << s.seq_len << ", " << train::ParamLayout(s).total() << " parameters; "
            << sets->answer_tokens_per_example << " answer tokens per example\n";

  train::TrainerOptions topt;
  topt.steps = c.steps;
  topt.batch = c.batch;
  topt.seed = state->seed;
  topt.eval_every = c.eval_every >= 0 ? c.eval_every : std::max(1, topt.steps / 5);
  topt.checkpoint_path = c.stem + ".ckpt";
  topt.checkpoint_every = c.ckpt_every;
  topt.adam.lr = static_cast<float>(c.lr);
  topt.adam.weight_decay = static_cast<float>(c.weight_decay);
  topt.adam.total_steps = topt.steps;
  topt.adam.warmup_steps = c.warmup >= 0 ? c.warmup : topt.steps / 20;
  topt.log_every = std::max(1, std::min(10, topt.steps / 50));

  engine::ComputePool pool(c.threads);
  auto trainer = train::Trainer::Create(std::move(*state), topt, pool);
  if (!trainer.ok()) return Fail(trainer.status());
  if (Status st = (*trainer)->Run(sets->train, sets->test, log); !st.ok()) return Fail(st);
  const train::Checkpoint& done = (*trainer)->state();
  const train::TrainStats& stats = (*trainer)->stats();
  auto train_loss = (*trainer)->Evaluate(sets->train, 512);
  if (!train_loss.ok()) return Fail(train_loss.status());
  const double held_out = done.eval_loss.empty() ? 0.0 : done.eval_loss.back().loss;
  if (Status st = WriteOutputs(c, done, *data, pool); !st.ok()) return Fail(st);

  char buf[512];
  std::snprintf(buf, sizeof buf,
                "done: %d steps in %.1f s (%.2f steps/s, %.0f tokens/s, %.0f padded tokens/s)\n"
                "train loss %.4f (first 512 training examples), held-out loss %.4f (%zu "
                "questions)\n",
                stats.steps_run, stats.seconds, stats.steps_run / std::max(1e-9, stats.seconds),
                double(stats.tokens) / std::max(1e-9, stats.seconds),
                double(stats.padded_tokens) / std::max(1e-9, stats.seconds), *train_loss, held_out,
                std::min<size_t>(sets->test.size(), size_t(topt.eval_examples)));
  std::cout << buf << "wrote " << c.out << ", " << c.stem << ".q8_0.gguf, " << c.stem
            << ".loss.svg, " << topt.checkpoint_path << ", " << c.stem << ".heldout.tsv\n";
  return 0;
}

const CommandRegistrar kTrain({"train", "train the demo support-agent model on the Bitext corpus",
                               kUsage, RunTrain});

}  // namespace
}  // namespace hotline::cli
