#include "engine/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace hotline::engine {
namespace {

// Bounds on things the format leaves open. Real files stay far below them; a hostile file that
// claims more is refused before anything is allocated for it.
constexpr uint64_t kMaxKeyBytes = 64 * 1024;
constexpr uint64_t kMaxTensorNameBytes = 64 * 1024;
constexpr uint64_t kMaxAlignment = 1 << 20;

size_t ScalarSize(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    case GgufType::kString:
    case GgufType::kArray:
      return 0;
  }
  return 0;
}

bool IsValidType(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kFloat64); }

}  // namespace

std::string_view GgufTypeName(GgufType t) {
  switch (t) {
    case GgufType::kUint8: return "u8";
    case GgufType::kInt8: return "i8";
    case GgufType::kUint16: return "u16";
    case GgufType::kInt16: return "i16";
    case GgufType::kUint32: return "u32";
    case GgufType::kInt32: return "i32";
    case GgufType::kFloat32: return "f32";
    case GgufType::kBool: return "bool";
    case GgufType::kString: return "string";
    case GgufType::kArray: return "array";
    case GgufType::kUint64: return "u64";
    case GgufType::kInt64: return "i64";
    case GgufType::kFloat64: return "f64";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// GgufValue

Result<int64_t> GgufValue::AsInt() const {
  switch (type_) {
    case GgufType::kUint8: return static_cast<int64_t>(static_cast<uint8_t>(bits_));
    case GgufType::kInt8: return static_cast<int64_t>(static_cast<int8_t>(bits_));
    case GgufType::kUint16: return static_cast<int64_t>(static_cast<uint16_t>(bits_));
    case GgufType::kInt16: return static_cast<int64_t>(static_cast<int16_t>(bits_));
    case GgufType::kUint32: return static_cast<int64_t>(static_cast<uint32_t>(bits_));
    case GgufType::kInt32: return static_cast<int64_t>(static_cast<int32_t>(bits_));
    case GgufType::kInt64: return static_cast<int64_t>(bits_);
    case GgufType::kBool: return static_cast<int64_t>(bits_ != 0);
    case GgufType::kUint64:
      if (bits_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return InvalidArgumentError("u64 value " + std::to_string(bits_) + " is too large");
      }
      return static_cast<int64_t>(bits_);
    default:
      return InvalidArgumentError("expected an integer, found " + std::string(GgufTypeName(type_)));
  }
}

Result<double> GgufValue::AsFloat() const {
  if (type_ == GgufType::kFloat32) {
    float f;
    uint32_t b = static_cast<uint32_t>(bits_);
    std::memcpy(&f, &b, 4);
    return static_cast<double>(f);
  }
  if (type_ == GgufType::kFloat64) {
    double d;
    std::memcpy(&d, &bits_, 8);
    return d;
  }
  return InvalidArgumentError("expected a float, found " + std::string(GgufTypeName(type_)));
}

Result<bool> GgufValue::AsBool() const {
  if (type_ != GgufType::kBool) {
    return InvalidArgumentError("expected a bool, found " + std::string(GgufTypeName(type_)));
  }
  return bits_ != 0;
}

Result<std::string_view> GgufValue::AsString() const {
  if (type_ != GgufType::kString) {
    return InvalidArgumentError("expected a string, found " + std::string(GgufTypeName(type_)));
  }
  return str_;
}

Result<std::span<const std::string_view>> GgufValue::AsStringArray() const {
  if (type_ != GgufType::kArray || elem_type_ != GgufType::kString) {
    return InvalidArgumentError("expected an array of strings, found " +
                                std::string(GgufTypeName(type_)) +
                                (is_array() ? " of " + std::string(GgufTypeName(elem_type_)) : ""));
  }
  return std::span<const std::string_view>(strings_);
}

Result<std::span<const uint8_t>> GgufValue::ArrayBytes(GgufType want, size_t elem_size) const {
  if (type_ != GgufType::kArray || elem_type_ != want) {
    return InvalidArgumentError("expected an array of " + std::string(GgufTypeName(want)) +
                                ", found " + std::string(GgufTypeName(type_)) +
                                (is_array() ? " of " + std::string(GgufTypeName(elem_type_)) : ""));
  }
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(numbers_.data()),
                                  static_cast<size_t>(count_) * elem_size);
}

// ---------------------------------------------------------------------------------------------
// Parser: a bounds-checked cursor over the whole image.

class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f) {}

  Status Parse() {
    RETURN_IF_ERROR(ParseHeader());
    RETURN_IF_ERROR(ParseMetadata());
    RETURN_IF_ERROR(ParseTensorInfos());
    return PlaceTensors();
  }

 private:
  uint64_t Remaining() const { return f_.size_ - pos_; }

  Status Truncated(std::string_view what) const {
    return DataLossError(f_.name_ + ": file is truncated or corrupt: " + std::string(what) +
                         " at byte " + std::to_string(pos_) + " runs past the end of the file (" +
                         std::to_string(f_.size_) + " bytes)");
  }
  Status Corrupt(const std::string& what) const {
    return DataLossError(f_.name_ + ": corrupt GGUF at byte " + std::to_string(pos_) + ": " + what);
  }

  template <typename T>
  Status Read(T& out, std::string_view what) {
    if (Remaining() < sizeof(T)) return Truncated(what);
    std::memcpy(&out, f_.base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status ReadString(std::string_view& out, uint64_t max_len, std::string_view what) {
    uint64_t len = 0;
    RETURN_IF_ERROR(Read(len, what));
    if (len > max_len) {
      return Corrupt(std::string(what) + " length " + std::to_string(len) + " exceeds the limit " +
                     std::to_string(max_len));
    }
    if (Remaining() < len) return Truncated(what);
    out = std::string_view(reinterpret_cast<const char*>(f_.base_ + pos_), static_cast<size_t>(len));
    pos_ += len;
    return Status::Ok();
  }

  Status ParseHeader() {
    uint32_t magic = 0;
    RETURN_IF_ERROR(Read(magic, "magic"));
    if (magic != kGgufMagic) {
      return InvalidArgumentError(f_.name_ + ": not a GGUF file (bad magic; expected \"GGUF\")");
    }
    RETURN_IF_ERROR(Read(f_.version_, "version"));
    if (f_.version_ == 1) {
      return InvalidArgumentError(f_.name_ +
                                  ": GGUF version 1 is not supported; convert the file to v3");
    }
    if (f_.version_ != 2 && f_.version_ != 3) {
      return InvalidArgumentError(f_.name_ + ": unsupported GGUF version " +
                                  std::to_string(f_.version_) + " (supported: 2, 3)");
    }
    RETURN_IF_ERROR(Read(n_tensors_, "tensor count"));
    RETURN_IF_ERROR(Read(n_kv_, "metadata count"));
    // Each metadata pair needs at least 8 (key length) + 4 (type) + 1 bytes, each tensor info at
    // least 8 + 4 + 4 + 8; a count that cannot fit in the file is refused before reserving.
    if (n_kv_ > Remaining() / 13) {
      return Corrupt("metadata count " + std::to_string(n_kv_) + " cannot fit in the file");
    }
    if (n_tensors_ > Remaining() / 24) {
      return Corrupt("tensor count " + std::to_string(n_tensors_) + " cannot fit in the file");
    }
    return Status::Ok();
  }

  Status ParseValue(GgufType type, GgufValue& v, std::string_view key) {
    v.type_ = type;
    const uint8_t* start = f_.base_ + pos_;
    if (type == GgufType::kString) {
      RETURN_IF_ERROR(ReadString(v.str_, Remaining(), "string value of '" + std::string(key) + "'"));
    } else if (type == GgufType::kArray) {
      uint32_t et = 0;
      RETURN_IF_ERROR(Read(et, "array element type"));
      if (!IsValidType(et)) {
        return Corrupt("array '" + std::string(key) + "' has unknown element type " +
                       std::to_string(et));
      }
      v.elem_type_ = static_cast<GgufType>(et);
      if (v.elem_type_ == GgufType::kArray) {
        return Corrupt("array '" + std::string(key) + "' nests arrays, which is not supported");
      }
      RETURN_IF_ERROR(Read(v.count_, "array length"));
      if (v.elem_type_ == GgufType::kString) {
        // Each string needs at least its 8-byte length.
        if (v.count_ > Remaining() / 8) {
          return Corrupt("array '" + std::string(key) + "' claims " + std::to_string(v.count_) +
                         " strings, more than the file can hold");
        }
        v.strings_.resize(static_cast<size_t>(v.count_));
        for (auto& s : v.strings_) {
          RETURN_IF_ERROR(ReadString(s, Remaining(), "string in array '" + std::string(key) + "'"));
        }
      } else {
        size_t es = ScalarSize(v.elem_type_);
        if (v.count_ > Remaining() / es) {
          return Corrupt("array '" + std::string(key) + "' claims " + std::to_string(v.count_) +
                         " elements, more than the file can hold");
        }
        size_t bytes = static_cast<size_t>(v.count_) * es;
        v.numbers_.resize((bytes + 7) / 8);
        if (bytes > 0) std::memcpy(v.numbers_.data(), f_.base_ + pos_, bytes);
        pos_ += bytes;
      }
    } else {
      size_t n = ScalarSize(type);
      if (Remaining() < n) return Truncated("value of '" + std::string(key) + "'");
      std::memcpy(&v.bits_, f_.base_ + pos_, n);
      pos_ += n;
      if (type == GgufType::kBool && v.bits_ > 1) {
        return Corrupt("bool '" + std::string(key) + "' has value " + std::to_string(v.bits_));
      }
    }
    v.raw_ = std::span<const uint8_t>(start, static_cast<size_t>(f_.base_ + pos_ - start));
    return Status::Ok();
  }

  Status ParseMetadata() {
    f_.kvs_.reserve(static_cast<size_t>(n_kv_));
    for (uint64_t i = 0; i < n_kv_; ++i) {
      std::string_view key;
      RETURN_IF_ERROR(ReadString(key, kMaxKeyBytes, "metadata key #" + std::to_string(i)));
      if (key.empty()) return Corrupt("metadata key #" + std::to_string(i) + " is empty");
      uint32_t t = 0;
      RETURN_IF_ERROR(Read(t, "value type"));
      if (!IsValidType(t)) {
        return Corrupt("metadata '" + std::string(key) + "' has unknown value type " +
                       std::to_string(t));
      }
      GgufValue v;
      RETURN_IF_ERROR(ParseValue(static_cast<GgufType>(t), v, key));
      if (!f_.kv_index_.emplace(key, f_.kvs_.size()).second) {
        return Corrupt("metadata key '" + std::string(key) + "' appears twice");
      }
      f_.kvs_.emplace_back(key, std::move(v));
    }
    if (const GgufValue* a = f_.Find("general.alignment")) {
      if (a->type() != GgufType::kUint32) {
        return Corrupt("general.alignment must be a u32, found " +
                       std::string(GgufTypeName(a->type())));
      }
      uint64_t al = a->bits_;
      if (al == 0 || (al & (al - 1)) != 0 || al > kMaxAlignment) {
        return Corrupt("general.alignment " + std::to_string(al) +
                       " is not a power of two in [1, " + std::to_string(kMaxAlignment) + "]");
      }
      f_.alignment_ = al;
    }
    return Status::Ok();
  }

  Status ParseTensorInfos() {
    f_.tensors_.reserve(static_cast<size_t>(n_tensors_));
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      GgufTensorInfo t;
      std::string_view name;
      RETURN_IF_ERROR(ReadString(name, kMaxTensorNameBytes, "tensor name #" + std::to_string(i)));
      if (name.empty()) return Corrupt("tensor #" + std::to_string(i) + " has an empty name");
      t.name = std::string(name);
      uint32_t n_dims = 0;
      RETURN_IF_ERROR(Read(n_dims, "tensor dimension count"));
      if (n_dims < 1 || n_dims > kGgufMaxDims) {
        return Corrupt("tensor '" + t.name + "' has " + std::to_string(n_dims) +
                       " dimensions (supported: 1 to " + std::to_string(kGgufMaxDims) + ")");
      }
      t.n_dims = static_cast<int>(n_dims);
      uint64_t elements = 1;
      for (uint32_t d = 0; d < n_dims; ++d) {
        uint64_t ne = 0;
        RETURN_IF_ERROR(Read(ne, "tensor dimension"));
        if (ne == 0 || ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / ne) {
          return Corrupt("tensor '" + t.name + "' has invalid dimension " + std::to_string(ne));
        }
        elements *= ne;
        t.ne[d] = static_cast<int64_t>(ne);
      }
      uint32_t type = 0;
      RETURN_IF_ERROR(Read(type, "tensor type"));
      const GgmlTypeInfo* info = GetTypeInfo(type);
      if (info == nullptr) {
        return Corrupt("tensor '" + t.name + "' has unknown ggml type " + std::to_string(type));
      }
      t.type = static_cast<GgmlType>(type);
      const uint64_t block = static_cast<uint64_t>(info->block_elems);
      if (static_cast<uint64_t>(t.ne[0]) % block != 0) {
        return Corrupt("tensor '" + t.name + "' has a row of " + std::to_string(t.ne[0]) +
                       " elements, not a multiple of the " + info->name + " block size " +
                       std::to_string(block));
      }
      const uint64_t blocks = elements / block;
      if (blocks > f_.size_ / static_cast<uint64_t>(info->block_bytes)) {
        return DataLossError(f_.name_ + ": file is truncated or corrupt: tensor '" + t.name +
                             "' needs more bytes than the whole file holds");
      }
      t.size_bytes = blocks * static_cast<uint64_t>(info->block_bytes);
      RETURN_IF_ERROR(Read(t.offset, "tensor offset"));
      if (t.offset % f_.alignment_ != 0) {
        return Corrupt("tensor '" + t.name + "' offset " + std::to_string(t.offset) +
                       " is not a multiple of the alignment " + std::to_string(f_.alignment_));
      }
      f_.tensors_.push_back(std::move(t));
    }
    for (size_t i = 0; i < f_.tensors_.size(); ++i) {
      if (!f_.tensor_index_.emplace(f_.tensors_[i].name, i).second) {
        return Corrupt("tensor '" + f_.tensors_[i].name + "' appears twice");
      }
    }
    return Status::Ok();
  }

  Status PlaceTensors() {
    uint64_t pad = (f_.alignment_ - pos_ % f_.alignment_) % f_.alignment_;
    if (f_.tensors_.empty()) {
      f_.data_offset_ = std::min<uint64_t>(pos_ + pad, f_.size_);
      return Status::Ok();
    }
    if (Remaining() < pad) return Truncated("padding before tensor data");
    f_.data_offset_ = pos_ + pad;
    const uint64_t data_size = f_.size_ - f_.data_offset_;
    std::vector<size_t> order(f_.tensors_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return f_.tensors_[a].offset < f_.tensors_[b].offset;
    });
    uint64_t end_prev = 0;
    for (size_t i : order) {
      GgufTensorInfo& t = f_.tensors_[i];
      if (t.offset > data_size || t.size_bytes > data_size - t.offset) {
        return DataLossError(f_.name_ + ": file is truncated or corrupt: tensor '" + t.name +
                             "' (" + std::to_string(t.size_bytes) + " bytes at data offset " +
                             std::to_string(t.offset) + ") ends past the end of the file");
      }
      if (t.offset < end_prev) {
        return Corrupt("tensor '" + t.name + "' overlaps the tensor before it");
      }
      end_prev = t.offset + t.size_bytes;
      t.data = f_.base_ + f_.data_offset_ + t.offset;
    }
    return Status::Ok();
  }

  GgufFile& f_;
  uint64_t pos_ = 0;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
};

// ---------------------------------------------------------------------------------------------
// GgufFile

Result<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return NotFoundError("cannot open model file '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError("'" + path + "' is not a regular file");
  }
  if (st.st_size < 24) {
    ::close(fd);
    return DataLossError(path + ": file is truncated (" + std::to_string(st.st_size) +
                         " bytes; a GGUF header alone is 24)");
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  int map_errno = errno;
  ::close(fd);
  if (p == MAP_FAILED) {
    return InternalError("cannot map '" + path + "': " + std::strerror(map_errno));
  }
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = path;
  f->base_ = static_cast<const uint8_t*>(p);
  f->size_ = static_cast<uint64_t>(st.st_size);
  f->mapped_ = true;
  GgufParser parser(*f);
  RETURN_IF_ERROR(parser.Parse());
  return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::FromBuffer(std::span<const uint8_t> bytes,
                                                       std::string name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = std::move(name);
  constexpr size_t kPage = 4096;
  const size_t alloc = (bytes.size() + kPage) / kPage * kPage;  // at least one page
  void* p = std::aligned_alloc(kPage, alloc);
  if (p == nullptr) return ResourceExhaustedError("out of memory copying a GGUF image");
  f->owned_ = std::unique_ptr<uint8_t, void (*)(void*)>(static_cast<uint8_t*>(p), std::free);
  if (!bytes.empty()) std::memcpy(f->owned_.get(), bytes.data(), bytes.size());
  f->base_ = f->owned_.get();
  f->size_ = bytes.size();
  GgufParser parser(*f);
  RETURN_IF_ERROR(parser.Parse());
  return f;
}

GgufFile::~GgufFile() {
  if (mapped_ && base_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(base_), static_cast<size_t>(size_));
  }
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].second;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
template <typename T, typename Fn>
Result<T> Lookup(const GgufFile& f, std::string_view key, Fn fn) {
  const GgufValue* v = f.Find(key);
  if (v == nullptr) {
    return NotFoundError(f.name() + ": metadata key '" + std::string(key) + "' is missing");
  }
  Result<T> r = fn(*v);
  if (!r.ok()) return r.status().WithContext(f.name() + ": metadata key '" + std::string(key) + "'");
  return r;
}
}  // namespace

Result<int64_t> GgufFile::GetInt(std::string_view key) const {
  return Lookup<int64_t>(*this, key, [](const GgufValue& v) { return v.AsInt(); });
}
Result<double> GgufFile::GetFloat(std::string_view key) const {
  return Lookup<double>(*this, key, [](const GgufValue& v) { return v.AsFloat(); });
}
Result<bool> GgufFile::GetBool(std::string_view key) const {
  return Lookup<bool>(*this, key, [](const GgufValue& v) { return v.AsBool(); });
}
Result<std::string_view> GgufFile::GetString(std::string_view key) const {
  return Lookup<std::string_view>(*this, key, [](const GgufValue& v) { return v.AsString(); });
}
Result<std::span<const std::string_view>> GgufFile::GetStringArray(std::string_view key) const {
  return Lookup<std::span<const std::string_view>>(
      *this, key, [](const GgufValue& v) { return v.AsStringArray(); });
}
Result<int64_t> GgufFile::GetIntOr(std::string_view key, int64_t fallback) const {
  if (!Has(key)) return fallback;
  return GetInt(key);
}
Result<double> GgufFile::GetFloatOr(std::string_view key, double fallback) const {
  if (!Has(key)) return fallback;
  return GetFloat(key);
}

}  // namespace hotline::engine
