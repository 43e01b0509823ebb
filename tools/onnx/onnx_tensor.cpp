// TensorProto / SparseTensorProto / TypeProto → Tensor / TensorInfo.
#include "tools/onnx/onnx_tensor.h"

#include <cstring>
#include <limits>

namespace tsr::onnx_import {

namespace {

using onnx::TensorProto;

// Copies repeated-field values into the tensor, converting each element to T.
template <typename T, typename Field>
void copy_field(const Field& field, Tensor& out) {
  T* dst = out.mut_data<T>();
  for (int64_t i = 0; i < out.numel(); ++i) dst[i] = static_cast<T>(field.Get(static_cast<int>(i)));
}

// The repeated field that holds a tensor's typed (non-raw) data per onnx.proto's TensorProto
// comments, and how many elements it stores; name is null for dtypes without a typed field.
struct TypedField {
  const char* name = nullptr;
  int64_t count = 0;
};

TypedField typed_field(const TensorProto& p, DType dt) {
  switch (dt) {
    case DType::kF32: return {"float_data", p.float_data_size()};
    case DType::kF64: return {"double_data", p.double_data_size()};
    case DType::kI64: return {"int64_data", p.int64_data_size()};
    case DType::kU32: case DType::kU64: return {"uint64_data", p.uint64_data_size()};
    case DType::kString: return {"string_data", p.string_data_size()};
    // int32_data also stores the narrower integer types, bool, and f16/bf16 as bit patterns.
    case DType::kI32: case DType::kI16: case DType::kI8: case DType::kU16: case DType::kU8:
    case DType::kBool: case DType::kF16: case DType::kBF16:
      return {"int32_data", p.int32_data_size()};
    default: return {};
  }
}

// Copies the typed field into `t`, whose element count the caller checked against the field's.
void fill_typed(const TensorProto& p, Tensor& t) {
  switch (t.dtype()) {
    case DType::kF32: copy_field<float>(p.float_data(), t); return;
    case DType::kF64: copy_field<double>(p.double_data(), t); return;
    case DType::kI64: copy_field<int64_t>(p.int64_data(), t); return;
    case DType::kU32: copy_field<uint32_t>(p.uint64_data(), t); return;
    case DType::kU64: copy_field<uint64_t>(p.uint64_data(), t); return;
    case DType::kString: {
      auto* dst = t.mut_data<std::string>();
      for (int64_t i = 0; i < t.numel(); ++i) dst[i] = p.string_data(static_cast<int>(i));
      return;
    }
    case DType::kI32: copy_field<int32_t>(p.int32_data(), t); return;
    case DType::kI16: copy_field<int16_t>(p.int32_data(), t); return;
    case DType::kI8: copy_field<int8_t>(p.int32_data(), t); return;
    case DType::kU8: copy_field<uint8_t>(p.int32_data(), t); return;
    case DType::kBool: {
      auto* dst = t.mut_data<uint8_t>();
      for (int64_t i = 0; i < t.numel(); ++i) dst[i] = p.int32_data(static_cast<int>(i)) != 0 ? 1 : 0;
      return;
    }
    default: copy_field<uint16_t>(p.int32_data(), t); return;  // u16, f16 bits, bf16 bits
  }
}

}  // namespace

DType dtype_from_onnx(int32_t onnx_type) {
  if (onnx_type == TensorProto::COMPLEX64 || onnx_type == TensorProto::COMPLEX128) return DType::kUndefined;
  return dtype_valid(onnx_type) ? static_cast<DType>(onnx_type) : DType::kUndefined;
}

Expected<Tensor> tensor_from_proto(const TensorProto& p, const std::string& what) {
  if (p.data_location() == TensorProto::EXTERNAL || p.external_data_size() > 0) {
    std::string loc;
    for (const auto& kv : p.external_data())
      if (kv.key() == "location") loc = kv.value();
    return unsupported("tensor '", what, "': external data", loc.empty() ? "" : str_cat(" ('", loc, "')"),
                       " is not supported; re-save the model with its data inside the .onnx file");
  }
  if (p.has_segment()) return unsupported("tensor '", what, "': segmented tensors are not supported");
  const DType dt = dtype_from_onnx(p.data_type());
  if (dt == DType::kUndefined)
    return unsupported("tensor '", what, "': ONNX data type ", p.data_type(), " is not supported");
  Shape shape;
  shape.reserve(static_cast<size_t>(p.dims_size()));
  for (int64_t d : p.dims()) {
    if (d < 0) return invalid_model("tensor '", what, "': negative dim ", d);
    shape.push_back(d);
  }
  // Check the stored data against the dims before allocating, so that a few bytes of dims cannot
  // make the importer allocate gigabytes for data that is not in the file.
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / d)
      return invalid_model("tensor '", what, "': dims ", shape_str(shape), " overflow the element count");
    numel *= d;
  }
  if (p.has_raw_data()) {
    if (dt == DType::kString) return invalid_model("tensor '", what, "': string tensors cannot use raw_data");
    const auto esize = static_cast<int64_t>(dtype_size(dt));
    if (numel > std::numeric_limits<int64_t>::max() / esize ||
        static_cast<int64_t>(p.raw_data().size()) != numel * esize)
      return invalid_model("tensor '", what, "': raw_data has ", p.raw_data().size(), " bytes, dims ",
                           shape_str(shape), " of ", dtype_name(dt), " need ", numel, " elements of ", esize,
                           " bytes");
  } else {
    const TypedField field = typed_field(p, dt);
    if (field.name == nullptr)
      return unsupported("tensor '", what, "': dtype ", dtype_name(dt), " has no typed-field reader");
    if (field.count != numel)
      return invalid_model("tensor '", what, "': ", field.name, " holds ", field.count, " elements, dims ",
                           shape_str(shape), " need ", numel);
  }
  Expected<Tensor> made = Tensor::empty(dt, shape);
  if (!made.ok()) return made.status().with_context(str_cat("tensor '", what, "'"));
  Tensor t = std::move(made).value();
  if (!p.has_raw_data()) {
    fill_typed(p, t);
    return t;
  }
  if (t.nbytes() > 0) std::memcpy(t.raw_mut(), p.raw_data().data(), t.nbytes());
  if (dt == DType::kBool) {
    auto* b = t.mut_data<uint8_t>();
    for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0 ? 1 : 0;
  }
  return t;
}

Expected<Tensor> tensor_from_sparse_proto(const onnx::SparseTensorProto& sp, const std::string& what) {
  TSR_ASSIGN_OR_RETURN(Tensor values, tensor_from_proto(sp.values(), what + " (sparse values)"));
  TSR_ASSIGN_OR_RETURN(Tensor indices, tensor_from_proto(sp.indices(), what + " (sparse indices)"));
  Shape shape;
  for (int64_t d : sp.dims()) {
    if (d < 0) return invalid_model("sparse tensor '", what, "': negative dim ", d);
    shape.push_back(d);
  }
  if (values.dtype() == DType::kString) return unsupported("sparse tensor '", what, "': string values");
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::zeros(values.dtype(), shape));
  if (values.rank() != 1) return invalid_model("sparse tensor '", what, "': values must be 1-D");
  const int64_t nnz = values.numel();
  const auto rank = static_cast<int64_t>(shape.size());
  const bool linear = indices.rank() == 1;
  if (!(linear && indices.numel() == nnz) && !(indices.rank() == 2 && indices.dim(0) == nnz && indices.dim(1) == rank))
    return invalid_model("sparse tensor '", what, "': indices shape ", shape_str(indices.shape()),
                         " does not fit ", nnz, " values of rank ", rank);
  const std::vector<int64_t> idx = indices.to_i64_vector();
  const std::vector<int64_t> strides = shape_strides(shape);
  const size_t es = dtype_size(values.dtype());
  auto* dst = static_cast<uint8_t*>(out.raw_mut());
  const auto* src = static_cast<const uint8_t*>(values.raw());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = 0;
    if (linear) {
      flat = idx[static_cast<size_t>(k)];
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = idx[static_cast<size_t>(k * rank + d)];
        if (i < 0 || i >= shape[static_cast<size_t>(d)]) { flat = -1; break; }
        flat += i * strides[static_cast<size_t>(d)];
      }
    }
    if (flat < 0 || flat >= out.numel())
      return invalid_model("sparse tensor '", what, "': index of value ", k, " out of range");
    std::memcpy(dst + static_cast<size_t>(flat) * es, src + static_cast<size_t>(k) * es, es);
  }
  return out;
}

Status apply_type_proto(const onnx::TypeProto& type, ir::TensorInfo& info, const std::string& what) {
  // optional(T) is represented by T itself (an empty optional is a kNone value at run time).
  if (type.has_optional_type()) return apply_type_proto(type.optional_type().elem_type(), info, what);
  if (type.has_sequence_type()) {
    const auto& elem = type.sequence_type().elem_type();
    if (!elem.has_tensor_type() && elem.value_case() != onnx::TypeProto::VALUE_NOT_SET)
      return unsupported("value '", what, "': sequences of non-tensors are not supported");
    info.kind = ValueKind::kSequence;
    return apply_type_proto(elem, info, what);
  }
  if (!type.has_tensor_type()) {
    if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) return ok_status();
    return unsupported("value '", what, "': ONNX type (map / sparse tensor) is not supported");
  }
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) {
    const DType dt = dtype_from_onnx(tt.elem_type());
    if (dt == DType::kUndefined)
      return unsupported("value '", what, "': ONNX data type ", tt.elem_type(), " is not supported");
    info.dtype = dt;
  }
  if (!tt.has_shape()) return ok_status();
  info.has_shape = true;
  info.shape.clear();
  info.dim_names.clear();
  bool any_name = false;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) return invalid_model("value '", what, "': negative dim ", d.dim_value());
      info.shape.push_back(d.dim_value());
      info.dim_names.emplace_back();
    } else {
      info.shape.push_back(-1);
      info.dim_names.push_back(d.has_dim_param() ? d.dim_param() : std::string());
      any_name = any_name || d.has_dim_param();
    }
  }
  if (!any_name) info.dim_names.clear();
  return ok_status();
}

}  // namespace tsr::onnx_import
