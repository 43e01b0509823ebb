// The device backends' op tables (backends/device_common/op_table.h), checked without a device:
// each compiled-in table passes the self-check its backend header promises, the self-check and
// OpTable::try_add catch what they are for, and the shared placement checks decide the cases
// the backends' copies used to differ on.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backends/device_common/elementwise.h"
#include "backends/device_common/op_table.h"
#include "backends/device_common/window.h"
#if TSR_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif
#if TSR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

using namespace tsr;

namespace {

struct FakeBackend {};
using FakeTable = device_common::OpTable<FakeBackend>;

class NoKernel final : public exec::DeviceKernel {
 public:
  explicit NoKernel(const exec::KernelInit&) {}
  Status record(exec::DeviceKernelContext&) override { return ok_status(); }
};
constexpr auto kMake = &device_common::make_kernel<NoKernel, FakeBackend>;

// An elementwise policy that records nothing: enough to build the family's table entries.
struct FakeElementwise {
  using Backend = FakeBackend;
  static constexpr bool kComparisons = true;
  static Status unary(exec::DeviceKernelContext&, const exec::DeviceTensor&, exec::DeviceTensor&,
                      const device_common::UnaryParams&) {
    return ok_status();
  }
  static Status binary(exec::DeviceKernelContext&, device_common::BinaryOp, const exec::DeviceTensor&, const exec::DeviceTensor&,
                       exec::DeviceTensor&, const Shape&, const Shape&) {
    return ok_status();
  }
};

ops::ValueType f32(const Shape& s) { return {DType::kF32, true, s, ValueKind::kTensor}; }

// A MaxPool (kernel 2x2, `extra` attributes) with Y, and Indices when `indices`; or a two-input op.
ir::Node max_pool(std::vector<ir::Attribute> extra, bool indices = false) {
  ir::Node n;
  n.op = n.name = "MaxPool";
  n.inputs = {0};
  n.outputs = indices ? std::vector<int32_t>{1, 2} : std::vector<int32_t>{1};
  n.attributes = std::move(extra);
  n.attributes.push_back(ir::Attribute::make_ints("kernel_shape", {2, 2}));
  return n;
}
ir::Node two_inputs(const std::string& op) {
  ir::Node n;
  n.op = n.name = op;
  n.inputs = {0, 1};
  n.outputs = {2};
  return n;
}
const auto kStorageOrder1 = ir::Attribute::make_int("storage_order", 1);

// Whether `table` places `n` with input types `in`.
template <class B>
bool places(const device_common::OpTable<B>& table, const ir::Node& n, const std::vector<ops::ValueType>& in) {
  return table.device_support(n, in).supported;
}

}  // namespace

TEST_CASE("op table: a second registration of an op is refused", "[op_table]") {
  FakeTable t("Fake");
  CHECK(t.try_add("Relu", {0, 0, nullptr, kMake}));
  CHECK_FALSE(t.try_add("Relu", {0b10, 0, nullptr, kMake}));
  REQUIRE(t.find("Relu") != nullptr);
  CHECK(t.find("Relu")->host_inputs == 0);  // the first entry stays
  CHECK(t.kernel_dtypes("Relu") == std::vector<DType>{DType::kF32});
  CHECK(t.kernel_dtypes("Tanh").empty());
}

TEST_CASE("op table: the self-check names an inconsistent entry", "[op_table]") {
  FakeTable good("Fake");
  device_common::register_elementwise_ops<FakeElementwise>(good);
  CHECK(device_common::check_op_table(good).ok());

  FakeTable unknown("Fake");
  unknown.add("NoSuchOp", 0, nullptr, kMake);
  Status st = device_common::check_op_table(unknown);
  CHECK(st.code() == StatusCode::kInternal);
  CHECK(st.message().find("NoSuchOp") != std::string::npos);

  FakeTable no_factory("Fake");
  no_factory.add("Relu", 0, nullptr, nullptr);
  CHECK_FALSE(device_common::check_op_table(no_factory).ok());

  FakeTable past_inputs("Fake");  // Relu has one input: bit 1 names none
  past_inputs.add("Relu", 0b10, nullptr, kMake);
  CHECK_FALSE(device_common::check_op_table(past_inputs).ok());

  FakeTable both_ways("Fake");
  both_ways.add("Where", 0b1, nullptr, kMake, 0b1);
  CHECK_FALSE(device_common::check_op_table(both_ways).ok());
}

// MaxPool's storage_order only orders the Indices output, which no device kernel produces: the
// CUDA copy of pool_check refused storage_order = 1, the Vulkan copy took it. One check now.
TEST_CASE("pool placement: storage_order does not matter without Indices", "[op_table]") {
  const std::vector<ops::ValueType> x = {f32({1, 3, 8, 8})};
  CHECK(device_common::pool_check(max_pool({kStorageOrder1}), x));
  CHECK(device_common::pool_check(max_pool({}), x));
  CHECK_FALSE(device_common::pool_check(max_pool({}, true), x));  // Indices wanted
  CHECK_FALSE(device_common::pool_check(max_pool({}), {f32({1, 3, 4, 4, 4})}));  // 3-D
}

// A backend's table: the self-check passes, MaxPool with storage_order = 1 is placed, and the
// comparisons (bool outputs) only where the backend has them.
template <class B>
void check_backend_table(const device_common::OpTable<B>& table, bool comparisons) {
  const Status st = device_common::check_op_table(table);
  INFO(st.to_string());
  CHECK(st.ok());
  CHECK(places(table, max_pool({kStorageOrder1}), {f32({1, 3, 8, 8})}));
  CHECK(places(table, two_inputs("Greater"), {f32({4}), f32({4})}) == comparisons);
}

#if TSR_HAVE_VULKAN
TEST_CASE("the Vulkan op table passes its self-check", "[op_table]") {
  check_backend_table(vulkan::VulkanBackend::op_table(), false);
}
#endif

#if TSR_HAVE_CUDA
TEST_CASE("the CUDA op table passes its self-check", "[op_table]") {
  check_backend_table(cuda::CudaBackend::op_table(), true);
}
#endif

#if TSR_HAVE_VULKAN && TSR_HAVE_CUDA
TEST_CASE("the Vulkan table's ops are a subset of the CUDA table's, with the same placement fields", "[op_table]") {
  for (const auto& [name, def] : vulkan::VulkanBackend::op_table().all()) {
    INFO(name);
    const auto* c = cuda::CudaBackend::op_table().find(name);
    REQUIRE(c != nullptr);
    CHECK(c->host_inputs == def.host_inputs);
    CHECK(c->bool_inputs == def.bool_inputs);
    CHECK(c->check == def.check);
  }
}
#endif
