// Training models (core/passes/training.h): the train_step graph's optimizer updates against
// torch.optim on the same model and data (tests/autodiff/torch_optimizer_reference.py wrote the
// references), variables persisting in the Session, checkpoint save/load, and export.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/io/npy.h"
#include "core/io/tsr_io.h"
#include "core/passes/verify_model.h"
#include "core/ops/graph_builder.h"
#include "core/passes/training.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"

using namespace tsr;
using ir::Attribute;
using ops::GraphBuilder;
using ops::Value;

namespace {

const std::string kRef = std::string(TSR_SOURCE_DIR) + "/tests/autodiff/reference/optim/";

Tensor optim_ref(const std::string& name) {
  auto t = io::read_npy_file(kRef + name + ".npy");
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  return *t;
}

// pred = X * w + b with w, b constants named "w" and "b".
ir::Model linear_model() {
  ir::Model m;
  GraphBuilder b(m);
  const Value x = b.input("X", DType::kF32, {4, 3});
  const Value w = b.constant(optim_ref("w0"), "w");
  const Value bias = b.constant(optim_ref("b0"), "b");
  b.output(b.op("Add", {b.op("Mul", {x, w}), bias}), "pred");
  REQUIRE(b.status().ok());
  return m;
}

std::unique_ptr<Session> session_of(ir::Model m) {
  auto v = passes::verify_model(m);
  INFO(v.to_string());
  REQUIRE(v.ok());
  auto s = Session::create(std::make_shared<ir::Model>(m));
  INFO(s.status().to_string());
  REQUIRE(s.ok());
  return std::move(s).value();
}

void require_close(const Tensor& got, const Tensor& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    INFO("element " << i << ": got " << got.scalar_f64(i) << ", want " << want.scalar_f64(i));
    CHECK(std::abs(got.scalar_f64(i) - want.scalar_f64(i)) <= tol * (1 + std::abs(want.scalar_f64(i))));
  }
}

passes::TrainingOptions options_for(const std::string& name) {
  passes::TrainingOptions o;
  o.loss = "mse";
  if (name == "sgd" || name == "sgd_wd" || name == "momentum" || name == "nesterov") {
    o.optimizer = "sgd";
    o.lr = 0.1;
    o.weight_decay = name == "sgd_wd" ? 0.05 : name == "nesterov" ? 0.01 : 0.0;
    o.momentum = name == "momentum" || name == "nesterov" ? 0.9 : 0.0;
    o.nesterov = name == "nesterov";
  } else {
    o.optimizer = name;
    o.lr = 0.05;
    o.weight_decay = name == "adamw" ? 0.1 : 0.0;
  }
  return o;
}

}  // namespace

TEST_CASE("train_step matches torch.optim for SGD, momentum, Nesterov, Adam and AdamW", "[training]") {
  for (const std::string name : {"sgd", "sgd_wd", "momentum", "nesterov", "adam", "adamw"}) {
    INFO("optimizer config " << name);
    auto tm = passes::make_training_model(linear_model(), options_for(name));
    INFO(tm.status().to_string());
    REQUIRE(tm.ok());
    auto s = session_of(*tm);
    const Tensor losses = optim_ref(name + "_loss");
    for (int step = 0; step < 5; ++step) {
      auto out = s->run_signature("train_step", {optim_ref("X"), optim_ref("Y")});
      INFO(out.status().to_string());
      REQUIRE(out.ok());
      REQUIRE(out->size() == 2);  // loss, prediction
      CHECK(std::abs(out->at(0).scalar_f64() - losses.scalar_f64(step)) <= 1e-5 * (1 + losses.scalar_f64(step)));
    }
    require_close(*s->variable("w"), optim_ref(name + "_w"), 1e-5);
    require_close(*s->variable("b"), optim_ref(name + "_b"), 1e-5);
    CHECK(s->variable("train.step")->scalar_i64() == 5);
  }
}

TEST_CASE("a checkpoint resumes training exactly, export inlines the trained weights", "[training]") {
  auto tm = passes::make_training_model(linear_model(), options_for("adamw"));
  REQUIRE(tm.ok());
  // Two steps, checkpoint through a file, three more steps: the same as five steps in one go.
  auto s = session_of(*tm);
  for (int k = 0; k < 2; ++k) REQUIRE(s->run_signature("train_step", {optim_ref("X"), optim_ref("Y")}).ok());
  auto bytes = io::serialize_model(s->snapshot());
  REQUIRE(bytes.ok());
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(bytes).value());
  auto loaded = io::load_model_buffer(owner->data(), owner->size(), owner);
  INFO(loaded.status().to_string());
  REQUIRE(loaded.ok());
  REQUIRE(loaded->variables.size() == tm->variables.size());
  auto resumed = session_of(*loaded);
  CHECK(resumed->variable("train.step")->scalar_i64() == 2);
  for (int k = 0; k < 3; ++k) REQUIRE(resumed->run_signature("train_step", {optim_ref("X"), optim_ref("Y")}).ok());
  require_close(*resumed->variable("w"), optim_ref("adamw_w"), 1e-5);
  require_close(*resumed->variable("b"), optim_ref("adamw_b"), 1e-5);

  // The infer signature reads the session's current weights; export bakes them in.
  auto infer = resumed->run_signature("infer", {optim_ref("X")});
  REQUIRE(infer.ok());
  auto exported = passes::export_inference(resumed->snapshot());
  INFO(exported.status().to_string());
  REQUIRE(exported.ok());
  CHECK(exported->variables.empty());
  CHECK(exported->signatures.empty());
  CHECK(exported->graphs.size() == 1);
  auto es = session_of(*exported);
  auto pred = es->run({optim_ref("X")});
  REQUIRE(pred.ok());
  require_close(pred->at(0), infer->at(0), 0);
  // And the prediction is X * w + b with torch's trained weights.
  const Tensor X = optim_ref("X"), w = optim_ref("adamw_w"), b = optim_ref("adamw_b");
  for (int64_t i = 0; i < 12; ++i)
    CHECK(std::abs(pred->at(0).scalar_f64(i) - (X.scalar_f64(i) * w.scalar_f64(i % 3) + b.scalar_f64(0))) < 1e-5);
}

TEST_CASE("training-model errors name what is wrong", "[training]") {
  passes::TrainingOptions o;
  o.loss = "hinge";
  auto r = passes::make_training_model(linear_model(), o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("unknown loss \"hinge\"") != std::string::npos);
  o = options_for("adam");
  o.trainable = {"nope"};
  r = passes::make_training_model(linear_model(), o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("trainable \"nope\"") != std::string::npos);
  auto tm = passes::make_training_model(linear_model(), options_for("sgd"));
  REQUIRE(tm.ok());
  auto s = session_of(*tm);
  auto bad = s->run_signature("train_step", {optim_ref("X")});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("1 inputs given, it takes 2") != std::string::npos);
  CHECK(s->set_variable("w", Tensor::scalar(1.0f)).code() == StatusCode::kInvalidArgument);
  CHECK(s->set_variable("zzz", Tensor::scalar(1.0f)).code() == StatusCode::kNotFound);
  auto e = passes::export_inference(*tm, "serve");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().find("infer, train_step") != std::string::npos);
}

TEST_CASE("a node with omitted middle outputs keeps them omitted in train_step", "[training]") {
  // SkipSimplifiedLayerNormalization rejects a requested mean (output 1); the inlined forward
  // copy must request only the outputs the inference graph uses (y and input_skip_bias_sum).
  ir::Model m;
  GraphBuilder b(m);
  const Value x = b.input("X", DType::kF32, {4, 3});
  const Value gamma = b.constant(Tensor::from<float>({3}, {1.0f, 0.5f, 2.0f}), "gamma");
  const std::vector<Value> outs =
      b.op_n("com.microsoft::SkipSimplifiedLayerNormalization", {x, x, gamma}, {true, false, false, true});
  CHECK_FALSE(outs[1].valid());
  b.output(b.op("Add", {outs[0], outs[3]}), "pred");
  REQUIRE(b.status().ok());
  passes::TrainingOptions o = options_for("sgd");
  o.loss = "mse";
  auto tm = passes::make_training_model(m, o);
  INFO(tm.status().to_string());
  REQUIRE(tm.ok());
  auto s = session_of(*tm);
  const Tensor X = optim_ref("X");
  auto r = s->run_signature("train_step", {X, Tensor::from<float>({4, 3}, std::vector<float>(12, 0.0f))});
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  CHECK(std::isfinite(r->at(0).scalar_f64(0)));
}

// A BatchNormalization exported in training mode (PyTorch's TrainingMode.TRAINING): its running
// statistics are variables that train_step updates by ONNX's rule (running * momentum + batch *
// (1 - momentum), the batch's biased variance); infer, eval_step and the exported model normalize
// with them, in inference mode, as torch's eval() does.
TEST_CASE("training-mode BatchNormalization: train_step updates the running statistics, infer uses them", "[training]") {
  const std::vector<float> x = {0.5f, -1.0f, 2.0f, 1.5f, 0.0f, -0.5f, 3.0f, 1.0f, -2.0f, 0.25f, 0.75f, 1.25f,
                                -1.5f, 2.5f, 0.0f, 1.0f, 1.0f, -3.0f, 0.5f, 0.5f, 2.0f, -0.25f, 1.75f, 0.0f};
  const std::vector<float> mean0 = {0.1f, -0.2f}, var0 = {1.5f, 0.8f}, scale = {1.0f, 0.5f}, bias = {0.0f, 0.25f};
  ir::Model m;
  GraphBuilder b(m);
  const Value X = b.input("X", DType::kF32, {4, 2, 3});
  const std::vector<Value> bn = b.op_n(
      "BatchNormalization",
      {X, b.constant(Tensor::from<float>({2}, scale), "scale"), b.constant(Tensor::from<float>({2}, bias), "bias"),
       b.constant(Tensor::from<float>({2}, mean0), "mean"), b.constant(Tensor::from<float>({2}, var0), "var")},
      3, {Attribute::make_float("momentum", 0.9), Attribute::make_int("training_mode", 1)});
  b.output(bn[0], "pred");
  REQUIRE(b.status().ok());
  passes::TrainingOptions o = options_for("sgd");
  o.lr = 0.0;  // the weights stay: only the statistics move
  auto tm = passes::make_training_model(m, o);
  INFO(tm.status().to_string());
  REQUIRE(tm.ok());
  // The statistics are variables without gradients or optimizer state.
  std::vector<std::string> names;
  for (const auto& v : tm->variables) names.push_back(v.name);
  CHECK(std::count(names.begin(), names.end(), "mean") == 1);
  CHECK(std::count(names.begin(), names.end(), "var") == 1);
  CHECK(std::count(names.begin(), names.end(), "mean.velocity") == 0);

  auto s = session_of(*tm);
  const Tensor Xt = Tensor::from<float>({4, 2, 3}, x);
  const Tensor zeros = Tensor::from<float>({4, 2, 3}, std::vector<float>(24, 0.0f));
  for (int step = 0; step < 2; ++step) REQUIRE(s->run_signature("train_step", {Xt, zeros}).ok());
  std::vector<double> mean(mean0.begin(), mean0.end()), var(var0.begin(), var0.end());
  for (int step = 0; step < 2; ++step)
    for (int c = 0; c < 2; ++c) {
      double sum = 0, sq = 0;
      for (int n = 0; n < 4; ++n)
        for (int i = 0; i < 3; ++i) sum += x[static_cast<size_t>((n * 2 + c) * 3 + i)];
      const double mu = sum / 12;
      for (int n = 0; n < 4; ++n)
        for (int i = 0; i < 3; ++i) sq += std::pow(x[static_cast<size_t>((n * 2 + c) * 3 + i)] - mu, 2);
      mean[static_cast<size_t>(c)] = mean[static_cast<size_t>(c)] * 0.9 + mu * 0.1;
      var[static_cast<size_t>(c)] = var[static_cast<size_t>(c)] * 0.9 + sq / 12 * 0.1;
    }
  require_close(*s->variable("mean"), Tensor::from<float>({2}, {float(mean[0]), float(mean[1])}), 1e-6);
  require_close(*s->variable("var"), Tensor::from<float>({2}, {float(var[0]), float(var[1])}), 1e-6);

  // infer normalizes with the running statistics; so does the exported model, in inference mode.
  std::vector<float> want(24);
  for (size_t i = 0; i < 24; ++i) {
    const size_t c = (i / 3) % 2;
    want[i] = static_cast<float>((x[i] - mean[c]) / std::sqrt(var[c] + 1e-5) * scale[c] + bias[c]);
  }
  auto infer = s->run_signature("infer", {Xt});
  REQUIRE(infer.ok());
  require_close(infer->at(0), Tensor::from<float>({4, 2, 3}, want), 1e-5);
  auto exported = passes::export_inference(s->snapshot());
  REQUIRE(exported.ok());
  const ir::Node& n = exported->main().nodes.at(0);
  CHECK(n.op == "BatchNormalization");
  CHECK(n.attr_int("training_mode") == 0);
  CHECK(n.outputs.size() == 1);
  auto pred = session_of(*exported)->run({Xt});
  REQUIRE(pred.ok());
  require_close(pred->at(0), infer->at(0), 0);

  o.trainable = {"mean"};
  auto bad = passes::make_training_model(m, o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("running statistic") != std::string::npos);
}

// The f32 Adam and AdamW kernels run vectors of doubles over whole vectors and the scalar loop
// over the tail; the f64 kernels run the scalar loop alone. On the same (f32) values, 37
// elements (vectors and a tail), step 3 with weight decay terms, both give the same updates.
TEST_CASE("f32 Adam and AdamW (vector loops and tail) equal the f64 scalar loop", "[training]") {
  const int64_t n = 37;
  std::vector<float> x(n), g(n), m(n), v(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::sin(0.7f * float(i)), g[i] = std::cos(1.3f * float(i)) * 0.1f;
    m[i] = 0.01f * float(i % 5) - 0.02f, v[i] = 1e-4f * float(i % 7);
  }
  for (const char* op : {"Adam", "AdamW"}) {
    INFO(op);
    std::vector<Tensor> outs[2];
    for (int f64 = 0; f64 < 2; ++f64) {
      auto t = [&](const std::vector<float>& a) {
        if (!f64) return Tensor::from<float>({n}, a);
        return Tensor::from<double>({n}, std::vector<double>(a.begin(), a.end()));
      };
      ir::Node node;
      node.op = op;
      node.name = "opt";
      node.outputs = {0, 1, 2};
      if (std::string(op) == "Adam") node.attributes = {Attribute::make_float("norm_coefficient", 0.01),
                                                         Attribute::make_float("norm_coefficient_post", 0.001)};
      else node.attributes = {Attribute::make_float("weight_decay", 0.05)};
      const Tensor lr = f64 ? Tensor::from<double>({}, {0.01}) : Tensor::from<float>({}, {0.01f});
      auto built = ir::single_node_model(node, {{lr}, {Tensor::from<int64_t>({}, {3})}, {t(x)}, {t(g)}, {t(m)}, {t(v)}});
      REQUIRE(passes::infer_types(built.model).ok());
      auto s = session_of(built.model);
      auto r = s->run(built.feeds);
      INFO(r.status().to_string());
      REQUIRE(r.ok());
      outs[f64] = std::move(r).value();
    }
    for (size_t k = 0; k < 3; ++k)
      for (int64_t i = 0; i < n; ++i) {
        INFO("output " << k << " element " << i);
        CHECK(outs[0][k].scalar_f64(i) == Approx(static_cast<float>(outs[1][k].scalar_f64(i))).epsilon(1e-6).margin(1e-9));
      }
  }
}
