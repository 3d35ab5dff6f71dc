// llm_prefix_bench: what prompt-prefix reuse and Prefetch save on the embedded backend's time to
// first token. For each of --runs conversations (distinct system prompts, so runs share nothing):
//
//   cold      turn 2 of the conversation on a fresh model (the whole prompt is computed)
//   next-turn turn 2 after turn 1 was answered on the same model (turn 1's tokens are reused)
//   prefetch  turn 2 after Prefetch(turn 2's messages) ran while "the caller was talking"
//
// Prints the median time to first token of each and the ratio cold / warm.
//
//   llm_prefix_bench -m MODEL.gguf [--chat-format llama2] [--runs 9] [--threads 2] [--history N]
//   (stories260K: hotline engine convert-llama2c stories260K.bin tok512.bin -o s.gguf)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "llm/engine/engine_language_model.h"

using namespace hotline;

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<llm::Message> Conversation(int run, int history_sentences, bool second_turn) {
  std::string system = "Conversation " + std::to_string(run) + ". You are a helpful agent.";
  for (int i = 0; i < history_sentences; ++i) {
    system += " Rule " + std::to_string(i) + ": answer kindly and briefly about the order.";
  }
  std::vector<llm::Message> m = {{"system", system}, {"user", "Where is my order?"}};
  if (second_turn) {
    m.push_back({"assistant", "It left the warehouse yesterday."});
    m.push_back({"user", "When will it arrive?"});
  }
  return m;
}

double FirstTokenMs(llm::LanguageModel& lm, std::vector<llm::Message> messages, int* cached) {
  llm::GenerateRequest req;
  req.messages = std::move(messages);
  req.max_tokens = 4;
  auto r = lm.Generate(req, [](std::string_view) { return true; });
  if (!r.ok()) {
    std::fprintf(stderr, "generate: %s\n", r.status().ToString().c_str());
    std::exit(1);
  }
  *cached = r->cached_prompt_tokens;
  return r->first_token_ms;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  std::string format = "auto";
  int runs = 9, threads = 2, history = 12;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "-m") model = argv[i + 1];
    else if (a == "--chat-format") format = argv[i + 1];
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--history") history = std::atoi(argv[i + 1]);
  }
  if (model.empty() || runs < 1) {
    std::fprintf(stderr, "usage: llm_prefix_bench -m MODEL.gguf [--chat-format F] [--runs N] "
                         "[--threads T] [--history SENTENCES]\n");
    return 2;
  }
  InitLogging("warn");
  llm::LlmEngineConfig cfg;
  cfg.engine.model_path = model;
  cfg.engine.threads = threads;
  cfg.chat_template = format;
  std::vector<double> cold, next_turn, prefetch;
  int prompt_tokens = 0, cached_next = 0, cached_prefetch = 0;
  for (int run = 0; run < runs; ++run) {
    int cached = 0;
    {
      auto lm = llm::EngineLanguageModel::Create(cfg);
      if (!lm.ok()) {
        std::fprintf(stderr, "%s\n", lm.status().ToString().c_str());
        return 1;
      }
      cold.push_back(FirstTokenMs(**lm, Conversation(run, history, true), &cached));
      prompt_tokens = static_cast<int>((*lm)->EncodeMessages(Conversation(run, history, true), true)->size());
    }
    auto lm = llm::EngineLanguageModel::Create(cfg);
    FirstTokenMs(**lm, Conversation(run, history, false), &cached);
    next_turn.push_back(FirstTokenMs(**lm, Conversation(run, history, true), &cached_next));
    // A new conversation, prefetched while the caller talks.
    const auto msgs = Conversation(run + 1000, history, true);
    if (!(*lm)->Prefetch(msgs, 4).ok()) return 1;  // FirstTokenMs asks for 4 tokens
    while ((*lm)->queue_depth() > 0 || (*lm)->counters().prefetches_run == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the prefetch job finishes
    prefetch.push_back(FirstTokenMs(**lm, msgs, &cached_prefetch));
  }
  const double c = Median(cold), n = Median(next_turn), p = Median(prefetch);
  std::printf("model %s, %d runs, prompt %d tokens, %d threads\n", model.c_str(), runs,
              prompt_tokens, threads);
  std::printf("time to first token (median): cold %.2f ms | next turn %.2f ms (%d cached) | "
              "prefetched %.2f ms (%d cached)\n", c, n, cached_next, p, cached_prefetch);
  std::printf("ratio cold/next-turn %.1fx, cold/prefetched %.1fx\n", n > 0 ? c / n : 0,
              p > 0 ? c / p : 0);
  return 0;
}
