#include "audio/resampler.h"

#include <samplerate.h>

#include <algorithm>
#include <cmath>

namespace hotline::audio {
namespace {

Result<int> ConverterType(const std::string& name) {
  if (name == "sinc_best") return SRC_SINC_BEST_QUALITY;
  if (name == "sinc_medium") return SRC_SINC_MEDIUM_QUALITY;
  if (name == "sinc_fastest") return SRC_SINC_FASTEST;
  if (name == "linear") return SRC_LINEAR;
  if (name == "zero_order_hold") return SRC_ZERO_ORDER_HOLD;
  return InvalidArgumentError("unknown converter '" + name +
                              "'; choose sinc_best, sinc_medium, sinc_fastest, linear or "
                              "zero_order_hold");
}

SRC_STATE* State(void* p) { return static_cast<SRC_STATE*>(p); }

int64_t ExpectedOutput(int64_t in, int in_rate, int out_rate) {
  return (in * out_rate + in_rate / 2) / in_rate;
}

}  // namespace

Status ResamplerConfig::Validate() const {
  RETURN_IF_ERROR(ConverterType(converter).status());
  if (chunk_ms < 5 || chunk_ms > 1000) {
    return InvalidArgumentError("chunk_ms must be in [5, 1000], got " + std::to_string(chunk_ms));
  }
  return Status::Ok();
}

Result<std::unique_ptr<Resampler>> Resampler::Create(int input_rate_hz, int output_rate_hz,
                                                     const ResamplerConfig& config) {
  RETURN_IF_ERROR(CheckSampleRate(input_rate_hz).WithContext("resampler input"));
  RETURN_IF_ERROR(CheckSampleRate(output_rate_hz).WithContext("resampler output"));
  RETURN_IF_ERROR(config.Validate().WithContext("resampler"));
  ASSIGN_OR_RETURN(int type, ConverterType(config.converter));

  std::unique_ptr<Resampler> r(new Resampler());
  r->input_rate_hz_ = input_rate_hz;
  r->output_rate_hz_ = output_rate_hz;
  r->ratio_ = static_cast<double>(output_rate_hz) / input_rate_hz;
  r->chunk_samples_ = std::max<size_t>(1, SamplesForMs(input_rate_hz, config.chunk_ms));
  if (input_rate_hz == output_rate_hz) return r;

  int err = 0;
  r->state_ = src_new(type, 1, &err);
  if (r->state_ == nullptr) {
    return InternalError(std::string("libsamplerate could not create a converter: ") +
                         src_strerror(err));
  }
  r->in_scratch_.resize(r->chunk_samples_);
  const size_t out_capacity =
      static_cast<size_t>(std::ceil(static_cast<double>(r->chunk_samples_) * r->ratio_)) + 64;
  r->out_scratch_.resize(out_capacity);
  r->pcm_scratch_.resize(out_capacity);

  // Measure how much output the converter holds back while streaming: feed one chunk of silence
  // and compare with what it should have produced. Then start clean.
  std::vector<int16_t> probe_out;
  probe_out.reserve(out_capacity);
  std::vector<int16_t> silence(r->chunk_samples_, 0);
  RETURN_IF_ERROR(r->Process(silence, probe_out));
  r->lookahead_samples_ = static_cast<int>(
      std::max<int64_t>(0, ExpectedOutput(r->total_in_, input_rate_hz, output_rate_hz) -
                               static_cast<int64_t>(probe_out.size())));
  r->Reset();
  return r;
}

Resampler::~Resampler() {
  if (state_ != nullptr) src_delete(State(state_));
}

void Resampler::Reset() {
  if (state_ != nullptr) src_reset(State(state_));
  total_in_ = 0;
  total_out_ = 0;
  flushed_ = false;
}

Status Resampler::Run(const float* in, long frames, bool end_of_input, std::vector<int16_t>& out,
                      int64_t max_out) {
  // libsamplerate may stop early when the output buffer is full; loop until the input is used
  // (and, at the end of input, until it produces nothing more).
  while (true) {
    SRC_DATA d{};
    d.data_in = in;
    d.input_frames = frames;
    d.data_out = out_scratch_.data();
    d.output_frames = static_cast<long>(out_scratch_.size());
    d.src_ratio = ratio_;
    d.end_of_input = end_of_input ? 1 : 0;
    const int err = src_process(State(state_), &d);
    if (err != 0) return InternalError(std::string("libsamplerate: ") + src_strerror(err));
    long gen = d.output_frames_gen;
    if (max_out >= 0) gen = static_cast<long>(std::min<int64_t>(gen, max_out - total_out_));
    if (gen > 0) {
      src_float_to_short_array(out_scratch_.data(), pcm_scratch_.data(), static_cast<int>(gen));
      out.insert(out.end(), pcm_scratch_.begin(), pcm_scratch_.begin() + gen);
      total_out_ += gen;
    }
    in += d.input_frames_used;
    frames -= d.input_frames_used;
    if (end_of_input) {
      if (d.output_frames_gen == 0 && frames == 0) return Status::Ok();
    } else if (frames == 0) {
      return Status::Ok();
    } else if (d.input_frames_used == 0 && d.output_frames_gen == 0) {
      return InternalError("libsamplerate made no progress");
    }
  }
}

Status Resampler::Process(std::span<const int16_t> in, std::vector<int16_t>& out) {
  if (flushed_) return FailedPreconditionError("Resampler::Process after Flush; call Reset first");
  if (state_ == nullptr) {
    out.insert(out.end(), in.begin(), in.end());
    total_in_ += static_cast<int64_t>(in.size());
    total_out_ += static_cast<int64_t>(in.size());
    return Status::Ok();
  }
  while (!in.empty()) {
    const size_t n = std::min(in.size(), chunk_samples_);
    src_short_to_float_array(in.data(), in_scratch_.data(), static_cast<int>(n));
    total_in_ += static_cast<int64_t>(n);
    RETURN_IF_ERROR(Run(in_scratch_.data(), static_cast<long>(n), false, out, -1));
    in = in.subspan(n);
  }
  return Status::Ok();
}

Status Resampler::Flush(std::vector<int16_t>& out) {
  if (flushed_) return Status::Ok();
  flushed_ = true;
  if (state_ == nullptr) return Status::Ok();
  const int64_t expected = ExpectedOutput(total_in_, input_rate_hz_, output_rate_hz_);
  RETURN_IF_ERROR(Run(in_scratch_.data(), 0, true, out, expected));
  // The converter's tail may fall a sample or two short of the exact length; pad with silence.
  if (total_out_ < expected) {
    out.insert(out.end(), static_cast<size_t>(expected - total_out_), int16_t{0});
    total_out_ = expected;
  }
  return Status::Ok();
}

Result<AudioBuffer> Resample(AudioView in, int output_rate_hz, const ResamplerConfig& config) {
  ASSIGN_OR_RETURN(std::unique_ptr<Resampler> r,
                   Resampler::Create(in.sample_rate_hz, output_rate_hz, config));
  AudioBuffer out;
  out.sample_rate_hz = output_rate_hz;
  out.samples.reserve(static_cast<size_t>(
      ExpectedOutput(static_cast<int64_t>(in.samples.size()), in.sample_rate_hz, output_rate_hz) +
      1));
  RETURN_IF_ERROR(r->Process(in.samples, out.samples));
  RETURN_IF_ERROR(r->Flush(out.samples));
  return out;
}

}  // namespace hotline::audio
