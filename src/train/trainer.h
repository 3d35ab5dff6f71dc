// Trainer: the training loop over encoded chat examples — seeded batch sampling, forward,
// backward, AdamW, periodic held-out evaluation, loss logging and checkpoints.
//
// Batches: step s draws `batch` training examples with a generator seeded by (seed, s), so a run
// resumed from a checkpoint at step s continues exactly as the uninterrupted run would have.
// Each batch is as long as its longest example (capped at the model's seq_len; longer examples
// are cut), padding carries no loss. Loss counts only answer tokens (see support_data.h).
//
// Ownership and threads: borrows the ComputePool; one thread calls its methods.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "train/adamw.h"
#include "train/checkpoint.h"
#include "train/support_data.h"
#include "train/transformer.h"

namespace hotline::train {

struct TrainerOptions {
  int steps = 300;  // total steps of the run (also the length of the lr schedule)
  int batch = 16;   // examples per step
  uint64_t seed = 1;
  int log_every = 10;           // steps between training-loss log lines (and curve points)
  int eval_every = 100;         // steps between held-out evaluations (0 = only at the end)
  int eval_examples = 256;      // held-out examples evaluated (the first ones, fixed)
  std::string checkpoint_path;  // "" = no checkpoints
  int checkpoint_every = 0;     // steps between checkpoints (0 = only at the end)
  AdamWConfig adam;
};

struct TrainStats {
  double seconds = 0;  // wall time of the steps run by this process
  int steps_run = 0;
  int64_t tokens = 0;         // real (non-padding) tokens processed by those steps
  int64_t padded_tokens = 0;  // B x T summed over those steps
};

class Trainer {
 public:
  using LogFn = std::function<void(const std::string& line)>;

  // A fresh run from `params` (InitParams) or a resumed one from a checkpoint.
  static Result<std::unique_ptr<Trainer>> Create(Checkpoint state, const TrainerOptions& options,
                                                 engine::ComputePool& pool);

  // Steps from the checkpoint's step up to options.steps. Examples must fit the vocabulary.
  Status Run(const std::vector<EncodedExample>& train, const std::vector<EncodedExample>& test,
             const LogFn& log);

  // Mean loss per answer token over `examples` (at most `limit`, in order).
  Result<double> Evaluate(const std::vector<EncodedExample>& examples, size_t limit);

  const Checkpoint& state() const { return state_; }
  const TrainStats& stats() const { return stats_; }

 private:
  Trainer(Checkpoint state, const TrainerOptions& options, engine::ComputePool& pool);
  Batch MakeBatch(const std::vector<EncodedExample>& examples,
                  const std::vector<size_t>& pick) const;

  Checkpoint state_;
  TrainerOptions options_;
  engine::ComputePool& pool_;
  TrainModel model_;
  AdamW adam_;
  std::vector<float> grads_;
  TrainStats stats_;
};

// The weight-decay mask of a layout: matrices decayed, 1-D gains not.
std::vector<uint8_t> DecayMask(const ParamLayout& layout);

}  // namespace hotline::train
