#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "common/log.h"
#include "engine/batch_scheduler.h"
#include "engine/matmul.h"

namespace hotline::engine {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kLength: return "length";
    case FinishReason::kStop: return "stop";
    case FinishReason::kCallback: return "callback";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kContextFull: return "context_full";
  }
  return "?";
}

Status EngineConfig::Validate() const {
  if (threads < 1 || threads > 256) {
    return InvalidArgumentError("threads must be in [1, 256], got " + std::to_string(threads));
  }
  if (max_seq_len < 16 || max_seq_len > (1 << 20)) {
    return InvalidArgumentError("max_seq_len must be in [16, 1048576], got " +
                                std::to_string(max_seq_len));
  }
  RETURN_IF_ERROR(ParseKvType(kv_type).status());
  if (kv_block_tokens < 1 || kv_block_tokens > 65536) {
    return InvalidArgumentError("kv_block_tokens must be in [1, 65536]");
  }
  if (max_batch_tokens < 1 || max_batch_tokens > 65536) {
    return InvalidArgumentError("max_batch_tokens must be in [1, 65536]");
  }
  RETURN_IF_ERROR(ParseKernelIsa(kernel.c_str()).status());
  // The batching limits are the scheduler's: one check, in one place.
  return BatchSchedulerConfig::FromEngine(*this).Validate();
}

Result<std::unique_ptr<Engine>> Engine::Load(const EngineConfig& config) {
  RETURN_IF_ERROR(config.Validate());
  if (config.model_path.empty()) {
    return InvalidArgumentError("no model file given (engine.model_path / -m MODEL.gguf)");
  }
  std::unique_ptr<Engine> e(new Engine());
  e->config_ = config;
  if (config.kernel != "auto") {
    ASSIGN_OR_RETURN(KernelIsa isa, ParseKernelIsa(config.kernel.c_str()));
    RETURN_IF_ERROR(SetKernelIsa(isa));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(config.model_path));
  e->file_ = std::move(file);
  ASSIGN_OR_RETURN(e->model_, Model::Load(e->file_));
  const ModelHParams& hp = e->model_->hparams();
  e->max_seq_len_ = std::min(config.max_seq_len, hp.n_ctx_train);
  ASSIGN_OR_RETURN(KvType kv_type, ParseKvType(config.kv_type));
  KvLayout layout{hp.n_layer, hp.n_head_kv, hp.head_dim, kv_type};
  ASSIGN_OR_RETURN(e->kv_, PerSequenceKvCache::Create(layout, config.kv_block_tokens,
                                                      e->max_seq_len_, config.kv_cache_bytes));
  e->pool_ = std::make_unique<ComputePool>(config.threads);
  e->forward_ = std::make_unique<ForwardPass>(*e->model_, *e->pool_, config.flash_attention);
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    auto id = e->file_->GetIntOr(key, -1);
    if (id.ok() && *id >= 0 && *id < hp.n_vocab) {
      const int32_t t = static_cast<int32_t>(*id);
      if (std::find(e->stop_tokens_.begin(), e->stop_tokens_.end(), t) == e->stop_tokens_.end()) {
        e->stop_tokens_.push_back(t);
      }
    }
  }
  HLOG_INFO(
      "engine: loaded {} ({} layers, {} heads / {} KV heads, dim {}, vocab {}, {:.1f} MB "
      "of weights), kernels {} ({:.1f} MB packed), {} threads, KV {}",
      config.model_path, hp.n_layer, hp.n_head, hp.n_head_kv, hp.n_embd, hp.n_vocab,
      static_cast<double>(e->model_->weights_bytes()) / 1e6, KernelIsaName(ActiveKernelIsa()),
      static_cast<double>(e->model_->packed_bytes()) / 1e6, config.threads, config.kv_type);
  return e;
}

Result<int> Engine::CreateSequence() {
  const int id = next_seq_++;
  seqs_.emplace(id, Sequence{});
  return id;
}

void Engine::RemoveSequence(int seq) {
  seqs_.erase(seq);
  kv_->RemoveSequence(seq);
}

int Engine::SequenceLength(int seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : static_cast<int>(it->second.tokens.size());
}

std::span<const int32_t> Engine::SequenceTokens(int seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return {};
  return it->second.tokens;
}

Status Engine::TruncateSequence(int seq, int n_tokens) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return InvalidArgumentError("unknown sequence " + std::to_string(seq));
  if (n_tokens < 0) {
    return InvalidArgumentError("cannot truncate a sequence to " + std::to_string(n_tokens) +
                                " tokens");
  }
  std::vector<int32_t>& tokens = it->second.tokens;
  if (static_cast<size_t>(n_tokens) < tokens.size()) tokens.resize(static_cast<size_t>(n_tokens));
  return Status::Ok();
}

Result<std::span<const float>> Engine::Feed(int seq, std::span<const int32_t> tokens) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return InvalidArgumentError("unknown sequence " + std::to_string(seq));
  if (tokens.empty()) return InvalidArgumentError("Feed needs at least one token");
  Sequence& s = it->second;
  if (s.tokens.size() + tokens.size() > static_cast<size_t>(max_seq_len_)) {
    return ResourceExhaustedError("sequence would hold " +
                                  std::to_string(s.tokens.size() + tokens.size()) +
                                  " tokens, more than max_seq_len " + std::to_string(max_seq_len_));
  }
  const size_t chunk = static_cast<size_t>(config_.max_batch_tokens);
  for (size_t begin = 0; begin < tokens.size(); begin += chunk) {
    const size_t end = std::min(tokens.size(), begin + chunk);
    batch_.clear();
    const int base = static_cast<int>(s.tokens.size());
    for (size_t i = begin; i < end; ++i) {
      batch_.push_back(BatchToken{tokens[i], seq, base + static_cast<int>(i - begin),
                                  i + 1 == tokens.size()});
    }
    RETURN_IF_ERROR(forward_->Run(batch_, *kv_, &logits_));
    s.tokens.insert(s.tokens.end(), tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                    tokens.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return std::span<const float>(logits_);
}

Result<GenerationResult> Engine::Generate(int seq, std::span<const int32_t> prompt,
                                          const SamplingConfig& sampling,
                                          const TokenCallback& on_token,
                                          const std::atomic<bool>* cancel) {
  RETURN_IF_ERROR(sampling.Validate());
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return InvalidArgumentError("unknown sequence " + std::to_string(seq));
  if (prompt.empty()) {
    // The logits of a sequence's last token are not kept between calls; the caller passes the
    // new turn's tokens (at least one) and generation continues from them.
    return InvalidArgumentError("Generate needs at least one new prompt token");
  }
  const auto t0 = std::chrono::steady_clock::now();
  GenerationResult r;
  r.timings.prompt_tokens = static_cast<int>(prompt.size());
  ASSIGN_OR_RETURN(std::span<const float> logits, Feed(seq, prompt));
  r.timings.prefill_ms = MsSince(t0);
  Sampler sampler(sampling);
  std::chrono::steady_clock::time_point t_first;
  for (;;) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      r.finish = FinishReason::kCancelled;
      break;
    }
    const std::vector<int32_t>& history = seqs_.at(seq).tokens;
    const int32_t tok = sampler.Sample(logits, history);
    if (r.tokens.empty()) {
      t_first = std::chrono::steady_clock::now();
      r.timings.first_token_ms = MsSince(t0);
    }
    if (std::find(stop_tokens_.begin(), stop_tokens_.end(), tok) != stop_tokens_.end()) {
      r.finish = FinishReason::kStop;
      break;
    }
    r.tokens.push_back(tok);
    if (on_token && !on_token(tok)) {
      r.finish = FinishReason::kCallback;
      break;
    }
    if (static_cast<int>(r.tokens.size()) >= sampling.max_tokens) {
      r.finish = FinishReason::kLength;
      break;
    }
    if (SequenceLength(seq) >= max_seq_len_) {
      r.finish = FinishReason::kContextFull;
      break;
    }
    ASSIGN_OR_RETURN(logits, Feed(seq, std::span<const int32_t>(&tok, 1)));
  }
  r.timings.generated_tokens = static_cast<int>(r.tokens.size());
  if (!r.tokens.empty()) {
    r.timings.decode_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_first)
            .count();
  }
  r.timings.total_ms = MsSince(t0);
  return r;
}

}  // namespace hotline::engine
