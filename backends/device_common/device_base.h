// What every device backend (Vulkan, CUDA, the null device) does the same way, written once:
// upload / download / copy of whole tensors in terms of three byte primitives the backend supplies,
// and, for a backend driven by an op table (op_table.h), the kernel side of the contract.
// Header-only.
#pragma once

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "backends/device_common/op_table.h"
#include "core/exec/device.h"

namespace tsr::device_common {

class DeviceBase : public exec::DeviceBackend {
 public:
  // A dense device copy of `src` (allocations are at least 4 bytes: empty tensors still bind).
  Expected<exec::DeviceTensor> upload(const Tensor& src) final {
    if (src.kind() != ValueKind::kTensor || src.dtype() == DType::kString)
      return unsupported(name(), ": only numeric tensors can be uploaded");
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor d, alloc_tensor(src.dtype(), src.shape()));
    if (src.nbytes() > 0) TSR_RETURN_IF_ERROR(write(d, src.raw(), src.nbytes()));
    return d;
  }
  Expected<Tensor> download(const exec::DeviceTensor& src) final {
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(src.dtype, src.shape));
    TSR_RETURN_IF_ERROR(read(src, t.raw_mut(), t.nbytes()));
    return t;
  }
  Expected<exec::DeviceTensor> copy(const exec::DeviceTensor& src) final {
    TSR_ASSIGN_OR_RETURN(exec::DeviceTensor d, alloc_tensor(src.dtype, src.shape));
    if (src.nbytes() > 0) TSR_RETURN_IF_ERROR(copy_bytes(src, d, src.nbytes()));
    return d;
  }

 protected:
  Expected<exec::DeviceTensor> alloc_tensor(DType dtype, const Shape& shape) {
    exec::DeviceTensor d;
    d.dtype = dtype;
    d.shape = shape;
    TSR_ASSIGN_OR_RETURN(d.buffer, allocate(std::max<size_t>(d.nbytes(), 4)));
    return d;
  }
  // Records a copy of n > 0 host bytes into dst; the bytes are staged before it returns.
  virtual Status write(const exec::DeviceTensor& dst, const void* src, size_t n) = 0;
  // Copies n bytes (possibly 0) of src to the host, after everything recorded so far: it waits, and
  // a failure of earlier work surfaces here.
  virtual Status read(const exec::DeviceTensor& src, void* dst, size_t n) = 0;
  // Records a device copy of n > 0 bytes.
  virtual Status copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) = 0;
};

// A device backend whose kernels come from an op table; B: the backend class (CRTP).
template <class B>
class TableBackend : public DeviceBase {
 public:
  explicit TableBackend(const OpTable<B>& table) : table_(table) {}
  std::vector<DType> kernel_dtypes(std::string_view op) const override { return table_.kernel_dtypes(op); }
  exec::DeviceSupport device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const override {
    return table_.device_support(node, inputs);
  }
  Expected<std::unique_ptr<exec::DeviceKernel>> create_device_kernel(const exec::KernelInit& init) override {
    return table_.create(static_cast<B&>(*this), init);
  }

 private:
  const OpTable<B>& table_;
};

}  // namespace tsr::device_common
