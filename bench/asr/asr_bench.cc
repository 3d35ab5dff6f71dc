// ASR benchmark: word error rate with and without the domain language model, real-time factor
// per stream, concurrent streams on the machine's cores, and memory per decoder.
//
// Data: the Bitext customer-support questions (instruction column). For every intent, one
// question in ten (by row number) is held out; the rest train the domain model (as
// `hotline asr build-lm` does). Held-out questions of every third intent form the tuning set
// (language weight, interpolation weight are chosen on it); held-out questions of the other
// intents are the test set. Each question is normalized to the words a caller says, synthesized
// by Hotline's flite TTS (voices rotate: slt, rms, awb, kal16), then sent through a telephone
// channel: resampled to 8 kHz, mu-law encoded and decoded, white noise at 30 dB SNR. Streams are
// fed 8 kHz audio in 20 ms frames.
//
// usage: bench_asr [--tune N] [--test N] [--threads N] [--out DIR] [--verbose] [--no-tune]
//                  [--no-interpolated] [--keep-typos]
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "asr/lm_builder.h"
#include "asr/recognizer.h"
#include "asr/pocketsphinx/pocketsphinx_recognizer.h"
#include "asr/wer.h"
#include "audio/g711.h"
#include "audio/resampler.h"
#include "common/build_paths.h"
#include "tts/synthesizer.h"

using namespace hotline;

namespace {

struct Utterance {
  std::string reference;
  audio::AudioBuffer audio;  // 8 kHz telephone channel
};

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

void Die(const Status& s) {
  std::fprintf(stderr, "bench_asr: %s\n", s.ToString().c_str());
  std::exit(1);
}

struct Score {
  asr::WerCounts wer;
  double audio_s = 0;
  double cpu_s = 0;
  std::vector<double> finish_ms;  // CPU time of each Finish(): end of turn -> final transcript
};

double PercentileOf(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1) + 0.5)];
}

Score Run(asr::Recognizer& r, const std::vector<Utterance>& set, bool print_errors = false) {
  Score score;
  for (const auto& u : set) {
    double c0 = ThreadCpuSeconds();
    auto stream = r.CreateStream(u.audio.sample_rate_hz);
    if (!stream.ok()) Die(stream.status());
    for (size_t i = 0; i < u.audio.size(); i += 160) {
      size_t n = std::min<size_t>(160, u.audio.size() - i);
      Status s = (*stream)->AcceptFrames(
          audio::AudioView(std::span<const int16_t>(u.audio.samples).subspan(i, n), 8000));
      if (!s.ok()) Die(s);
    }
    const double f0 = ThreadCpuSeconds();
    auto result = (*stream)->Finish();
    if (!result.ok()) Die(result.status());
    score.finish_ms.push_back(1000 * (ThreadCpuSeconds() - f0));
    score.cpu_s += ThreadCpuSeconds() - c0;
    score.audio_s += u.audio.duration_s();
    auto w = asr::ComputeWer(asr::NormalizeForScoring(u.reference),
                             asr::NormalizeForScoring(result->text));
    if (print_errors && w.errors() > 0) {
      std::printf("    ref: %s\n    hyp: %s\n", u.reference.c_str(), result->text.c_str());
    }
    score.wer += w;
  }
  return score;
}

std::unique_ptr<asr::Recognizer> Make(const asr::AsrConfig& c) {
  auto r = asr::CreateRecognizer(c);
  if (!r.ok()) Die(r.status());
  return std::move(*r);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int n_tune = 24, n_test = 80, threads = 2;
  std::string out_dir = "/tmp";
  bool verbose = false, do_tune = true, with_interp = true, keep_typos = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--tune") n_tune = std::stoi(next());
    else if (a == "--test") n_test = std::stoi(next());
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--out") out_dir = next();
    else if (a == "--verbose") verbose = true;
    else if (a == "--no-tune") do_tune = false;  // lw 6.5, domain_weight 0.8 (the tuned values)
    else if (a == "--no-interpolated") with_interp = false;
    else if (a == "--keep-typos") keep_typos = true;
    else {
      std::fprintf(stderr, "usage: bench_asr [--tune N] [--test N] [--threads N] [--out DIR] [--verbose] [--no-tune] [--no-interpolated] [--keep-typos]\n");
      return 2;
    }
  }

  // Split the corpus.
  const std::string csv = std::string(HOTLINE_SHARED_DATA_DIR) + "/support/bitext/customer_support.csv";
  auto text = asr::ReadTrainingTexts(csv, "instruction");
  auto intents = asr::ReadTrainingTexts(csv, "intent");
  if (!text.ok()) Die(text.status());
  if (!intents.ok()) Die(intents.status());
  std::map<std::string, int> intent_index;
  for (const auto& in : *intents) intent_index.emplace(in, 0);
  int k = 0;
  for (auto& [name, idx] : intent_index) idx = k++;
  std::vector<std::string> train, tune_pool, test_pool;
  for (size_t i = 0; i < text->size(); ++i) {
    if (i % 10 != 7) {
      train.push_back((*text)[i]);
    } else if (intent_index[(*intents)[i]] % 3 == 0) {
      tune_pool.push_back((*text)[i]);
    } else {
      test_pool.push_back((*text)[i]);
    }
  }
  std::mt19937 rng(7);
  std::shuffle(tune_pool.begin(), tune_pool.end(), rng);
  std::shuffle(test_pool.begin(), test_pool.end(), rng);

  // Domain model from the training questions, with its dictionary.
  asr::PocketsphinxConfig ps_defaults;
  auto dict = asr::LoadDictionaryWords(ps_defaults.dictionary);
  if (!dict.ok()) Die(dict.status());
  asr::NgramLmBuilder builder(3, &*dict);
  for (const auto& t : train) builder.AddText(t);
  auto arpa = builder.ToArpa();
  if (!arpa.ok()) Die(arpa.status());
  const std::string lm_path = out_dir + "/bench_asr_domain.lm";
  std::ofstream(lm_path) << *arpa;
  auto entries = asr::WriteDictionarySubset(ps_defaults.dictionary, builder.vocabulary(), lm_path + ".dict");
  if (!entries.ok()) Die(entries.status());
  std::printf("domain model: %zu training questions, vocabulary %lld, %lld/%lld/%lld n-grams, %lld OOV words dropped\n",
              train.size(), static_cast<long long>(builder.stats().vocabulary),
              static_cast<long long>(builder.stats().ngrams[0]), static_cast<long long>(builder.stats().ngrams[1]),
              static_cast<long long>(builder.stats().ngrams[2]), static_cast<long long>(builder.stats().oov_words));

  // Synthesize and pass through the telephone channel.
  const char* voices[] = {"cmu_us_slt", "cmu_us_rms", "cmu_us_awb", "cmu_us_kal16"};
  std::vector<std::unique_ptr<tts::Synthesizer>> synths;
  for (const char* v : voices) {
    tts::TtsConfig tc;
    tc.flite.voice = v;
    auto s = tts::CreateSynthesizer(tc);
    if (!s.ok()) Die(s.status());
    synths.push_back(std::move(*s));
  }
  std::normal_distribution<double> gauss(0, 1);
  int voice_turn = 0;
  // The corpus has deliberate typos ("checkj", "wanna", "freemium"); a caller speaks words, so a
  // question with a word the pronunciation dictionary does not know is left out of tuning and
  // test (counted), rather than scoring how a synthesizer spells a typo aloud.
  int dropped_nonwords = 0;
  auto make_set = [&](const std::vector<std::string>& questions, int limit) {
    std::vector<Utterance> set;
    for (const auto& q : questions) {
      if (set.size() >= static_cast<size_t>(limit)) break;
      std::string words = asr::NormalizeTranscriptText(q);
      if (words.empty()) continue;
      bool speakable = true;
      for (const auto& w : asr::SplitWords(words)) speakable = speakable && dict->count(w) > 0;
      if (!speakable && !keep_typos) {
        ++dropped_nonwords;
        continue;
      }
      auto& synth = *synths[voice_turn++ % synths.size()];
      auto speech = tts::SynthesizeToBuffer(synth, words);
      if (!speech.ok()) Die(speech.status());
      auto narrow = audio::Resample(*speech, 8000);
      if (!narrow.ok()) Die(narrow.status());
      double power = 0;
      for (int16_t s : narrow->samples) power += double(s) * s;
      double noise_rms = std::sqrt(power / std::max<size_t>(1, narrow->size()) / 1000.0);  // 30 dB
      std::vector<uint8_t> mu(narrow->size());
      for (auto& s : narrow->samples) s = audio::SaturateToInt16(static_cast<int32_t>(s + gauss(rng) * noise_rms));
      audio::EncodeMulaw(narrow->samples, mu);
      audio::DecodeMulaw(mu, narrow->samples);
      set.push_back({words, std::move(*narrow)});
    }
    return set;
  };
  auto tune = make_set(tune_pool, n_tune);
  auto test = make_set(test_pool, n_test);
  double test_audio = 0;
  for (const auto& u : test) test_audio += u.audio.duration_s();
  std::printf("tune set: %zu questions; test set: %zu questions, %.1f s of audio (%d questions "
              "with words outside the pronunciation dictionary left out)\n",
              tune.size(), test.size(), test_audio, dropped_nonwords);

  // Configurations.
  asr::AsrConfig generic;
  asr::AsrConfig switched;
  switched.pocketsphinx.domain_lm = lm_path;
  switched.pocketsphinx.dictionary = lm_path + ".dict";
  switched.pocketsphinx.lm_mode = "switched";
  asr::AsrConfig interp = switched;
  interp.pocketsphinx.lm_mode = "interpolated";
  interp.pocketsphinx.dictionary = ps_defaults.dictionary;

  // Tune the language weight (switched) and the domain weight (interpolated) on the tuning set.
  double best_lw = 0, best_wer = 1e9;
  if (!do_tune) best_lw = 6.5;
  for (double lw : {5.0, 6.5, 8.0, 10.0}) {
    if (!do_tune) break;
    auto c = switched;
    c.pocketsphinx.language_weight = lw;
    auto r = Make(c);
    double w = Run(*r, tune).wer.rate();
    std::printf("  tune switched lw=%.1f: WER %.2f%%\n", lw, 100 * w);
    if (w < best_wer) best_wer = w, best_lw = lw;
  }
  switched.pocketsphinx.language_weight = best_lw;
  double best_dw = 0;
  best_wer = 1e9;
  if (!do_tune) best_dw = 0.8;
  for (double dw : {0.8, 0.95}) {
    if (!do_tune || !with_interp) break;
    auto c = interp;
    c.pocketsphinx.domain_weight = dw;
    c.pocketsphinx.language_weight = best_lw;
    auto r = Make(c);
    double w = Run(*r, tune).wer.rate();
    std::printf("  tune interpolated domain_weight=%.2f: WER %.2f%%\n", dw, 100 * w);
    if (w < best_wer) best_wer = w, best_dw = dw;
  }
  interp.pocketsphinx.domain_weight = best_dw;
  interp.pocketsphinx.language_weight = best_lw;

  // The switched model (default: bestpath, no fwdflat) with and without the passes that run at
  // the end of the turn.
  asr::AsrConfig with_fwdflat = switched;
  with_fwdflat.pocketsphinx.fwdflat = true;
  asr::AsrConfig tree_only = switched;
  tree_only.pocketsphinx.bestpath = false;

  std::printf("\n%-44s %8s %8s %10s %9s %9s\n", "test set (8 kHz mu-law, 30 dB SNR)", "WER",
              "errors", "RTF/stream", "final_p50", "final_p95");
  std::printf("(final: CPU time from the end of the turn to the final transcript, ms)\n");
  struct Named {
    const char* name;
    asr::AsrConfig* config;
  };
  for (Named n : {Named{"generic en-us model (no domain LM)", &generic},
                  Named{"domain LM, switched (default)", &switched},
                  Named{"domain LM, switched, + fwdflat pass", &with_fwdflat},
                  Named{"domain LM, switched, - bestpath pass", &tree_only},
                  Named{"domain LM, interpolated", &interp}}) {
    if (!with_interp && n.config == &interp) continue;
    auto r = Make(*n.config);
    if (verbose) std::printf("  %s errors:\n", n.name);
    Score s = Run(*r, test, verbose);
    std::printf("%-44s %7.2f%% %4d/%-4d %10.3f %7.1fms %7.1fms\n", n.name, 100 * s.wer.rate(),
                s.wer.errors(), s.wer.reference_words, s.cpu_s / s.audio_s,
                PercentileOf(s.finish_ms, 0.5), PercentileOf(s.finish_ms, 0.95));
  }

  // Concurrency: `threads` streams decoding at once (switched domain model).
  {
    auto r = Make(switched);
    std::atomic<size_t> next{0};
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    std::vector<Score> scores(threads);
    // Each thread decodes the whole test set once, in a different order.
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::vector<Utterance> mine(test.begin(), test.end());
        std::rotate(mine.begin(), mine.begin() + (t * mine.size() / threads), mine.end());
        scores[t] = Run(*r, mine);
      });
    }
    for (auto& th : pool) th.join();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double audio_s = 0;
    for (auto& s : scores) audio_s += s.audio_s;
    std::printf("\n%d threads x %.1f s audio in %.1f s wall: %.1f x real time => ~%.0f concurrent "
                "real-time streams on %u hardware threads\n",
                threads, audio_s / threads, wall, audio_s / wall, std::floor(audio_s / wall),
                std::thread::hardware_concurrency());
  }

  // Memory per decoder (extra streams held open at once).
  for (Named n : {Named{"generic, full dictionary", &generic}, Named{"domain LM, switched", &switched},
                  Named{"domain LM, interpolated", &interp}}) {
    if (!with_interp && n.config == &interp) continue;
    auto r = Make(*n.config);
    long before = RssKb();
    std::vector<std::unique_ptr<asr::RecognizerStream>> open;
    for (int i = 0; i < 4; ++i) {
      auto s = r->CreateStream(8000);
      if (!s.ok()) Die(s.status());
      open.push_back(std::move(*s));
    }
    // The first decoder was built at Create(); the four streams use it and three new ones.
    long after = RssKb();
    std::printf("memory per additional decoder, %-28s %6.1f MB\n", n.name, (after - before) / 3.0 / 1024);
  }
  return 0;
}
