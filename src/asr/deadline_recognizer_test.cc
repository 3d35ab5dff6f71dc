#include "asr/deadline_recognizer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace hotline::asr {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// A backend whose final pass takes `finish_ms` and says "hello".
class SlowRecognizer : public Recognizer {
 public:
  std::atomic<int> finish_ms{0};
  std::atomic<int> live_streams{0};
  std::atomic<int> finished{0};

  Result<std::unique_ptr<RecognizerStream>> CreateStream(int) override {
    return std::unique_ptr<RecognizerStream>(new Stream(*this));
  }
  std::string name() const override { return "slow"; }

 private:
  class Stream : public RecognizerStream {
   public:
    explicit Stream(SlowRecognizer& r) : r_(r) { r_.live_streams.fetch_add(1); }
    ~Stream() override { r_.live_streams.fetch_sub(1); }
    Status AcceptFrames(audio::AudioView) override {
      partial_.text = "hel";
      return Status::Ok();
    }
    const AsrPartial& partial() const override { return partial_; }
    Result<AsrResult> Finish() override {
      std::this_thread::sleep_for(milliseconds(r_.finish_ms.load()));
      r_.finished.fetch_add(1);
      AsrResult res;
      res.text = "hello";
      return res;
    }

   private:
    SlowRecognizer& r_;
    AsrPartial partial_;
  };
};

TEST(DeadlineRecognizer, AFinalPassWithinTheLimitPassesThrough) {
  SlowRecognizer slow;
  DeadlineRecognizer bounded(slow, milliseconds(2000));
  auto stream = bounded.CreateStream(8000).value();
  std::vector<int16_t> pcm(160);
  ASSERT_TRUE(stream->AcceptFrames(audio::AudioView{pcm, 8000}).ok());
  EXPECT_EQ(stream->partial().text, "hel");
  auto result = stream->Finish();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->text, "hello");
  EXPECT_EQ(bounded.timeouts(), 0u);
  EXPECT_EQ(bounded.name(), "slow");
  // Finished: the stream refuses more audio with a clear error.
  EXPECT_EQ(stream->AcceptFrames(audio::AudioView{pcm, 8000}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(stream->Finish().status().code(), StatusCode::kFailedPrecondition);
}

TEST(DeadlineRecognizer, AStuckFinalPassReturnsAtTheLimitAndEndsByItself) {
  SlowRecognizer slow;
  slow.finish_ms = 600;
  {
    DeadlineRecognizer bounded(slow, milliseconds(50));
    auto stream = bounded.CreateStream(8000).value();
    const auto start = SteadyClock::now();
    auto result = stream->Finish();
    const auto waited = SteadyClock::now() - start;
    EXPECT_EQ(result.status().code(), StatusCode::kDeadlineExceeded) << result.status();
    EXPECT_LT(waited, milliseconds(500)) << "Finish waited for the stuck pass";
    EXPECT_EQ(bounded.timeouts(), 1u);
    stream.reset();  // the session drops its stream; the late pass still owns the inner one
    EXPECT_EQ(slow.finished.load(), 0);
  }  // the destructor waits for the late pass before the recognizer may go
  EXPECT_EQ(slow.finished.load(), 1);
  EXPECT_EQ(slow.live_streams.load(), 0);
}

TEST(DeadlineRecognizer, ManyStreamsAtOnce) {
  SlowRecognizer slow;
  slow.finish_ms = 5;
  DeadlineRecognizer bounded(slow, milliseconds(2000));
  std::vector<std::thread> calls;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    calls.emplace_back([&] {
      for (int t = 0; t < 5; ++t) {
        auto stream = bounded.CreateStream(8000).value();
        if (stream->Finish().ok()) ok.fetch_add(1);
      }
    });
  }
  for (auto& c : calls) c.join();
  EXPECT_EQ(ok.load(), 40);
}

}  // namespace
}  // namespace hotline::asr
