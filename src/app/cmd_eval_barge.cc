// `hotline eval barge`: barge-in against backchannels. The caller talks over the agent's reply —
// a backchannel ("uh huh", "okay", "I see"), the agent's last words said back, a cough or a
// click on the line, or a real interruption (a short "wait" or "no, that's not right", or a new
// question of the public sets) — and the call's own Listener (VAD, barge-in detector, endpointer,
// the recognizer with the knowledge base's domain model) decides, frame by frame, whether to
// pause, resume or stop the agent. Each trial runs twice in the same process: with the
// duration-only rule (speech_in.barge_in.check_words = false: min_speech_ms of caller speech
// stops the agent) as the baseline, and with the configured rule.
//
// The line: the agent's reply (flite kal, a voice no caller uses) plays from 0 ms; its echo comes
// back 40 ms later, --erl dB down, while it is not paused or stopped; the caller's speech starts
// at 0.9-2.7 s; white noise 40 dB under the caller's speech; 8 kHz μ-law. Tuning voices say
// train-split questions, report voices test-split ones; the backchannels, interruptions and
// repeats are the same words for every voice (they are not tuned on: the word list of
// pipeline/dialogue_acts.h was written before this benchmark existed).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "app/cli.h"
#include "app/hotline_config.h"
#include "app/speech_bench.h"
#include "app/turn_questions.h"
#include "asr/lm_builder.h"
#include "audio/g711.h"
#include "audio/pcm.h"
#include "common/log.h"
#include "common/metrics.h"
#include "pipeline/listener.h"

namespace hotline::cli {
namespace {

using speech_bench::Voice;

constexpr char kUsage[] =
    "usage: hotline eval barge [options]\n"
    "  Barge-in benchmark: the caller talks over the agent's reply with backchannels, repeats,\n"
    "  coughs, clicks and real interruptions; how often the agent is stopped, how fast, and how\n"
    "  long backchannels pause it, for the duration-only rule and the configured one.\n"
    "  --data DIR        shared data folder (default ../shared/data)\n"
    "  --cache DIR       synthesized audio cache (default $XDG_CACHE_HOME or ~/.cache, "
    "/hotline/turns)\n"
    "  --questions N     interrupting questions per set (Banking77, CLINC150, Bitext) and voice\n"
    "                    (default 3)\n"
    "  --tuning-voices L tuning voices, train-split questions (default slt,rms)\n"
    "  --report-voices L report voices, test-split questions (default awb,kal16,espeak)\n"
    "  --erl DB          echo return loss of the line (default 20)\n"
    "  --kinds LIST      only these kinds of trial (backchannel, unlisted, repeat, cough,\n"
    "                    click, interruption, question; default all)\n"
    "  --threads N       trials in parallel (default 2)\n"
    "  --config FILE     configuration (speech_in.*, asr.*); --set a.b=v\n"
    "  --json            print the report as JSON;  -o FILE  also write the JSON to FILE\n";

// Replies of the kind the line gives, 9-12 s spoken: the caller talks over these.
const char* const kAgentReplies[] = {
    "You can track your order from the orders page of your account. Select the order and you "
    "will see where it is and when it should arrive. If it has not moved for three days, we can "
    "look into it for you.",
    "Refunds go back to the card you paid with. Once we receive the item, the refund takes five "
    "to seven business days to appear on your statement, and we will send you an email when it "
    "is on its way.",
    "To change your delivery address, open the order in your account and choose change address. "
    "This works until the order has been dispatched. After that, the courier can redirect it for "
    "a small fee.",
    "Your card can be frozen straight away in the app. Go to cards, choose the card, and tap "
    "freeze. Nobody can use it while it is frozen, and you can unfreeze it at any time.",
    "A transfer between your own accounts arrives at once. A transfer to another bank usually "
    "arrives the same day, but it can take up to two working days if it is sent late in the "
    "afternoon.",
    "You can cancel your order within one hour of placing it. Open the order, choose cancel, and "
    "confirm. If it has already shipped, you can return it once it arrives and we will refund "
    "you in full.",
};
constexpr const char* kAgentVoice = "kal";

const char* const kBackchannels[] = {"uh huh",      "mm hm",     "okay",       "right", "yeah",
                                     "yes",         "i see",     "got it",     "sure",  "alright",
                                     "okay thanks", "yeah okay", "right right"};
// Backchannels phrased otherwise than the recognizer's backchannel phrases
// (pipeline::EnglishBackchannels, which the listed ones above share): held out from that list.
const char* const kUnlistedBackchannels[] = {"oh okay",   "mhm yeah",    "oh i see",
                                             "ah right",  "sounds good", "that makes sense",
                                             "okay sure", "yep yep"};
const char* const kInterruptions[] = {"wait",
                                      "no that's not right",
                                      "sorry what was that",
                                      "hold on a second",
                                      "stop",
                                      "excuse me",
                                      "can you repeat that",
                                      "no no",
                                      "actually i have a different question",
                                      "what about my refund"};
constexpr int kOnsetsMs[] = {900, 1500, 2100, 2700};
constexpr int kEchoDelayFrames = 2;

struct Trial {
  std::string kind;  // backchannel | repeat | cough | click | interruption | question
  const Voice* voice = nullptr;
  std::string text;
  size_t reply = 0;
  int onset_ms = 0;
  std::vector<int16_t> caller;  // 8 kHz
  uint32_t seed = 0;
};

bool Interrupts(const std::string& kind) { return kind == "interruption" || kind == "question"; }

struct Outcome {
  bool stopped = false;  // the agent's turn was cancelled (kBargeIn)
  int quiet_ms = -1;     // from the caller's onset to the agent falling silent (pause or stop)
  int confirm_ms = -1;   // ... to kBargeIn
  int paused_ms = 0;     // the agent paused and then resumed: silence the caller heard
  int pauses = 0;
  std::string heard;  // the recognizer's final transcripts of the utterances in the trial
};

// A cough: two bursts of low-passed noise with a fast decay. A click: 20 ms of loud noise.
std::vector<int16_t> NonSpeech(const std::string& kind, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  std::vector<int16_t> x;
  auto burst = [&](int ms, double amp, double decay_ms, double smooth) {
    double lp = 0;
    for (int i = 0; i < ms * 8; ++i) {
      lp = smooth * lp + (1 - smooth) * n(rng);
      const double env = std::exp(-i / (decay_ms * 8));
      x.push_back(audio::SaturateToInt16(static_cast<int32_t>(std::lrint(amp * env * lp * 3))));
    }
  };
  if (kind == "cough") {
    burst(140, 9000, 60, 0.6);
    x.insert(x.end(), 80 * 8, 0);
    burst(110, 7000, 50, 0.6);
  } else {
    burst(20, 12000, 8, 0.0);
  }
  return x;
}

// The agent's words just before `onset_ms` of its reply (spoken at a steady rate), said back.
std::string Repeat(const std::string& reply, const std::vector<int16_t>& audio, int onset_ms) {
  std::vector<std::string> words;
  for (const std::string& w : asr::LmWords(reply)) {
    if (w != asr::kLmBreak) words.push_back(w);
  }
  const double at = std::min(1.0, onset_ms * 8.0 / std::max<size_t>(audio.size(), 1));
  const size_t end = std::clamp<size_t>(static_cast<size_t>(at * words.size()), 3, words.size());
  std::string s;
  for (size_t i = end - 3; i < end; ++i) s += (s.empty() ? "" : " ") + words[i];
  return s;
}

// One trial through a fresh Listener: the agent's reply plays (paused, resumed and stopped as
// the Listener says), its echo and the caller's speech make the inbound line.
Result<Outcome> Simulate(const Trial& t, const std::vector<int16_t>& agent,
                         const pipeline::ListenerOptions& options, asr::Recognizer& recognizer,
                         double erl_db) {
  ASSIGN_OR_RETURN(auto listener, pipeline::Listener::Create(options, &recognizer));
  listener->AgentSays(0, kAgentReplies[t.reply]);
  constexpr size_t kFrame = 160;
  const double echo_gain = std::pow(10.0, -erl_db / 20.0);
  double e = 0;
  for (int16_t v : t.caller) e += static_cast<double>(v) * v;
  const double caller_rms = std::sqrt(e / std::max<size_t>(t.caller.size(), 1));
  std::mt19937 rng(t.seed);
  std::normal_distribution<double> noise(0, std::max(caller_rms, 300.0) * 0.01);
  const int64_t onset = t.onset_ms;
  const int64_t end_ms = onset + static_cast<int64_t>(t.caller.size() / 8) + 1500;

  Outcome o;
  size_t pos = 0;  // agent samples played
  bool paused = false, stopped = false;
  int64_t paused_at = -1;
  std::vector<std::vector<int16_t>> sent(kEchoDelayFrames + 1, std::vector<int16_t>(kFrame, 0));
  std::vector<int16_t> frame(kFrame);
  std::vector<uint8_t> line(kFrame);
  std::vector<pipeline::Listener::Event> events;
  for (int64_t now = 0; now < end_ms; now += audio::kFrameMs) {
    std::vector<int16_t>& out = sent[static_cast<size_t>(now / audio::kFrameMs) % sent.size()];
    std::fill(out.begin(), out.end(), 0);
    const bool sounding = !paused && !stopped && pos < agent.size();
    if (sounding) {
      const size_t n = std::min(kFrame, agent.size() - pos);
      std::copy_n(agent.begin() + static_cast<ptrdiff_t>(pos), n, out.begin());
      pos += n;
    }
    const float level = sounding ? audio::LevelDbfs(out) : -120.0f;
    const std::vector<int16_t>& echo =
        sent[static_cast<size_t>(now / audio::kFrameMs + 1) % sent.size()];  // oldest
    for (size_t i = 0; i < kFrame; ++i) {
      const int64_t c = (now - onset) * 8 + static_cast<int64_t>(i);
      const double caller = c >= 0 && c < static_cast<int64_t>(t.caller.size())
                                ? t.caller[static_cast<size_t>(c)]
                                : 0;
      frame[i] = audio::SaturateToInt16(
          static_cast<int32_t>(std::lrint(caller + echo_gain * echo[i] + noise(rng))));
    }
    audio::EncodeMulaw(frame, line);
    audio::DecodeMulaw(line, frame);
    pipeline::Listener::Playback playback;
    playback.playing = paused || (!stopped && pos < agent.size());
    playback.level_dbfs = level;
    events.clear();
    listener->Hear(audio::AudioView(frame, 8000), playback, events);
    const int since_onset = static_cast<int>(now + audio::kFrameMs - onset);
    for (const pipeline::Listener::Event& ev : events) {
      switch (ev.kind) {
        case pipeline::Listener::EventKind::kPause:
          paused = true;
          paused_at = now;
          ++o.pauses;
          if (o.quiet_ms < 0) o.quiet_ms = since_onset;
          break;
        case pipeline::Listener::EventKind::kResume:
          if (paused) o.paused_ms += static_cast<int>(now - paused_at);
          paused = false;
          break;
        case pipeline::Listener::EventKind::kBargeIn:
          paused = false;
          stopped = true;
          o.stopped = true;
          o.confirm_ms = since_onset;
          if (o.quiet_ms < 0) o.quiet_ms = since_onset;
          break;
        case pipeline::Listener::EventKind::kEndOfTurn: {
          auto final = listener->FinishUtterance();
          if (final.ok() && !final->text.empty()) {
            o.heard += (o.heard.empty() ? "" : " | ") + final->text;
          }
          break;
        }
        default:
          break;
      }
    }
  }
  if (paused && !stopped) o.paused_ms += static_cast<int>(end_ms - paused_at);
  return o;
}

constexpr const char* kKinds[] = {"backchannel", "unlisted",     "repeat",  "cough",
                                  "click",       "interruption", "question"};

struct Options : speech_bench::CommonOptions {
  int per_set = 3;
  double erl_db = 20;
  std::set<std::string> kinds;  // of kKinds
};

// Errors are usage errors.
Result<Options> ParseOptions(Args& args) {
  Options o;
  auto per_set = args.GetInt("--questions", 3, 0, 1000);
  auto erl = args.GetDouble("--erl", 20, 0, 60);
  const std::string kinds = args.GetOr("--kinds", "");
  RETURN_IF_ERROR(speech_bench::ParseCommonOptions(args, o));
  for (const std::string& k : speech_bench::SplitList(kinds)) {
    if (std::find_if(std::begin(kKinds), std::end(kKinds),
                     [&](const char* known) { return k == known; }) == std::end(kKinds)) {
      return InvalidArgumentError("unknown kind '" + k +
                                  "' (backchannel, unlisted, repeat, cough, click, interruption, "
                                  "question)");
    }
    o.kinds.insert(k);
  }
  if (o.kinds.empty()) o.kinds.insert(std::begin(kKinds), std::end(kKinds));
  RETURN_IF_ERROR(per_set.status());
  RETURN_IF_ERROR(erl.status());
  o.per_set = static_cast<int>(*per_set);
  o.erl_db = *erl;
  for (const Voice& v : o.voices) {
    if (v.name == kAgentVoice) {
      return InvalidArgumentError("voice 'kal' is the agent's; callers use other voices");
    }
  }
  return o;
}

// The trials of every voice, synthesized (through the cache when one is given).
Result<std::vector<Trial>> MakeTrials(const Options& o, const std::vector<turns::QuestionSet>& sets,
                                      const std::vector<std::vector<int16_t>>& replies) {
  speech_bench::VoiceCache cache(o.cache_dir);
  std::vector<Trial> trials;
  size_t n = 0;
  auto add = [&](const Voice& v, std::string kind, std::string text) -> Status {
    if (!o.kinds.count(kind)) return Status::Ok();
    Trial t;
    t.kind = std::move(kind);
    t.voice = &v;
    t.reply = n % std::size(kAgentReplies);
    t.onset_ms = kOnsetsMs[(n / std::size(kAgentReplies)) % std::size(kOnsetsMs)];
    t.seed = static_cast<uint32_t>(speech_bench::Fnv1a(v.name + "|" + t.kind + "|" + text));
    ++n;
    if (t.kind == "repeat") text = Repeat(kAgentReplies[t.reply], replies[t.reply], t.onset_ms);
    if (t.kind == "cough" || t.kind == "click") {
      t.caller = NonSpeech(t.kind, t.seed);
    } else {
      ASSIGN_OR_RETURN(t.caller, cache.Get(v, text));
    }
    t.text = std::move(text);
    trials.push_back(std::move(t));
    return Status::Ok();
  };
  for (const Voice& v : o.voices) {
    std::fprintf(stderr, "eval barge: synthesizing %s\n", v.name.c_str());
    for (const char* b : kBackchannels) RETURN_IF_ERROR(add(v, "backchannel", b));
    for (const char* b : kUnlistedBackchannels) RETURN_IF_ERROR(add(v, "unlisted", b));
    for (int i = 0; i < 4; ++i) RETURN_IF_ERROR(add(v, "repeat", ""));
    for (int i = 0; i < 2; ++i) RETURN_IF_ERROR(add(v, "cough", "(cough)"));
    for (int i = 0; i < 2; ++i) RETURN_IF_ERROR(add(v, "click", "(click)"));
    for (const char* q : kInterruptions) RETURN_IF_ERROR(add(v, "interruption", q));
    for (const turns::QuestionSet& s : sets) {
      const std::vector<std::string>& qs = v.tuning ? s.train : s.test;
      std::mt19937 rng(static_cast<uint32_t>(speech_bench::Fnv1a(v.name + s.name + "barge")));
      for (int i = 0; i < o.per_set && !qs.empty(); ++i) {
        std::string spoken;
        for (const std::string& w : asr::LmWords(qs[rng() % qs.size()])) {
          if (w != asr::kLmBreak) spoken += (spoken.empty() ? "" : " ") + w;
        }
        RETURN_IF_ERROR(add(v, "question", spoken));
      }
    }
  }
  return trials;
}

struct Tally {
  bool interrupts = false;  // trials of the kinds that should stop the agent
  int n = 0, stopped = 0, paused = 0;
  PercentileSummary quiet, confirm, paused_ms;
};

nlohmann::json Summary(const Tally& t, bool interrupts) {
  auto ms = [](double v) {
    return std::isnan(v) ? nlohmann::json() : nlohmann::json(std::lround(v));
  };
  nlohmann::json j = {{"trials", t.n}, {"stopped", t.stopped}};
  if (interrupts) {
    j["stopped_share"] = t.n ? static_cast<double>(t.stopped) / t.n : 0.0;
    j["quiet_p50_ms"] = ms(t.quiet.P50());
    j["quiet_p90_ms"] = ms(t.quiet.Percentile(90));
    j["confirm_p50_ms"] = ms(t.confirm.P50());
    j["confirm_p90_ms"] = ms(t.confirm.Percentile(90));
  } else {
    j["ignored_share"] = t.n ? static_cast<double>(t.n - t.stopped) / t.n : 0.0;
    j["paused_trials"] = t.paused;
    j["paused_p50_ms"] = ms(t.paused_ms.P50());
    j["paused_p90_ms"] = ms(t.paused_ms.Percentile(90));
  }
  return j;
}

int RunEvalBarge(std::span<const std::string> argv) {
  auto args =
      Args::Parse(argv, {"--data", "--cache", "--questions", "--tuning-voices", "--report-voices",
                         "--erl", "--kinds", "--threads", "--config", "--set", "-o"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  auto options = ParseOptions(*args);
  if (!options.ok()) return UsageError(options.status().message(), kUsage);
  const Options& o = *options;
  auto cfg = LoadHotlineConfig(o.config_path, o.overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  auto sets = turns::LoadQuestionSets(o.data);
  if (!sets.ok()) return Fail(sets.status());
  auto rec = speech_bench::BuildKbRecognizer(cfg->asr, "eval_barge");
  if (!rec.ok()) return Fail(rec.status());

  auto agent_voice = speech_bench::MakeVoice(kAgentVoice, false);
  if (!agent_voice.ok()) return Fail(agent_voice.status());
  std::vector<std::vector<int16_t>> replies;
  {
    speech_bench::VoiceCache cache(o.cache_dir);
    for (const char* r : kAgentReplies) {
      auto a = cache.Get(*agent_voice, r);
      if (!a.ok()) return Fail(a.status().WithContext("agent reply"));
      replies.push_back(std::move(*a));
    }
  }
  auto trials = MakeTrials(o, *sets, replies);
  if (!trials.ok()) return Fail(trials.status());

  pipeline::ListenerOptions configured;
  configured.codec = audio::Codec::kPcm16;
  configured.sample_rate_hz = 8000;
  configured.vad = cfg->speech_in.vad;
  configured.endpointer = cfg->speech_in.endpointer;
  configured.barge_in = cfg->speech_in.barge_in;
  configured.preroll_ms = cfg->call.preroll_ms;
  pipeline::ListenerOptions baseline = configured;
  baseline.barge_in.check_words = false;
  const std::pair<const char*, const pipeline::ListenerOptions*> policies[] = {
      {"duration_only", &baseline}, {"configured", &configured}};

  std::vector<std::array<Outcome, 2>> outcomes(trials->size());
  std::fprintf(stderr, "eval barge: %zu trials x 2 rules on %d threads\n", trials->size(),
               o.threads);
  {
    std::atomic<size_t> next{0}, done{0};
    std::mutex mu;
    Status first_error;
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < trials->size();) {
        const Trial& t = (*trials)[i];
        for (size_t p = 0; p < 2; ++p) {
          auto r =
              Simulate(t, replies[t.reply], *policies[p].second, *(*rec)->recognizer, o.erl_db);
          if (!r.ok()) {
            std::lock_guard lock(mu);
            first_error = r.status();
            continue;
          }
          outcomes[i][p] = *r;
        }
        const size_t d = done.fetch_add(1) + 1;
        if (d % 20 == 0) std::fprintf(stderr, "  %zu/%zu\n", d, trials->size());
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < o.threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    if (!first_error.ok()) return Fail(first_error.WithContext("trial"));
  }

  nlohmann::json js;
  js["trials"] = trials->size();
  js["erl_db"] = o.erl_db;
  js["agent_voice"] = std::string("flite ") + kAgentVoice;
  for (const Voice& v : o.voices)
    js[v.tuning ? "tuning_voices" : "report_voices"].push_back(v.name);
  js["barge_in"] = {{"min_speech_ms", configured.barge_in.min_speech_ms},
                    {"pause_after_ms", configured.barge_in.pause_after_ms},
                    {"max_hold_ms", configured.barge_in.max_hold_ms},
                    {"hold_release_ms", configured.barge_in.hold_release_ms},
                    {"check_words", configured.barge_in.check_words}};
  for (size_t p = 0; p < 2; ++p) {
    // By voice group and class (backchannels: every kind the agent should not stop for), and by
    // kind for the report voices.
    std::map<std::string, Tally> tallies;
    for (size_t i = 0; i < trials->size(); ++i) {
      const Trial& t = (*trials)[i];
      const Outcome& r = outcomes[i][p];
      const std::string group = t.voice->tuning ? "tuning" : "report";
      const std::string cls = Interrupts(t.kind) ? "interruptions" : "backchannels";
      for (const std::string& key : {group + "/" + cls, group + "/kind/" + t.kind}) {
        Tally& y = tallies[key];
        y.interrupts = Interrupts(t.kind);
        ++y.n;
        y.stopped += r.stopped ? 1 : 0;
        if (r.stopped) {
          y.quiet.Add(r.quiet_ms);
          y.confirm.Add(r.confirm_ms);
        } else if (r.pauses > 0) {
          ++y.paused;
          y.paused_ms.Add(r.paused_ms);
        }
      }
    }
    nlohmann::json& pj = js["rules"][policies[p].first];
    for (const auto& [key, t] : tallies) {
      pj[key] = Summary(t, t.interrupts);
    }
  }
  nlohmann::json misses = nlohmann::json::array();
  for (size_t i = 0; i < trials->size(); ++i) {
    const Trial& t = (*trials)[i];
    const Outcome& r = outcomes[i][1];
    if (Interrupts(t.kind) != r.stopped) {
      misses.push_back({{"voice", t.voice->name},
                        {"kind", t.kind},
                        {"text", t.text},
                        {"stopped", r.stopped},
                        {"paused_ms", r.paused_ms},
                        {"heard", r.heard}});
    }
  }
  js["configured_misses"] = misses;

  if (o.out_path) {
    std::ofstream f(*o.out_path);
    f << js.dump(2) << "\n";
    if (!f) return Fail("cannot write " + *o.out_path);
  }
  if (o.json) {
    std::printf("%s\n", js.dump(2).c_str());
    return 0;
  }
  std::printf("barge-in over the agent's reply (%zu trials, echo %.0f dB down, agent flite %s)\n",
              trials->size(), o.erl_db, kAgentVoice);
  std::printf("%-14s %-7s %-13s %6s %9s %13s %15s %15s\n", "rule", "voices", "class", "trials",
              "right", "paused P50/90", "quiet P50/90", "confirm P50/90");
  auto num = [](const nlohmann::json& v) {
    return v.is_null() ? std::string("-") : std::to_string(v.get<long>());
  };
  for (size_t p = 0; p < 2; ++p) {
    const nlohmann::json& pj = js["rules"][policies[p].first];
    for (const char* group : {"tuning", "report"}) {
      for (const char* cls : {"backchannels", "interruptions"}) {
        const std::string key = std::string(group) + "/" + cls;
        if (!pj.contains(key)) continue;
        const nlohmann::json& s = pj[key];
        const bool intr = std::string(cls) == "interruptions";
        const double right =
            intr ? s["stopped_share"].get<double>() : s["ignored_share"].get<double>();
        std::printf(
            "%-14s %-7s %-13s %6d %8.1f%% %13s %15s %15s\n", policies[p].first, group, cls,
            s["trials"].get<int>(), 100 * right,
            intr ? "" : (num(s["paused_p50_ms"]) + "/" + num(s["paused_p90_ms"])).c_str(),
            intr ? (num(s["quiet_p50_ms"]) + "/" + num(s["quiet_p90_ms"])).c_str() : "",
            intr ? (num(s["confirm_p50_ms"]) + "/" + num(s["confirm_p90_ms"])).c_str() : "");
      }
    }
  }
  std::printf("\nconfigured rule, report voices, by kind:\n");
  const nlohmann::json& cj = js["rules"]["configured"];
  for (auto it = cj.begin(); it != cj.end(); ++it) {
    if (!it.key().starts_with("report/kind/")) continue;
    const nlohmann::json& s = it.value();
    std::printf("  %-14s %3d trials, stopped %d\n", it.key().substr(12).c_str(),
                s["trials"].get<int>(), s["stopped"].get<int>());
  }
  std::printf(
      "right: backchannels ignored (the turn goes on), interruptions stopped; paused:\n"
      "silence a backchannel caused; quiet: caller onset to the agent falling silent;\n"
      "confirm: onset to the turn's cancel\n");
  return 0;
}

const CommandRegistrar kEvalBarge(
    {"eval barge", "barge-in benchmark: backchannels ignored, interruptions stopped", kUsage,
     RunEvalBarge});

}  // namespace
}  // namespace hotline::cli
