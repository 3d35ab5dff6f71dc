// Playout: the agent's audio timeline, pauses for probable barge-ins, and turn-end marks.
#include "pipeline/playout.h"

#include <gtest/gtest.h>

#include "pipeline/testing/fakes.h"

namespace hotline::pipeline {
namespace {

using testing::TestSink;

// `n` frames of 160 bytes (8 kHz μ-law), each at `dbfs`.
std::deque<Playout::Frame> Frames(int n, float dbfs = -20.0f) {
  std::deque<Playout::Frame> frames(n);
  for (auto& f : frames) {
    f.level_dbfs = dbfs;
    f.bytes.assign(160, 0xff);
  }
  return frames;
}

TEST(Playout, FramesQueueBehindWhatIsPlaying) {
  TestSink sink;
  Playout out(sink);
  EXPECT_FALSE(out.Playing(0));
  auto a = Frames(5);
  out.Send(a, 100);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(out.end_ms(), 200);
  auto b = Frames(5, -30.0f);
  out.Send(b, 150);  // behind the first: starts at 200, not 150
  EXPECT_EQ(out.end_ms(), 300);
  EXPECT_EQ(sink.bytes(), 10 * 160u);
  EXPECT_FLOAT_EQ(out.Level(150), -20.0f);
  EXPECT_FLOAT_EQ(out.Level(250), -30.0f);
  EXPECT_TRUE(out.Playing(299));
  EXPECT_FALSE(out.Playing(300));
  EXPECT_FLOAT_EQ(out.Level(300), -120.0f);
  auto c = Frames(1);
  out.Send(c, 1000);  // after a gap: starts now
  EXPECT_EQ(out.end_ms(), 1020);
  EXPECT_EQ(out.StartOfNext(2000), 2000);
}

TEST(Playout, TheMarkEchoEndsPlaybackEarlierThanTheEstimate) {
  TestSink sink;
  Playout out(sink);
  auto a = Frames(50);
  out.Send(a, 0);
  out.Mark("turn-1");
  EXPECT_EQ(sink.marks(), std::vector<std::string>{"turn-1"});
  out.MarkPlayed("turn-0", 400);  // not the outstanding mark: ignored
  EXPECT_TRUE(out.Playing(400));
  out.MarkPlayed("turn-1", 400);
  EXPECT_FALSE(out.Playing(400));
  EXPECT_FLOAT_EQ(out.Level(400), -120.0f);
  out.MarkPlayed("turn-1", 500);  // a second echo changes nothing
  EXPECT_EQ(out.end_ms(), 400);
}

TEST(Playout, AnUnconfirmedPauseSendsTheUnplayedAudioAndTheMarkAgain) {
  TestSink sink;
  Playout out(sink);
  auto a = Frames(10);  // 0..200 ms
  out.Send(a, 0);
  out.Mark("turn-2");
  out.Pause(50);  // frames starting at 60..180 are held; the one playing at 50 is dropped
  EXPECT_EQ(sink.clears(), 1);
  EXPECT_TRUE(out.paused());
  EXPECT_TRUE(out.Playing(10000));  // a pause counts as playing
  auto b = Frames(3);
  out.Send(b, 70);  // produced during the pause: held too
  EXPECT_EQ(sink.bytes(), 10 * 160u);
  out.Mark("turn-3");  // held until the resume
  EXPECT_EQ(sink.marks().size(), 1u);
  out.Resume(100);
  EXPECT_FALSE(out.paused());
  EXPECT_EQ(sink.bytes(), (10 + 7 + 3) * 160u);
  EXPECT_EQ(out.end_ms(), 100 + 10 * 20);
  EXPECT_EQ(sink.marks(), (std::vector<std::string>{"turn-2", "turn-3-r1"}));
  out.MarkPlayed("turn-3", 150);  // the cleared name no longer counts
  EXPECT_TRUE(out.Playing(150));
  out.MarkPlayed("turn-3-r1", 150);
  EXPECT_FALSE(out.Playing(150));
}

TEST(Playout, AConfirmedBargeInDropsEverythingWithoutASecondClear) {
  TestSink sink;
  Playout out(sink);
  auto a = Frames(10);
  out.Send(a, 0);
  out.Mark("turn-4");
  out.Pause(40);
  out.Stop(60);
  EXPECT_EQ(sink.clears(), 1);  // the pause already cleared the transport
  EXPECT_FALSE(out.paused());
  EXPECT_FALSE(out.Playing(60));
  out.Resume(80);  // a late resume has nothing to send
  EXPECT_EQ(sink.bytes(), 10 * 160u);
  EXPECT_EQ(sink.marks().size(), 1u);
  // Without a pause, Stop clears the transport itself, unless told the transport is gone.
  auto b = Frames(5);
  out.Send(b, 100);
  out.Stop(120);
  EXPECT_EQ(sink.clears(), 2);
  auto c = Frames(5);
  out.Send(c, 200);
  out.Stop(220, /*send_clear=*/false);
  EXPECT_EQ(sink.clears(), 2);
}

TEST(Playout, ANewTurnDropsWhatAPauseHeldButStaysPaused) {
  TestSink sink;
  Playout out(sink);
  auto a = Frames(10);
  out.Send(a, 0);
  out.Mark("turn-5");
  out.Pause(20);
  out.DropHeld();
  EXPECT_TRUE(out.paused());
  out.Resume(40);
  EXPECT_EQ(sink.bytes(), 10 * 160u);  // nothing of the superseded turn plays
  EXPECT_EQ(sink.marks(), std::vector<std::string>{"turn-5"});
}

// Frames numbered 0..n-1 in piece `piece` of turn `turn`.
std::deque<Playout::Frame> Placed(int turn, int piece, int n) {
  std::deque<Playout::Frame> frames = Frames(n);
  for (int i = 0; i < n; ++i) frames[static_cast<size_t>(i)].place = {turn, piece, i};
  return frames;
}

TEST(Playout, HeardIsTheLastFrameThatStartedPlaying) {
  TestSink sink;
  Playout out(sink);
  EXPECT_EQ(out.heard().turn, -1);  // nothing played yet
  auto a = Placed(3, 0, 10);        // 0-200 ms
  out.Send(a, 0);
  auto b = Placed(3, 1, 10);  // 200-400 ms
  out.Send(b, 0);
  out.Level(50);  // the third frame of piece 0 plays
  EXPECT_EQ(out.heard().piece, 0);
  EXPECT_EQ(out.heard().index, 2);
  // A pause at 250 ms: the caller heard up to the third frame of piece 1, whatever is held.
  out.Pause(250);
  EXPECT_EQ(out.heard().turn, 3);
  EXPECT_EQ(out.heard().piece, 1);
  EXPECT_EQ(out.heard().index, 2);
  // Resumed at 400 ms (the held frames start again there), stopped at 450 ms.
  out.Resume(400);
  out.Stop(450);
  EXPECT_EQ(out.heard().piece, 1);
  EXPECT_EQ(out.heard().index, 5);
}

}  // namespace
}  // namespace hotline::pipeline
