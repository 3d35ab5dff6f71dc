// VAD and endpointer figures on real speech (pocketsphinx-testdata: goforward.raw, something.raw
// and five LibriVox clips) with added noise and inserted pauses, at 16 kHz and through an 8 kHz
// mu-law telephone channel.
//
// Each turn is two clips trimmed to their speech and joined by a 300 ms pause, with 1 s of noise
// before and 2 s after. Reference labels come from the clean clips (frames within 30 dB of the
// clip's loudest frame and above -45 dBFS, measured above 200 Hz, gaps up to 100 ms bridged). Figures: frame precision/recall of the VAD, the
// end-of-turn delay after the true end of speech (median, P95), and premature cut-offs (a turn
// ended before its true end, e.g. inside the 300 ms pause). The "hint" rows set the pipeline's
// looks-complete hint at the true end of speech (an ASR partial that reads as a full question).
//
// usage: bench_vad [--trailing-ms N]...   (default: sweeps 300, 400, 500)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "audio/endpointer.h"
#include "audio/g711.h"
#include "audio/resampler.h"
#include "audio/vad.h"
#include "audio/wav.h"

using namespace hotline;
using namespace hotline::audio;

namespace {

constexpr const char* kData = "/usr/share/pocketsphinx/test/data/";

struct Clip {
  std::vector<int16_t> samples;  // 16 kHz, trimmed to speech
  std::vector<bool> labels;      // per 20 ms frame
};

std::vector<bool> Label(const std::vector<int16_t>& x) {
  const size_t n = 320;
  // Levels are taken above 200 Hz (three one-pole high-pass stages, -18 dB/octave): breath and
  // microphone rumble below the voice band (goforward.raw ends in 300 ms of it) are not speech.
  std::vector<int16_t> hp(x.begin(), x.end());
  const double a = 1.0 / (1.0 + 2 * M_PI * 200.0 / 16000.0);
  for (int stage = 0; stage < 3; ++stage) {
    double prev_in = 0, prev_out = 0;
    for (auto& v : hp) {
      double out = a * (prev_out + v - prev_in);
      prev_in = v;
      prev_out = out;
      v = SaturateToInt16(static_cast<int32_t>(std::lrint(out)));
    }
  }
  std::vector<float> db;
  for (size_t i = 0; i + n <= hp.size(); i += n) db.push_back(LevelDbfs(std::span<const int16_t>(hp).subspan(i, n)));
  float peak = *std::max_element(db.begin(), db.end());
  std::vector<bool> l(db.size());
  for (size_t i = 0; i < db.size(); ++i) l[i] = db[i] > peak - 30 && db[i] > -45;
  // Bridge gaps up to 100 ms (stop closures inside words).
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i]) continue;
    size_t j = i;
    while (j < l.size() && !l[j]) ++j;
    if (i > 0 && j < l.size() && j - i <= 5) std::fill(l.begin() + i, l.begin() + j, true);
    i = j;
  }
  return l;
}

Clip LoadClip(const std::string& path) {
  Result<DecodedAudio> d = path.ends_with(".raw") ? ReadRawFile(path, 16000) : ReadWavFile(path);
  if (!d.ok()) {
    std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
    std::exit(1);
  }
  auto& x = d->audio.samples;
  x.resize(x.size() / 320 * 320);
  auto l = Label(x);
  size_t first = std::find(l.begin(), l.end(), true) - l.begin();
  size_t last = l.size() - (std::find(l.rbegin(), l.rend(), true) - l.rbegin());
  Clip c;
  c.samples.assign(x.begin() + first * 320, x.begin() + last * 320);
  c.labels.assign(l.begin() + first, l.begin() + last);
  return c;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double idx = p * (v.size() - 1);
  size_t lo = static_cast<size_t>(idx);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - lo);
}

VadConfig g_vad;  // the VAD settings under test (defaults unless flags change them)

struct Turn {
  std::vector<int16_t> samples;  // at the channel rate
  int rate = 16000;
  double snr_db = 0;
  std::vector<bool> labels;
  int64_t true_end_ms = 0;
  // The inserted 300 ms pause: from the first clip's last speech frame to the second clip's
  // first speech frame (reference labels), in ms.
  int64_t pause_from_ms = 0;
  int64_t pause_to_ms = 0;
  // Speech frames that stand above the added noise (clean frame level above the noise frame
  // level): what any listener could hear. Speech buried under the noise is labelled speech but
  // cannot be detected by level or spectrum, so cut-offs are also counted against this.
  std::vector<bool> audible;
};

struct Totals {
  int64_t tp = 0, fp = 0, fn = 0;
  std::vector<double> delays;
  int premature = 0, missed = 0, turns = 0;
  int cut_in_pause = 0;  // of the premature turns: cut at the inserted 300 ms pause
  int cut_audible = 0;   // turns ended while >= 200 ms of audible speech was still to come
};

void Evaluate(const Turn& t, const VadConfig& vc, const EndpointerConfig& ec, bool hint, Totals& tot) {
  auto vad = Vad::Create(vc, t.rate);
  Endpointer ep(ec);
  const size_t n = vad->frame_samples();
  bool ended = false, cut = false;
  ++tot.turns;
  for (size_t f = 0; (f + 1) * n <= t.samples.size(); ++f) {
    auto r = vad->Process(AudioView(std::span<const int16_t>(t.samples).subspan(f * n, n), t.rate));
    bool ref = f < t.labels.size() && t.labels[f];
    if (r->speech && ref) ++tot.tp;
    if (r->speech && !ref) ++tot.fp;
    if (!r->speech && ref) ++tot.fn;
    if (hint && ep.now_ms() >= t.true_end_ms) ep.SetLooksComplete(true);
    auto u = ep.Push(r->speech);
    if (ended) continue;
    if (u.event == EndpointEvent::kEndOfTurn || u.event == EndpointEvent::kMaxLength) {
      if (u.now_ms < t.true_end_ms) {
        if (!cut) {  // count each turn once
          int audible_after = 0;
          for (size_t g = static_cast<size_t>(u.now_ms / 20); g < t.audible.size(); ++g) {
            audible_after += t.audible[g] ? 20 : 0;
          }
          if (audible_after >= 200) ++tot.cut_audible;
          ++tot.premature;
          // The silence that ended the turn began at the last speech frame.
          const int64_t silence_from = u.speech_end_ms;
          if (silence_from >= t.pause_from_ms - 200 && silence_from <= t.pause_to_ms) {
            ++tot.cut_in_pause;
          }
        }
        cut = true;
      } else {
        tot.delays.push_back(static_cast<double>(u.now_ms - t.true_end_ms));
        ended = true;
      }
    }
  }
  if (!ended) ++tot.missed;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> trailing;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--trailing-ms") == 0) trailing.push_back(std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--threshold-db") == 0) g_vad.threshold_db = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--hysteresis-db") == 0) g_vad.hysteresis_db = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--hangover-ms") == 0) g_vad.hangover_ms = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--speech-noise-rise") == 0) g_vad.speech_noise_rise_db_per_s = std::atof(argv[++i]);
  }
  std::printf("vad: threshold %.1f dB, hysteresis %.1f dB, hangover %d ms\n", g_vad.threshold_db,
              g_vad.hysteresis_db, g_vad.hangover_ms);
  if (trailing.empty()) trailing = {300, 400, 500};

  std::vector<std::string> files = {"goforward.raw", "something.raw"};
  for (const char* id : {"0870", "0880", "0890", "0920", "0930"}) {
    files.push_back(std::string("librivox/sense_and_sensibility_01_austen_64kb-") + id + ".wav");
  }
  std::vector<Clip> clips;
  for (const auto& f : files) clips.push_back(LoadClip(kData + f));

  // Turns: clip i + 300 ms pause + clip i+1, in noise at several SNRs, at 16 kHz and through an
  // 8 kHz mu-law channel.
  std::vector<Turn> turns;
  std::mt19937 rng(42);
  for (double snr_db : {60.0, 20.0, 15.0, 10.0}) {
    for (int noise_kind = 0; noise_kind < 2; ++noise_kind) {
      for (size_t i = 0; i < clips.size(); ++i) {
        const Clip& a = clips[i];
        const Clip& b = clips[(i + 1) % clips.size()];
        std::vector<int16_t> clean(16000, 0);
        std::vector<bool> labels(50, false);
        auto append = [&](const Clip& c) {
          clean.insert(clean.end(), c.samples.begin(), c.samples.end());
          labels.insert(labels.end(), c.labels.begin(), c.labels.end());
        };
        append(a);
        auto last_speech_ms = [&] {
          return static_cast<int64_t>(labels.size() -
                                      (std::find(labels.rbegin(), labels.rend(), true) -
                                       labels.rbegin())) * 20;
        };
        const int64_t pause_from_ms = last_speech_ms();
        clean.insert(clean.end(), 4800, 0);
        labels.insert(labels.end(), 15, false);
        const size_t b_from = labels.size();
        append(b);
        const int64_t pause_to_ms = static_cast<int64_t>(
            b_from + (std::find(labels.begin() + b_from, labels.end(), true) - labels.begin() - b_from)) * 20;
        size_t last = labels.size() - (std::find(labels.rbegin(), labels.rend(), true) - labels.rbegin());
        int64_t true_end_ms = static_cast<int64_t>(last) * 20;
        clean.insert(clean.end(), 32000, 0);
        labels.resize(clean.size() / 320, false);
        // Speech level over labelled frames; noise scaled to the SNR.
        double power = 0;
        int frames = 0;
        for (size_t f = 0; f < labels.size(); ++f) {
          if (!labels[f]) continue;
          for (size_t k = 0; k < 320; ++k) power += std::pow(clean[f * 320 + k], 2);
          ++frames;
        }
        power /= frames * 320.0;
        double noise_rms = std::sqrt(power / std::pow(10.0, snr_db / 10));
        std::normal_distribution<double> g(0, 1);
        std::vector<double> noise(clean.size());
        double lp = 0, norm = 0;
        for (size_t k = 0; k < noise.size(); ++k) {
          double w = g(rng);
          if (noise_kind == 0) {
            noise[k] = w;  // white (hiss)
          } else {  // line noise: low-passed rumble plus 50 Hz hum and harmonics
            lp = 0.95 * lp + 0.05 * w * 4;
            noise[k] = lp + 0.5 * std::sin(2 * M_PI * 50 * k / 16000.0) +
                       0.3 * std::sin(2 * M_PI * 150 * k / 16000.0);
          }
          norm += noise[k] * noise[k];
        }
        norm = std::sqrt(norm / noise.size());
        // Audible frames per channel: the 8 kHz channel loses what lies above 4 kHz.
        std::vector<int16_t> noise_only(clean.size());
        for (size_t k = 0; k < clean.size(); ++k) {
          noise_only[k] = SaturateToInt16(static_cast<int32_t>(std::lrint(noise[k] / norm * noise_rms)));
        }
        auto audible_at = [&](int rate) {
          auto s = Resample(AudioView(clean, 16000), rate);
          auto nz = Resample(AudioView(noise_only, 16000), rate);
          const size_t fs = static_cast<size_t>(rate / 50);
          std::vector<bool> a(labels.size(), false);
          for (size_t f = 0; f < labels.size() && (f + 1) * fs <= s->samples.size(); ++f) {
            if (!labels[f]) continue;
            double ps = 0, pn = 0;
            for (size_t k = f * fs; k < (f + 1) * fs; ++k) {
              ps += std::pow(s->samples[k], 2);
              pn += std::pow(nz->samples[k], 2);
            }
            a[f] = ps > pn;
          }
          return a;
        };
        const std::vector<bool> audible = audible_at(16000);
        const std::vector<bool> audible_narrow = audible_at(8000);
        std::vector<int16_t> noisy(clean.size());
        for (size_t k = 0; k < clean.size(); ++k) {
          noisy[k] = SaturateToInt16(static_cast<int32_t>(std::lrint(clean[k] + noise[k] / norm * noise_rms)));
        }
        turns.push_back({noisy, 16000, snr_db, labels, true_end_ms, pause_from_ms, pause_to_ms, audible});
        auto narrow = Resample(AudioView(noisy, 16000), 8000);
        std::vector<uint8_t> mu(narrow->samples.size());
        EncodeMulaw(narrow->samples, mu);
        DecodeMulaw(mu, narrow->samples);
        turns.push_back({narrow->samples, 8000, snr_db, labels, true_end_ms, pause_from_ms, pause_to_ms,
                         audible_narrow});
      }
    }
  }

  std::printf("%zu turns (%zu clips x SNR 60 (clean)/20/15/10 dB x 2 noises x {16 kHz, 8 kHz mu-law}), 300 ms pause inside each\n",
              turns.size(), clips.size());
  // The clips' own pauses (reference labels): a silence-based endpointer must cut inside any
  // pause longer than its trailing silence, so those are told apart from the inserted one.
  for (size_t i = 0; i < clips.size(); ++i) {
    const auto& l = clips[i].labels;
    int longest = 0, run = 0;
    bool seen = false;
    for (bool b : l) {
      if (b) {
        if (seen) longest = std::max(longest, run);
        seen = true;
        run = 0;
      } else {
        ++run;
      }
    }
    std::printf("clip %-58s %5.1f s, longest inner pause %4d ms\n", files[i].c_str(),
                l.size() * 0.02, longest * 20);
  }
  std::printf("%-28s %9s %9s %9s %9s %9s %9s %9s %9s\n", "config", "precision", "recall", "eot_p50", "eot_p95",
              "premature", "at_300ms", "cut_aud", "missed");
  std::printf("(eot = end-of-turn delay after the true end of speech; premature/missed count turns;\n"
              " at_300ms: of the premature turns, those cut at the inserted 300 ms pause, the rest\n"
              " were cut inside a clip's own longer pause; cut_aud: turns ended while at least\n"
              " 200 ms of audible speech - louder than the added noise - was still to come)\n");
  for (double snr : {0.0, 60.0, 20.0, 15.0, 10.0}) {
  if (snr > 0) std::printf("-- SNR %.0f dB only (%zu turns)\n", snr, turns.size() / 4);
  for (int t : trailing) {
    if (snr > 0 && t != EndpointerConfig{}.trailing_silence_ms) continue;
    for (bool hint : {false, true}) {
      VadConfig vc = g_vad;
      EndpointerConfig ec;
      ec.trailing_silence_ms = t;
      ec.complete_silence_ms = std::min(ec.complete_silence_ms, t);
      Totals tot;
      for (const auto& turn : turns) {
        if (snr == 0 || turn.snr_db == snr) Evaluate(turn, vc, ec, hint, tot);
      }
      char name[64];
      std::snprintf(name, sizeof name, "trailing=%d%s", t, hint ? " +hint(240)" : "");
      std::printf("%-28s %9.3f %9.3f %7.0fms %7.0fms %9d %9d %9d %9d\n", name,
                  static_cast<double>(tot.tp) / (tot.tp + tot.fp),
                  static_cast<double>(tot.tp) / (tot.tp + tot.fn), Percentile(tot.delays, 0.5),
                  Percentile(tot.delays, 0.95), tot.premature, tot.cut_in_pause, tot.cut_audible,
                  tot.missed);
    }
  }
  }
  return 0;
}
