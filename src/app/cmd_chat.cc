// hotline chat TURN...: typed caller turns through the whole answering chain — the turn's dialogue
// act as a call reads it (goodbye, agent request, thanks, "say that again"), normalization,
// intent, the caches, the knowledge base, the account tools behind PIN verification, the model —
// and each answer spoken by the line's synthesizer to DIR/reply-N.wav. No recognizer is needed,
// so a line whose callers' language the embedded recognizer does not hear (the Mandarin line)
// runs end to end on a fresh machine. Turns come from the arguments, or one per line on stdin.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "answer/answer_stack.h"
#include "answer/understand/pii.h"
#include "app/cli.h"
#include "app/domain.h"
#include "app/hotline_config.h"
#include "audio/resampler.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "common/clock.h"
#include "common/log.h"
#include "llm/llm_config.h"
#include "pipeline/call_session.h"
#include "pipeline/dialogue_acts.h"
#include "pipeline/social_reply.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline chat [TURN ...] [--domain NAME] [--config FILE] [--set key=value ...]\n"
    "                    [--kb FILE.csv] [--caller-id NUMBER] [--out DIR] [--no-audio]\n"
    "  Typed caller turns through the answering chain (no recognizer), each answer spoken to\n"
    "  DIR/reply-N.wav (default DIR: hotline-chat). Turns come from the arguments, else one per\n"
    "  line on stdin. --domain selects a shipped line (retail, banking, telecom_zh). The caller\n"
    "  ID (default +15550100, a demo customer) decides whose account a PIN opens.\n";

constexpr int kPhoneRateHz = 8000;
constexpr size_t kMaxTurnBytes = 4096;

// Speaks `reply` to `wav` (8 kHz μ-law) and says where; 0, or the exit status of a failure.
int Speak(tts::Synthesizer& synth, const std::string& reply, MonoTime turn_start,
          const std::filesystem::path& wav) {
  std::vector<int16_t> pcm;
  double first_audio_ms = -1;
  Status said = synth.Synthesize(reply, [&](std::span<const int16_t> chunk) {
    if (first_audio_ms < 0) first_audio_ms = MillisBetween(turn_start, SystemClock::Get().Now());
    pcm.insert(pcm.end(), chunk.begin(), chunk.end());
    return Status::Ok();
  });
  if (!said.ok()) return Fail(said.WithContext("reply synthesis"));
  auto phone = audio::Resample(audio::AudioView(pcm, synth.sample_rate_hz()), kPhoneRateHz);
  if (!phone.ok()) return Fail(phone.status());
  if (Status s = audio::WriteWavFile(wav.string(), *phone, audio::Codec::kMulaw); !s.ok()) {
    return Fail(s);
  }
  std::printf("  spoken:  %s (%lld ms of audio; first audio %.1f ms after the turn)\n",
              wav.string().c_str(), static_cast<long long>(phone->duration_ms()), first_audio_ms);
  return 0;
}

int RunChat(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--config", "--set", "--kb", "--domain", "--caller-id", "--out"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  DomainFiles domain{std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv", ""};
  if (auto name = args.Get("--domain")) {
    auto resolved = ResolveDomain(*name);
    if (!resolved.ok()) return Fail(resolved.status());
    domain = *resolved;
  }
  const std::string config_path = args.GetOr("--config", domain.config);
  const std::vector<std::string> overrides = args.GetAll("--set");
  const std::string kb_csv = args.GetOr("--kb", domain.kb_csv);
  const std::string caller_id = args.GetOr("--caller-id", "+15550100");
  const std::filesystem::path out_dir = args.GetOr("--out", "hotline-chat");
  const bool speak = !args.Has("--no-audio");
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);

  std::vector<std::string> turns(args.positional().begin(), args.positional().end());
  if (turns.empty()) {
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) turns.push_back(std::move(line));
    }
  }
  if (turns.empty()) return UsageError("no turns: give them as arguments or on stdin", kUsage);
  for (const std::string& t : turns) {
    if (t.size() > kMaxTurnBytes) {
      return UsageError("a turn is " + std::to_string(t.size()) + " bytes; at most " +
                            std::to_string(kMaxTurnBytes),
                        kUsage);
    }
  }

  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  if (speak) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return Fail("cannot create " + out_dir.string() + ": " + ec.message());
  }

  std::unique_ptr<tts::Synthesizer> synth;
  if (speak) {
    auto made = tts::CreateSynthesizer(cfg->tts);
    if (!made.ok()) return Fail(made.status().WithContext("speech synthesizer"));
    synth = std::move(*made);
  }
  auto model = llm::CreateLanguageModel(cfg->llm);
  if (!model.ok()) return Fail(model.status().WithContext("language model"));
  // The knowledge base is imported afresh for each chat and lives in memory: chats run side by
  // side (from one folder, or a test suite's) never share, and never corrupt, one SQLite file.
  answer::AnswerStackOptions stack_options;
  stack_options.kb_path = ":memory:";
  stack_options.kb_csv = kb_csv;
  stack_options.llm = model->get();
  auto stack = answer::AnswerStack::Build(cfg->answer, cfg->store, stack_options);
  if (!stack.ok()) return Fail(stack.status().WithContext("answer stack"));
  answer::Answerer& answerer = (*stack)->answerer();

  answer::CallerSession caller(caller_id);
  std::vector<answer::ChatMessage> history;
  // As a call does, the turn's dialogue act comes first: a goodbye or a request for a person ends
  // the exchange, a thanks or "say that again" is the line's own reply (pipeline/dialogue_acts.h).
  pipeline::DialogueState dialogue;
  std::string last_reply;
  int misses = 0;  // unanswerable turns in a row (pipeline::ReplyToMiss)
  int n = 0;
  for (const std::string& turn : turns) {
    ++n;
    const MonoTime start = SystemClock::Get().Now();
    const std::string phrase = pipeline::PhraseText(turn);
    const pipeline::DialogueAct act = pipeline::ReadDialogueAct(cfg->call, phrase, dialogue);
    if (!phrase.empty()) dialogue = {};  // a turn heard as nothing keeps "anything else?" open
    std::string reply;
    std::string tier;
    std::string ends;
    if (act == pipeline::DialogueAct::kGoodbye) {
      reply = cfg->call.goodbye_text;
      tier = "goodbye";
      ends = "the line hangs up";
    } else if (act == pipeline::DialogueAct::kAgent) {
      reply = cfg->call.transfer_text;
      tier = "transfer";
      ends = "the call goes to an agent";
    } else if (cfg->call.social_replies && pipeline::IsSocialAct(act)) {
      reply = pipeline::SocialReply(cfg->call, act, last_reply);
      tier = "social (" + std::string(pipeline::DialogueActName(act)) + ")";
      dialogue = pipeline::StateAfterReply(cfg->call, reply, pipeline::TurnTier::kSocial);
    } else {
      auto answered = answerer.Answer(turn, caller, history);
      if (!answered.ok()) return Fail(answered.status().WithContext("answer"));
      reply = answered->text;
      // As a call does: the first unanswerable question gets the rephrase request, the next one
      // (or a verification lock-out) goes to a person.
      const bool fallback = answered->tier == answer::AnswerTierId::kFallback;
      const pipeline::MissReply miss =
          fallback ? pipeline::ReplyToMiss(cfg->call, misses, answered->degraded, false)
                   : pipeline::MissReply{};
      misses = fallback ? misses + 1 : 0;
      if (miss.text != nullptr) reply = *miss.text;
      if (miss.transfer || answered->transfer) ends = "the call goes to an agent";
      dialogue = pipeline::StateAfterReply(cfg->call, reply, pipeline::TierOf(answered->tier));
      std::string from;
      for (const std::string& id : answered->passage_ids) {
        from += (from.empty() ? "" : ", ") + id;
      }
      tier =
          std::string(answer::TierName(answered->tier)) + (from.empty() ? "" : " (" + from + ")");
    }
    const double answer_ms = MillisBetween(start, SystemClock::Get().Now());
    std::printf("\nturn %d\n  caller:  \"%s\"\n  answer:  \"%s\"\n  tier:    %s   (%.1f ms)\n", n,
                turn.c_str(), reply.c_str(), tier.c_str(), answer_ms);
    if (!ends.empty()) {
      std::printf(
          "  then:    %s%s\n", ends.c_str(),
          n < static_cast<int>(turns.size()) ? "; the turns after this one are not read" : "");
    }
    if (!reply.empty()) last_reply = reply;
    // As a call does: what the caller said is kept redacted (a PIN never reaches the model).
    history.push_back({"user", answer::RedactPii(turn)});
    history.push_back({"assistant", reply});
    if (synth && !reply.empty()) {
      if (int rc = Speak(*synth, reply, start, out_dir / ("reply-" + std::to_string(n) + ".wav"));
          rc != 0) {
        return rc;
      }
    }
    if (!ends.empty()) break;
  }
  return 0;
}
const CommandRegistrar kChat({"chat", "typed caller turns through the answering chain, spoken",
                              kUsage, RunChat});

}  // namespace
}  // namespace hotline::cli
