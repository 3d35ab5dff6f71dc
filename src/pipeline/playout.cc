#include "pipeline/playout.h"

#include "audio/pcm.h"

namespace hotline::pipeline {

void Playout::Send(std::deque<Frame>& frames, int64_t now_ms) {
  if (frames.empty()) return;
  if (paused_) {
    for (Frame& f : frames) held_.push_back(std::move(f));
    frames.clear();
    return;
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(frames.size() * frames.front().bytes.size());
  for (const Frame& f : frames) bytes.insert(bytes.end(), f.bytes.begin(), f.bytes.end());
  sink_.SendAudio(bytes);
  int64_t start = StartOfNext(now_ms);
  for (Frame& f : frames) {
    f.start_ms = start;
    start += audio::kFrameMs;
    playing_.push_back(std::move(f));
  }
  frames.clear();
  end_ms_ = start;
}

void Playout::Mark(std::string name) {
  last_mark_ = std::move(name);
  if (paused_) {
    mark_held_ = true;
    mark_outstanding_ = false;
    return;
  }
  sink_.SendMark(last_mark_);
  mark_outstanding_ = true;
}

void Playout::MarkPlayed(std::string_view name, int64_t now_ms) {
  if (name != last_mark_ || !mark_outstanding_) return;
  mark_outstanding_ = false;
  if (end_ms_ > now_ms) end_ms_ = now_ms;
  if (!playing_.empty()) heard_ = playing_.back().place;
  playing_.clear();
}

void Playout::HeardBefore(int64_t now_ms) {
  for (const Frame& f : playing_) {
    if (f.start_ms >= now_ms) break;
    heard_ = f.place;
  }
}

void Playout::Pause(int64_t now_ms) {
  HeardBefore(now_ms);
  paused_ = true;
  // Frames not yet started are kept; the one playing is dropped (a resume starts at the next
  // frame boundary).
  for (Frame& f : playing_) {
    if (f.start_ms >= now_ms) held_.push_back(std::move(f));
  }
  playing_.clear();
  end_ms_ = now_ms;
  if (mark_outstanding_) {  // the transport reports a cleared mark as played: send it anew
    mark_outstanding_ = false;
    mark_held_ = true;
  }
  sink_.Clear();
}

void Playout::Resume(int64_t now_ms) {
  if (!paused_) return;
  paused_ = false;
  Send(held_, now_ms);
  if (mark_held_) {
    mark_held_ = false;
    // A new name: the transport may still report the cleared mark as played.
    last_mark_ += "-r" + std::to_string(++resumes_);
    sink_.SendMark(last_mark_);
    mark_outstanding_ = true;
  }
}

void Playout::Stop(int64_t now_ms, bool send_clear) {
  HeardBefore(now_ms);
  const bool already_cleared = paused_;  // the pause sent the transport its Clear()
  paused_ = false;
  held_.clear();
  mark_held_ = false;
  mark_outstanding_ = false;
  end_ms_ = now_ms;
  playing_.clear();
  if (send_clear && !already_cleared) sink_.Clear();
}

void Playout::DropHeld() {
  held_.clear();
  mark_held_ = false;
}

float Playout::Level(int64_t now_ms) {
  while (!playing_.empty() && playing_.front().start_ms + audio::kFrameMs <= now_ms) {
    playing_.pop_front();
  }
  if (playing_.empty() || playing_.front().start_ms > now_ms) return -120.0f;
  heard_ = playing_.front().place;
  return playing_.front().level_dbfs;
}

}  // namespace hotline::pipeline
