// `hotline engine gen-random --arch llama|qwen2 --shape tiny|0.5b|1b --type q4_0|q8_0|f16
//  -o OUT.gguf [--seed N] [--threads T]`
// Writes a random-weight model with a real model's shape, for benchmarks.
#include <iostream>

#include "app/cli.h"
#include "engine/compute_pool.h"
#include "engine/quant_model.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine gen-random --arch llama|qwen2 --shape tiny|0.5b|1b\n"
    "                                 --type q4_0|q8_0|f16 -o OUT.gguf [--seed N] [--threads T]\n"
    "  Writes a random-weight GGUF model of a real model's shape (0.5b: Qwen2.5-0.5B dims,\n"
    "  1b: Llama-3.2-1B dims, tiny: milliseconds per token), with a small valid vocabulary.\n"
    "  --type also accepts f32, bf16, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k.\n"
    "  --seed N      generator seed (default 1); the same seed gives the same file\n"
    "  --threads T   generator threads (default 2)\n";

int RunGenRandom(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--arch", "--shape", "--type", "-o", "--seed", "--threads"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  engine::RandomModelSpec spec;
  spec.arch = args->GetOr("--arch", "");
  spec.shape = args->GetOr("--shape", "");
  const std::string type = args->GetOr("--type", "");
  const std::optional<std::string> out = args->Get("-o");
  auto seed = args->GetInt("--seed", 1, 0, INT64_MAX);
  auto threads = args->GetInt("--threads", 2, 1, 256);
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!seed.ok()) return UsageError(seed.status().message(), kUsage);
  if (!threads.ok()) return UsageError(threads.status().message(), kUsage);
  if (spec.arch.empty() || spec.shape.empty() || type.empty() || !out) {
    return UsageError("--arch, --shape, --type and -o are required", kUsage);
  }
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  auto parsed = engine::ParseTypeName(type.c_str());
  if (!parsed.ok()) return Fail(parsed.status());
  spec.type = *parsed;
  spec.seed = static_cast<uint64_t>(*seed);

  engine::ComputePool pool(static_cast<int>(*threads));
  auto info = engine::WriteRandomModel(spec, *out, pool);
  if (!info.ok()) return Fail(info.status());
  std::cerr << "wrote " << *out << ": " << spec.arch << " " << spec.shape << " "
            << engine::TypeName(spec.type) << ", dim " << info->n_embd << ", layers "
            << info->n_layer << ", heads " << info->n_head << "/" << info->n_head_kv << ", ffn "
            << info->n_ff << ", vocab " << info->n_vocab << ", " << info->file_bytes << " bytes\n";
  return 0;
}

const CommandRegistrar kGenRandom({"engine gen-random",
                                   "write a random-weight model of a real model's shape",
                                   kUsage, RunGenRandom});

}  // namespace
}  // namespace hotline::cli
