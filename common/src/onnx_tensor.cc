#include "parity/internal/onnx_tensor.h"

#include <cstring>

#include "parity/error.h"

namespace parity {

namespace {

template <typename Dst, typename Field>
void copy_field(const Field& field, Tensor& t, const std::string& origin, const char* field_name) {
  if (static_cast<int64_t>(field.size()) != t.numel())
    throw Error({"tensor", origin}, std::string(field_name) + " holds " + std::to_string(field.size()) +
                                        " values but shape " + shape_str(t.shape()) + " needs " +
                                        std::to_string(t.numel()));
  Dst* out = t.data<Dst>();
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
}

}  // namespace

namespace {

// The element count of `shape`, checked against overflow and the allocation limit at `element_bytes` each.
int64_t bounded_numel(const Shape& shape, size_t element_bytes, const std::string& where) {
  int64_t numel = 0;
  try {
    numel = checked_numel(shape, "tensor");
  } catch (const Error& e) {
    throw e.with_context({"tensor", where});
  }
  if (static_cast<uint64_t>(numel) > allocation_limit() / element_bytes)
    throw Error({"tensor", where}, "shape " + shape_str(shape) + " exceeds the allocation limit");
  return numel;
}

// INT4 / UINT4 (ONNX 22 / 21): two elements per byte, the first in the low nibble. Parity holds them
// unpacked, one int8 / uint8 per element (sign-extended): kernels see the same values either way.
bool is_4bit(int32_t data_type) {
  return data_type == onnx::TensorProto::INT4 || data_type == onnx::TensorProto::UINT4;
}

Tensor unpack_4bit(const onnx::TensorProto& proto, const std::string& where, const ExternalDataResolver* external) {
  const bool is_signed = proto.data_type() == onnx::TensorProto::INT4;
  const Shape shape(proto.dims().begin(), proto.dims().end());
  const int64_t numel = bounded_numel(shape, 1, where);
  const int64_t packed_bytes = (numel + 1) / 2;
  Tensor packed;
  const uint8_t* bytes = nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!external) throw Error({"tensor", where}, "uses external data, which is not allowed here");
    packed = external->resolve(proto, DType::kUInt8, {packed_bytes});
    if (packed.nbytes() != static_cast<size_t>(packed_bytes))
      throw Error({"tensor", where}, "external data has the wrong length");
    bytes = static_cast<const uint8_t*>(packed.raw());
  } else if (proto.has_raw_data()) {
    if (proto.raw_data().size() != static_cast<size_t>(packed_bytes))
      throw Error({"tensor", where}, "raw_data has " + std::to_string(proto.raw_data().size()) + " bytes but shape " +
                                         shape_str(shape) + " of 4-bit values needs " + std::to_string(packed_bytes));
    bytes = reinterpret_cast<const uint8_t*>(proto.raw_data().data());
  } else {
    // int32_data: one packed byte per entry.
    if (proto.int32_data_size() != packed_bytes)
      throw Error({"tensor", where}, "int32_data holds " + std::to_string(proto.int32_data_size()) +
                                         " packed bytes but shape " + shape_str(shape) + " needs " +
                                         std::to_string(packed_bytes));
    packed = Tensor(DType::kUInt8, {packed_bytes});
    for (int64_t i = 0; i < packed_bytes; ++i)
      packed.data<uint8_t>()[i] = static_cast<uint8_t>(proto.int32_data(static_cast<int>(i)));
    bytes = packed.data<uint8_t>();
  }
  Tensor t(is_signed ? DType::kInt8 : DType::kUInt8, shape);
  auto* out = static_cast<uint8_t*>(t.mutable_raw());
  for (int64_t i = 0; i < numel; ++i) {
    const uint8_t nibble = (bytes[i / 2] >> (4 * (i & 1))) & 0xF;
    out[i] = is_signed && (nibble & 0x8) ? static_cast<uint8_t>(nibble | 0xF0) : nibble;
  }
  return t;
}

Tensor from_proto(const onnx::TensorProto& proto, const std::string& origin, const ExternalDataResolver* external,
                  onnx::TensorProto* adopt_from, size_t adopt_bytes) {
  const std::string where = proto.name().empty() ? origin : origin + " (tensor '" + proto.name() + "')";
  if (proto.has_data_type() && is_4bit(proto.data_type())) return unpack_4bit(proto, where, external);
  if (!proto.has_data_type() || !dtype_is_supported(proto.data_type()))
    throw Error({"tensor", where}, "unsupported or missing data_type " + std::to_string(proto.data_type()));
  const DType dtype = static_cast<DType>(proto.data_type());
  const Shape shape(proto.dims().begin(), proto.dims().end());
  const int64_t numel = bounded_numel(shape, dtype_size(dtype), where);
  const size_t expected = static_cast<size_t>(numel) * dtype_size(dtype);

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!external) throw Error({"tensor", where}, "uses external data, which is not allowed here");
    Tensor t = external->resolve(proto, dtype, shape);
    if (t.nbytes() != expected) throw Error({"tensor", where}, "external data has the wrong length");
    return t;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != expected)
      throw Error({"tensor", where}, "raw_data has " + std::to_string(proto.raw_data().size()) + " bytes but shape " +
                                         shape_str(shape) + " x " + dtype_name(dtype) + " needs " +
                                         std::to_string(expected));
    if (adopt_from && expected >= adopt_bytes && expected > 0) {
      // The parsed string becomes the tensor's buffer: no second copy of a large weight.
      std::shared_ptr<std::string> owner(adopt_from->release_raw_data());
      const void* data = owner->data();
      return Tensor::view(dtype, shape, std::move(owner), data);
    }
    Tensor t(dtype, shape);
    if (expected) std::memcpy(t.mutable_raw(), proto.raw_data().data(), expected);
    return t;
  }
  Tensor t(dtype, shape);
  switch (dtype) {
    case DType::kFloat32:
      copy_field<float>(proto.float_data(), t, where, "float_data");
      break;
    case DType::kFloat64:
      copy_field<double>(proto.double_data(), t, where, "double_data");
      break;
    case DType::kInt64:
      copy_field<int64_t>(proto.int64_data(), t, where, "int64_data");
      break;
    case DType::kInt32:
      copy_field<int32_t>(proto.int32_data(), t, where, "int32_data");
      break;
    case DType::kInt16:
      copy_field<int16_t>(proto.int32_data(), t, where, "int32_data");
      break;
    case DType::kInt8:
      copy_field<int8_t>(proto.int32_data(), t, where, "int32_data");
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      copy_field<uint16_t>(proto.int32_data(), t, where, "int32_data");
      break;
    case DType::kUInt8:
    case DType::kBool:
      copy_field<uint8_t>(proto.int32_data(), t, where, "int32_data");
      break;
    case DType::kUInt32:
      copy_field<uint32_t>(proto.uint64_data(), t, where, "uint64_data");
      break;
    case DType::kUInt64:
      copy_field<uint64_t>(proto.uint64_data(), t, where, "uint64_data");
      break;
    default:
      throw Error({"tensor", where}, "unsupported data_type " + dtype_name(dtype));
  }
  return t;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& origin,
                         const ExternalDataResolver* external) {
  return from_proto(proto, origin, external, nullptr, 0);
}

Tensor tensor_from_proto_adopting(onnx::TensorProto& proto, const std::string& origin,
                                  const ExternalDataResolver* external, size_t adopt_bytes) {
  return from_proto(proto, origin, external, &proto, adopt_bytes);
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  if (!name.empty()) proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  proto->set_raw_data(static_cast<const char*>(t.raw()), t.nbytes());
}

}  // namespace parity
