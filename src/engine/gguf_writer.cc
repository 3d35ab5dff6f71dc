// GgufWriter (declared in gguf.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "engine/gguf.h"

namespace hotline::engine {
namespace {

template <typename T>
void Append(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

void AppendString(std::vector<uint8_t>& out, std::string_view s) {
  Append(out, static_cast<uint64_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

template <typename T>
std::vector<uint8_t> EncodeScalar(T v) {
  std::vector<uint8_t> out;
  Append(out, v);
  return out;
}

template <typename T>
std::vector<uint8_t> EncodeArray(GgufType elem, std::span<const T> v) {
  std::vector<uint8_t> out;
  out.reserve(12 + v.size_bytes());
  Append(out, static_cast<uint32_t>(elem));
  Append(out, static_cast<uint64_t>(v.size()));
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  out.insert(out.end(), p, p + v.size_bytes());
  return out;
}

template <typename S>
std::vector<uint8_t> EncodeStrings(std::span<const S> v) {
  std::vector<uint8_t> out;
  size_t total = 12;
  for (const auto& s : v) total += 8 + s.size();
  out.reserve(total);
  Append(out, static_cast<uint32_t>(GgufType::kString));
  Append(out, static_cast<uint64_t>(v.size()));
  for (const auto& s : v) AppendString(out, s);
  return out;
}

}  // namespace

void GgufWriter::Put(std::string_view key, GgufType type, std::vector<uint8_t> encoded) {
  for (Kv& kv : kvs_) {
    if (kv.key == key) {
      kv.type = type;
      kv.encoded = std::move(encoded);
      return;
    }
  }
  kvs_.push_back(Kv{std::string(key), type, std::move(encoded)});
}

void GgufWriter::SetU8(std::string_view k, uint8_t v) { Put(k, GgufType::kUint8, EncodeScalar(v)); }
void GgufWriter::SetI8(std::string_view k, int8_t v) { Put(k, GgufType::kInt8, EncodeScalar(v)); }
void GgufWriter::SetU16(std::string_view k, uint16_t v) {
  Put(k, GgufType::kUint16, EncodeScalar(v));
}
void GgufWriter::SetI16(std::string_view k, int16_t v) { Put(k, GgufType::kInt16, EncodeScalar(v)); }
void GgufWriter::SetU32(std::string_view k, uint32_t v) {
  Put(k, GgufType::kUint32, EncodeScalar(v));
}
void GgufWriter::SetI32(std::string_view k, int32_t v) { Put(k, GgufType::kInt32, EncodeScalar(v)); }
void GgufWriter::SetU64(std::string_view k, uint64_t v) {
  Put(k, GgufType::kUint64, EncodeScalar(v));
}
void GgufWriter::SetI64(std::string_view k, int64_t v) { Put(k, GgufType::kInt64, EncodeScalar(v)); }
void GgufWriter::SetF32(std::string_view k, float v) { Put(k, GgufType::kFloat32, EncodeScalar(v)); }
void GgufWriter::SetF64(std::string_view k, double v) {
  Put(k, GgufType::kFloat64, EncodeScalar(v));
}
void GgufWriter::SetBool(std::string_view k, bool v) {
  Put(k, GgufType::kBool, EncodeScalar(static_cast<uint8_t>(v ? 1 : 0)));
}
void GgufWriter::SetString(std::string_view k, std::string_view v) {
  std::vector<uint8_t> out;
  AppendString(out, v);
  Put(k, GgufType::kString, std::move(out));
}
void GgufWriter::SetStringArray(std::string_view k, std::span<const std::string> v) {
  Put(k, GgufType::kArray, EncodeStrings(v));
}
void GgufWriter::SetStringArray(std::string_view k, std::span<const std::string_view> v) {
  Put(k, GgufType::kArray, EncodeStrings(v));
}
void GgufWriter::SetF32Array(std::string_view k, std::span<const float> v) {
  Put(k, GgufType::kArray, EncodeArray(GgufType::kFloat32, v));
}
void GgufWriter::SetI32Array(std::string_view k, std::span<const int32_t> v) {
  Put(k, GgufType::kArray, EncodeArray(GgufType::kInt32, v));
}
void GgufWriter::SetU32Array(std::string_view k, std::span<const uint32_t> v) {
  Put(k, GgufType::kArray, EncodeArray(GgufType::kUint32, v));
}
void GgufWriter::SetRaw(std::string_view k, const GgufValue& v) {
  Put(k, v.type(), std::vector<uint8_t>(v.raw().begin(), v.raw().end()));
}

void GgufWriter::Remove(std::string_view key) {
  for (auto it = kvs_.begin(); it != kvs_.end(); ++it) {
    if (it->key == key) {
      kvs_.erase(it);
      return;
    }
  }
}

void GgufWriter::SetAlignment(uint32_t alignment) {
  alignment_ = alignment;
  if (alignment == kGgufDefaultAlignment) {
    Remove("general.alignment");
  } else {
    SetU32("general.alignment", alignment);
  }
}

Result<uint64_t> GgufWriter::CheckTensor(std::string_view name, GgmlType type,
                                         std::span<const int64_t> dims) const {
  if (name.empty()) return InvalidArgumentError("tensor name must not be empty");
  for (const Tensor& t : tensors_) {
    if (t.name == name) return InvalidArgumentError("tensor '" + std::string(name) + "' added twice");
  }
  if (dims.empty() || dims.size() > kGgufMaxDims) {
    return InvalidArgumentError("tensor '" + std::string(name) + "' must have 1 to 4 dimensions");
  }
  uint64_t elements = 1;
  for (int64_t d : dims) {
    if (d <= 0 || static_cast<uint64_t>(d) >
                      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / elements) {
      return InvalidArgumentError("tensor '" + std::string(name) + "' has invalid dimension " +
                                  std::to_string(d));
    }
    elements *= static_cast<uint64_t>(d);
  }
  const GgmlTypeInfo* info = GetTypeInfo(type);
  if (info == nullptr) {
    return InvalidArgumentError("tensor '" + std::string(name) + "' has an unknown ggml type " +
                                std::to_string(static_cast<uint32_t>(type)));
  }
  const int64_t block = info->block_elems;
  if (dims[0] % block != 0) {
    return InvalidArgumentError("tensor '" + std::string(name) + "': row length " +
                                std::to_string(dims[0]) + " is not a multiple of the " +
                                info->name + " block size " + std::to_string(block));
  }
  const uint64_t blocks = elements / static_cast<uint64_t>(block);
  if (blocks > std::numeric_limits<uint64_t>::max() / 2 / static_cast<uint64_t>(info->block_bytes)) {
    return InvalidArgumentError("tensor '" + std::string(name) + "' is too large");
  }
  return blocks * static_cast<uint64_t>(info->block_bytes);
}

Status GgufWriter::AddTensor(std::string_view name, GgmlType type, std::span<const int64_t> dims,
                             std::vector<uint8_t> data) {
  ASSIGN_OR_RETURN(uint64_t size, CheckTensor(name, type, dims));
  if (data.size() != size) {
    return InvalidArgumentError("tensor '" + std::string(name) + "' needs " +
                                std::to_string(size) + " bytes, got " +
                                std::to_string(data.size()));
  }
  Tensor t{std::string(name), type, {dims.begin(), dims.end()}, size, std::move(data), {}, {}};
  tensors_.push_back(std::move(t));
  return Status::Ok();
}

Status GgufWriter::AddTensorView(std::string_view name, GgmlType type,
                                 std::span<const int64_t> dims, std::span<const uint8_t> data) {
  ASSIGN_OR_RETURN(uint64_t size, CheckTensor(name, type, dims));
  if (data.size() != size) {
    return InvalidArgumentError("tensor '" + std::string(name) + "' needs " +
                                std::to_string(size) + " bytes, got " +
                                std::to_string(data.size()));
  }
  tensors_.push_back(Tensor{std::string(name), type, {dims.begin(), dims.end()}, size, {}, data, {}});
  return Status::Ok();
}

Status GgufWriter::AddTensorFill(std::string_view name, GgmlType type,
                                 std::span<const int64_t> dims, FillFn fill) {
  ASSIGN_OR_RETURN(uint64_t size, CheckTensor(name, type, dims));
  if (!fill) return InvalidArgumentError("tensor '" + std::string(name) + "': no fill function");
  tensors_.push_back(
      Tensor{std::string(name), type, {dims.begin(), dims.end()}, size, {}, {}, std::move(fill)});
  return Status::Ok();
}

Status GgufWriter::Emit(const std::function<Status(std::span<const uint8_t>)>& sink) const {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
    return InvalidArgumentError("GGUF alignment must be a power of two, got " +
                                std::to_string(alignment_));
  }
  std::vector<uint8_t> head;
  Append(head, kGgufMagic);
  Append(head, kGgufVersion);
  Append(head, static_cast<uint64_t>(tensors_.size()));
  Append(head, static_cast<uint64_t>(kvs_.size()));
  for (const Kv& kv : kvs_) {
    AppendString(head, kv.key);
    Append(head, static_cast<uint32_t>(kv.type));
    head.insert(head.end(), kv.encoded.begin(), kv.encoded.end());
  }
  auto padded = [&](uint64_t n) { return (n + alignment_ - 1) / alignment_ * alignment_; };
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    AppendString(head, t.name);
    Append(head, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) Append(head, static_cast<uint64_t>(d));
    Append(head, static_cast<uint32_t>(t.type));
    Append(head, offset);
    offset = padded(offset + t.size_bytes);
  }
  head.resize(padded(head.size()), 0);
  RETURN_IF_ERROR(sink(head));

  static const uint8_t kZeros[1 << 12] = {};
  std::vector<uint8_t> scratch;
  for (const Tensor& t : tensors_) {
    if (t.fill) {
      scratch.assign(t.size_bytes, 0);
      RETURN_IF_ERROR(t.fill(scratch).WithContext("tensor '" + t.name + "'"));
      RETURN_IF_ERROR(sink(scratch));
    } else if (!t.owned.empty()) {
      RETURN_IF_ERROR(sink(t.owned));
    } else {
      RETURN_IF_ERROR(sink(t.view));
    }
    uint64_t pad = padded(t.size_bytes) - t.size_bytes;
    while (pad > 0) {
      uint64_t n = std::min<uint64_t>(pad, sizeof(kZeros));
      RETURN_IF_ERROR(sink(std::span<const uint8_t>(kZeros, static_cast<size_t>(n))));
      pad -= n;
    }
  }
  return Status::Ok();
}

Status GgufWriter::WriteFile(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return NotFoundError("cannot create '" + path + "': " + std::strerror(errno));
  }
  Status s = Emit([&](std::span<const uint8_t> bytes) -> Status {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      return ResourceExhaustedError("cannot write '" + path + "': " + std::strerror(errno) +
                                    " (disk full?)");
    }
    return Status::Ok();
  });
  if (std::fclose(f) != 0 && s.ok()) {
    s = ResourceExhaustedError("cannot finish writing '" + path + "': " + std::strerror(errno));
  }
  if (!s.ok()) std::remove(path.c_str());
  return s;
}

Result<std::vector<uint8_t>> GgufWriter::WriteBuffer() const {
  std::vector<uint8_t> out;
  RETURN_IF_ERROR(Emit([&](std::span<const uint8_t> bytes) -> Status {
    out.insert(out.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }));
  return out;
}

}  // namespace hotline::engine
