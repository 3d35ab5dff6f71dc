#include "answer/cache/redis_store.h"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <cstring>

#include "common/log.h"

namespace hotline::answer {

namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const {
    if (r) freeReplyObject(r);
  }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

timeval ToTimeval(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

// Sends the commands pipelined and reads one reply each. Any transport error or REDIS error
// reply fails the whole batch (the connection is then treated as broken).
Result<std::vector<Reply>> Pipeline(redisContext* ctx,
                                    const std::vector<std::vector<std::string>>& commands) {
  for (const auto& cmd : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : cmd) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK) {
      return UnavailableError(std::string("redis: ") + ctx->errstr);
    }
  }
  std::vector<Reply> replies;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx, &raw) != REDIS_OK || raw == nullptr) {
      return UnavailableError(std::string("redis: ") + (ctx->err ? ctx->errstr : "no reply"));
    }
    Reply r(static_cast<redisReply*>(raw));
    if (r->type == REDIS_REPLY_ERROR) {
      return UnavailableError("redis error reply: " + std::string(r->str, r->len));
    }
    replies.push_back(std::move(r));
  }
  return replies;
}

uint64_t ReplyInteger(const redisReply* r) {
  if (r->type == REDIS_REPLY_INTEGER) return r->integer < 0 ? 0 : static_cast<uint64_t>(r->integer);
  if (r->type == REDIS_REPLY_STRING) {
    uint64_t v = 0;
    for (size_t i = 0; i < r->len; ++i) {
      if (r->str[i] < '0' || r->str[i] > '9') return 0;
      v = v * 10 + static_cast<uint64_t>(r->str[i] - '0');
    }
    return v;
  }
  return 0;
}

}  // namespace

Status RedisStoreConfig::Validate() const {
  if (host.empty()) return InvalidArgumentError("host is empty; set the Redis server's address");
  if (port < 1 || port > 65535) {
    return InvalidArgumentError("port must be in [1, 65535], got " + std::to_string(port));
  }
  if (key_prefix.size() > 256) return InvalidArgumentError("key_prefix is longer than 256 bytes");
  if (connect_timeout_ms < 1 || command_timeout_ms < 1) {
    return InvalidArgumentError("connect_timeout_ms and command_timeout_ms must be positive");
  }
  if (backoff_initial_ms < 1 || backoff_max_ms < backoff_initial_ms) {
    return InvalidArgumentError(
        "backoff_initial_ms must be positive and backoff_max_ms at least backoff_initial_ms");
  }
  if (pool_size < 1 || pool_size > 1024) {
    return InvalidArgumentError("pool_size must be in [1, 1024], got " + std::to_string(pool_size));
  }
  if (health_interval_ms < 0 || health_interval_ms > 3'600'000) {
    return InvalidArgumentError("health_interval_ms must be in [0, 3600000] (0: off), got " +
                                std::to_string(health_interval_ms));
  }
  if (!username.empty() && password.empty() && password_env.empty()) {
    return InvalidArgumentError("username is set but no password (password or password_env)");
  }
  return local.Validate().WithContext("local");
}

Result<std::unique_ptr<RedisStore>> RedisStore::Create(const RedisStoreConfig& config,
                                                       const Clock* clock) {
  RETURN_IF_ERROR(config.Validate().WithContext("redis store"));
  if (!clock) clock = &SystemClock::Get();
  ASSIGN_OR_RETURN(auto local, MemoryStore::Create(config.local, clock));
  return std::unique_ptr<RedisStore>(new RedisStore(config, clock, std::move(local)));
}

RedisStore::RedisStore(const RedisStoreConfig& config, const Clock* clock,
                       std::unique_ptr<MemoryStore> local)
    : config_(config),
      clock_(clock),
      local_(std::move(local)),
      backoff_ms_(config.backoff_initial_ms) {
  password_ = config_.password;
  if (!config_.password_env.empty()) {
    if (const char* v = std::getenv(config_.password_env.c_str()); v != nullptr && *v != '\0') {
      password_ = v;
    }
  }
  if (config_.health_interval_ms > 0) health_ = std::thread([this] { HealthLoop(); });
}

RedisStore::~RedisStore() {
  {
    std::lock_guard lock(health_mu_);
    stopping_ = true;
  }
  health_cv_.notify_all();
  if (health_.joinable()) health_.join();
  std::lock_guard lock(mu_);
  for (redisContext* c : idle_) redisFree(c);
}

void RedisStore::HealthLoop() {
  const auto interval = std::chrono::milliseconds(config_.health_interval_ms);
  std::unique_lock lock(health_mu_);
  while (!health_cv_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    Probe();
    lock.lock();
  }
}

bool RedisStore::Probe() {
  // Acquire(false): inside a backoff window this touches no network, like a caller's look-up.
  redisContext* c = Acquire(false);
  if (!c) return false;
  auto replies = Pipeline(c, {{"PING"}});
  Release(c, replies.ok());
  if (replies.ok()) probes_.fetch_add(1, std::memory_order_relaxed);
  return replies.ok();
}

bool RedisStore::down() const {
  std::lock_guard lock(mu_);
  return down_;
}

void RedisStore::MarkDownLocked() {
  remote_errors_.fetch_add(1, std::memory_order_relaxed);
  // Every pooled connection shares the fate of the one that failed (server gone or restarted).
  for (redisContext* c : idle_) redisFree(c);
  open_ -= static_cast<int>(idle_.size());
  idle_.clear();
  if (!down_) {
    HLOG_WARN("redis {}:{} unreachable; serving answers from the local store", config_.host,
              config_.port);
  }
  down_ = true;
  next_attempt_ = clock_->Now() + std::chrono::milliseconds(backoff_ms_);
  backoff_ms_ = std::min(backoff_ms_ * 2, config_.backoff_max_ms);
  pool_cv_.notify_all();
}

redisContext* RedisStore::Acquire(bool ignore_backoff) {
  std::unique_lock lock(mu_);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.command_timeout_ms);
  for (;;) {
    if (down_ && !ignore_backoff && clock_->Now() < next_attempt_) return nullptr;
    if (!idle_.empty()) {
      redisContext* c = idle_.back();
      idle_.pop_back();
      return c;
    }
    if (open_ < config_.pool_size) break;
    if (pool_cv_.wait_until(lock, deadline) == std::cv_status::timeout) return nullptr;
  }
  ++open_;
  const bool was_down = down_;
  lock.unlock();

  redisContext* c = redisConnectWithTimeout(config_.host.c_str(), config_.port,
                                            ToTimeval(config_.connect_timeout_ms));
  bool ok = c != nullptr && c->err == 0;
  if (ok) ok = redisSetTimeout(c, ToTimeval(config_.command_timeout_ms)) == REDIS_OK;
  if (ok && !password_.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!config_.username.empty()) auth.push_back(config_.username);
    auth.push_back(password_);
    auto replies = Pipeline(c, {auth});
    if (!replies.ok()) {
      // Not the password itself: the reply says what Redis refused ("WRONGPASS ...").
      HLOG_WARN("redis AUTH at {}:{} failed: {}; check store.redis.username and password",
                config_.host, config_.port, replies.status().message());
      ok = false;
    }
  }
  if (!ok) {
    if (c) {
      HLOG_DEBUG("redis connect to {}:{} failed: {}", config_.host, config_.port, c->errstr);
      redisFree(c);
    }
    lock.lock();
    --open_;
    MarkDownLocked();
    return nullptr;
  }
  if (was_down && !ReplayPendingBumps(c)) {
    redisFree(c);
    lock.lock();
    --open_;
    MarkDownLocked();
    return nullptr;
  }
  lock.lock();
  if (down_ || !ever_connected_) {
    reconnects_.fetch_add(1, std::memory_order_relaxed);
    if (down_) HLOG_INFO("redis {}:{} reachable again; sharing resumes", config_.host, config_.port);
  }
  ever_connected_ = true;
  down_ = false;
  backoff_ms_ = config_.backoff_initial_ms;
  return c;
}

bool RedisStore::ReplayPendingBumps(redisContext* ctx) {
  // A hung server's kernel completes the connection; only an answer says Redis is back.
  if (!Pipeline(ctx, {{"PING"}}).ok()) return false;
  std::set<std::string> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(pending_bumps_);
  }
  if (pending.empty()) return true;
  std::vector<std::vector<std::string>> cmds;
  for (const auto& name : pending) cmds.push_back({"INCR", config_.key_prefix + "v:" + name});
  if (!Pipeline(ctx, cmds).ok()) {
    // Kept for the next reconnection; the connection's own failure is seen by the caller. A bump
    // that reached Redis before the failure is applied twice then: a miss, never stale text.
    std::lock_guard lock(mu_);
    pending_bumps_.insert(pending.begin(), pending.end());
  }
  return true;
}

void RedisStore::Release(redisContext* ctx, bool healthy) {
  std::lock_guard lock(mu_);
  if (healthy) {
    idle_.push_back(ctx);
    pool_cv_.notify_one();
    return;
  }
  redisFree(ctx);
  --open_;
  MarkDownLocked();
}

Result<std::optional<std::string>> RedisStore::Get(std::string_view key) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  if (redisContext* c = Acquire(false)) {
    const std::string k = config_.key_prefix + std::string(key);
    auto replies = Pipeline(c, {{"GET", k}, {"PTTL", k}});
    Release(c, replies.ok());
    if (replies.ok()) {
      const redisReply* value = (*replies)[0].get();
      if (value->type != REDIS_REPLY_STRING) return std::optional<std::string>();
      std::string out(value->str, value->len);
      const long long pttl = (*replies)[1]->type == REDIS_REPLY_INTEGER ? (*replies)[1]->integer : -1;
      if (pttl > 0) {
        // A value too big for the local store is still returned; only the copy is skipped.
        (void)local_->Set(key, out, std::chrono::milliseconds(pttl));
      }
      return std::optional<std::string>(std::move(out));
    }
  }
  local_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return local_->Get(key);
}

Status RedisStore::Set(std::string_view key, std::string_view value,
                       std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  if (ttl.count() <= 0) {
    return InvalidArgumentError("store TTL must be positive, got " + std::to_string(ttl.count()) +
                                " ms");
  }
  Status local = local_->Set(key, value, ttl);
  if (redisContext* c = Acquire(false)) {
    auto replies = Pipeline(c, {{"SET", config_.key_prefix + std::string(key), std::string(value),
                                 "PX", std::to_string(ttl.count())}});
    Release(c, replies.ok());
    if (replies.ok()) return Status::Ok();
  }
  local_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return local;
}

Status RedisStore::Delete(std::string_view key) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  RETURN_IF_ERROR(local_->Delete(key));
  if (redisContext* c = Acquire(false)) {
    auto replies = Pipeline(c, {{"DEL", config_.key_prefix + std::string(key)}});
    Release(c, replies.ok());
    if (replies.ok()) return Status::Ok();
  }
  local_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Result<std::vector<uint64_t>> RedisStore::Versions(const std::vector<std::string>& names) {
  if (names.empty()) return std::vector<uint64_t>();
  if (redisContext* c = Acquire(false)) {
    std::vector<std::string> cmd{"MGET"};
    for (const auto& n : names) cmd.push_back(config_.key_prefix + "v:" + n);
    auto replies = Pipeline(c, {cmd});
    Release(c, replies.ok());
    if (replies.ok()) {
      const redisReply* r = (*replies)[0].get();
      std::vector<uint64_t> out(names.size(), 0);
      if (r->type == REDIS_REPLY_ARRAY) {
        for (size_t i = 0; i < r->elements && i < names.size(); ++i) {
          out[i] = ReplyInteger(r->element[i]);
          local_->RaiseVersion(names[i], out[i]);
        }
      }
      return out;
    }
  }
  local_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return local_->Versions(names);
}

Result<uint64_t> RedisStore::BumpVersion(std::string_view name) {
  RETURN_IF_ERROR(ValidateStoreKey(name));
  if (redisContext* c = Acquire(false)) {
    auto replies = Pipeline(c, {{"INCR", config_.key_prefix + "v:" + std::string(name)}});
    Release(c, replies.ok());
    if (replies.ok()) {
      const uint64_t v = ReplyInteger((*replies)[0].get());
      local_->RaiseVersion(name, v);
      return v;
    }
  }
  local_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    pending_bumps_.insert(std::string(name));
  }
  return local_->BumpVersion(name);
}

Result<int64_t> RedisStore::Increment(std::string_view key, std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  if (ttl.count() <= 0) return InvalidArgumentError("counter TTL must be positive");
  if (redisContext* c = Acquire(false)) {
    static constexpr const char* kScript =
        "local v = redis.call('INCR', KEYS[1]) "
        "if v == 1 or redis.call('PTTL', KEYS[1]) < 0 then "
        "redis.call('PEXPIRE', KEYS[1], ARGV[1]) end "
        "return v";
    auto replies = Pipeline(c, {{"EVAL", kScript, "1", config_.key_prefix + std::string(key),
                                 std::to_string(ttl.count())}});
    Release(c, replies.ok());
    if (replies.ok()) {
      const redisReply* r = (*replies)[0].get();
      if (r->type == REDIS_REPLY_INTEGER) return static_cast<int64_t>(r->integer);
      return InternalError("redis: the counter script returned no integer");
    }
  }
  local_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return local_->Increment(key, ttl);
}

Status RedisStore::Ping() {
  redisContext* c = Acquire(true);
  if (!c) return UnavailableError("redis " + config_.host + ":" + std::to_string(config_.port) +
                                  " is unreachable; check that redis-server runs there");
  auto replies = Pipeline(c, {{"PING"}});
  Release(c, replies.ok());
  return replies.status();
}

StoreStats RedisStore::Stats() const {
  StoreStats st = local_->Stats();
  st.remote_errors = remote_errors_.load(std::memory_order_relaxed);
  st.local_fallbacks = local_fallbacks_.load(std::memory_order_relaxed);
  st.reconnects = reconnects_.load(std::memory_order_relaxed);
  return st;
}

}  // namespace hotline::answer
