// CUDA backend tests that need no GPU: the caching allocator's bins and cap (with malloc as the
// raw allocator), the backend's placement decisions (its op table's device_support on real
// nodes, and the LeNet train_step graph placed with it), the no-device error, and the cuBLAS
// entry points the backend loads at run time.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "backends/cuda/caching_allocator.h"
#include "backends/cuda/cublas_api.h"
#include "backends/cuda/cuda_backend.h"
#include "core/exec/device.h"
#include "core/passes/infer_types.h"
#include "core/passes/placement.h"
#include "core/passes/training.h"
#include "tools/train/architectures.h"

using namespace tsr;

namespace {

// malloc with a limit on live bytes (a "driver" that can run out).
struct CountingRaw {
  int allocs = 0, frees = 0;
  size_t limit = SIZE_MAX, live = 0;
  std::map<void*, size_t> sizes;
  cuda::CachingAllocator make(size_t cap) {
    return cuda::CachingAllocator(
        [this](size_t n) -> void* {
          if (live + n > limit) return nullptr;
          ++allocs;
          live += n;
          void* p = std::malloc(n);
          sizes[p] = n;
          return p;
        },
        [this](void* p) {
          ++frees;
          live -= sizes.at(p);
          sizes.erase(p);
          std::free(p);
        },
        cap);
  }
};

ops::ValueType f32(const Shape& s) { return {DType::kF32, true, s, ValueKind::kTensor}; }
ops::ValueType i64(const Shape& s) { return {DType::kI64, true, s, ValueKind::kTensor}; }
ops::ValueType boolean(const Shape& s) { return {DType::kBool, true, s, ValueKind::kTensor}; }

ir::Node node(const std::string& op, size_t n_inputs, std::vector<ir::Attribute> attrs = {}, size_t n_outputs = 1) {
  ir::Node n;
  n.op = op;
  n.name = op;
  for (size_t k = 0; k < n_inputs; ++k) n.inputs.push_back(static_cast<int32_t>(k));
  for (size_t k = 0; k < n_outputs; ++k) n.outputs.push_back(static_cast<int32_t>(100 + k));
  n.attributes = std::move(attrs);
  // As in a verified model: the OpDef's attribute defaults filled in (placement reads them).
  if (const ops::OpDef* def = ops::OpRegistry::global().find(op)) ops::fill_attribute_defaults(*def, n);
  return n;
}

exec::DeviceSupport support(const ir::Node& n, const std::vector<ops::ValueType>& in) {
  return cuda::CudaBackend::op_table().device_support(n, in);
}

}  // namespace

TEST_CASE("cuda allocator: size classes", "[cuda_host]") {
  using A = cuda::CachingAllocator;
  CHECK(A::bin_size(1) == 512);
  CHECK(A::bin_size(512) == 512);
  CHECK(A::bin_size(513) == 640);    // 512 + 128
  CHECK(A::bin_size(1000) == 1024);
  CHECK(A::bin_size(1025) == 1280);  // 1024 + 256
  CHECK(A::bin_size((size_t{1} << 20) + 1) == (size_t{1} << 20) + (size_t{1} << 18));
  for (size_t n = 1; n < 5000000; n = n * 3 + 7) {
    const size_t b = A::bin_size(n);
    INFO(n);
    CHECK(b >= n);
    CHECK(b % 128 == 0);
    CHECK((n <= 512 || b <= n + n / 4 + 128));  // at most a quarter (plus rounding) over
  }
}

TEST_CASE("cuda allocator: freed blocks are reused by their bin, not the driver", "[cuda_host]") {
  CountingRaw raw;
  auto a = raw.make(1 << 20);
  auto b1 = a.allocate(1000);
  REQUIRE(b1.ok());
  CHECK(b1->size == 1024);
  void* p = b1->ptr;
  a.deallocate(*b1);
  CHECK(a.in_use() == 0);
  CHECK(a.cached() == 1024);
  auto b2 = a.allocate(900);  // same bin
  REQUIRE(b2.ok());
  CHECK(b2->ptr == p);
  CHECK(raw.allocs == 1);
  auto b3 = a.allocate(600);  // another bin: a new block
  REQUIRE(b3.ok());
  CHECK(raw.allocs == 2);
  CHECK(a.reserved() == 1024 + 640);
  a.deallocate(*b2);
  a.deallocate(*b3);
}

TEST_CASE("cuda allocator: the cap releases the cache first, then fails naming the sizes", "[cuda_host]") {
  CountingRaw raw;
  auto a = raw.make(4096);
  auto x = a.allocate(2048);
  REQUIRE(x.ok());
  a.deallocate(*x);  // cached: 2048 reserved, 0 in use
  auto y = a.allocate(3000);  // 3072 + 2048 > 4096: the cached block goes back to the driver
  REQUIRE(y.ok());
  CHECK(raw.frees == 1);
  CHECK(a.reserved() == 3072);
  auto z = a.allocate(2048);  // 3072 in use + 2048 > cap
  REQUIRE_FALSE(z.ok());
  CHECK(z.status().code() == StatusCode::kResource);
  CHECK(z.status().message().find("cap of 4096") != std::string::npos);
  a.deallocate(*y);
}

TEST_CASE("cuda allocator: a driver out of memory retries after releasing the cache", "[cuda_host]") {
  CountingRaw raw;
  raw.limit = 1024;
  auto a = raw.make(1 << 30);
  auto x = a.allocate(1024);
  REQUIRE(x.ok());
  a.deallocate(*x);
  auto y = a.allocate(600);  // another bin; the driver has room only once the cached 1024 is freed
  REQUIRE(y.ok());
  CHECK(raw.frees == 1);
  a.deallocate(*y);
  raw.limit = 0;
  a.release_cached();
  auto z = a.allocate(100);
  REQUIRE_FALSE(z.ok());
  CHECK(z.status().code() == StatusCode::kResource);
  CHECK(a.reserved() == 0);
}

TEST_CASE("cuda placement: device_support of single nodes", "[cuda_host]") {
  // Supported f32 ops; host inputs named by bits.
  CHECK(support(node("Conv", 3), {f32({1, 3, 8, 8}), f32({4, 3, 3, 3}), f32({4})}).supported);
  CHECK(support(node("Conv", 2), {f32({1, 3, 8, 8, 8}), f32({4, 3, 3, 3, 3})}).supported == false);  // 3-D conv
  auto r = support(node("Reshape", 2), {f32({2, 6}), i64({2})});
  CHECK(r.supported);
  CHECK(r.host_inputs == 0b10);
  CHECK(support(node("Add", 2), {f32({2, 3}), f32({3})}).supported);
  CHECK_FALSE(support(node("Add", 2), {i64({2, 3}), i64({3})}).supported);  // integer math stays on the CPU
  CHECK_FALSE(support(node("Add", 2), {f32({1, 1, 1, 1, 1, 1, 2}), f32({2})}).supported);  // rank 7
  CHECK_FALSE(support(node("LSTM", 3), {f32({5, 1, 4}), f32({1, 8, 4}), f32({1, 8, 2})}).supported);
  CHECK_FALSE(support(node("Pad", 2, {ir::Attribute::make_string("mode", "reflect")}), {f32({2, 3}), i64({4})}).supported);
  CHECK_FALSE(support(node("Resize", 3, {ir::Attribute::make_string("mode", "cubic")}), {f32({1, 1, 4, 4}), f32({0}), f32({4})}).supported);
  // Comparisons produce bool; Where reads a bool condition (and only a bool one).
  CHECK(support(node("Greater", 2), {f32({4, 4}), f32({1})}).supported);
  CHECK(support(node("Where", 3), {boolean({4, 4}), f32({4, 4}), f32({1})}).supported);
  CHECK_FALSE(support(node("Where", 3), {f32({4, 4}), f32({4, 4}), f32({1})}).supported);
  // Training ops: grouped conv gradients, weighted losses stay on the CPU.
  const std::vector<ops::ValueType> cgi = {f32({2, 4, 6, 6}), f32({4, 2, 3, 3}), i64({4})};
  r = support(node("ConvGradInput", 3), cgi);
  CHECK(r.supported);
  CHECK(r.host_inputs == 0b100);
  CHECK_FALSE(support(node("ConvGradInput", 3, {ir::Attribute::make_int("group", 2)}), cgi).supported);
  r = support(node("SoftmaxCrossEntropyLoss", 2), {f32({8, 10}), i64({8})});
  CHECK(r.supported);
  CHECK(r.host_inputs == 0b10);
  CHECK_FALSE(support(node("SoftmaxCrossEntropyLoss", 3), {f32({8, 10}), i64({8}), f32({10})}).supported);
  // AdamW over 10 tensors has 42 inputs: R and T on the host, the 40 tensors (past bit 31 too) on the device.
  std::vector<ops::ValueType> adam = {f32({}), i64({})};
  for (int k = 0; k < 40; ++k) adam.push_back(f32({3, 5}));
  r = support(node("AdamW", 42, {}, 30), adam);
  CHECK(r.supported);
  CHECK(r.host_inputs == 0b11);
  adam[40] = i64({3, 5});
  CHECK_FALSE(support(node("AdamW", 42, {}, 30), adam).supported);
}

TEST_CASE("cuda placement: the LeNet train_step graph runs on the device but for shape arithmetic", "[cuda_host]") {
  auto m = train::build_architecture("lenet", 28, 28, 10, 1);
  REQUIRE(m.ok());
  passes::TrainingOptions to;
  to.optimizer = "adamw";
  auto tm = passes::make_training_model(std::move(m).value(), to);
  REQUIRE(tm.ok());
  ir::Model model = std::move(tm).value();
  REQUIRE(passes::infer_types(model).ok());
  int32_t gi = -1;
  for (const auto& s : model.signatures)
    if (s.name == "train_step") gi = s.graph;
  REQUIRE(gi >= 0);
  const ir::Graph& g = model.graphs[static_cast<size_t>(gi)];
  std::vector<int32_t> order(g.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  auto fn = [](const ir::Node& n, const std::vector<ops::ValueType>& in) {
    const exec::DeviceSupport s = support(n, in);
    return passes::NodeSupport{s.supported, s.host_inputs};
  };
  const passes::Placement p = passes::place_graph(model, gi, order, fn);
  const std::set<std::string> host_ok = {"Shape", "ConstantOfShape"};
  std::set<std::string> on_host;
  // Integer step arithmetic (the optimizer's step count + 1) stays on the host too.
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (p.node_device[i] == passes::Device::kHost &&
        g.tensors[static_cast<size_t>(g.nodes[i].outputs[0])].dtype == DType::kF32)
      on_host.insert(g.nodes[i].op);
  for (const auto& op : on_host) {
    INFO(op << " runs on the host");
    CHECK(host_ok.count(op) == 1);
  }
  INFO(p.device_nodes << " of " << g.nodes.size() << " nodes on the device, " << p.copies << " copies");
  CHECK(p.device_nodes + 8 >= g.nodes.size());
}

// Run in a process of its own ("[cuda_nodevice]", CTest sets CUDA_VISIBLE_DEVICES= too): the
// variable hides every GPU only if it is set before the process's first CUDA call.
TEST_CASE("cuda: without a device, creating the backend says so with the driver's text", "[cuda_nodevice]") {
  setenv("CUDA_VISIBLE_DEVICES", "", 1);  // no device, even on a GPU machine
  auto b = exec::create_device_backend("cuda");
  INFO((b.ok() ? "created on " + std::string((*b)->name()) : b.status().to_string()));
  REQUIRE(!b.ok());
  CHECK(b.status().code() == StatusCode::kBackend);
  CHECK(b.status().message().rfind("no CUDA device: ", 0) == 0);
  CHECK(b.status().message().size() > std::string("no CUDA device: ").size() + 10);
}

TEST_CASE("cuda: cuBLAS loads at run time with every entry point the backend calls", "[cuda_host]") {
  // Loading the library needs no GPU or driver; this is what create() does before cublasCreate.
  auto api = cuda::cublas_api();
  REQUIRE(api.ok());
  const cuda::CublasApi& a = **api;
  CHECK(a.create != nullptr);
  CHECK(a.destroy != nullptr);
  CHECK(a.set_stream != nullptr);
  CHECK(a.set_math_mode != nullptr);
  CHECK(a.sgemm_strided_batched != nullptr);
  CHECK(std::string(a.status_name(CUBLAS_STATUS_NOT_INITIALIZED)) == "CUBLAS_STATUS_NOT_INITIALIZED");
  CHECK(std::string(a.status_string(CUBLAS_STATUS_SUCCESS)).size() > 0);
  // Without a context cuBLAS reports an error rather than crashing: the table calls the library.
  CHECK(a.set_stream(nullptr, nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
}
