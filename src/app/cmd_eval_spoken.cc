// `hotline eval spoken`: labelled questions spoken by several voices over a telephone line to the
// call's own recognizer and answer chain (eval/spoken_eval.h): WER, intent accuracy on text and
// on transcripts, answered right / wrong / fell back, recognizer final-pass time.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/call_runner.h"
#include "app/cli.h"
#include "app/domain.h"
#include "common/clock.h"
#include "common/log.h"
#include "eval/spoken_eval.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline eval spoken [question sets] [options]\n"
    "  Speaks labelled questions with several voices over a telephone line (8 kHz mu-law, "
    "optional\n"
    "  line noise) to the call's recognizer and answer chain, and reports per set, voice and "
    "line:\n"
    "  WER, intent accuracy on the text and on the transcript (the speech penalty), answered\n"
    "  right / wrong / fell back, and the recognizer's final-pass time P50/P99.\n"
    "question sets (at least one):\n"
    "  --banking77 FILE  Banking77 CSV (text,category), e.g. "
    "../shared/data/intent/banking77/test.csv\n"
    "  --clinc FILE      CLINC150 data_full.json; --clinc-key KEY picks the array (default "
    "oos_test;\n"
    "                    oos_* questions must fall back)\n"
    "  --heldout FILE    TSV with question and intent columns "
    "(assets/models/demo-agent.heldout.tsv)\n"
    "  --questions FILE  TSV with a header naming a question column (and intent, or domain where\n"
    "                    `oos` marks out-of-scope questions; others are unlabelled)\n"
    "options:\n"
    "  --domain NAME     retail (default: assets/kb/bitext_kb.csv, config/hotline.yaml) or\n"
    "                    banking (assets/kb/banking/kb.csv, config/banking.yaml)\n"
    "  --kb FILE         knowledge-base CSV (default: the domain's)\n"
    "  --config FILE     configuration (default: the domain's preset); --set a.b=v overrides\n"
    "  --voices LIST     BACKEND/VOICE or tuning | report | all, comma-separated (default all);\n"
    "                    tuning voices:\n"
    "                    flite/cmu_us_slt, flite/cmu_us_awb, espeak-ng/en-us; report only:\n"
    "                    flite/cmu_us_rms, flite/cmu_us_kal16, espeak-ng/en-gb-x-rp;\n"
    "                    text/written: the written question as a recognizer that heard every\n"
    "                    word gives it\n"
    "                    (no synthesis or recognition: the ceiling, and a fast tuning loop)\n"
    "  --snr LIST        line conditions: clean and/or SNRs in dB, e.g. clean,20,10 (default "
    "clean)\n"
    "  --limit N         at most N questions per set, evenly spread (default 0: all)\n"
    "  --cache DIR       synthesized speech kept between runs (default $XDG_CACHE_HOME/hotline/\n"
    "                    spoken or ~/.cache/hotline/spoken; '' keeps none)\n"
    "  --json            print the report as JSON (with every question unless --no-items)\n"
    "  -o FILE           also write the JSON report to FILE\n"
    "  --quiet           no progress on stderr\n";

std::string DefaultCacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return std::string(x) + "/hotline/spoken";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::string(h) + "/.cache/hotline/spoken";
  }
  return (std::filesystem::temp_directory_path() / "hotline-spoken").string();
}

Result<std::vector<double>> ParseSnrs(const std::string& spec) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    if (item == "clean") {
      out.push_back(eval::kCleanLine);
      continue;
    }
    char* rest = nullptr;
    const double v = std::strtod(item.c_str(), &rest);
    if (rest == item.c_str() || *rest != '\0' || !(v > -20 && v < 100)) {
      return InvalidArgumentError("--snr '" + item +
                                  "': write clean or a number of dB in (-20, 100)");
    }
    out.push_back(v);
  }
  if (out.empty()) return InvalidArgumentError("--snr: no line condition");
  return out;
}

// The question sets named on the command line.
struct SetPaths {
  std::optional<std::string> banking, clinc;
  std::string clinc_key;
  std::optional<std::string> heldout, questions;
};

Result<std::vector<eval::QuestionSet>> LoadSets(const SetPaths& p) {
  std::vector<eval::QuestionSet> sets;
  if (p.banking) {
    ASSIGN_OR_RETURN(
        eval::QuestionSet s,
        eval::LoadBanking77(*p.banking,
                            "banking77_" + std::filesystem::path(*p.banking).stem().string()));
    sets.push_back(std::move(s));
  }
  if (p.clinc) {
    ASSIGN_OR_RETURN(eval::QuestionSet s,
                     eval::LoadClinc(*p.clinc, p.clinc_key, "clinc_" + p.clinc_key));
    sets.push_back(std::move(s));
  }
  if (p.heldout) {
    ASSIGN_OR_RETURN(eval::QuestionSet s, eval::LoadQuestionTsv(*p.heldout, "heldout"));
    sets.push_back(std::move(s));
  }
  if (p.questions) {
    ASSIGN_OR_RETURN(
        eval::QuestionSet s,
        eval::LoadQuestionTsv(*p.questions, std::filesystem::path(*p.questions).stem().string()));
    sets.push_back(std::move(s));
  }
  return sets;
}

int RunEvalSpoken(std::span<const std::string> argv) {
  auto args = Args::Parse(
      argv, {"--banking77", "--clinc", "--clinc-key", "--heldout", "--questions", "--domain",
             "--kb", "--config", "--set", "--voices", "--snr", "--limit", "--cache", "-o"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  auto domain = ResolveDomain(args->GetOr("--domain", "retail"));
  if (!domain.ok()) return UsageError(domain.status().message(), kUsage);
  const std::string kb_csv = args->GetOr("--kb", domain->kb_csv);
  const std::string config_path = args->GetOr("--config", domain->config);
  const std::vector<std::string> overrides = args->GetAll("--set");
  const std::string voices_spec = args->GetOr("--voices", "all");
  const std::string snr_spec = args->GetOr("--snr", "clean");
  auto limit = args->GetInt("--limit", 0, 0, 10000000);
  const std::string cache_dir = args->GetOr("--cache", DefaultCacheDir());
  const bool json = args->Has("--json");
  const bool no_items = args->Has("--no-items");
  const bool quiet = args->Has("--quiet");
  const std::optional<std::string> out_path = args->Get("-o");
  const SetPaths paths{args->Get("--banking77"), args->Get("--clinc"),
                       args->GetOr("--clinc-key", "oos_test"), args->Get("--heldout"),
                       args->Get("--questions")};
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  if (!limit.ok()) return UsageError(limit.status().message(), kUsage);
  if (!paths.banking && !paths.clinc && !paths.heldout && !paths.questions) {
    return UsageError("give at least one question set", kUsage);
  }
  auto voices = eval::ParseVoices(voices_spec);
  if (!voices.ok()) return UsageError(voices.status().message(), kUsage);
  auto snrs = ParseSnrs(snr_spec);
  if (!snrs.ok()) return UsageError(snrs.status().message(), kUsage);
  auto sets = LoadSets(paths);
  if (!sets.ok()) return Fail(sets.status());

  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  pipeline::CallStackOptions options = CallStackOptionsFrom(*cfg);
  options.call.workers = 1;
  options.call.answer_workers = 1;
  options.audio_cache = false;
  // In-memory answer store: an evaluation must not reach, or fill, a configured Redis.
  options.store = answer::StoreConfig{};
  options.call.record_db.clear();
  // The run keeps the answer chain's time, so what stays cached does not depend on the machine's
  // speed and every cell starts with empty caches (eval::SpokenEvalOptions::answer_clock).
  FakeClock answer_clock;
  options.answer_clock = &answer_clock;
  const std::filesystem::path kb_db =
      std::filesystem::temp_directory_path() /
      ("hotline-eval-spoken-" + std::to_string(getpid()) + ".kb.sqlite");
  options.kb_db = kb_db.string();
  options.kb_csv = kb_csv;
  auto cleanup = [&kb_db] {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", ".lm", ".lm.dict"}) {
      std::filesystem::remove(kb_db.string() + suffix, ec);
    }
  };
  auto stack = pipeline::CallStack::Build(options);
  if (!stack.ok()) {
    cleanup();
    return Fail(stack.status());
  }
  eval::SpokenEvalOptions eo;
  eo.voices = std::move(*voices);
  eo.snrs_db = std::move(*snrs);
  eo.limit = static_cast<size_t>(*limit);
  eo.cache_dir = cache_dir;
  eo.keep_items = !no_items;
  eo.answer_clock = &answer_clock;
  if (!quiet) {
    eo.progress = [](size_t done, size_t total, const std::string& cell) {
      if (done == total || done % 25 == 0) {
        std::fprintf(stderr, "\r%zu/%zu  %-60s", done, total, cell.c_str());
        if (done == total) std::fprintf(stderr, "\n");
      }
    };
  }
  auto report = eval::RunSpokenEval(**stack, *sets, cfg->tts, eo);
  stack->reset();
  cleanup();
  if (!report.ok()) return Fail(report.status());
  if (out_path) {
    std::ofstream out(*out_path);
    if (!(out << eval::SpokenReportJson(*report, !no_items) << "\n")) {
      return Fail("cannot write " + *out_path);
    }
  }
  if (json) {
    std::cout << eval::SpokenReportJson(*report, !no_items) << "\n";
  } else {
    std::printf("spoken questions -> 8 kHz mu-law line -> %s recognizer -> answer chain (%s)\n",
                cfg->asr.backend.c_str(), kb_csv.c_str());
    std::fputs(eval::FormatSpokenTable(*report).c_str(), stdout);
  }
  return 0;
}

const CommandRegistrar kEvalSpoken({"eval spoken",
                                    "speak labelled questions over a telephone line to the call's "
                                    "recognizer and answer chain: WER, speech penalty, answers",
                                    kUsage, RunEvalSpoken});

}  // namespace
}  // namespace hotline::cli
