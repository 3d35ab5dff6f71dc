#include "app/bench_ablation_parts.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "answer/kb/kb_csv.h"

namespace hotline::cli::ablation {

using Clock = std::chrono::steady_clock;

thread_local const std::string* ScriptedText::script_ = nullptr;

// The question stream: `n` questions, the first half distinct (one per intent while intents
// last), the second half asking them again: even positions word for word (L3), odd ones in other
// words of the same intent (L1/L2).
Result<std::vector<AskedQuestion>> BuildQuestionStream(
    const std::map<std::string, std::vector<std::string>>& by_intent,
    const std::map<std::string, std::string>& scripts, int n, uint64_t seed) {
  std::vector<std::string> intents;
  for (const auto& [intent, questions] : by_intent) {
    if (scripts.count(intent) && !questions.empty()) intents.push_back(intent);
  }
  if (intents.empty()) {
    return InvalidArgumentError("no question has an intent the knowledge base answers");
  }
  std::mt19937_64 rng(seed);
  std::shuffle(intents.begin(), intents.end(), rng);
  const int distinct = (n + 1) / 2;
  std::vector<AskedQuestion> out;
  for (int i = 0; i < distinct; ++i) {
    const std::string& intent = intents[size_t(i) % intents.size()];
    const auto& qs = by_intent.at(intent);
    out.push_back({qs[rng() % qs.size()], intent, scripts.at(intent)});
  }
  for (int j = 0; static_cast<int>(out.size()) < n; ++j) {
    AskedQuestion again = out[size_t(j % distinct)];
    if (j % 2 == 1) {
      const auto& qs = by_intent.at(again.intent);
      for (int tries = 0; tries < 8; ++tries) {
        const std::string& other = qs[rng() % qs.size()];
        if (other != again.text) {
          again.text = other;
          break;
        }
      }
    }
    out.push_back(std::move(again));
  }
  return out;
}

// Bitext corpus rows -> questions by intent. Bounded: the file at most 64 MiB.
Result<std::map<std::string, std::vector<std::string>>> ReadBitextQuestions(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("--bitext " + path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() > (64u << 20)) return InvalidArgumentError("--bitext " + path + ": over 64 MiB");
  answer::CsvReader reader(text);
  answer::CsvRecord rec;
  ASSIGN_OR_RETURN(bool has_header, reader.Next(rec));
  if (!has_header) return InvalidArgumentError("--bitext " + path + ": empty");
  int q_col = -1, intent_col = -1;
  for (size_t c = 0; c < rec.fields.size(); ++c) {
    if (rec.fields[c] == "instruction") q_col = static_cast<int>(c);
    if (rec.fields[c] == "intent") intent_col = static_cast<int>(c);
  }
  if (q_col < 0 || intent_col < 0) {
    return InvalidArgumentError("--bitext " + path +
                                ": expected a header with instruction and intent columns");
  }
  std::map<std::string, std::vector<std::string>> out;
  while (true) {
    auto more = reader.Next(rec);
    if (!more.ok()) return more.status().WithContext("--bitext " + path);
    if (!*more) break;
    if (rec.fields.size() <= size_t(std::max(q_col, intent_col))) continue;
    const std::string& q = rec.fields[size_t(q_col)];
    if (q.empty() || q.size() > 300) continue;
    out[rec.fields[size_t(intent_col)]].push_back(q);
  }
  return out;
}

Status ReadKbScripts(const std::string& kb_csv, std::map<std::string, std::string>* scripts,
                     std::map<std::string, std::vector<std::string>>* by_intent) {
  std::string kb_text;
  {
    std::ifstream in(kb_csv, std::ios::binary);
    if (!in) return NotFoundError("--kb " + kb_csv + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    kb_text = ss.str();
    if (kb_text.size() > (64u << 20)) return InvalidArgumentError("--kb " + kb_csv + ": over 64 MiB");
  }
  answer::CsvReader reader(kb_text);
  answer::CsvRecord rec;
  auto header = reader.Next(rec);
  if (!header.ok() || !*header) return InvalidArgumentError("--kb " + kb_csv + ": no header");
  int body_col = -1, intent_col = -1, questions_col = -1;
  for (size_t c = 0; c < rec.fields.size(); ++c) {
    if (rec.fields[c] == "body") body_col = static_cast<int>(c);
    if (rec.fields[c] == "intent") intent_col = static_cast<int>(c);
    if (rec.fields[c] == "questions") questions_col = static_cast<int>(c);
  }
  if (body_col < 0 || intent_col < 0 || questions_col < 0) {
    return InvalidArgumentError("--kb " + kb_csv +
                                ": expected body, intent and questions columns");
  }
  while (true) {
    auto more = reader.Next(rec);
    if (!more.ok()) return more.status().WithContext("--kb " + kb_csv);
    if (!*more) break;
    const size_t need = size_t(std::max({body_col, intent_col, questions_col}));
    if (rec.fields.size() <= need) continue;
    const std::string& intent = rec.fields[size_t(intent_col)];
    if (intent.empty() || scripts->count(intent)) continue;
    std::string body = rec.fields[size_t(body_col)];
    if (body.empty()) continue;
    if (body.back() != '.' && body.back() != '!' && body.back() != '?') body += '.';
    (*scripts)[intent] = body;
    for (auto& q : answer::SplitQuestions(rec.fields[size_t(questions_col)])) {
      (*by_intent)[intent].push_back(std::move(q));
    }
  }
  return Status::Ok();
}

// Answers `q` with `answerer` and synthesizes it: whole (answer, then the whole text) or
// streaming (each sentence to a speaker thread as soon as it is final).
Result<Spoken> AnswerAndSpeak(answer::Answerer& answerer, tts::Synthesizer& synth,
                              const AskedQuestion& q, bool streaming) {
  answer::CallerSession caller("+15550100");
  ScriptedText::SetScript(&q.script);
  Spoken out;
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> first_chunk;
  std::atomic<int64_t> samples_out{0};
  auto on_chunk = [&](std::span<const int16_t> samples) -> Status {
    if (!first_chunk && !samples.empty()) first_chunk = Clock::now();
    samples_out += static_cast<int64_t>(samples.size());
    return Status::Ok();
  };
  Result<answer::AnswerResult> r = answer::AnswerResult{};
  if (!streaming) {
    r = answerer.Answer(q.text, caller);
    ScriptedText::SetScript(nullptr);
    if (!r.ok()) return r.status();
    RETURN_IF_ERROR(synth.Synthesize(r->text, on_chunk));
  } else {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::string> queue;
    bool done = false;
    Status speak_status;
    std::thread speaker([&] {
      while (true) {
        std::string sentence;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return done || !queue.empty(); });
          if (queue.empty()) return;
          sentence = std::move(queue.front());
          queue.pop_front();
        }
        Status s = synth.Synthesize(sentence, on_chunk);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (speak_status.ok()) speak_status = s;
        }
      }
    });
    answer::AnswerOptions options;
    options.on_sentence = [&](std::string_view sentence) {
      {
        std::lock_guard<std::mutex> lock(mu);
        queue.emplace_back(sentence);
      }
      cv.notify_one();
      return true;
    };
    r = answerer.Answer(q.text, caller, {}, options);
    ScriptedText::SetScript(nullptr);
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_one();
    speaker.join();
    if (!r.ok()) return r.status();
    RETURN_IF_ERROR(speak_status);
  }
  if (!first_chunk) return InternalError("the answer produced no audio: '" + r->text + "'");
  out.first_audio_ms = std::chrono::duration<double, std::milli>(*first_chunk - t0).count();
  out.tier = r->tier;
  out.generated_tokens = r->llm ? r->llm->generated_tokens : 0;
  out.audio_ms = 1000.0 * static_cast<double>(samples_out.load()) / synth.sample_rate_hz();
  out.prompt_tokens = r->llm ? r->llm->prompt_tokens : 0;
  out.cached_prompt_tokens = r->llm ? r->llm->cached_prompt_tokens : 0;
  return out;
}


}  // namespace hotline::cli::ablation
