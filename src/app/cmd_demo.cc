// hotline demo: Hotline's main job on its embedded defaults, with no network and no server.
//
// A caller's question is synthesized and sent through a telephone channel (8 kHz μ-law), then
// handled the way a call is: voice activity and end of turn, streaming recognition, understanding,
// the answer tiers (L3 exact cache → knowledge base → hand-off), and speech synthesis of the reply.
// The same recording is played for several turns (default 3) so later turns show the cache. Each turn prints its
// transcript, answer, tier and latency ledger; the caller and reply audio are written as WAV.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "answer/answer_stack.h"
#include "answer/answerer.h"
#include "answer/cache/result_cache.h"
#include "answer/cache/store.h"
#include "answer/kb/knowledge_base.h"
#include "answer/understand/understanding.h"
#include "app/cli.h"
#include "app/hotline_config.h"
#include "asr/recognizer.h"
#include "audio/endpointer.h"
#include "audio/g711.h"
#include "audio/resampler.h"
#include "audio/vad.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "common/clock.h"
#include "common/log.h"
#include "llm/llm_config.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline demo [--config FILE] [--set key=value ...] [--out DIR] [--question TEXT]\n"
    "                    [--kb FILE.csv] [--turns N]\n"
    "  Simulates a caller asking a question over a phone line and Hotline answering it, on the\n"
    "  embedded defaults. Writes DIR/caller.wav and DIR/reply-N.wav (default DIR: hotline-demo).\n";

constexpr int kPhoneRateHz = 8000;

// The caller's side: TTS → 8 kHz → μ-law line → back to linear, with silence around the speech.
Result<audio::AudioBuffer> MakeCallerAudio(tts::Synthesizer& synth, const std::string& question) {
  ASSIGN_OR_RETURN(audio::AudioBuffer voice, tts::SynthesizeToBuffer(synth, question));
  ASSIGN_OR_RETURN(audio::AudioBuffer phone, audio::Resample(voice, kPhoneRateHz));
  std::vector<int16_t> line(audio::SamplesForMs(kPhoneRateHz, 500), 0);
  line.insert(line.end(), phone.samples.begin(), phone.samples.end());
  line.resize(line.size() + audio::SamplesForMs(kPhoneRateHz, 1200), 0);
  std::vector<uint8_t> mulaw(line.size());
  audio::EncodeMulaw(line, mulaw);
  audio::DecodeMulaw(mulaw, line);
  return audio::AudioBuffer(std::move(line), kPhoneRateHz);
}

struct Ledger {
  double speech_start_ms = -1, speech_end_ms = -1, end_of_turn_ms = -1, asr_final_ms = -1,
         answered_ms = -1, tts_first_audio_ms = -1, tts_done_ms = -1;
};

// One turn of the recording, heard: streamed in real-time-sized frames through the VAD, the
// endpointer and the recognizer. Stage times are measured on the clock, not simulated, except
// the recording's own timeline (frame index × 20 ms).
struct HeardTurn {
  asr::AsrResult final;
  Ledger ledger;
  MonoTime end_of_turn;  // wall clock, for the stages after it
};

Result<HeardTurn> HearTurn(const HotlineConfig& cfg, asr::Recognizer& recognizer,
                           const audio::AudioBuffer& caller_audio) {
  ASSIGN_OR_RETURN(auto vad, audio::Vad::Create(cfg.speech_in.vad, kPhoneRateHz));
  audio::Endpointer endpointer(cfg.speech_in.endpointer);
  ASSIGN_OR_RETURN(auto stream, recognizer.CreateStream(kPhoneRateHz));
  HeardTurn h;
  bool ended = false;
  const size_t frame = audio::SamplesForMs(kPhoneRateHz, audio::kFrameMs);
  for (size_t at = 0; at + frame <= caller_audio.samples.size() && !ended; at += frame) {
    audio::AudioView view(std::span<const int16_t>(caller_audio.samples).subspan(at, frame),
                          kPhoneRateHz);
    ASSIGN_OR_RETURN(audio::VadFrame v, vad.Process(view));
    audio::EndpointUpdate u = endpointer.Push(v.speech);
    if (endpointer.in_utterance() || u.event == audio::EndpointEvent::kSpeechStart) {
      RETURN_IF_ERROR(stream->AcceptFrames(view));
    }
    if (u.event == audio::EndpointEvent::kSpeechStart) h.ledger.speech_start_ms = u.speech_start_ms;
    if (u.event == audio::EndpointEvent::kEndOfTurn ||
        u.event == audio::EndpointEvent::kMaxLength) {
      h.ledger.speech_end_ms = u.speech_end_ms;
      h.ledger.end_of_turn_ms = u.now_ms;
      h.end_of_turn = SystemClock::Get().Now();
      ended = true;
    }
  }
  if (!ended)
    return FailedPreconditionError("the endpointer found no complete turn in the caller audio");
  auto final = stream->Finish();
  if (!final.ok()) return final.status().WithContext("recognition");
  h.final = std::move(*final);
  h.ledger.asr_final_ms = MillisBetween(h.end_of_turn, SystemClock::Get().Now());
  return h;
}

// The answer to what was heard, synthesized and written to `reply_wav` at the telephone rate;
// the ledger gets the answer's and the speech's times after the end of the turn.
struct Reply {
  answer::AnswerResult answer;
  audio::AudioBuffer audio;
};

Result<Reply> AnswerAndSpeak(answer::Answerer& answerer, tts::Synthesizer& synth,
                             answer::CallerSession& caller, HeardTurn& h,
                             const std::filesystem::path& reply_wav) {
  auto since_eot = [&] { return MillisBetween(h.end_of_turn, SystemClock::Get().Now()); };
  Reply r;
  auto answer = answerer.Answer(h.final.text, caller);
  if (!answer.ok()) return answer.status().WithContext("answer");
  r.answer = std::move(*answer);
  h.ledger.answered_ms = since_eot();
  std::vector<int16_t> reply;
  Status synth_status = synth.Synthesize(r.answer.text, [&](std::span<const int16_t> chunk) {
    if (h.ledger.tts_first_audio_ms < 0) h.ledger.tts_first_audio_ms = since_eot();
    reply.insert(reply.end(), chunk.begin(), chunk.end());
    return Status::Ok();
  });
  if (!synth_status.ok()) return synth_status.WithContext("reply synthesis");
  h.ledger.tts_done_ms = since_eot();
  ASSIGN_OR_RETURN(r.audio,
                   audio::Resample(audio::AudioView(reply, synth.sample_rate_hz()), kPhoneRateHz));
  RETURN_IF_ERROR(audio::WriteWavFile(reply_wav.string(), r.audio, audio::Codec::kMulaw));
  return r;
}

void PrintTurn(int turn, const HeardTurn& h, const Reply& r, const std::filesystem::path& wav) {
  const Ledger& ledger = h.ledger;
  std::printf("\nturn %d\n  heard:   \"%s\" (confidence %.2f)\n  answer:  \"%s\"\n  tier:    %s\n",
              turn, h.final.text.c_str(), h.final.confidence, r.answer.text.c_str(),
              std::string(answer::TierName(r.answer.tier)).c_str());
  std::printf("  reply:   %s (%lld ms)\n", wav.string().c_str(),
              static_cast<long long>(r.audio.duration_ms()));
  std::printf(
      "  ledger (recording timeline): speech %.0f-%.0f ms, end of turn at %.0f ms "
      "(endpointing delay %.0f ms)\n",
      ledger.speech_start_ms * 1.0, ledger.speech_end_ms * 1.0, ledger.end_of_turn_ms,
      ledger.end_of_turn_ms - ledger.speech_end_ms);
  std::printf(
      "  ledger (after end of turn): asr final %.1f ms, answer %.1f ms, first audio "
      "%.1f ms, reply synthesized %.1f ms\n",
      ledger.asr_final_ms, ledger.answered_ms, ledger.tts_first_audio_ms, ledger.tts_done_ms);
  std::printf("  voice-to-voice (speech end -> first reply audio): %.0f ms\n",
              ledger.end_of_turn_ms - ledger.speech_end_ms + ledger.tts_first_audio_ms);
}

int RunDemo(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--config", "--set", "--out", "--question", "--kb", "--turns"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  std::string config_path = args.GetOr("--config", "");
  std::vector<std::string> overrides = args.GetAll("--set");
  std::filesystem::path out_dir = args.GetOr("--out", "hotline-demo");
  std::string question = args.GetOr("--question", "How can I track my order?");
  std::string kb_csv = args.GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  auto turns = args.GetInt("--turns", 3, 1, 20);
  if (!turns.ok()) return UsageError(turns.status().message(), kUsage);
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!args.positional().empty()) return UsageError("unexpected " + args.positional()[0], kUsage);

  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Fail("cannot create " + out_dir.string() + ": " + ec.message());

  // Shared, built once: recognizer, synthesizer, knowledge base, cache.
  auto recognizer = asr::CreateRecognizer(cfg->asr);
  if (!recognizer.ok()) return Fail(recognizer.status().WithContext("speech recognizer"));
  auto synth = tts::CreateSynthesizer(cfg->tts);
  if (!synth.ok()) return Fail(synth.status().WithContext("speech synthesizer"));
  std::filesystem::path kb_path = out_dir / "kb.sqlite";
  std::filesystem::remove(kb_path, ec);
  // The language model behind the last tier (the demo model on the embedded defaults), then the
  // whole answering chain (intent templates, semantic cache, result cache, knowledge base,
  // account tools) in one call.
  auto model = llm::CreateLanguageModel(cfg->llm);
  if (!model.ok()) return Fail(model.status().WithContext("language model"));
  answer::AnswerStackOptions stack_options;
  stack_options.kb_path = kb_path.string();
  stack_options.kb_csv = kb_csv;
  stack_options.llm = model->get();
  auto stack = answer::AnswerStack::Build(cfg->answer, cfg->store, stack_options);
  if (!stack.ok()) return Fail(stack.status().WithContext("answer stack"));

  // The caller's recording.
  auto caller_audio = MakeCallerAudio(**synth, question);
  if (!caller_audio.ok()) return Fail(caller_audio.status().WithContext("caller audio"));
  std::filesystem::path caller_wav = out_dir / "caller.wav";
  if (Status s = audio::WriteWavFile(caller_wav.string(), *caller_audio, audio::Codec::kMulaw);
      !s.ok()) {
    return Fail(s);
  }
  std::cout << "caller: \"" << question << "\" -> " << caller_wav.string() << " ("
            << caller_audio->duration_ms() << " ms, 8 kHz mu-law)\n";

  answer::CallerSession caller("+15550100");
  for (int turn = 1; turn <= *turns; ++turn) {
    auto heard = HearTurn(*cfg, **recognizer, *caller_audio);
    if (!heard.ok()) return Fail(heard.status());
    const std::filesystem::path reply_wav = out_dir / ("reply-" + std::to_string(turn) + ".wav");
    auto reply = AnswerAndSpeak((*stack)->answerer(), **synth, caller, *heard, reply_wav);
    if (!reply.ok()) return Fail(reply.status());
    PrintTurn(turn, *heard, *reply, reply_wav);
  }
  return 0;
}

const CommandRegistrar kDemo({"demo", "simulate a call on the embedded defaults (no network)",
                              kUsage, RunDemo});

}  // namespace
}  // namespace hotline::cli
