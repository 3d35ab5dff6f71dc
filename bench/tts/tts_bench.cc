// tts_bench: time to first audio chunk (TTFA) for a short sentence and real-time factor (RTF)
// per voice and backend, with the non-streaming time for the same sentence as the baseline;
// parallel throughput (is a backend serialized?); cost of the normalizer and the chunker.
//
//   build/bench/tts/tts_bench [--runs N] [--quick]
//
// TTFA: from the Synthesize() call to the first chunk callback (chunk_ms = 40), voice already
// loaded (as in a running server). RTF: synthesis wall time / audio duration on a ~20 s paragraph.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

#include "tts/sentence_chunker.h"
#include "tts/synthesizer.h"
#include "tts/text_normalizer.h"

namespace hotline::tts {
namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of the calling thread (ms): unaffected by other processes on a shared machine.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

constexpr char kShort[] = "Your order has shipped.";
constexpr char kShortZh[] = "您的订单已经发货了。";
constexpr char kParagraph[] =
    "Thank you for calling. I can see that your order was placed on Monday and shipped "
    "yesterday afternoon from our warehouse. It should arrive within three to five business days. "
    "If you are not at home, the driver will leave a note with instructions for picking it up at "
    "your local post office. Is there anything else I can help you with today?";
constexpr char kParagraphZh[] =
    "感谢您的来电。您的订单已于星期一下单，并于昨天下午从我们的仓库发出。预计三到五个工作日内送达。"
    "如果您不在家，快递员会留下取件通知。请问还有什么可以帮您的吗？";

struct Voice {
  std::string backend;
  std::string voice;
  bool chinese = false;
};

TtsConfig ConfigFor(const Voice& v) {
  TtsConfig cfg;
  cfg.backend = v.backend;
  cfg.flite.voice = v.voice;
  cfg.espeak_ng.voice = v.voice;
  return cfg;
}

void BenchVoice(const Voice& v, int runs) {
  auto synth_or = CreateSynthesizer(ConfigFor(v));
  if (!synth_or.ok()) {
    std::printf("%-22s  error: %s\n", v.voice.c_str(), synth_or.status().ToString().c_str());
    return;
  }
  Synthesizer& synth = **synth_or;
  const char* short_text = v.chinese ? kShortZh : kShort;
  const char* paragraph = v.chinese ? kParagraphZh : kParagraph;
  (void)SynthesizeToBuffer(synth, short_text);  // warm caches
  std::vector<double> ttfa, whole, ttfa_cpu;
  double short_audio_s = 0;
  for (int r = 0; r < runs; ++r) {
    Clock::time_point start = Clock::now(), first{};
    double cpu_start = ThreadCpuMs(), cpu_first = 0;
    int64_t samples = 0;
    Status s = synth.Synthesize(short_text, [&](std::span<const int16_t> c) {
      if (samples == 0) {
        first = Clock::now();
        cpu_first = ThreadCpuMs();
      }
      samples += static_cast<int64_t>(c.size());
      return Status::Ok();
    });
    Clock::time_point end = Clock::now();
    if (!s.ok()) {
      std::printf("%-22s  error: %s\n", v.voice.c_str(), s.ToString().c_str());
      return;
    }
    ttfa.push_back(Ms(first - start));
    ttfa_cpu.push_back(cpu_first - cpu_start);
    whole.push_back(Ms(end - start));
    short_audio_s = static_cast<double>(samples) / synth.sample_rate_hz();
  }
  // Real-time factor on the paragraph.
  double rtf_sum = 0, rtf_cpu_sum = 0, para_audio_s = 0;
  int rtf_runs = std::max(1, runs / 5);
  for (int r = 0; r < rtf_runs; ++r) {
    Clock::time_point start = Clock::now();
    double cpu_start = ThreadCpuMs();
    auto audio = SynthesizeToBuffer(synth, paragraph);
    double wall_s = Ms(Clock::now() - start) / 1000.0;
    double cpu_s = (ThreadCpuMs() - cpu_start) / 1000.0;
    if (!audio.ok()) return;
    para_audio_s = audio->duration_s();
    rtf_sum += wall_s / para_audio_s;
    rtf_cpu_sum += cpu_s / para_audio_s;
  }
  std::printf("%-24s %6d  %7.2f  %7.2f  %7.2f  %9.2f  %6.2f  %7.4f  %7.4f  %6.1f\n",
              synth.voice_id().c_str(), synth.sample_rate_hz(), Percentile(ttfa, 0.5),
              Percentile(ttfa, 0.95), Percentile(ttfa_cpu, 0.5), Percentile(whole, 0.5),
              short_audio_s, rtf_sum / rtf_runs, rtf_cpu_sum / rtf_runs, para_audio_s);
}

// Aggregate throughput with `threads` concurrent synthesizers: audio seconds produced per wall
// second. A serialized backend stays flat as threads grow.
void BenchParallel(const Voice& v, int threads, int per_thread) {
  std::atomic<int64_t> samples{0};
  int rate = 0;
  std::vector<std::unique_ptr<Synthesizer>> synths;
  for (int t = 0; t < threads; ++t) {
    auto s = CreateSynthesizer(ConfigFor(v));
    if (!s.ok()) return;
    rate = (*s)->sample_rate_hz();
    synths.push_back(std::move(s).value());
  }
  Clock::time_point start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < per_thread; ++r) {
        auto a = SynthesizeToBuffer(*synths[static_cast<size_t>(t)], kParagraph);
        if (a.ok()) samples.fetch_add(static_cast<int64_t>(a->size()));
      }
    });
  }
  for (auto& th : pool) th.join();
  double wall = Ms(Clock::now() - start) / 1000.0;
  double audio = static_cast<double>(samples.load()) / rate;
  std::printf("%-24s threads %d: %7.1f s of audio per wall second\n", synths[0]->voice_id().c_str(),
              threads, audio / wall);
}

void BenchText(int runs) {
  const std::vector<std::string> inputs = {
      "Your order #A12345 for $12.50 shipped on 03/05/2024 at 9:30 am.",
      "**Good news!** Dr. Smith approved approx. 15% off; see https://example.com/x \xF0\x9F\x98\x8A",
      "Call 555-123-4567 or write to help@example.com, e.g. about order 123456.",
      std::string(kParagraph)};
  TextNormalizer normalizer;
  size_t bytes = 0;
  Clock::time_point start = Clock::now();
  for (int r = 0; r < runs * 100; ++r) {
    for (const auto& in : inputs) bytes += normalizer.Normalize(in).size();
  }
  double us = Ms(Clock::now() - start) * 1000.0 / (runs * 100 * static_cast<int>(inputs.size()));
  std::printf("normalizer: %.1f us per input (mean of 4 inputs, 60-330 bytes)  [%zu]\n", us, bytes % 10);

  // Chunker: feed the paragraph in 4-byte "tokens".
  std::string para = kParagraph;
  int chunks = 0;
  start = Clock::now();
  for (int r = 0; r < runs * 100; ++r) {
    SentenceChunker c;
    for (size_t at = 0; at < para.size(); at += 4) chunks += static_cast<int>(c.Push(para.substr(at, 4)).size());
    chunks += static_cast<int>(c.Flush().size());
  }
  double per_token_ns = Ms(Clock::now() - start) * 1e6 / (runs * 100.0 * (para.size() / 4.0));
  std::printf("chunker: %.0f ns per 4-byte token (%d chunks per paragraph)\n", per_token_ns,
              chunks / (runs * 100));
}

}  // namespace
}  // namespace hotline::tts

int main(int argc, char** argv) {
  using namespace hotline::tts;
  int runs = 20;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::max(5, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else {
      std::fprintf(stderr, "usage: tts_bench [--runs N] [--quick]\n");
      return 2;
    }
  }
  if (quick) runs = 5;
  std::printf("Short sentence: \"%s\" (zh: \"%s\"); %d runs; chunk 40 ms\n", kShort, kShortZh, runs);
  std::printf("%-24s %6s  %7s  %7s  %7s  %9s  %6s  %7s  %7s  %6s\n", "voice", "Hz", "TTFA50",
              "TTFA95", "TTFAcpu", "whole50", "audio", "RTF", "RTFcpu", "para");
  std::printf("%-24s %6s  %7s  %7s  %7s  %9s  %6s  %7s  %7s  %6s\n", "", "", "ms", "ms", "ms",
              "ms (base)", "s", "wall", "cpu", "s");
  const std::vector<Voice> voices = {
      {"flite", "cmu_us_slt"},  {"flite", "cmu_us_rms"}, {"flite", "cmu_us_awb"},
      {"flite", "cmu_us_kal16"}, {"flite", "cmu_us_kal"}, {"espeak-ng", "en-us"},
      {"espeak-ng", "cmn", true}};
  for (const auto& v : voices) BenchVoice(v, runs);
  std::printf("\nParallel throughput (paragraph, %d per thread):\n", quick ? 1 : 3);
  for (const Voice& v : {Voice{"flite", "cmu_us_slt"}, Voice{"espeak-ng", "en-us"}}) {
    for (int threads : {1, 2}) BenchParallel(v, threads, quick ? 1 : 3);
  }
  std::printf("\n");
  BenchText(runs);
  return 0;
}
