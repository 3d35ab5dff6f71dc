// `hotline bench ablation` (cmd_bench_ablation.cc): the question stream, the scripted stand-in
// for a random-weight model's text, and one question answered and spoken. Internal to the
// command.
#pragma once

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "answer/answerer.h"
#include "common/status.h"
#include "llm/engine/engine_language_model.h"
#include "tts/synthesizer.h"

namespace hotline::cli::ablation {

struct AskedQuestion {
  std::string text;
  std::string intent;
  std::string script;  // words spoken in place of the model's text (the intent's article)
};

// The question stream: `n` questions, the first half distinct (one per intent while intents
// last), the second half asking them again: even positions word for word (L3), odd ones in other
// words of the same intent (L1/L2).
Result<std::vector<AskedQuestion>> BuildQuestionStream(
    const std::map<std::string, std::vector<std::string>>& by_intent,
    const std::map<std::string, std::string>& scripts, int n, uint64_t seed);

// Bitext corpus rows -> questions by intent. Bounded: the file at most 64 MiB.
Result<std::map<std::string, std::vector<std::string>>> ReadBitextQuestions(
    const std::string& path);

// A knowledge-base CSV (body, intent, questions columns) -> each intent's first article, ending
// in a full stop (the words spoken for the model), and its example questions. At most 64 MiB.
Status ReadKbScripts(const std::string& kb_csv, std::map<std::string, std::string>* scripts,
                     std::map<std::string, std::vector<std::string>>* by_intent);

// Stands in for the model's text: every delta the engine produces becomes the next word of the
// question's script (the thread's current script; Generate runs on the asking thread). Timing,
// token counts and cancellation are the engine's own.
class ScriptedText final : public llm::LanguageModel {
 public:
  explicit ScriptedText(std::unique_ptr<llm::EngineLanguageModel> engine)
      : engine_(std::move(engine)) {}

  static void SetScript(const std::string* script) { script_ = script; }

  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& request,
                                      const llm::TextCallback& on_text) override {
    std::vector<std::string> words;
    if (script_ != nullptr) {
      std::istringstream ws(*script_);
      for (std::string w; ws >> w;) words.push_back(w);
    }
    if (words.empty()) words.push_back("okay.");
    size_t next = 0;
    return engine_->Generate(request, [&](std::string_view) {
      std::string word = (next == 0 ? "" : " ") + words[next % words.size()];
      ++next;
      return on_text(word);
    });
  }
  Status Prefetch(const std::vector<llm::Message>& messages, int max_tokens) override {
    return engine_->Prefetch(messages, max_tokens);
  }
  int CountTokens(std::string_view text) const override { return engine_->CountTokens(text); }
  std::string name() const override { return engine_->name(); }
  llm::EngineLanguageModel& engine() { return *engine_; }

 private:
  static thread_local const std::string* script_;
  std::unique_ptr<llm::EngineLanguageModel> engine_;
};
// One question answered and spoken: first-audio latency, tier, tokens generated.
struct Spoken {
  double first_audio_ms = -1;
  answer::AnswerTierId tier = answer::AnswerTierId::kFallback;
  int generated_tokens = 0;
  double audio_ms = 0;           // length of the whole spoken answer
  int prompt_tokens = 0;         // the model's prompt, as the engine counted it
  int cached_prompt_tokens = 0;  // of those, found in the prefix cache
};

// Answers `q` with `answerer` and synthesizes it: whole (answer, then the whole text) or
// streaming (each sentence to a speaker thread as soon as it is final).
Result<Spoken> AnswerAndSpeak(answer::Answerer& answerer, tts::Synthesizer& synth,
                              const AskedQuestion& q, bool streaming);

}  // namespace hotline::cli::ablation
