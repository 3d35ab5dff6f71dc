#include "pipeline/call_record_store.h"

#include <sqlite3.h>

#include <chrono>
#include <vector>

#include "common/log.h"

namespace hotline::pipeline {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS call_turns ("
    " call_id TEXT NOT NULL, caller_id TEXT NOT NULL, turn INTEGER NOT NULL, kind TEXT NOT NULL,"
    " transcript TEXT NOT NULL, answer TEXT NOT NULL, tier TEXT NOT NULL, outcome TEXT NOT NULL,"
    " tokens INTEGER NOT NULL, ledger TEXT NOT NULL, started_unix_ms INTEGER NOT NULL,"
    " PRIMARY KEY (call_id, turn));";

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return InternalError(std::string("call records: ") + msg);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<CallRecordStore>> CallRecordStore::Open(const std::string& path,
                                                               int queue_rows) {
  if (path.empty()) return InvalidArgumentError("call record database path is empty");
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError("cannot open call record database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db, 2000);
  for (const char* sql : {"PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;", kSchema}) {
    if (Status s = Exec(db, sql); !s.ok()) {
      sqlite3_close(db);
      return s.WithContext(path);
    }
  }
  return std::unique_ptr<CallRecordStore>(new CallRecordStore(db, queue_rows < 1 ? 1 : queue_rows));
}

CallRecordStore::CallRecordStore(sqlite3* db, int queue_rows)
    : db_(db), queue_(static_cast<size_t>(queue_rows)) {
  writer_ = std::thread([this] { WriterLoop(); });
}

CallRecordStore::~CallRecordStore() {
  queue_.Close();
  if (writer_.joinable()) writer_.join();
  sqlite3_close(db_);
}

bool CallRecordStore::Append(TurnRow row) {
  if (!queue_.TryPush(std::move(row)).ok()) {
    dropped_.fetch_add(1);
    return false;
  }
  queued_.fetch_add(1);
  return true;
}

void CallRecordStore::Flush() {
  // The writer counts every row it takes as written or failed.
  while (written_.load() + failed_.load() < queued_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void CallRecordStore::WriterLoop() {
  sqlite3_stmt* insert = nullptr;
  const char* sql =
      "INSERT OR REPLACE INTO call_turns (call_id, caller_id, turn, kind, transcript, answer, tier,"
      " outcome, tokens, ledger, started_unix_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)";
  if (sqlite3_prepare_v2(db_, sql, -1, &insert, nullptr) != SQLITE_OK) {
    HLOG_ERROR("call records: cannot prepare insert: {}", sqlite3_errmsg(db_));
  }
  while (auto first = queue_.Pop()) {
    // One transaction per batch of rows already queued: fewer fsyncs under load.
    std::vector<TurnRow> batch;
    batch.push_back(std::move(*first));
    while (batch.size() < 256) {
      auto more = queue_.TryPop();
      if (!more) break;
      batch.push_back(std::move(*more));
    }
    if (insert == nullptr) {
      failed_.fetch_add(batch.size());
      continue;
    }
    (void)Exec(db_, "BEGIN");
    for (const TurnRow& r : batch) {
      sqlite3_reset(insert);
      sqlite3_bind_text(insert, 1, r.call_id.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 2, r.caller_id.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int(insert, 3, r.turn);
      sqlite3_bind_text(insert, 4, r.kind.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 5, r.transcript.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 6, r.answer.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 7, r.tier.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 8, r.outcome.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(insert, 9, r.tokens);
      sqlite3_bind_text(insert, 10, r.ledger_json.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(insert, 11, r.started_unix_ms);
      if (sqlite3_step(insert) != SQLITE_DONE) {
        HLOG_WARN("call records: insert failed: {}", sqlite3_errmsg(db_));
        failed_.fetch_add(1);
      } else {
        written_.fetch_add(1);
      }
    }
    if (Status s = Exec(db_, "COMMIT"); !s.ok()) HLOG_WARN("{}", s.message());
  }
  sqlite3_finalize(insert);
}

}  // namespace hotline::pipeline
