// bench_spoken [--limit N] [--voices LIST] [--snr LIST] [--line banking|retail|both]
//              [--banking77 CSV] [--lm kb-only|mixed] [--domain-repeat K]:
// the spoken-question benchmark (eval/spoken_eval.h) on a fixed run, printing the table
// `hotline eval spoken` prints:
//   banking line (config/banking.yaml, assets/kb/banking/kb.csv): Banking77 test, CLINC150
//   oos_test; retail line (config/hotline.yaml, the demo knowledge base): the demo model's
//   held-out Bitext questions. The written line and the report-only voices, clean line and 20 dB
//   SNR, 40 questions per set by default. Data: ../shared/data (read, never copied). Synthesized
//   speech is cached in /tmp/hotline-bench-spoken between runs.
// --lm kb-only builds the call's language model from the knowledge base alone (the model calls
// had before the broad corpus), for the comparison; --domain-repeat K mixes the broad corpus with
// the knowledge base counted K times (the default model is the call stack's own, K = 3).
// --banking77 CSV replaces the Banking77 test set and --oos-key oos_val CLINC150's oos_test (the
// dev splits, for tuning: scripts/banking77_dev.py); --set overrides configuration keys.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "answer/kb/knowledge_base.h"
#include "app/hotline_config.h"
#include "asr/lm_builder.h"
#include "common/build_paths.h"
#include "common/clock.h"
#include "common/log.h"
#include "eval/spoken_eval.h"

using namespace hotline;

namespace {

struct LmChoice {
  bool kb_only = false;
  int domain_repeat = 0;  // 0: the call stack's own model
};

Result<eval::SpokenReport> RunLine(const std::string& config, const std::string& kb_csv,
                                   const std::vector<eval::QuestionSet>& sets,
                                   const eval::SpokenEvalOptions& eo, const LmChoice& lm,
                                   const std::vector<std::string>& overrides) {
  ASSIGN_OR_RETURN(HotlineConfig cfg, LoadHotlineConfig(config, overrides));
  const std::string lm_path = (std::filesystem::temp_directory_path() /
                               ("hotline-bench-spoken-" + std::to_string(getpid()) + ".lm"))
                                  .string();
  if (lm.kb_only || lm.domain_repeat > 0) {
    ASSIGN_OR_RETURN(std::vector<std::string> rows, asr::ReadTrainingTexts(kb_csv, "questions"));
    std::vector<std::string> texts;
    for (const std::string& row : rows) {
      for (std::string& q : answer::SplitQuestions(row)) texts.push_back(std::move(q));
    }
    asr::LmMix mix;
    if (lm.kb_only) mix.broad_corpus.clear();
    if (lm.domain_repeat > 0) mix.domain_repeat = lm.domain_repeat;
    ASSIGN_OR_RETURN(asr::LmBuildStats st,
                     asr::WriteDomainLm(texts, cfg.asr.pocketsphinx.dictionary, lm_path, 3, mix));
    std::fprintf(stderr, "language model: %lld words in its vocabulary\n",
                 static_cast<long long>(st.vocabulary));
    cfg.asr.pocketsphinx.domain_lm = lm_path;
    cfg.asr.pocketsphinx.dictionary = lm_path + ".dict";
  }
  pipeline::CallStackOptions o;
  o.asr = cfg.asr;
  o.tts = cfg.tts;
  o.answer = cfg.answer;
  o.llm = cfg.llm;
  o.call = cfg.call;
  o.call.record_db.clear();
  o.vad = cfg.speech_in.vad;
  o.endpointer = cfg.speech_in.endpointer;
  o.barge_in = cfg.speech_in.barge_in;
  o.resampler = cfg.audio.resampler;
  o.call.workers = 1;
  o.call.answer_workers = 1;
  o.audio_cache = false;
  o.kb_db = (std::filesystem::temp_directory_path() /
             ("hotline-bench-spoken-" + std::to_string(getpid()) + ".sqlite"))
                .string();
  o.kb_csv = kb_csv;
  // The run keeps the answer chain's time: every cell starts with empty caches, whatever the
  // machine's speed (eval::SpokenEvalOptions::answer_clock).
  FakeClock answer_clock;
  o.answer_clock = &answer_clock;
  auto stack = pipeline::CallStack::Build(o);
  if (!stack.ok()) return stack.status();
  eval::SpokenEvalOptions timed = eo;
  timed.answer_clock = &answer_clock;
  auto r = eval::RunSpokenEval(**stack, sets, cfg.tts, timed);
  stack->reset();
  std::error_code ec;
  for (const char* s : {"", "-wal", "-shm", ".lm", ".lm.dict"}) {
    std::filesystem::remove(o.kb_db + s, ec);
  }
  std::filesystem::remove(lm_path, ec);
  std::filesystem::remove(lm_path + ".dict", ec);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  size_t limit = 40;
  std::string voices = "text/written,report", snrs = "clean,20", line = "both";
  std::string banking_csv = std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/banking77/test.csv";
  LmChoice lm;
  std::string oos_key = "oos_test";
  std::vector<std::string> overrides;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (!std::strcmp(argv[i], "--limit") && more) {
      limit = static_cast<size_t>(std::atol(argv[++i]));
    } else if (!std::strcmp(argv[i], "--voices") && more) {
      voices = argv[++i];
    } else if (!std::strcmp(argv[i], "--snr") && more) {
      snrs = argv[++i];
    } else if (!std::strcmp(argv[i], "--line") && more) {
      line = argv[++i];
    } else if (!std::strcmp(argv[i], "--banking77") && more) {
      banking_csv = argv[++i];
    } else if (!std::strcmp(argv[i], "--lm") && more) {
      lm.kb_only = std::strcmp(argv[++i], "kb-only") == 0;
    } else if (!std::strcmp(argv[i], "--oos-key") && more) {
      oos_key = argv[++i];
    } else if (!std::strcmp(argv[i], "--set") && more) {
      overrides.push_back(argv[++i]);
    } else if (!std::strcmp(argv[i], "--domain-repeat") && more) {
      lm.domain_repeat = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: bench_spoken [--limit N] [--voices LIST] [--snr clean,20,10] [--line "
                   "banking|retail|both] [--banking77 CSV] [--lm kb-only|mixed] "
                   "[--domain-repeat K] [--oos-key oos_val] [--set key=value]\n");
      return 2;
    }
  }
  InitLogging("warn");
  const std::string src = HOTLINE_SOURCE_DIR, data = HOTLINE_SHARED_DATA_DIR;
  eval::SpokenEvalOptions eo;
  auto v = eval::ParseVoices(voices);
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().message().c_str());
    return 2;
  }
  eo.voices = *v;
  eo.snrs_db.clear();
  for (const char* tok = snrs.c_str(); *tok != '\0';) {
    const char* comma = std::strchr(tok, ',');
    const std::string item(tok, comma ? comma - tok : std::strlen(tok));
    eo.snrs_db.push_back(item == "clean" ? eval::kCleanLine : std::atof(item.c_str()));
    tok = comma ? comma + 1 : tok + item.size();
  }
  eo.limit = limit;
  eo.cache_dir = "/tmp/hotline-bench-spoken";
  eo.keep_items = false;
  eo.progress = [](size_t done, size_t total, const std::string& cell) {
    if (done % 20 == 0 || done == total)
      std::fprintf(stderr, "\r%zu/%zu %-50s", done, total, cell.c_str());
  };
  auto banking =
      eval::LoadBanking77(banking_csv, std::filesystem::path(banking_csv).stem().string() == "test"
                                           ? "banking77_test"
                                           : std::filesystem::path(banking_csv).stem().string());
  auto oos = eval::LoadClinc(data + "/intent/clinc150/data_full.json", oos_key, "clinc_" + oos_key);
  auto heldout = eval::LoadQuestionTsv(src + "/assets/models/demo-agent.heldout.tsv", "heldout");
  for (const Status& s : {banking.status(), oos.status(), heldout.status()}) {
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
  }
  if (line == "banking" || line == "both") {
    auto bank = RunLine(src + "/config/banking.yaml", src + "/assets/kb/banking/kb.csv",
                        {*banking, *oos}, eo, lm, overrides);
    if (!bank.ok()) {
      std::fprintf(stderr, "banking line: %s\n", bank.status().message().c_str());
      return 1;
    }
    std::fprintf(stderr, "\n");
    std::printf("banking line (config/banking.yaml)\n%s\n", eval::FormatSpokenTable(*bank).c_str());
  }
  if (line == "retail" || line == "both") {
    auto retail = RunLine(src + "/config/hotline.yaml", src + "/assets/kb/bitext_kb.csv",
                          {*heldout}, eo, lm, overrides);
    if (!retail.ok()) {
      std::fprintf(stderr, "retail line: %s\n", retail.status().message().c_str());
      return 1;
    }
    std::fprintf(stderr, "\n");
    std::printf("retail line (config/hotline.yaml)\n%s", eval::FormatSpokenTable(*retail).c_str());
  }
  return 0;
}
