// The espeak-ng backend: formant synthesis in 100+ languages (Debian libespeak-ng), including
// Mandarin ("cmn"), in espeak-ng's synchronous mode with a synthesis callback.
//
// Shared state: espeak-ng keeps its whole state (current voice, parameters, output buffers) in
// process globals, so every espeak-ng call in the process runs under one mutex: concurrent
// Synthesize() calls on different instances queue behind each other (throughput is one core's
// worth; use flite or a remote backend for many concurrent English calls). The library is
// initialized once per process with the first instance's chunk_ms as its buffer length (later
// instances' chunk_ms only regroups that audio); it is never terminated.
//
// Streaming and cancel: espeak-ng hands over one buffer of audio at a time; each goes through a
// ChunkEmitter, and a raised cancel token makes the callback ask espeak-ng to abort.
#pragma once

#include <memory>

#include "tts/synthesizer.h"

namespace hotline::tts {

// REQUIRES: config.Validate() is OK. Initializes espeak-ng on first use; errors when the voice
// does not exist in the installed espeak-ng-data.
Result<std::unique_ptr<Synthesizer>> CreateEspeakSynthesizer(const EspeakConfig& config,
                                                             int max_text_bytes);

}  // namespace hotline::tts
