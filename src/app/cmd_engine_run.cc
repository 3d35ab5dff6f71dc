// `hotline engine run -m MODEL.gguf -p PROMPT [-n N] [--temp T] [--seed S] [--threads T] [--chat]`
// Generates a continuation of PROMPT (or, with --chat, the assistant's answer to it) and streams
// the text to stdout as it is produced (the prompt is not echoed). Timings go to stderr.
#include <cstdio>
#include <iostream>

#include "app/cli.h"
#include "common/log.h"
#include "engine/chat_template.h"
#include "engine/detokenizer.h"
#include "engine/engine.h"
#include "engine/stop_matcher.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine run -m MODEL.gguf -p PROMPT [-n N] [--temp T] [--seed S]\n"
    "                          [--threads T] [--chat] [options]\n"
    "  Streams the generated text to stdout (the prompt is not echoed); timings to stderr.\n"
    "  -m, --model FILE      GGUF model (llama or qwen2 family)\n"
    "  -p, --prompt TEXT     prompt text (control tokens like <|im_start|> are recognized)\n"
    "  -n N                  tokens to generate at most (default 128)\n"
    "  --temp T              temperature, 0 = greedy (default 0)\n"
    "  --top-k K             sample among the K most likely tokens (default 40, 0 = all)\n"
    "  --top-p P             nucleus sampling mass (default 0.95)\n"
    "  --repeat-penalty R    penalty for recently seen tokens (default 1 = off)\n"
    "  --seed S              sampling seed (default 0)\n"
    "  --threads T           compute threads (default 2)\n"
    "  --chat                wrap the prompt as a user message in the model's chat template\n"
    "  --chat-format NAME    chatml, llama3, llama2 or phi3 instead of the file's template\n"
    "  --system TEXT         system message for --chat\n"
    "  --stop TEXT           stop when TEXT is generated (repeatable)\n"
    "  --ctx N               max sequence length in tokens (default: the model's, up to 4096)\n"
    "  --kv-type TYPE        KV cache type: f16 (default), q8_0, f32\n"
    "  --kernel ISA          auto (default), avx512, avxvnni, avx2, scalar\n";

// The prompt's tokens: as chat messages (an optional system message, then the prompt as the
// user's) in the model's template, or as text with special tokens parsed.
Result<std::vector<engine::TokenId>> PromptTokens(const engine::Tokenizer& tok,
                                                  const std::string& prompt, bool chat,
                                                  const std::optional<std::string>& chat_format,
                                                  const std::optional<std::string>& system) {
  std::vector<engine::TokenId> ids;
  if (chat) {
    engine::ChatTemplateConfig tc;
    if (chat_format) tc.format = *chat_format;
    ASSIGN_OR_RETURN(auto tmpl, engine::ChatTemplate::Create(tc, tok.vocab()));
    std::vector<engine::ChatMessage> messages;
    if (system) messages.push_back({"system", *system});
    messages.push_back({"user", prompt});
    ASSIGN_OR_RETURN(auto segments, tmpl.Render(messages, /*add_generation_prompt=*/true));
    ids = tok.EncodePrompt(segments, /*add_special=*/true);
  } else {
    engine::EncodeOptions options;
    options.parse_special = true;
    ids = tok.Encode(prompt, options);
  }
  if (ids.empty()) {
    return InvalidArgumentError(
        "the prompt encodes to no tokens and the model adds no BOS; give a prompt");
  }
  return ids;
}

int RunEngine(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"-m", "--model", "-p", "--prompt", "-n", "--temp", "--top-k",
                                 "--top-p", "--repeat-penalty", "--seed", "--threads",
                                 "--chat-format", "--system", "--stop", "--ctx", "--kv-type",
                                 "--kernel"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  engine::EngineConfig config;
  engine::SamplingConfig sampling;
  std::optional<std::string> model = args->Get("-m");
  if (!model) model = args->Get("--model");
  std::optional<std::string> prompt = args->Get("-p");
  if (!prompt) prompt = args->Get("--prompt");
  auto n = args->GetInt("-n", 128, 1, 1 << 20);
  auto temp = args->GetDouble("--temp", 0.0, 0.0, 100.0);
  auto top_k = args->GetInt("--top-k", 40, 0, 1 << 22);
  auto top_p = args->GetDouble("--top-p", 0.95, 1e-6, 1.0);
  auto rep = args->GetDouble("--repeat-penalty", 1.0, 1e-3, 10.0);
  auto seed = args->GetInt("--seed", 0, 0, (1ll << 62));
  auto threads = args->GetInt("--threads", 2, 1, 256);
  auto ctx = args->GetInt("--ctx", 4096, 16, 1 << 20);
  const bool chat = args->Has("--chat");
  std::optional<std::string> chat_format = args->Get("--chat-format");
  std::optional<std::string> system = args->Get("--system");
  std::vector<std::string> stops = args->GetAll("--stop");
  config.kv_type = args->GetOr("--kv-type", config.kv_type);
  config.kernel = args->GetOr("--kernel", config.kernel);
  for (const Status& s : {n.status(), temp.status(), top_k.status(), top_p.status(), rep.status(),
                          seed.status(), threads.status(), ctx.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (!model) return UsageError("missing -m MODEL.gguf", kUsage);
  if (!prompt) return UsageError("missing -p PROMPT", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  config.model_path = *model;
  config.threads = static_cast<int>(*threads);
  config.max_seq_len = static_cast<int>(*ctx);
  sampling.max_tokens = static_cast<int>(*n);
  sampling.temperature = static_cast<float>(*temp);
  sampling.top_k = static_cast<int>(*top_k);
  sampling.top_p = static_cast<float>(*top_p);
  sampling.repetition_penalty = static_cast<float>(*rep);
  sampling.seed = static_cast<uint64_t>(*seed);
  if (Status s = sampling.Validate(); !s.ok()) return Fail(s);

  InitLogging("warn");
  auto eng = engine::Engine::Load(config);
  if (!eng.ok()) return Fail(eng.status());
  engine::Engine& e = **eng;
  auto vocab = engine::Vocabulary::FromGguf(e.file());
  if (!vocab.ok()) return Fail(vocab.status());
  auto tokenizer = engine::Tokenizer::Create(*vocab);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  const engine::Tokenizer& tok = **tokenizer;

  auto ids = PromptTokens(tok, *prompt, chat, chat_format, system);
  if (!ids.ok()) return Fail(ids.status());

  auto stop = engine::StopMatcher::Create(stops);
  if (!stop.ok()) return Fail(stop.status());
  engine::DecodeOptions dopt;
  // From BOS alone the first piece's SentencePiece space is dropped; after a prompt it is text.
  dopt.strip_leading_space = prompt->empty() && !chat;
  engine::StreamingDetokenizer detok(tok, dopt);
  auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  const int seq = *e.CreateSequence();
  auto result = e.Generate(seq, *ids, sampling, [&](int32_t id) {
    engine::StopMatcher::Output o = stop->Push(detok.Push(id));
    emit(o.text);
    return !o.stopped;
  });
  if (!result.ok()) return Fail(result.status());
  if (!stop->stopped()) {
    engine::StopMatcher::Output o = stop->Push(detok.Finish());
    emit(o.text);
    if (!o.stopped) emit(stop->Flush());
  }
  emit("\n");
  const engine::GenerationTimings& t = result->timings;
  std::fprintf(stderr,
               "prompt tokens: %d, prefill: %.1f tokens/s (%.1f ms), time to first token: %.1f "
               "ms, decode: %.1f tokens/s (%d tokens, %.1f ms), finish: %s\n",
               t.prompt_tokens, t.prefill_tokens_per_s(), t.prefill_ms, t.first_token_ms,
               t.decode_tokens_per_s(), t.generated_tokens, t.decode_ms,
               engine::FinishReasonName(result->finish));
  return 0;
}

const CommandRegistrar kRun({"engine run", "generate text with the embedded engine", kUsage,
                             RunEngine});

}  // namespace
}  // namespace hotline::cli
