// Shared by `hotline call`, `hotline demo` and the commands that build a call's objects: the call
// stack's options from the root configuration (call_runner.cc, in the hotline_cli library, so
// tests build stacks the way the commands do), and the per-turn report, text or JSON
// (cmd_call.cc).
#pragma once

#include <cstdio>
#include <string>

#include "app/hotline_config.h"
#include "pipeline/call_stack.h"
#include "pipeline/file_call.h"

namespace hotline::cli {

pipeline::CallStackOptions CallStackOptionsFrom(const HotlineConfig& cfg);

// Per turn: kind, transcript, answer, tier, outcome and the ledger in ms relative to the
// caller's speech end (prompts: relative to the turn's first stamp).
void PrintCallReport(const pipeline::FileCallResult& result, std::FILE* out);

// {"turns":[{"kind","transcript","answer","tier","outcome","prework","ledger":{...}}],
//  "hangup":..., "transfer":..., "wall_ms":...}
std::string CallReportJson(const pipeline::FileCallResult& result);

}  // namespace hotline::cli
