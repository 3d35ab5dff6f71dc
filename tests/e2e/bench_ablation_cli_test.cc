// `hotline bench ablation` at the tiny model shape with a handful of questions: the JSON report
// has the four rows and their columns, and the orderings that hold whatever the machine's load:
// rows 2-4 carry the quantized model (fewer weight bytes), only the cache row answers from the
// answer caches, every other row's answers come from the model at the fixed length, and the
// cache row's first audio comes before the whole-answer rows'. And the usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include "run_hotline.h"

namespace hotline {
namespace {


TEST(BenchAblationCli, TinyShapeReportsTheFiveRows) {
  e2e::CommandResult r = e2e::RunHotline(
      "bench ablation --json --shape tiny --questions 4 --answer-tokens 128 --concurrency 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["shape"], "tiny");
  EXPECT_EQ(j["questions"], 4);
  EXPECT_EQ(j["answer_tokens"], 128);
  ASSERT_TRUE(j["load_average_1m"].is_object());
  const auto& rows = j["rows"];
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 5u) << rows.dump(2);

  // What each row turns on.
  EXPECT_EQ(rows[0]["weights"], "f32");
  EXPECT_EQ(rows[0]["flash_attention"], false);
  EXPECT_EQ(rows[1]["weights"], "q4_0");
  EXPECT_EQ(rows[1]["flash_attention"], true);
  EXPECT_EQ(rows[1]["streaming"], false);
  EXPECT_EQ(rows[2]["streaming"], true);
  EXPECT_EQ(rows[2]["answer_cache"], false);
  EXPECT_EQ(rows[3]["answer_cache"], true);
  EXPECT_EQ(rows[4]["answer_cache"], false);
  EXPECT_EQ(rows[4]["prefetch"], true);
  EXPECT_EQ(rows[4]["speculation"], true);
  EXPECT_EQ(rows[2]["prefetch"], false);
  EXPECT_EQ(rows[2]["speculation"], false);

  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    SCOPED_TRACE(row["name"].get<std::string>());
    EXPECT_EQ(row["failures"], 0) << row.dump(2);
    const auto& lat = row["first_audio_ms"];
    ASSERT_TRUE(lat["p50"].is_number() && lat["p99"].is_number()) << row.dump(2);
    EXPECT_GT(lat["p50"].get<double>(), 0);
    EXPECT_LE(lat["p50"].get<double>(), lat["p99"].get<double>());
    EXPECT_EQ(lat["mean_of"], 4);
    EXPECT_GT(row["questions_per_s"].get<double>(), 0);
    const auto& mem = row["memory_bytes"];
    EXPECT_GT(mem["model"].get<double>(), 0);
    EXPECT_GT(mem["kv"].get<double>(), 0);
    EXPECT_EQ(mem["total"].get<double>(),
              mem["model"].get<double>() + mem["kv"].get<double>() + mem["caches"].get<double>());
    int answered = 0;
    for (const auto& [tier, count] : row["answers_by_tier"].items()) answered += count.get<int>();
    EXPECT_EQ(answered, 4);
    if (i != 3) {
      // No answer cache: every answer is the model's, at the fixed length, and nothing cached.
      EXPECT_EQ(row["answers_by_tier"].value("llm", 0), 4) << row["answers_by_tier"].dump();
      // The fixed length, unless the random model drew its end-of-text token (1 in ~1,000 at
      // the tiny shape's vocabulary).
      EXPECT_LE(row["generated_tokens_mean"].get<double>(), 128);
      EXPECT_GE(row["generated_tokens_mean"].get<double>(), 32);
      EXPECT_EQ(mem["caches"], 0);
    }
  }
  // Quantized weights take fewer bytes than F32 (Q4_0: about a seventh).
  EXPECT_LT(rows[1]["memory_bytes"]["model"].get<double>(),
            rows[0]["memory_bytes"]["model"].get<double>() / 3);
  // The cache row answers from the caches (the knowledge base's intents), not the model.
  EXPECT_EQ(rows[3]["answers_by_tier"].value("llm", 0), 0) << rows[3]["answers_by_tier"].dump();
  // First audio: 128 tokens generated and then synthesized as one text take longer than the
  // first sentence of a streamed answer (row 3) or of a cached one (row 4); at this shape by 3x
  // or more, whatever the load.
  const double whole_f32 = rows[0]["first_audio_ms"]["p50"];
  const double whole_q = rows[1]["first_audio_ms"]["p50"];
  const double streaming = rows[2]["first_audio_ms"]["p50"];
  const double cache_p50 = rows[3]["first_audio_ms"]["p50"];
  EXPECT_LT(streaming, whole_f32);
  EXPECT_LT(streaming, whole_q);
  EXPECT_LT(cache_p50, whole_f32);
  EXPECT_LT(cache_p50, whole_q);
  // Answered from the caches, the cache row needs no model: more questions per second than the
  // same pipeline without them.
  EXPECT_GT(rows[3]["questions_per_s"].get<double>(), rows[2]["questions_per_s"].get<double>());
  // Pre-prefill: more of the prompt is in the prefix cache when the question ends than the
  // shared system prompt row 3 finds there (the scheduler also lets a request wait for blocks a
  // prefetch is still computing, so this holds however slow the machine is).
  EXPECT_GT(rows[4]["cached_prompt_tokens_mean"].get<double>(),
            rows[2]["cached_prompt_tokens_mean"].get<double>());
}

// The --calls sweep of the model rows: each caller count on a fresh engine, every distinct
// question asked once; --rows runs only the rows named.
TEST(BenchAblationCli, CallsSweepOfTheModelRows) {
  e2e::CommandResult r = e2e::RunHotline(
      "bench ablation --json --shape tiny --questions 4 --answer-tokens 4 --rows 3,5 "
      "--calls 1,2 --lead-ms 50 --talk-ms 100");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const auto& rows = j["rows"];
  ASSERT_EQ(rows.size(), 2u) << rows.dump(2);
  EXPECT_EQ(rows[0]["name"], "+ streaming pipeline");
  EXPECT_EQ(rows[1]["prefetch"], true);
  for (const auto& row : rows) {
    SCOPED_TRACE(row["name"].get<std::string>());
    const auto& sweep = row["first_audio_by_calls"];
    ASSERT_EQ(sweep.size(), 2u) << row.dump(2);
    EXPECT_EQ(sweep[0]["calls"], 1);
    EXPECT_EQ(sweep[1]["calls"], 2);
    for (const auto& point : sweep) {
      EXPECT_EQ(point["turns"], 2);  // the 2 distinct questions of the 4, each asked once
      EXPECT_GT(point["p50"].get<double>(), 0);
    }
  }
}

TEST(BenchAblationCli, UsageErrors) {
  e2e::CommandResult shape = e2e::RunHotline("bench ablation --shape 7b");
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.err.find("--shape"), std::string::npos) << shape.err;
  e2e::CommandResult few = e2e::RunHotline("bench ablation --questions 1");
  EXPECT_EQ(few.exit_code, 2);
  EXPECT_NE(few.err.find("--questions"), std::string::npos) << few.err;
  e2e::CommandResult calls = e2e::RunHotline("bench ablation --calls 1,x");
  EXPECT_EQ(calls.exit_code, 2);
  EXPECT_NE(calls.err.find("--calls: 'x'"), std::string::npos) << calls.err;
  e2e::CommandResult rows = e2e::RunHotline("bench ablation --rows 6");
  EXPECT_EQ(rows.exit_code, 2);
  EXPECT_NE(rows.err.find("--rows"), std::string::npos) << rows.err;
  e2e::CommandResult bitext = e2e::RunHotline("bench ablation --shape tiny --bitext /nonexistent.csv");
  EXPECT_EQ(bitext.exit_code, 1);
  EXPECT_NE(bitext.err.find("/nonexistent.csv"), std::string::npos) << bitext.err;
}

}  // namespace
}  // namespace hotline
