// `hotline eval turns`: the turn-taking benchmark. How often each end-of-turn policy cuts a
// caller off inside a question (a false cut-off), and how long it makes the caller wait after the
// last word of a complete one.
//
// Utterances. Questions of the public sets (app/turn_questions.h) spoken by several voices
// (flite slt, rms, awb, kal16; espeak-ng en-us), each once whole and once per pause length with a
// silent pause at a natural hesitation point: after an article or possessive ("a copy of my …
// invoice"), a preposition ("a copy of … my invoice"), an auxiliary or the pronoun after one
// ("when will i … receive"), a filler ("um", "uh" said and then a pause), or between the groups of
// digits of an order or card number. The words before and after the pause are synthesized
// separately and joined by exact silence, so the pause is exact. Then 500 ms of silence before,
// 2 s after, white line noise 40 dB under the speech, 8 kHz and a μ-law round trip: what a call
// hears. Tuning voices speak train-split questions, report voices test-split questions; the
// real recordings of Debian's pocketsphinx-testdata (LibriVox read speech, "go forward ten
// meters", ...) are a report-only set of human voices, with pauses inserted at word boundaries
// the recognizer's word timings give.
//
// Each utterance runs once through the call's own objects (asr::TraceUtterance: the VAD, the
// configured recognizer with the knowledge base's domain model, the turn detector's inputs, the
// answerer's cached tiers for the old rule's hint); every policy is then replayed over that
// trace through a real Endpointer. Synthesized audio is cached (--cache).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "answer/answer_stack.h"
#include "answer/kb/knowledge_base.h"
#include "app/cli.h"
#include "app/eval_turns_report.h"
#include "app/hotline_config.h"
#include "app/speech_bench.h"
#include "app/turn_questions.h"
#include "asr/lm_builder.h"
#include "asr/recognizer.h"
#include "asr/turn_eval.h"
#include "audio/g711.h"
#include "audio/resampler.h"
#include "audio/vad.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "pipeline/call_stack.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

using eval_turns::Item;

constexpr char kUsage[] =
    "usage: hotline eval turns [options]\n"
    "  Turn-taking benchmark: false cut-offs inside questions with pauses of 300-1,500 ms at\n"
    "  hesitation points, against the end-of-turn delay after complete questions, for the old\n"
    "  rule (silence 500 ms, 240 ms with the looks-complete hint), silence-only rules and the\n"
    "  turn detector (asr.turn), per pause length, voice and hesitation kind.\n"
    "  --data DIR        shared data folder (default ../shared/data)\n"
    "  --cache DIR       synthesized audio cache (default $XDG_CACHE_HOME or ~/.cache, "
    "/hotline/turns)\n"
    "  --questions N     questions per set (Banking77, CLINC150, Bitext) and voice (default 12)\n"
    "  --pauses LIST     pause lengths in ms (default 300,600,1000,1500)\n"
    "  --tuning-voices L tuning voices, train-split questions (default slt,rms)\n"
    "  --report-voices L report voices, test-split questions (default awb,kal16,espeak)\n"
    "  --no-real         leave out the pocketsphinx-testdata recordings\n"
    "  --tune            grid-search the detector's weights on the tuning voices and report the\n"
    "                    best configuration (meeting the cut-off targets with a margin)\n"
    "  --threads N       utterances traced in parallel (default 2)\n"
    "  --config FILE     configuration (speech_in.*, asr.*, answer.*, call.*); --set a.b=v\n"
    "  --json            print the report as JSON;  -o FILE  also write the JSON to FILE\n";

// ---------------------------------------------------------------------------------------------
// Hesitation points.

const std::set<std::string> kArticles = {"a",    "an",  "the", "my",  "your",  "this", "that",
                                         "some", "our", "his", "her", "their", "any"};
const std::set<std::string> kPrepositions = {
    "of", "to",   "for",     "in",    "on",     "with",    "about",   "from", "at",
    "by", "into", "between", "after", "before", "without", "through", "than"};
const std::set<std::string> kAuxiliaries = {"can",   "could", "will", "would", "do",    "does",
                                            "did",   "is",    "are",  "was",   "were",  "should",
                                            "have",  "has",   "had",  "am",    "shall", "may",
                                            "might", "must",  "i'd",  "i'll",  "i've",  "i'm"};
const std::set<std::string> kPronouns = {"i", "you", "we", "they", "it", "he", "she"};
const std::set<std::string> kDigits = {"zero", "oh",  "one",   "two",   "three", "four",
                                       "five", "six", "seven", "eight", "nine"};

struct Split {
  std::string kind;  // article | preposition | auxiliary | filler | digits
  std::string before, after;
};

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> w;
  std::istringstream in(text);
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

std::string Join(const std::vector<std::string>& w, size_t b, size_t e) {
  std::string s;
  for (size_t i = b; i < e; ++i) s += (s.empty() ? "" : " ") + w[i];
  return s;
}

// The spoken form: lower case, digits one by one ("order 4 5 1" as a caller reads it), no
// punctuation. Numbers of one or two digits stay numbers.
std::string SpokenText(const std::string& q) {
  std::string words;
  for (const std::string& w : asr::LmWords(q)) {
    if (w == asr::kLmBreak) continue;
    words += (words.empty() ? "" : " ") + w;
  }
  return words;
}

// The hesitation points of a question, by kind (each: split after word k).
std::map<std::string, std::vector<size_t>> Candidates(const std::vector<std::string>& w) {
  std::map<std::string, std::vector<size_t>> c;
  const size_t n = w.size();
  for (size_t k = 1; k + 2 < n; ++k) {  // at least 2 words before (incl. k) and 2 after
    if (kArticles.count(w[k])) c["article"].push_back(k);
    if (kPrepositions.count(w[k])) c["preposition"].push_back(k);
    if (kAuxiliaries.count(w[k]) || (kPronouns.count(w[k]) && kAuxiliaries.count(w[k - 1]))) {
      c["auxiliary"].push_back(k);
    }
  }
  // Digit groups: inside a run of at least 6 digits, after its 3rd or 4th digit.
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && kDigits.count(w[j])) ++j;
    if (j - i >= 6) c["digits"].push_back(i + ((j - i) >= 8 ? 3 : 2));
    i = j + 1;
  }
  if (n >= 4) {
    for (size_t k = 1; k + 2 < n; ++k) c["filler"].push_back(k);
  }
  return c;
}

const char* const kKindOrder[] = {"article", "preposition", "auxiliary", "filler"};

std::optional<Split> ChooseSplit(const std::string& spoken, size_t index, std::mt19937& rng) {
  const std::vector<std::string> w = Words(spoken);
  if (w.size() < 4 || w.size() > 24) return std::nullopt;
  auto c = Candidates(w);
  std::string kind;
  if (c.count("digits")) {
    kind = "digits";
  } else {
    for (size_t t = 0; t < 4 && kind.empty(); ++t) {
      const char* k = kKindOrder[(index + t) % 4];
      if (c.count(k)) kind = k;
    }
  }
  if (kind.empty()) return std::nullopt;
  const auto& ks = c[kind];
  const size_t k = ks[std::uniform_int_distribution<size_t>(0, ks.size() - 1)(rng)];
  Split s;
  s.kind = kind;
  s.before = Join(w, 0, k + 1);
  s.after = Join(w, k + 1, w.size());
  if (kind == "filler") s.before += (index % 2) ? " uh" : " um";
  return s;
}

// ---------------------------------------------------------------------------------------------
// Voices and the synthesized-audio cache.

using speech_bench::Fnv1a;
using speech_bench::MakeVoice;
using speech_bench::SplitList;
using speech_bench::TrimSilence;
using speech_bench::Voice;
using SpeechCache = speech_bench::VoiceCache;

// ---------------------------------------------------------------------------------------------
// Utterances.

constexpr int kLeadMs = 500;
constexpr int kTailMs = 2000;

// Joins speech pieces with `pause_ms` of silence, adds lead-in, tail, line noise 40 dB under the
// speech, and the μ-law round trip.
asr::TurnUtterance Assemble(const std::vector<int16_t>& a, const std::vector<int16_t>* b,
                            int pause_ms, uint32_t seed) {
  const size_t ms = 8;  // samples per ms at 8 kHz
  asr::TurnUtterance u;
  std::vector<int16_t> x(kLeadMs * ms, 0);
  x.insert(x.end(), a.begin(), a.end());
  if (b != nullptr) {
    u.pause_ms = pause_ms;
    u.pause_start_ms = static_cast<int64_t>(x.size() / ms);
    x.insert(x.end(), static_cast<size_t>(pause_ms) * ms, 0);
    x.insert(x.end(), b->begin(), b->end());
  }
  u.speech_end_ms = static_cast<int64_t>(x.size() / ms);
  x.insert(x.end(), kTailMs * ms, 0);
  double e = 0;
  size_t n = 0;
  for (int16_t v : a) e += static_cast<double>(v) * v, ++n;
  const double speech_rms = std::sqrt(e / std::max<size_t>(n, 1));
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, speech_rms * 0.01);  // -40 dB
  std::vector<uint8_t> line(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = audio::SaturateToInt16(static_cast<int32_t>(std::lrint(x[i] + noise(rng))));
  }
  audio::EncodeMulaw(x, line);
  audio::DecodeMulaw(line, x);
  u.audio = audio::AudioBuffer(std::move(x), 8000);
  return u;
}

// ---------------------------------------------------------------------------------------------

// Recordings of pocketsphinx-testdata with their transcripts.
struct Recording {
  std::string name, path, text;
  bool raw = false;
};

std::vector<Recording> Recordings() {
  const std::string d = "/usr/share/pocketsphinx/test/data/";
  std::vector<Recording> r = {
      {"goforward", d + "goforward.raw", "go forward ten meters", true},
      {"something", d + "something.raw", "go somewhere and do something", true}};
  std::ifstream t(d + "librivox/transcription");
  for (std::string line; std::getline(t, line);) {
    const size_t open = line.rfind('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::string id = line.substr(open + 1, close - open - 1);
    std::string text = line.substr(0, open);
    for (const char* tag : {"<s>", "</s>"}) {
      if (size_t p = text.find(tag); p != std::string::npos) text.erase(p, std::strlen(tag));
    }
    r.push_back({id.substr(id.size() - 4), d + "librivox/" + id + ".wav", text, false});
  }
  return r;
}

// Utterances: per voice, questions of each set (train split for tuning voices, test split for
// report voices), whole and with each pause, synthesized on `threads` threads through `cache_dir`.
Status SynthesizeItems(const std::vector<Voice>& voices, const std::vector<turns::QuestionSet>& sets,
                       int per_set, const std::vector<int>& pauses, const std::string& cache_dir,
                       int threads, std::vector<Item>* items) {
  SpeechCache cache(cache_dir);
  struct Job {
    const Voice* voice;
    std::string set, spoken;
    std::optional<Split> split;
  };
  std::vector<Job> jobs;
  for (const Voice& v : voices) {
    for (const turns::QuestionSet& s : sets) {
      const std::vector<std::string>& qs = v.tuning ? s.train : s.test;
      std::mt19937 rng(static_cast<uint32_t>(Fnv1a(v.name + s.name)));
      std::vector<size_t> order(qs.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      int taken = 0;
      for (size_t i = 0; i < order.size() && taken < per_set; ++i) {
        const std::string spoken = SpokenText(qs[order[i]]);
        auto split = ChooseSplit(spoken, static_cast<size_t>(taken), rng);
        if (!split) continue;
        jobs.push_back({&v, s.name, spoken, split});
        ++taken;
      }
    }
  }
  std::fprintf(stderr, "eval turns: %zu questions x (1 + %zu pauses), synthesizing (cache %s)\n",
               jobs.size(), pauses.size(), cache_dir.c_str());
  {
    std::vector<std::vector<Item>> per_job(jobs.size());
    std::atomic<size_t> next{0};
    std::mutex err_mu;
    Status first_error;
    auto work = [&] {
      for (size_t j; (j = next.fetch_add(1)) < jobs.size();) {
        const Job& job = jobs[j];
        auto whole = cache.Get(*job.voice, job.spoken);
        auto before = cache.Get(*job.voice, job.split->before);
        auto after = cache.Get(*job.voice, job.split->after);
        if (!whole.ok() || !before.ok() || !after.ok()) {
          std::lock_guard lock(err_mu);
          first_error = !whole.ok()    ? whole.status()
                        : !before.ok() ? before.status()
                                       : after.status();
          continue;
        }
        const std::string group = job.voice->tuning ? "tuning" : "report";
        const uint32_t seed = static_cast<uint32_t>(Fnv1a(job.voice->name + job.spoken));
        Item it{group, job.voice->name, job.set, "", job.spoken, Assemble(*whole, nullptr, 0, seed),
                {}};
        per_job[j].push_back(std::move(it));
        for (int p : pauses) {
          Item ip{group,
                  job.voice->name,
                  job.set,
                  job.split->kind,
                  job.split->before + " … " + job.split->after,
                  Assemble(*before, &*after, p, seed + static_cast<uint32_t>(p)),
                  {}};
          per_job[j].push_back(std::move(ip));
        }
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    if (!first_error.ok()) return first_error.WithContext("synthesis");
    for (auto& v : per_job) {
      for (auto& it : v) items->push_back(std::move(it));
    }
  }
  return Status::Ok();
}

// Real recordings: whole, and with pauses at a word boundary after a function word (word timings
// from the generic US English model, which knows their words).
Status AddRecordings(const std::vector<int>& pauses, std::vector<Item>* items) {
  asr::AsrConfig generic;
  generic.pocketsphinx.max_streams = 2;
  auto aligner = asr::CreateRecognizer(generic);
  if (!aligner.ok()) return aligner.status().WithContext("aligning recognizer");
  for (const Recording& r : Recordings()) {
    auto read = r.raw ? audio::ReadRawFile(r.path, 16000) : audio::ReadWavFile(r.path);
    if (!read.ok()) {
      std::fprintf(stderr, "note: %s: %s (left out)\n", r.path.c_str(),
                   read.status().message().c_str());
      continue;
    }
    auto narrow = audio::Resample(audio::AudioView(read->audio), 8000);
    if (!narrow.ok()) return narrow.status();
    std::vector<int16_t> speech = TrimSilence(narrow->samples);
    const uint32_t seed = static_cast<uint32_t>(Fnv1a(r.name));
    items->push_back(
        {"real", "human", r.name, "", r.text, Assemble(speech, nullptr, 0, seed), {}});
    // Align the trimmed speech.
    auto stream = (*aligner)->CreateStream(8000);
    if (!stream.ok()) return stream.status();
    if (Status s = (*stream)->AcceptFrames(audio::AudioView(speech, 8000)); !s.ok()) return s;
    auto result = (*stream)->Finish();
    if (!result.ok()) return result.status();
    const auto& w = result->words;
    std::optional<size_t> cut;
    std::string kind;
    for (size_t k = 1; k + 2 < w.size() && !cut; ++k) {
      for (const auto& [name, list] :
           {std::pair<std::string, const std::set<std::string>*>{"article", &kArticles},
            {"preposition", &kPrepositions},
            {"auxiliary", &kAuxiliaries}}) {
        if (list->count(w[k].word) && w[k + 1].start_ms >= w[k].end_ms) {
          cut = k;
          kind = name;
          break;
        }
      }
    }
    if (!cut) {  // no function word heard: the middle word boundary
      if (w.size() < 3) continue;
      cut = w.size() / 2 - 1;
      kind = "word";
    }
    const int64_t at_ms = (w[*cut].end_ms + w[*cut + 1].start_ms) / 2;
    const size_t at = std::min(speech.size(), static_cast<size_t>(at_ms) * 8);
    const std::vector<int16_t> a(speech.begin(), speech.begin() + static_cast<ptrdiff_t>(at));
    const std::vector<int16_t> b(speech.begin() + static_cast<ptrdiff_t>(at), speech.end());
    std::string said;
    for (size_t k = 0; k < w.size(); ++k)
      said += (k ? " " : "") + w[k].word + (k == *cut ? " …" : "");
    for (int p : pauses) {
      items->push_back({"real",
                       "human",
                       r.name,
                       kind,
                       said,
                       Assemble(a, &b, p, seed + static_cast<uint32_t>(p)),
                       {}});
    }
  }
  return Status::Ok();
}

// Every utterance through the VAD, the recognizer and the turn detector's inputs, on `threads`
// threads (each its own VAD; streams from the recognizer's pool).
Status TraceItems(std::vector<Item>& items, asr::Recognizer& recognizer,
                  const std::shared_ptr<const asr::TurnEndModel>& model,
                  const asr::LooksCompleteFn& looks_complete, const audio::VadConfig& vad_config,
                  int threads) {
  std::fprintf(stderr, "eval turns: tracing %zu utterances on %d threads\n", items.size(), threads);
  {
    std::atomic<size_t> next{0};
    std::mutex err_mu;
    Status first_error;
    auto work = [&] {
      auto vad = audio::Vad::Create(vad_config, 8000);
      if (!vad.ok()) {
        std::lock_guard lock(err_mu);
        first_error = vad.status();
        return;
      }
      for (size_t i; (i = next.fetch_add(1)) < items.size();) {
        auto stream = recognizer.CreateStream(8000);
        Result<asr::TurnTrace> trace =
            stream.ok() ? asr::TraceUtterance(items[i].utt, *vad, **stream, model, looks_complete)
                        : Result<asr::TurnTrace>(stream.status());
        if (!trace.ok()) {
          std::lock_guard lock(err_mu);
          first_error = trace.status();
          continue;
        }
        items[i].trace = std::move(*trace);
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    if (!first_error.ok()) return first_error.WithContext("trace");
  }
  return Status::Ok();
}

// The command line, checked.
struct TurnsOptions : speech_bench::CommonOptions {
  int per_set = 12;
  std::vector<int> pauses;
  bool no_real = false;
  bool tune = false;
};

// Errors are usage errors.
Result<TurnsOptions> ParseTurnsOptions(Args& args) {
  TurnsOptions o;
  auto per_set = args.GetInt("--questions", 12, 1, 10000);
  const std::string pauses_arg = args.GetOr("--pauses", "300,600,1000,1500");
  o.no_real = args.Has("--no-real");
  o.tune = args.Has("--tune");
  RETURN_IF_ERROR(speech_bench::ParseCommonOptions(args, o));
  RETURN_IF_ERROR(per_set.status());
  o.per_set = static_cast<int>(*per_set);
  for (const std::string& p : SplitList(pauses_arg)) {
    try {
      const int v = std::stoi(p);
      if (v < 100 || v > 5000) throw std::out_of_range("pause");
      o.pauses.push_back(v);
    } catch (...) {
      return InvalidArgumentError("--pauses takes pause lengths in ms, 100..5000, comma-separated");
    }
  }
  return o;
}

// The call's objects a trace uses: the recognizer with the knowledge base's domain model (as a
// call stack builds it), the turn detector's model, and the answerer's cached tiers for the old
// rule's hint. The domain model's files stay until this is destroyed (decoders are built as
// streams need them).
struct TurnObjects {
  std::unique_ptr<speech_bench::KbRecognizer> kb;
  std::shared_ptr<const asr::TurnEndModel> model;
  std::unique_ptr<answer::AnswerStack> stack;
};

Result<std::unique_ptr<TurnObjects>> BuildTurnObjects(const HotlineConfig& cfg) {
  auto o = std::make_unique<TurnObjects>();
  ASSIGN_OR_RETURN(o->kb, speech_bench::BuildKbRecognizer(cfg.asr, "eval_turns"));
  ASSIGN_OR_RETURN(o->model, asr::LoadTurnEndModel(cfg.asr.turn));
  answer::AnswerStackOptions so;
  so.kb_path = ":memory:";
  so.kb_csv = std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv";
  auto stack = answer::AnswerStack::Build(cfg.answer, answer::StoreConfig{}, so);
  if (!stack.ok()) return stack.status().WithContext("answer stack");
  o->stack = std::move(*stack);
  return o;
}

// The old rule's hint, as a call's pre-work sets it (pipeline/call_session_prework.cc): with
// pre-work ending turns, a partial of enough words that a cached tier would answer (not
// personally, not the fallback) looks complete; with call.understood_ends_turn, so does one that
// the line understands (Answerer::Understands) or that closes the call (a goodbye, a request for
// a person; any length).
asr::LooksCompleteFn LooksComplete(const pipeline::CallConfig& call, answer::Answerer& answerer) {
  return [&call, &answerer](const std::string& partial) {
    if (!call.prework || !call.prework_ends_turn) return false;
    const bool understood_ends = call.understood_ends_turn;
    if (understood_ends && pipeline::ClosesCall(call, pipeline::PhraseText(partial))) return true;
    if (static_cast<int>(Words(partial).size()) < call.prework_min_words) return false;
    answer::CallerSession caller("");
    auto peeked = answerer.Peek(partial, caller);
    if (peeked.ok() && peeked->has_value() && !(*peeked)->personal &&
        (*peeked)->tier != answer::AnswerTierId::kFallback) {
      return true;
    }
    if (!understood_ends) return false;
    auto understood = answerer.Understands(partial, caller);
    return understood.ok() && *understood;
  };
}

int RunEvalTurns(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--data", "--cache", "--questions", "--pauses", "--tuning-voices",
                                 "--report-voices", "--threads", "--config", "--set", "-o"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  auto options = ParseTurnsOptions(*args);
  if (!options.ok()) return UsageError(options.status().message(), kUsage);
  const TurnsOptions& o = *options;
  auto cfg = LoadHotlineConfig(o.config_path, o.overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  auto sets = turns::LoadQuestionSets(o.data);
  if (!sets.ok()) return Fail(sets.status());
  auto objects = BuildTurnObjects(*cfg);
  if (!objects.ok()) return Fail(objects.status());
  const asr::LooksCompleteFn looks_complete =
      LooksComplete(cfg->call, (*objects)->stack->answerer());

  std::vector<Item> items;
  if (Status st =
          SynthesizeItems(o.voices, *sets, o.per_set, o.pauses, o.cache_dir, o.threads, &items);
      !st.ok()) {
    return Fail(st);
  }
  if (!o.no_real) {
    if (Status st = AddRecordings(o.pauses, &items); !st.ok()) return Fail(st);
  }
  if (Status st = TraceItems(items, *(*objects)->kb->recognizer, (*objects)->model, looks_complete,
                             cfg->speech_in.vad, o.threads);
      !st.ok()) {
    return Fail(st);
  }

  const audio::EndpointerConfig ep = cfg->speech_in.endpointer;
  const asr::TurnDetectorConfig det = cfg->asr.turn;
  std::vector<asr::TurnPolicy> policies = eval_turns::StandardPolicies(ep, det);
  nlohmann::json js;
  if (o.tune) {
    nlohmann::json tuned;
    policies.push_back(eval_turns::TuneDetector(items, ep, det, &tuned));
    js["tuned"] = tuned;
  }
  js["utterances"] = items.size();
  js["pauses_ms"] = o.pauses;
  for (const Voice& v : o.voices) {
    js[v.tuning ? "tuning_voices" : "report_voices"].push_back(v.name);
  }
  js["questions_per_set_and_voice"] = o.per_set;
  js["real_recordings"] = !o.no_real;
  js["noise"] = "white, 40 dB under the speech; 8 kHz mu-law";
  eval_turns::AddPolicyReports(items, policies, ep, det, js);

  if (o.out_path) {
    std::ofstream f(*o.out_path);
    f << js.dump(2) << "\n";
    if (!f) return Fail("cannot write " + *o.out_path);
  }
  if (o.json) {
    std::printf("%s\n", js.dump(2).c_str());
    return 0;
  }
  eval_turns::PrintTurnsReport(js);
  return 0;
}

const CommandRegistrar kEvalTurns(
    {"eval turns", "turn-taking benchmark: false cut-offs against end-of-turn delay", kUsage,
     RunEvalTurns});

}  // namespace
}  // namespace hotline::cli
