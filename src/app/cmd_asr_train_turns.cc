// `hotline asr train-turns`: learns the turn-end model (asr/turn_end_model.h) from the train
// splits of the question corpora (app/turn_questions.h).
#include <cstdio>
#include <iostream>

#include "app/cli.h"
#include "app/turn_questions.h"
#include "asr/turn_end_model.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline asr train-turns [--data DIR] -o MODEL [--order N] [--min-count N]\n"
    "\n"
    "Learns where a caller's question can end (the turn detector's words model, asr.turn.model)\n"
    "from the TRAIN splits of Banking77, CLINC150 and the Bitext customer-support questions: for\n"
    "every n-gram context, how often a question ends right after it.\n"
    "  --data DIR      shared data folder (default ../shared/data)\n"
    "  -o MODEL        output file (the shipped one is assets/turns/turn_end.model)\n"
    "  --order N       longest context in words, 1..6 (default 3)\n"
    "  --min-count N   drop contexts seen fewer times (default 2)\n"
    "  --alpha A       smoothing towards shorter contexts (default 2)\n";

int RunTrainTurns(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--data", "-o", "--order", "--min-count", "--alpha"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  const std::string data = args.GetOr("--data", "../shared/data");
  const std::string out = args.GetOr("-o", "");
  auto order = args.GetInt("--order", 3, 1, 6);
  auto min_count = args.GetInt("--min-count", 2, 1, 1000000);
  auto alpha = args.GetDouble("--alpha", 2.0, 1e-3, 1e6);
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!order.ok()) return UsageError(order.status().message(), kUsage);
  if (!min_count.ok()) return UsageError(min_count.status().message(), kUsage);
  if (!alpha.ok()) return UsageError(alpha.status().message(), kUsage);
  if (out.empty()) return UsageError("asr train-turns needs -o MODEL", kUsage);
  if (!args.positional().empty()) return UsageError("unexpected argument", kUsage);

  auto sets = turns::LoadQuestionSets(data);
  if (!sets.ok()) return Fail(sets.status());
  std::vector<std::string> questions;
  std::string provenance =
      "Turn-end model of Hotline's turn detector (hotline asr train-turns --order " +
      std::to_string(*order) + " --min-count " + std::to_string(*min_count) +
      ").\n"
      "Trained on the train splits only:\n";
  for (const auto& s : *sets) {
    questions.insert(questions.end(), s.train.begin(), s.train.end());
    provenance += "  " + s.name + ": " + std::to_string(s.train.size()) + " questions\n";
  }
  provenance +=
      "Banking77 (PolyAI, CC BY 4.0); CLINC150 (Clinc, CC BY 3.0); Bitext customer-support corpus\n"
      "(Bitext, CDLA-Sharing-1.0; split as `hotline train` splits it).";
  asr::TurnEndModelOptions o;
  o.order = static_cast<int>(*order);
  o.min_count = static_cast<int>(*min_count);
  o.alpha = *alpha;
  auto model = asr::TurnEndModel::Train(questions, o);
  if (!model.ok()) return Fail(model.status());
  if (Status s = model->Save(out, provenance); !s.ok()) return Fail(s);
  std::printf("%s: %zu contexts from %lld training questions (prior end probability %.3f)\n",
              out.c_str(), model->contexts(), static_cast<long long>(model->questions()),
              model->prior());
  return 0;
}

const CommandRegistrar kTrainTurns({"asr train-turns",
                                    "learn where callers' questions can end (turn detector)",
                                    kUsage, RunTrainTurns});

}  // namespace
}  // namespace hotline::cli
