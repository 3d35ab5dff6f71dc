#include "train/support_data.h"

#include <cctype>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "answer/kb/kb_bitext.h"
#include "answer/kb/kb_csv.h"
#include "engine/chat_template.h"

namespace hotline::train {
namespace {

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string Normalize(std::string_view s) {
  std::string out;
  bool space = false;
  for (unsigned char c : s) {
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

}  // namespace

Result<std::string> ReadTextFile(const std::string& path, size_t max_bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFoundError("cannot open " + path);
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > max_bytes) {
      std::fclose(f);
      return ResourceExhaustedError(path + " is larger than " + std::to_string(max_bytes) +
                                    " bytes");
    }
  }
  const bool err = std::ferror(f) != 0;
  std::fclose(f);
  if (err) return DataLossError("read error on " + path);
  return text;
}

Result<SupportData> BuildSupportData(std::string_view csv_text, const SupportDataOptions& options) {
  if (!(options.test_fraction >= 0.0 && options.test_fraction < 1.0)) {
    return InvalidArgumentError("test fraction must be in [0, 1)");
  }
  answer::BitextDeriveOptions derive;
  derive.articles_per_intent = options.articles_per_intent;
  derive.max_answer_chars = options.max_answer_chars;
  ASSIGN_OR_RETURN(auto articles, answer::DeriveBitextArticles(csv_text, derive));
  std::map<std::string, std::vector<const answer::Article*>> by_intent;
  for (const answer::Article& a : articles) {
    if (!a.body.empty()) by_intent[a.intent].push_back(&a);
  }

  answer::CsvReader reader(csv_text);
  answer::CsvRecord rec;
  ASSIGN_OR_RETURN(bool any, reader.Next(rec));
  if (!any) return InvalidArgumentError("the corpus is empty");
  int col_q = -1, col_intent = -1;
  for (size_t i = 0; i < rec.fields.size(); ++i) {
    if (rec.fields[i] == "instruction") col_q = static_cast<int>(i);
    if (rec.fields[i] == "intent") col_intent = static_cast<int>(i);
  }
  if (col_q < 0 || col_intent < 0) {
    return InvalidArgumentError("the corpus needs 'instruction' and 'intent' columns");
  }
  SupportData data;
  const uint64_t cut = static_cast<uint64_t>(options.test_fraction * 18446744073709551615.0);
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader.Next(rec));
    if (!more) break;
    if (rec.fields.size() <= size_t(std::max(col_q, col_intent))) {
      return InvalidArgumentError("line " + std::to_string(rec.line) + ": missing fields");
    }
    const std::string question =
        Normalize(rec.fields[size_t(col_q)]).empty() ? std::string() : rec.fields[size_t(col_q)];
    auto it = by_intent.find(rec.fields[size_t(col_intent)]);
    if (question.empty() || question.size() > 1000 || it == by_intent.end()) continue;
    const std::string key = Normalize(question);
    const uint64_t h = Fnv1a(key);
    const answer::Article* a = it->second[h % it->second.size()];
    SupportExample ex{question, a->body, a->intent};
    // Mixing the hash again decouples the split from the article choice.
    (h * 0x9E3779B97F4A7C15ULL < cut ? data.test : data.train).push_back(std::move(ex));
  }
  if (data.train.empty()) return InvalidArgumentError("the corpus gave no training examples");
  return data;
}

Result<std::vector<engine::ChatMessage>> CallPrompt(std::string_view question,
                                                    const answer::PromptConfig& prompt) {
  const answer::PromptBuilder builder(prompt);
  answer::PromptInput input;
  input.question = std::string(question);
  ASSIGN_OR_RETURN(answer::Prompt p, builder.Build(input));
  std::vector<engine::ChatMessage> msgs;
  for (const answer::ChatMessage& m : p.messages) msgs.push_back({m.role, m.content});
  return msgs;
}

Result<EncodedExample> EncodeChat(const engine::Tokenizer& tokenizer, const SupportExample& ex,
                                  const answer::PromptConfig& prompt) {
  const engine::ChatTemplate tmpl(engine::ChatFormat::kChatMl);
  ASSIGN_OR_RETURN(std::vector<engine::ChatMessage> msgs, CallPrompt(ex.question, prompt));
  ASSIGN_OR_RETURN(auto segs, tmpl.Render(msgs, /*add_generation_prompt=*/true));
  EncodedExample out;
  out.tokens = tokenizer.EncodePrompt(segs);
  out.prompt_tokens = static_cast<int>(out.tokens.size());
  tokenizer.Encode(ex.answer, {.add_special = false, .parse_special = false}, &out.tokens);
  const engine::TokenId eot = tokenizer.vocab().eot_id();
  if (eot == engine::kNoToken) {
    return FailedPreconditionError("the vocabulary has no end-of-turn token");
  }
  out.tokens.push_back(eot);
  return out;
}

std::vector<std::string> TokenizerCorpus(const std::vector<SupportExample>& examples,
                                         const answer::PromptConfig& prompt) {
  std::vector<std::string> texts = {"user\n", "assistant\n", "system\n"};
  // The fixed prompt text, once per example as it occurs in training, so BPE merges it like the
  // rest of the data.
  auto fixed = CallPrompt("", prompt);
  for (size_t i = 0; fixed.ok() && i < examples.size(); ++i) {
    for (const engine::ChatMessage& m : *fixed) texts.push_back(m.content);
  }
  for (const SupportExample& e : examples) {
    texts.push_back(e.question);
    texts.push_back(e.answer);
  }
  return texts;
}

}  // namespace hotline::train
