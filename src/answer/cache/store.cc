#include "answer/cache/store.h"

#include "answer/cache/memory_store.h"
#include "answer/cache/redis_store.h"

namespace hotline::answer {

Status StoreConfig::Validate() const {
  if (backend != "memory" && backend != "redis") {
    return InvalidArgumentError("backend must be 'memory' or 'redis', got '" + backend + "'");
  }
  return Status::Ok();  // the sections validate themselves
}

Result<std::unique_ptr<Store>> Store::Create(const StoreConfig& config, const Clock* clock) {
  RETURN_IF_ERROR(config.Validate());
  if (config.backend == "redis") {
    ASSIGN_OR_RETURN(auto store, RedisStore::Create(config.redis, clock));
    return std::unique_ptr<Store>(std::move(store));
  }
  ASSIGN_OR_RETURN(auto store, MemoryStore::Create(config.memory, clock));
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace hotline::answer
