// Runs `hotline audio convert` and `hotline audio info` as a user would and checks their output
// files, exit codes and messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "audio/level.h"
#include "audio/wav.h"
#include "common/build_paths.h"

namespace hotline::audio {
namespace {

namespace fs = std::filesystem;

const std::string kHotline = std::string(HOTLINE_BINARY_DIR) + "/hotline";
const std::string kData = "/usr/share/pocketsphinx/test/data";
const std::string kClip = kData + "/librivox/sense_and_sensibility_01_austen_64kb-0870.wav";

struct CmdResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class AudioCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kHotline)) << kHotline << " missing: build the `hotline` target";
    ASSERT_TRUE(fs::exists(kClip)) << kClip << " missing: run scripts/setup (pocketsphinx-testdata)";
    dir_ = fs::path(::testing::TempDir()) /
           ("hotline_audio_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs a shell command line, capturing stdout and stderr separately.
  CmdResult Sh(const std::string& cmd) const {
    const std::string out = Path("stdout.txt"), err = Path("stderr.txt");
    const int status = std::system((cmd + " >" + out + " 2>" + err).c_str());
    CmdResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }
  CmdResult Hotline(const std::string& args) const { return Sh(kHotline + " " + args); }

  fs::path dir_;
};

TEST_F(AudioCli, LibrivoxToMulaw8kAndBackKeepsDurationToTheMillisecond) {
  auto original = ReadWavFile(kClip);
  ASSERT_TRUE(original.ok()) << original.status();
  ASSERT_EQ(original->audio.sample_rate_hz, 16000);

  const CmdResult to8k = Hotline("audio convert " + kClip + " " + Path("phone.wav") +
                           " --rate 8000 --codec mulaw");
  ASSERT_EQ(to8k.exit_code, 0) << to8k.err;
  auto phone = ReadWavFile(Path("phone.wav"));
  ASSERT_TRUE(phone.ok()) << phone.status();
  EXPECT_EQ(phone->format.sample_format, SampleFormat::kMulaw);
  EXPECT_EQ(phone->format.format_tag, 7);
  EXPECT_EQ(phone->format.sample_rate_hz, 8000);
  EXPECT_EQ(phone->audio.duration_ms(), original->audio.duration_ms());

  const CmdResult back = Hotline("audio convert " + Path("phone.wav") + " " + Path("back.wav") +
                           " --rate 16000 --codec pcm16");
  ASSERT_EQ(back.exit_code, 0) << back.err;
  auto restored = ReadWavFile(Path("back.wav"));
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->format.sample_format, SampleFormat::kPcm16);
  EXPECT_EQ(restored->audio.sample_rate_hz, 16000);
  EXPECT_EQ(restored->audio.duration_ms(), original->audio.duration_ms());
  EXPECT_LE(std::abs(static_cast<long>(restored->audio.size()) -
                     static_cast<long>(original->audio.size())),
            16);  // within 1 ms of samples
  // Telephone band-limiting and 8-bit G.711 keep the speech level within a dB or two.
  EXPECT_NEAR(RmsDbfs(restored->audio.samples), RmsDbfs(original->audio.samples), 2.0);
}

TEST_F(AudioCli, TruncatedWavFailsWithAOneLineReason) {
  const std::string bytes = Slurp(kClip);
  {
    std::ofstream f(Path("cut.wav"), std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  const CmdResult r = Hotline("audio convert " + Path("cut.wav") + " " + Path("out.wav"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("hotline: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(Path("out.wav")));

  const CmdResult info = Hotline("audio info " + Path("cut.wav"));
  EXPECT_NE(info.exit_code, 0);
  EXPECT_NE(info.err.find("truncated"), std::string::npos) << info.err;
}

TEST_F(AudioCli, InfoJsonDescribesTheRecording) {
  const CmdResult r = Hotline("audio info " + kClip + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["container"], "wav");
  EXPECT_EQ(j["codec"], "pcm16");
  EXPECT_EQ(j["channels"], 1);
  EXPECT_EQ(j["sample_rate_hz"], 16000);
  EXPECT_EQ(j["samples"], 113600);
  EXPECT_EQ(j["duration_ms"], 7100);
  EXPECT_LT(j["rms_dbfs"].get<double>(), -10.0);
  EXPECT_GT(j["rms_dbfs"].get<double>(), -40.0);
  EXPECT_GT(j["peak"].get<int>(), 1000);
  EXPECT_GT(j["speech_like_share"].get<double>(), 0.5);
  EXPECT_LT(j["speech_like_share"].get<double>(), 0.98);

  const CmdResult text = Hotline("audio info " + kClip);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("duration:     7.100 s"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("speech-like:"), std::string::npos) << text.out;
}

TEST_F(AudioCli, RawInputNeedsAndUsesAnExplicitRate) {
  const std::string raw = kData + "/goforward.raw";
  ASSERT_TRUE(fs::exists(raw));
  const CmdResult no_rate = Hotline("audio info " + raw);
  EXPECT_NE(no_rate.exit_code, 0);
  EXPECT_NE(no_rate.err.find("sample rate"), std::string::npos) << no_rate.err;

  const CmdResult info = Hotline("audio info " + raw + " --raw-rate 16000 --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["container"], "raw");
  EXPECT_EQ(j["samples"].get<size_t>(), fs::file_size(raw) / 2);

  const CmdResult conv = Hotline("audio convert " + raw + " " + Path("gf.wav") +
                           " --raw-rate 16000 --rate 8000 --codec alaw");
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  auto w = ReadWavFile(Path("gf.wav"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->format.sample_format, SampleFormat::kAlaw);
  EXPECT_EQ(w->audio.size(), (fs::file_size(raw) / 2 + 1) / 2);
}

TEST_F(AudioCli, ReadsAndWritesFilesSoxUnderstands) {
  // sox (a Debian package in scripts/packages.txt) is an independent WAV implementation.
  const CmdResult gen = Sh("sox -n -r 44100 -c 2 -b 24 " + Path("stereo24.wav") +
                     " synth 1.5 sine 440 sine 660 gain -6");
  ASSERT_EQ(gen.exit_code, 0) << "sox is needed for this test (scripts/setup): " << gen.err;
  const CmdResult conv = Hotline("audio convert " + Path("stereo24.wav") + " " + Path("mono8k.wav") +
                           " --rate 8000 --codec mulaw");
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  const CmdResult soxi = Sh("soxi " + Path("mono8k.wav"));
  ASSERT_EQ(soxi.exit_code, 0) << soxi.err;
  EXPECT_NE(soxi.out.find("Channels       : 1"), std::string::npos) << soxi.out;
  EXPECT_NE(soxi.out.find("Sample Rate    : 8000"), std::string::npos) << soxi.out;
  EXPECT_NE(soxi.out.find("= 12000 samples"), std::string::npos) << soxi.out;
  EXPECT_NE(soxi.out.find("u-law"), std::string::npos) << soxi.out;

  // And the other way round: sox's A-law, extensible float and 8-bit files read back correctly.
  for (const std::string& fmt : {std::string("-e a-law -b 8"), std::string("-e floating-point -b 32")}) {
    const CmdResult s = Sh("sox " + Path("mono8k.wav") + " " + fmt + " " + Path("sox_out.wav"));
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const CmdResult info = Hotline("audio info --json " + Path("sox_out.wav"));
    ASSERT_EQ(info.exit_code, 0) << fmt << ": " << info.err;
    const auto j = nlohmann::json::parse(info.out);
    EXPECT_EQ(j["samples"], 12000) << fmt;
    EXPECT_EQ(j["sample_rate_hz"], 8000) << fmt;
    EXPECT_NEAR(j["rms_dbfs"].get<double>(), -12.0, 2.0) << fmt;
  }
}

TEST_F(AudioCli, TrimRemovesAddedSilence) {
  auto clip = ReadWavFile(kClip);
  ASSERT_TRUE(clip.ok()) << clip.status();
  AudioBuffer padded;
  padded.sample_rate_hz = 16000;
  padded.samples.assign(16000, 0);  // 1 s of digital silence on each side
  padded.samples.insert(padded.samples.end(), clip->audio.samples.begin(), clip->audio.samples.end());
  padded.samples.insert(padded.samples.end(), 16000, 0);
  ASSERT_TRUE(WriteWavFile(Path("padded.wav"), padded, Codec::kPcm16).ok());
  const CmdResult r = Hotline("audio convert " + Path("padded.wav") + " " + Path("trimmed.wav") + " --trim");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto trimmed = ReadWavFile(Path("trimmed.wav"));
  ASSERT_TRUE(trimmed.ok()) << trimmed.status();
  // The 2 s of padding are gone (100 ms margins stay); the speech itself is kept.
  EXPECT_LE(trimmed->audio.duration_ms(), clip->audio.duration_ms() + 200);
  EXPECT_GE(trimmed->audio.duration_ms(), clip->audio.duration_ms() - 1000);
}

TEST_F(AudioCli, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(Hotline("audio convert " + kClip + " " + Path("x.wav") + " --codec mp3").exit_code, 2);
  EXPECT_EQ(Hotline("audio info " + kClip + " --bogus").exit_code, 2);
  const CmdResult missing = Hotline("audio info " + Path("nope.wav"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace hotline::audio
