// GGUF v3 model files: a validating, zero-copy reader and a writer.
//
// Layout (little-endian, per the public GGUF specification): magic "GGUF", u32 version, u64
// tensor count, u64 metadata count, then metadata key/value pairs, then tensor infos (name,
// dims, ggml type, offset), padding to `general.alignment` (default 32), then the tensor data
// section. Tensor offsets are relative to the start of the data section.
//
// Reader: GgufFile::Open() maps the file read-only (mmap) and validates all of it before it
// returns: magic, version (2 or 3), counts, every string and array length, value types, tensor
// dims and types, alignment, and that every tensor's bytes lie inside the file without overlapping
// another tensor. A malformed or hostile file yields a DataLoss/InvalidArgument status naming what
// was wrong and where; nothing is allocated in proportion to an untrusted count before the bytes
// behind it are known to exist.
//
// Ownership and threads: a GgufFile owns its mapping; every pointer, span and string_view it hands
// out (tensor data, string values, string arrays) stays valid while the GgufFile lives. It is
// immutable after Open() and may be read from any number of threads.
//
// Writer: GgufWriter collects metadata and tensors and writes a GGUF v3 file. Tensor bytes can be
// given as an owned buffer, a borrowed span, or a callback that fills the bytes at write time
// (so a quantizer or random generator never holds a whole model in memory).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "engine/ggml_types.h"

namespace hotline::engine {

static_assert(std::endian::native == std::endian::little,
              "GGUF is little-endian; this reader maps it without byte swapping");

// Metadata value types, numbered as in the GGUF specification.
enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view GgufTypeName(GgufType t);

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kGgufVersion = 3;
inline constexpr uint64_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

// One metadata value. Scalars are held by value; strings are views into the mapping; arrays of
// numbers are copied into aligned storage at open time (the file packs them unaligned), arrays of
// strings are a vector of views (one pass at open time, then O(1) per element).
class GgufValue {
 public:
  GgufType type() const { return type_; }
  // For arrays: the element type and element count. For scalars: type() and 1.
  GgufType element_type() const { return type_ == GgufType::kArray ? elem_type_ : type_; }
  size_t array_size() const { return type_ == GgufType::kArray ? count_ : 1; }
  bool is_array() const { return type_ == GgufType::kArray; }

  // Any integer type (u8..i64), or bool, as int64. Fails for u64 values above INT64_MAX.
  Result<int64_t> AsInt() const;
  // f32 or f64 (integers are not silently widened to floats).
  Result<double> AsFloat() const;
  Result<bool> AsBool() const;
  Result<std::string_view> AsString() const;

  // Arrays of strings: the elements (views into the mapping).
  Result<std::span<const std::string_view>> AsStringArray() const;
  // Arrays of numbers/bools with exactly the element type T (float for f32, int32_t for i32,
  // uint8_t for bool, ...).
  template <typename T>
  Result<std::span<const T>> AsArray() const;

  // The encoded bytes of the value (type tag excluded) as stored in the file, for copying a key
  // into a writer unchanged.
  std::span<const uint8_t> raw() const { return raw_; }

 private:
  friend class GgufParser;
  Result<std::span<const uint8_t>> ArrayBytes(GgufType want, size_t elem_size) const;

  GgufType type_ = GgufType::kUint8;
  GgufType elem_type_ = GgufType::kUint8;
  uint64_t count_ = 0;
  uint64_t bits_ = 0;     // scalar payload (integers, bool, float bit patterns)
  std::string_view str_;  // kString
  std::vector<uint64_t> numbers_;  // numeric array payload (aligned copy)
  std::vector<std::string_view> strings_;  // string array payload
  std::span<const uint8_t> raw_;
};

struct GgufTensorInfo {
  std::string name;
  int n_dims = 0;
  // ne[0] is the innermost (contiguous) dimension, as in ggml; unused dims are 1.
  std::array<int64_t, kGgufMaxDims> ne = {1, 1, 1, 1};
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;      // within the data section
  uint64_t size_bytes = 0;  // bytes of data
  const uint8_t* data = nullptr;  // into the mapping; valid while the GgufFile lives

  int64_t num_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  // Rows of ne[0] elements (the matrix view: ne[0] columns, num_rows() rows).
  int64_t num_rows() const { return ne[1] * ne[2] * ne[3]; }
  std::span<const uint8_t> bytes() const { return {data, static_cast<size_t>(size_bytes)}; }
};

class GgufFile {
 public:
  // Maps and validates `path`. Errors: NotFound (cannot open), DataLoss (truncated/corrupt),
  // InvalidArgument (unsupported version or values), each naming the file and the fault.
  static Result<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Validates an in-memory image (tests, fuzzing, generated models). The buffer is copied once.
  static Result<std::unique_ptr<GgufFile>> FromBuffer(std::span<const uint8_t> bytes,
                                                       std::string name = "<buffer>");

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t file_size() const { return size_; }
  uint64_t data_offset() const { return data_offset_; }

  // Metadata, in file order.
  const std::vector<std::pair<std::string_view, GgufValue>>& metadata() const { return kvs_; }
  // nullptr when absent.
  const GgufValue* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // Typed look-ups: NotFound when absent, InvalidArgument naming the key on a type mismatch.
  Result<int64_t> GetInt(std::string_view key) const;
  Result<double> GetFloat(std::string_view key) const;
  Result<bool> GetBool(std::string_view key) const;
  Result<std::string_view> GetString(std::string_view key) const;
  Result<std::span<const std::string_view>> GetStringArray(std::string_view key) const;
  template <typename T>
  Result<std::span<const T>> GetArray(std::string_view key) const;
  // Absent keys give the fallback; present keys of the wrong type are still an error.
  Result<int64_t> GetIntOr(std::string_view key, int64_t fallback) const;
  Result<double> GetFloatOr(std::string_view key, double fallback) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  // nullptr when absent.
  const GgufTensorInfo* FindTensor(std::string_view name) const;

 private:
  friend class GgufParser;
  GgufFile() = default;

  std::string name_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;                // base_ is an mmap (else owned_)
  // FromBuffer copy, page-aligned like a mapping so tensor data is as aligned as the file says.
  std::unique_ptr<uint8_t, void (*)(void*)> owned_{nullptr, nullptr};
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string_view, GgufValue>> kvs_;
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
};

// Builds a GGUF v3 file. Not thread-safe; one writer per output.
class GgufWriter {
 public:
  // Fills exactly `out.size()` bytes of a tensor's data at write time.
  using FillFn = std::function<Status(std::span<uint8_t> out)>;

  // Metadata setters replace an existing key of the same name (keeping its position).
  void SetU8(std::string_view key, uint8_t v);
  void SetI8(std::string_view key, int8_t v);
  void SetU16(std::string_view key, uint16_t v);
  void SetI16(std::string_view key, int16_t v);
  void SetU32(std::string_view key, uint32_t v);
  void SetI32(std::string_view key, int32_t v);
  void SetU64(std::string_view key, uint64_t v);
  void SetI64(std::string_view key, int64_t v);
  void SetF32(std::string_view key, float v);
  void SetF64(std::string_view key, double v);
  void SetBool(std::string_view key, bool v);
  void SetString(std::string_view key, std::string_view v);
  void SetStringArray(std::string_view key, std::span<const std::string> v);
  void SetStringArray(std::string_view key, std::span<const std::string_view> v);
  void SetF32Array(std::string_view key, std::span<const float> v);
  void SetI32Array(std::string_view key, std::span<const int32_t> v);
  void SetU32Array(std::string_view key, std::span<const uint32_t> v);
  // Copies a value read from another file unchanged (e.g. a quantizer keeping all metadata).
  void SetRaw(std::string_view key, const GgufValue& v);
  void Remove(std::string_view key);
  // Data alignment (power of two); also written as general.alignment when not the default.
  void SetAlignment(uint32_t alignment);

  // Tensors are written in the order added. `dims` are ggml order (ne[0] innermost).
  // The byte count is computed from the dims and type; a given buffer must match it.
  Status AddTensor(std::string_view name, GgmlType type, std::span<const int64_t> dims,
                   std::vector<uint8_t> data);
  // Borrows `data`; the caller keeps it alive until Write*() returns.
  Status AddTensorView(std::string_view name, GgmlType type, std::span<const int64_t> dims,
                       std::span<const uint8_t> data);
  Status AddTensorFill(std::string_view name, GgmlType type, std::span<const int64_t> dims,
                       FillFn fill);

  Status WriteFile(const std::string& path) const;
  Result<std::vector<uint8_t>> WriteBuffer() const;

 private:
  struct Kv {
    std::string key;
    GgufType type;
    std::vector<uint8_t> encoded;  // value bytes after the type tag
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> dims;
    uint64_t size_bytes = 0;
    std::vector<uint8_t> owned;
    std::span<const uint8_t> view;
    FillFn fill;
  };
  void Put(std::string_view key, GgufType type, std::vector<uint8_t> encoded);
  Result<uint64_t> CheckTensor(std::string_view name, GgmlType type,
                               std::span<const int64_t> dims) const;
  Status Emit(const std::function<Status(std::span<const uint8_t>)>& sink) const;

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
  uint32_t alignment_ = kGgufDefaultAlignment;
};

// --- template definitions ---

template <typename T>
struct GgufTypeOf;
template <> struct GgufTypeOf<uint8_t> { static constexpr GgufType kType = GgufType::kUint8; };
template <> struct GgufTypeOf<int8_t> { static constexpr GgufType kType = GgufType::kInt8; };
template <> struct GgufTypeOf<uint16_t> { static constexpr GgufType kType = GgufType::kUint16; };
template <> struct GgufTypeOf<int16_t> { static constexpr GgufType kType = GgufType::kInt16; };
template <> struct GgufTypeOf<uint32_t> { static constexpr GgufType kType = GgufType::kUint32; };
template <> struct GgufTypeOf<int32_t> { static constexpr GgufType kType = GgufType::kInt32; };
template <> struct GgufTypeOf<float> { static constexpr GgufType kType = GgufType::kFloat32; };
template <> struct GgufTypeOf<uint64_t> { static constexpr GgufType kType = GgufType::kUint64; };
template <> struct GgufTypeOf<int64_t> { static constexpr GgufType kType = GgufType::kInt64; };
template <> struct GgufTypeOf<double> { static constexpr GgufType kType = GgufType::kFloat64; };

template <typename T>
Result<std::span<const T>> GgufValue::AsArray() const {
  GgufType want = GgufTypeOf<T>::kType;
  // bool arrays are read as uint8_t.
  if (std::is_same_v<T, uint8_t> && is_array() && elem_type_ == GgufType::kBool) {
    want = GgufType::kBool;
  }
  ASSIGN_OR_RETURN(auto bytes, ArrayBytes(want, sizeof(T)));
  return std::span<const T>(reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T));
}

template <typename T>
Result<std::span<const T>> GgufFile::GetArray(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr) return NotFoundError(name_ + ": metadata key '" + std::string(key) + "' is missing");
  auto r = v->AsArray<T>();
  if (!r.ok()) return r.status().WithContext(name_ + ": metadata key '" + std::string(key) + "'");
  return r;
}

}  // namespace hotline::engine
