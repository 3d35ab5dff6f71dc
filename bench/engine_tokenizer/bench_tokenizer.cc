// Tokenizer speed: encoding a 2,000-character call-centre prompt with each tokenizer kind, the
// pre-tokenizer alone (a floor for BPE), streaming decode, and loading vocabularies (the shared
// 50k GPT-2 file and a synthetic 150k-token BPE vocabulary of a Qwen2/Llama-3 size).
//
//   ninja -C build bench_engine_tokenizer && build/bench/engine_tokenizer/bench_engine_tokenizer
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unordered_set>

#include "engine/detokenizer.h"
#include "common/build_paths.h"
#include "engine/gguf.h"
#include "engine/pretokenize.h"
#include "engine/tokenizer.h"

namespace hotline::engine {
namespace {

std::string VocabPath(const std::string& name) {
  return std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/vocab/ggml-vocab-" + name + ".gguf";
}

// 2,000 characters of real customer-support text (agent responses of the Bitext corpus).
const std::string& Prompt() {
  static const std::string prompt = [] {
    std::ifstream f(std::string(HOTLINE_SHARED_DATA_DIR) + "/support/bitext/customer_support.csv",
                    std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::string out;
    size_t chars = 0;
    for (size_t i = all.find('\n') + 1; i < all.size(); ++i) {
      const bool starts_char = (static_cast<unsigned char>(all[i]) & 0xC0) != 0x80;
      if (starts_char && chars == 2000) break;
      out.push_back(all[i]);
      if (starts_char) ++chars;
    }
    return out;
  }();
  return prompt;
}

std::shared_ptr<const Tokenizer> Load(const std::string& name, const std::string& pre = "") {
  auto file = GgufFile::Open(VocabPath(name));
  if (!file.ok()) return nullptr;
  auto data = Vocabulary::ReadGgufMetadata(**file);
  if (!data.ok()) return nullptr;
  if (!pre.empty()) data->pre = pre;
  auto vocab = Vocabulary::Create(std::move(*data));
  if (!vocab.ok()) return nullptr;
  auto tok = Tokenizer::Create(*vocab);
  return tok.ok() ? *tok : nullptr;
}

void Encode(benchmark::State& state, const std::string& name, const std::string& pre) {
  auto tok = Load(name, pre);
  if (tok == nullptr) {
    state.SkipWithError("cannot load the shared vocabulary");
    return;
  }
  const std::string& text = Prompt();
  size_t tokens = 0;
  for (auto _ : state) {
    std::vector<TokenId> ids = tok->Encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["chars"] = 2000;
  state.counters["tokens"] = static_cast<double>(tokens);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK_CAPTURE(Encode, spm_llama, std::string("llama-spm"), std::string(""))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Encode, bpe_gpt2, std::string("gpt-2"), std::string(""))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Encode, bpe_gpt2_vocab_llama3_split, std::string("gpt-2"),
                  std::string("llama3"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(Encode, bpe_gpt2_vocab_qwen2_split, std::string("gpt-2"), std::string("qwen2"))
    ->Unit(benchmark::kMicrosecond);

// Baseline for BPE: the pre-tokenizer alone (UTF-8 decoding + category look-ups + splitting).
void PreTokenizeOnly(benchmark::State& state) {
  const std::string& text = Prompt();
  std::vector<TextPiece> pieces;
  PreTokenizeScratch scratch;
  for (auto _ : state) {
    pieces.clear();
    PreTokenize(PreTokenizerKind::kGpt2, text, &pieces, &scratch);
    benchmark::DoNotOptimize(pieces.data());
  }
  state.counters["pieces"] = static_cast<double>(pieces.size());
}
BENCHMARK(PreTokenizeOnly)->Unit(benchmark::kMicrosecond);

void StreamingDecode(benchmark::State& state) {
  auto tok = Load("gpt-2");
  if (tok == nullptr) {
    state.SkipWithError("cannot load the shared vocabulary");
    return;
  }
  const std::vector<TokenId> ids = tok->Encode(Prompt());
  std::string out;
  for (auto _ : state) {
    StreamingDetokenizer d(*tok, {.strip_leading_space = false});
    out.clear();
    for (TokenId id : ids) d.Push(id, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["ns_per_token"] = benchmark::Counter(
      static_cast<double>(ids.size()), benchmark::Counter::kIsIterationInvariantRate |
                                           benchmark::Counter::kInvert);
}
BENCHMARK(StreamingDecode)->Unit(benchmark::kMicrosecond);

void LoadGpt2(benchmark::State& state) {
  auto file = GgufFile::Open(VocabPath("gpt-2"));
  if (!file.ok()) {
    state.SkipWithError("cannot open the shared vocabulary");
    return;
  }
  for (auto _ : state) {
    auto vocab = Vocabulary::FromGguf(**file);
    auto tok = Tokenizer::Create(*vocab);
    benchmark::DoNotOptimize(tok.ok());
  }
}
BENCHMARK(LoadGpt2)->Unit(benchmark::kMillisecond);

// A 150k-token byte-level BPE vocabulary grown the way BPE training grows one: each new token
// is the concatenation of two existing ones, with that merge.
VocabData Synthetic150k() {
  VocabData d;
  d.model = "gpt2";
  d.pre = "qwen2";
  std::unordered_set<std::string> seen;
  for (int b = 0; b < 256; ++b) {
    d.tokens.emplace_back(ByteToBpeChar(static_cast<uint8_t>(b)));
    seen.insert(d.tokens.back());
  }
  std::mt19937 rng(1);
  while (d.tokens.size() < 150000) {
    const size_t n = d.tokens.size();
    const std::string& a = d.tokens[rng() % n];
    const std::string& b = d.tokens[rng() % std::min<size_t>(n, 2000)];
    std::string t = a + b;
    if (t.size() > 24 || !seen.insert(t).second) continue;
    d.merges.push_back(a + " " + b);
    d.tokens.push_back(std::move(t));
  }
  return d;
}

void LoadSynthetic150k(benchmark::State& state) {
  const VocabData data = Synthetic150k();
  for (auto _ : state) {
    auto vocab = Vocabulary::Create(data);  // copies `data` first, as reading a file would
    auto tok = Tokenizer::Create(*vocab);
    benchmark::DoNotOptimize(tok.ok());
  }
  state.counters["tokens"] = static_cast<double>(data.tokens.size());
}
BENCHMARK(LoadSynthetic150k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hotline::engine

BENCHMARK_MAIN();
