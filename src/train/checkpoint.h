// Training checkpoints: everything needed to resume a run bit-for-bit — shape, tokenizer,
// parameters, AdamW moments, the step reached, the seed and the loss history.
//
// A checkpoint is a GGUF file: the model exactly as train/export.h writes it (so it is also a
// loadable F32 model), plus 1-D tensors `train.adam_m` / `train.adam_v` and `hotline.train.*`
// metadata. Written to PATH.tmp and renamed, so a crash never leaves a torn checkpoint.
//
// Loading validates every tensor's presence, type and size against the shape read from the file.
// Thread-safety: pure functions; blocking file I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/vocab.h"
#include "train/transformer.h"

namespace hotline::train {

struct LossPoint {
  int step = 0;
  double loss = 0;
};

struct Checkpoint {
  ModelShape shape;
  engine::VocabData vocab;
  std::vector<float> params, adam_m, adam_v;
  int step = 0;  // steps completed
  uint64_t seed = 0;
  std::vector<LossPoint> train_loss, eval_loss;
};

Status SaveCheckpoint(const Checkpoint& c, const std::string& path);
Result<Checkpoint> LoadCheckpoint(const std::string& path);

}  // namespace hotline::train
