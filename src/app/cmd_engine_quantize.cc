// `hotline engine quantize IN.gguf OUT.gguf --type q8_0|q4_0|q4_k [--threads T]`
// Converts the weight matrices of a GGUF model to a quantized type; norms, biases and metadata
// are copied unchanged.
#include <iostream>

#include "app/cli.h"
#include "engine/compute_pool.h"
#include "engine/quant_model.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine quantize IN.gguf OUT.gguf --type q8_0|q4_0|q4_k [--threads T]\n"
    "  Converts every 2-D weight matrix (F32, F16, BF16 or another quantized type) to --type;\n"
    "  1-D tensors (norms, biases) stay as they are. Also accepts q4_1, q5_0, q5_1, q5_k, q6_k,\n"
    "  f16, bf16.\n"
    "  --threads T   quantizer threads (default 2)\n";

int RunQuantize(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--type", "--threads"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  const std::string type = args->GetOr("--type", "");
  auto threads = args->GetInt("--threads", 2, 1, 256);
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!threads.ok()) return UsageError(threads.status().message(), kUsage);
  if (args->positional().size() != 2) return UsageError("expected IN.gguf and OUT.gguf", kUsage);
  if (type.empty()) return UsageError("missing --type", kUsage);
  auto target = engine::ParseTypeName(type.c_str());
  if (!target.ok()) return Fail(target.status());
  const std::string& in = args->positional()[0];
  const std::string& out = args->positional()[1];
  if (in == out) return UsageError("IN and OUT must be different files", kUsage);

  engine::ComputePool pool(static_cast<int>(*threads));
  auto stats = engine::QuantizeGguf(in, out, *target, pool);
  if (!stats.ok()) return Fail(stats.status());
  std::cerr << "wrote " << out << ": " << stats->tensors_quantized << " tensors as "
            << engine::TypeName(*target) << ", " << stats->tensors_kept << " kept; "
            << stats->bytes_in << " -> " << stats->bytes_out << " tensor bytes\n";
  return 0;
}

const CommandRegistrar kQuantize({"engine quantize", "quantize the weights of a GGUF model",
                                  kUsage, RunQuantize});

}  // namespace
}  // namespace hotline::cli
