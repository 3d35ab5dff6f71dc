// Backs the L2 semantic cache's answers with the answer module's Store (in-process sharded LRU or
// Redis with local fallback, store.h), so several Hotline processes share L2 answers and they
// expire after `ttl`.
//
// Ownership: borrows `store`, which must outlive this adapter. Thread-safety: as the Store.
#pragma once

#include <chrono>

#include "answer/cache/semantic_cache.h"
#include "answer/cache/store.h"

namespace hotline::answer {

class StoreBackedAnswerStore : public SemanticAnswerStore {
 public:
  StoreBackedAnswerStore(Store* store, std::chrono::milliseconds ttl) : store_(store), ttl_(ttl) {}

  Status Put(const std::string& key, const std::string& value) override {
    return store_->Set(key, value, ttl_);
  }
  Result<std::optional<std::string>> Get(const std::string& key) override {
    return store_->Get(key);
  }
  Status Erase(const std::string& key) override { return store_->Delete(key); }

 private:
  Store* store_;
  std::chrono::milliseconds ttl_;
};

}  // namespace hotline::answer
