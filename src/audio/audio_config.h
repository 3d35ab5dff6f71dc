// The audio layer's configuration section (`audio:` in config/hotline.yaml): one struct nesting
// each audio component's config, so the root config can take it as one Section.
//
// Thread-safety: a value; load once, share const.
#pragma once

#include "audio/level.h"
#include "audio/resampler.h"
#include "audio/speech_share.h"
#include "audio/wav.h"

namespace hotline::audio {

struct AudioConfig {
  WavConfig wav;                   // limits on the files Hotline reads
  ResamplerConfig resampler;       // converter quality for every rate change
  TrimConfig trim;                 // silence trimming
  SpeechShareConfig speech_share;  // the speech-like share reported by `audio info`

  template <class V>
  void Visit(V& v) {
    v.Section("wav", wav);
    v.Section("resampler", resampler);
    v.Section("trim", trim);
    v.Section("speech_share", speech_share);
  }
};

}  // namespace hotline::audio
