#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

namespace hotline::train {

std::vector<uint8_t> DecayMask(const ParamLayout& layout) {
  std::vector<uint8_t> mask(layout.total(), 0);
  for (const TensorSlice& t : layout.tensors()) {
    if (t.dims.size() == 2)
      std::fill(mask.begin() + long(t.offset), mask.begin() + long(t.offset + t.size), 1);
  }
  return mask;
}

Trainer::Trainer(Checkpoint state, const TrainerOptions& options, engine::ComputePool& pool)
    : state_(std::move(state)),
      options_(options),
      pool_(pool),
      model_(state_.shape, pool),
      adam_(options.adam, DecayMask(model_.layout())),
      grads_(model_.layout().total()) {}

Result<std::unique_ptr<Trainer>> Trainer::Create(Checkpoint state, const TrainerOptions& options,
                                                 engine::ComputePool& pool) {
  RETURN_IF_ERROR(state.shape.Validate());
  RETURN_IF_ERROR(options.adam.Validate());
  if (options.steps < 1 || options.batch < 1 || options.batch > 4096) {
    return InvalidArgumentError("steps must be >= 1 and batch in [1, 4096]");
  }
  const size_t n = ParamLayout(state.shape).total();
  if (state.params.size() != n) return InvalidArgumentError("parameters do not match the shape");
  if (state.adam_m.empty()) state.adam_m.assign(n, 0.0f);
  if (state.adam_v.empty()) state.adam_v.assign(n, 0.0f);
  if (state.adam_m.size() != n || state.adam_v.size() != n) {
    return InvalidArgumentError("optimizer state does not match the shape");
  }
  auto t = std::unique_ptr<Trainer>(new Trainer(std::move(state), options, pool));
  t->adam_.m() = t->state_.adam_m;
  t->adam_.v() = t->state_.adam_v;
  return t;
}

Batch Trainer::MakeBatch(const std::vector<EncodedExample>& examples,
                         const std::vector<size_t>& pick) const {
  const int cap = state_.shape.seq_len;
  int T = 1;
  for (size_t i : pick) {
    T = std::max(T, std::min(cap, static_cast<int>(examples[i].tokens.size()) - 1));
  }
  Batch b;
  b.B = static_cast<int>(pick.size());
  b.T = T;
  const size_t N = size_t(b.B) * T;
  b.tokens.assign(N, 0);
  b.targets.assign(N, 0);
  b.weights.assign(N, 0.0f);
  for (size_t r = 0; r < pick.size(); ++r) {
    const EncodedExample& e = examples[pick[r]];
    const int len = std::min(T, static_cast<int>(e.tokens.size()) - 1);
    for (int t = 0; t < len; ++t) {
      const size_t j = r * size_t(T) + size_t(t);
      b.tokens[j] = e.tokens[size_t(t)];
      b.targets[j] = e.tokens[size_t(t) + 1];
      // Position t predicts token t+1: loss only where that token belongs to the answer.
      b.weights[j] = t + 1 >= e.prompt_tokens ? 1.0f : 0.0f;
    }
  }
  return b;
}

Result<double> Trainer::Evaluate(const std::vector<EncodedExample>& examples, size_t limit) {
  const size_t n = std::min(limit, examples.size());
  double sum = 0, weight = 0;
  for (size_t i = 0; i < n; i += size_t(options_.batch)) {
    std::vector<size_t> pick;
    for (size_t j = i; j < std::min(n, i + size_t(options_.batch)); ++j) pick.push_back(j);
    const Batch b = MakeBatch(examples, pick);
    ASSIGN_OR_RETURN(double loss, model_.Forward(state_.params, b));
    double w = 0;
    for (float x : b.weights) w += x;
    sum += loss * w;
    weight += w;
  }
  return weight > 0 ? sum / weight : 0.0;
}

Status Trainer::Run(const std::vector<EncodedExample>& train,
                    const std::vector<EncodedExample>& test, const LogFn& log) {
  if (train.empty()) return InvalidArgumentError("no training examples");
  for (const auto* set : {&train, &test}) {
    for (const EncodedExample& e : *set) {
      if (e.tokens.size() < 2) return InvalidArgumentError("an example has fewer than 2 tokens");
      for (int32_t t : e.tokens) {
        if (t < 0 || t >= state_.shape.n_vocab) {
          return InvalidArgumentError("an example has a token outside the vocabulary");
        }
      }
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double window_loss = 0;
  int window_steps = 0;
  auto save = [&]() -> Status {
    if (options_.checkpoint_path.empty()) return Status::Ok();
    state_.adam_m = adam_.m();
    state_.adam_v = adam_.v();
    return SaveCheckpoint(state_, options_.checkpoint_path);
  };
  double eval_seconds = 0;  // kept out of the throughput figures
  auto evaluate = [&]() -> Status {
    if (test.empty()) return Status::Ok();
    const auto t0 = Clock::now();
    ASSIGN_OR_RETURN(double loss, Evaluate(test, size_t(options_.eval_examples)));
    state_.eval_loss.push_back({state_.step, loss});
    eval_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    char buf[128];
    std::snprintf(buf, sizeof buf, "step %d held-out loss %.4f", state_.step, loss);
    log(buf);
    return Status::Ok();
  };
  if (state_.step == 0 && state_.eval_loss.empty()) RETURN_IF_ERROR(evaluate());
  while (state_.step < options_.steps) {
    const int step = state_.step;
    std::mt19937_64 rng(state_.seed * 0xD1B54A32D192ED03ULL + uint64_t(step) + 1);
    std::vector<size_t> pick(size_t(options_.batch));
    for (size_t& p : pick) p = size_t(rng() % train.size());
    const Batch b = MakeBatch(train, pick);
    ASSIGN_OR_RETURN(double loss, model_.Forward(state_.params, b));
    if (!std::isfinite(loss)) {
      return InternalError("training loss is not finite at step " + std::to_string(step) +
                           "; lower the learning rate");
    }
    model_.Backward(state_.params, b, grads_);
    const double gnorm = adam_.Step(state_.params, grads_, step);
    state_.step = step + 1;
    ++stats_.steps_run;
    stats_.padded_tokens += int64_t(b.B) * b.T;
    for (size_t i = 0; i < pick.size(); ++i) {
      stats_.tokens += std::min<int64_t>(b.T, int64_t(train[pick[i]].tokens.size()) - 1);
    }
    window_loss += loss;
    ++window_steps;
    if (state_.step % options_.log_every == 0 || state_.step == options_.steps) {
      const double mean = window_loss / window_steps;
      state_.train_loss.push_back({state_.step, mean});
      const double secs =
          std::chrono::duration<double>(Clock::now() - start).count() - eval_seconds;
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "step %d/%d loss %.4f lr %.2e grad-norm %.3f | %.2f steps/s %.0f tokens/s",
                    state_.step, options_.steps, mean, double(ScheduledLr(options_.adam, step)),
                    gnorm, stats_.steps_run / secs, double(stats_.tokens) / secs);
      log(buf);
      window_loss = 0;
      window_steps = 0;
    }
    if (options_.eval_every > 0 && state_.step % options_.eval_every == 0 &&
        state_.step != options_.steps) {
      RETURN_IF_ERROR(evaluate());
    }
    if (options_.checkpoint_every > 0 && state_.step % options_.checkpoint_every == 0) {
      RETURN_IF_ERROR(save());
    }
  }
  stats_.seconds = std::chrono::duration<double>(Clock::now() - start).count() - eval_seconds;
  if (state_.eval_loss.empty() || state_.eval_loss.back().step != state_.step) {
    RETURN_IF_ERROR(evaluate());
  }
  return save();
}

}  // namespace hotline::train
