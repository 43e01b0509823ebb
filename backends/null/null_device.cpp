#include "backends/null/null_device.h"

#include <algorithm>
#include <cstring>

namespace tsr::null_device {

namespace {

class NullBuffer final : public exec::DeviceBuffer {
 public:
  NullBuffer(size_t bytes, std::shared_ptr<size_t> live)
      : data_(new uint8_t[bytes]), size_(bytes), live_(std::move(live)) {
    *live_ += bytes;
  }
  ~NullBuffer() override { *live_ -= size_; }
  size_t size() const override { return size_; }
  uint8_t* data() { return data_.get(); }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t size_;
  std::shared_ptr<size_t> live_;
};

uint8_t* bytes_of(const exec::DeviceTensor& t) {
  return static_cast<NullBuffer*>(t.buffer.get())->data() + t.byte_offset;
}

// Runs the host kernel on host views of the device buffers, then moves each output into a
// device buffer (a real device would have written it in place).
class NullKernel final : public exec::DeviceKernel {
 public:
  NullKernel(NullDevice& dev, std::unique_ptr<exec::Kernel> host) : dev_(dev), host_(std::move(host)) {}
  Status record(exec::DeviceKernelContext& ctx) override {
    views_.assign(ctx.num_inputs(), Tensor());
    ptrs_.assign(ctx.num_inputs(), nullptr);
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      if (const exec::DeviceTensor* d = ctx.device_input(k)) {
        views_[k] = Tensor::wrap(d->dtype, d->shape, bytes_of(*d), d->buffer);
        ptrs_[k] = &views_[k];
      } else {
        ptrs_[k] = ctx.host_input(k);
      }
    }
    outs_.assign(ctx.num_outputs(), Tensor());
    exec::KernelContext kctx(ctx.node(), ctx.place(), ptrs_, ctx.output_types(), outs_, dev_.pool(), scratch_);
    Status st = host_->run(kctx);
    scratch_.reset();
    TSR_RETURN_IF_ERROR(st);
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      if (!outs_[i].defined()) continue;
      if (outs_[i].dtype() != DType::kF32 || outs_[i].kind() != ValueKind::kTensor)
        return ctx.error("output[", i, "] is ", dtype_name(outs_[i].dtype()), ", the null device holds f32 tensors");
      TSR_ASSIGN_OR_RETURN(exec::DeviceTensor d, dev_.upload(outs_[i]));
      ctx.set_output(i, std::move(d));
    }
    views_.clear();
    outs_.clear();
    return ok_status();
  }

 private:
  NullDevice& dev_;
  std::unique_ptr<exec::Kernel> host_;
  std::vector<Tensor> views_, outs_;
  std::vector<const Tensor*> ptrs_;
  exec::ScratchArena scratch_;
};

}  // namespace

std::set<std::string, std::less<>> default_null_device_ops() {
  return {"Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Conv", "MatMul", "Gemm", "Reshape",
          "Transpose", "Concat", "Softmax", "MaxPool", "GlobalAveragePool", "BatchNormalization", "Flatten"};
}

NullDevice::NullDevice(std::unique_ptr<exec::Backend> host, std::set<std::string, std::less<>> ops)
    : host_(std::move(host)), ops_(std::move(ops)) {}

exec::DeviceSupport NullDevice::device_support(const ir::Node& node, const std::vector<ops::ValueType>& inputs) const {
  exec::DeviceSupport s;
  if (!ops_.count(node.op) || inputs.size() > 32) return s;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (node.inputs[k] < 0) continue;
    if (inputs[k].kind != ValueKind::kTensor) return s;
    if (inputs[k].dtype != DType::kF32) s.host_inputs |= 1u << k;
  }
  if (node.inputs.empty() || node.inputs[0] < 0 || (s.host_inputs & 1u)) return s;
  s.supported = true;
  return s;
}

Expected<std::unique_ptr<exec::DeviceKernel>> NullDevice::create_device_kernel(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(auto host, host_->create_kernel(init));
  return std::unique_ptr<exec::DeviceKernel>(new NullKernel(*this, std::move(host)));
}

Expected<std::shared_ptr<exec::DeviceBuffer>> NullDevice::allocate(size_t bytes) {
  if (bytes == 0) return invalid_argument("null device: allocation of 0 bytes");
  return std::shared_ptr<exec::DeviceBuffer>(new NullBuffer(bytes, live_bytes_));
}

Status NullDevice::write(const exec::DeviceTensor& dst, const void* src, size_t n) {
  std::memcpy(bytes_of(dst), src, n);
  return ok_status();
}

Status NullDevice::read(const exec::DeviceTensor& src, void* dst, size_t n) {
  if (n) std::memcpy(dst, bytes_of(src), n);
  return ok_status();
}

Status NullDevice::copy_bytes(const exec::DeviceTensor& src, const exec::DeviceTensor& dst, size_t n) {
  std::memcpy(bytes_of(dst), bytes_of(src), n);
  return ok_status();
}

}  // namespace tsr::null_device
