// CallRecordStore: the per-call record, one SQLite row per turn (call id, caller id, turn index,
// kind, redacted transcript, answer, tier, tokens, outcome, ledger JSON).
//
// Writes are off the audio path: Append() only queues the row (bounded; a full queue drops the
// row and counts it) and one writer thread inserts them in transactions. The database runs in
// WAL mode so readers (dashboards, `sqlite3`) never block the writer.
//
// Privacy: the transcript stored is PII-redacted by the session; answers that carry the caller's
// data are stored as "<personal>".
//
// Thread-safety: Append() from any thread, never blocks. The destructor writes what is queued
// and joins the writer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/bounded_queue.h"
#include "common/status.h"

struct sqlite3;

namespace hotline::pipeline {

struct TurnRow {
  std::string call_id;
  std::string caller_id;
  int turn = 0;
  std::string kind;        // caller, greeting, reprompt, dtmf
  std::string transcript;  // redacted
  std::string answer;
  std::string tier;
  std::string outcome;     // answered, barge_in, goodbye, transfer, error:<kind>, ...
  int64_t tokens = 0;      // model tokens spent on the turn (0 when no model ran)
  std::string ledger_json;
  int64_t started_unix_ms = 0;
};

class CallRecordStore {
 public:
  // Opens (creating) `path` and its table. `queue_rows` bounds the rows waiting to be written.
  static Result<std::unique_ptr<CallRecordStore>> Open(const std::string& path, int queue_rows);
  ~CallRecordStore();
  CallRecordStore(const CallRecordStore&) = delete;
  CallRecordStore& operator=(const CallRecordStore&) = delete;

  // Queues a row; false (and counted) when the queue is full or the store is closing.
  bool Append(TurnRow row);
  // Waits until every row queued so far is written (tests, CLI exit). Blocking.
  void Flush();

  uint64_t written() const { return written_.load(); }
  uint64_t dropped() const { return dropped_.load(); }
  uint64_t failed() const { return failed_.load(); }

 private:
  CallRecordStore(sqlite3* db, int queue_rows);
  void WriterLoop();

  sqlite3* db_;
  BoundedQueue<TurnRow> queue_;
  std::atomic<uint64_t> queued_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> failed_{0};
  std::thread writer_;
};

}  // namespace hotline::pipeline
