#include "tools/train/architectures.h"

#include <cmath>
#include <random>

#include "core/ops/graph_builder.h"

namespace tsr::train {
namespace {

using ir::Attribute;
using ops::GraphBuilder;
using ops::Value;

class Init {
 public:
  explicit Init(uint64_t seed) : rng_(seed) {}
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)) of the given shape.
  Tensor uniform(const Shape& shape, int64_t fan_in) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    std::uniform_real_distribution<double> d(-bound, bound);
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& x : v) x = static_cast<float>(d(rng_));
    return Tensor::from<float>(shape, v);
  }

 private:
  std::mt19937_64 rng_;
};

Value conv(GraphBuilder& b, Init& init, Value x, const std::string& name, int64_t cin, int64_t cout, int64_t k, int64_t pad) {
  const int64_t fan_in = cin * k * k;
  const Value w = b.constant(init.uniform({cout, cin, k, k}, fan_in), name + ".weight");
  const Value bias = b.constant(init.uniform({cout}, fan_in), name + ".bias");
  return b.op("Conv", {x, w, bias},
              {Attribute::make_ints("kernel_shape", {k, k}), Attribute::make_ints("pads", {pad, pad, pad, pad})}, name);
}

Value linear(GraphBuilder& b, Init& init, Value x, const std::string& name, int64_t in, int64_t out) {
  const Value w = b.constant(init.uniform({out, in}, in), name + ".weight");
  const Value bias = b.constant(init.uniform({out}, in), name + ".bias");
  return b.op("Gemm", {x, w, bias}, {Attribute::make_int("transB", 1)}, name);
}

Value max_pool2(GraphBuilder& b, Value x, const std::string& name) {
  return b.op("MaxPool", {x}, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {2, 2})},
              name);
}

}  // namespace

std::vector<std::string> architecture_names() { return {"lenet", "mlp"}; }

Expected<ir::Model> build_architecture(const std::string& name, int64_t height, int64_t width, int64_t num_classes,
                                       uint64_t seed) {
  if (name != "lenet" && name != "mlp") return not_found("unknown architecture \"", name, "\" (known: lenet, mlp)");
  if (num_classes < 2) return invalid_argument("num_classes ", num_classes, " (expected >= 2)");
  ir::Model m;
  m.producer = "tessera train";
  GraphBuilder b(m, name);
  Init init(seed);
  const Value image = b.input("image", DType::kF32, {-1, 1, height, width});
  Value logits;
  if (name == "lenet") {
    if (height < 12 || width < 12) return invalid_argument("lenet needs images of at least 12 x 12, got ", height, " x ", width);
    Value x = max_pool2(b, b.op("Relu", {conv(b, init, image, "conv1", 1, 6, 5, 2)}), "pool1");
    x = max_pool2(b, b.op("Relu", {conv(b, init, x, "conv2", 6, 16, 5, 0)}), "pool2");
    const int64_t features = 16 * ((height / 2 - 4) / 2) * ((width / 2 - 4) / 2);
    x = b.op("Flatten", {x}, {Attribute::make_int("axis", 1)}, "flatten");
    x = b.op("Relu", {linear(b, init, x, "fc1", features, 120)});
    x = b.op("Relu", {linear(b, init, x, "fc2", 120, 84)});
    logits = linear(b, init, x, "fc3", 84, num_classes);
  } else {
    Value x = b.op("Flatten", {image}, {Attribute::make_int("axis", 1)}, "flatten");
    x = b.op("Relu", {linear(b, init, x, "fc1", height * width, 256)});
    logits = linear(b, init, x, "fc2", 256, num_classes);
  }
  b.output(logits, "logits");
  TSR_RETURN_IF_ERROR(b.status());
  return m;
}

}  // namespace tsr::train
