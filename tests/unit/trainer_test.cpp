// tsr::Trainer and tsr::prepare_training (tessera/trainer.h): trainable/frozen patterns, loss
// going down, eval_step against train_step, the learning rate variable, checkpoints resuming
// bit-identically, load_checkpoint's errors, export_inference against infer, name_matches.
// The optimizer arithmetic itself is checked against torch.optim in training_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "tessera/trainer.h"
#include "core/ops/graph_builder.h"

using namespace tsr;
using ops::GraphBuilder;
using ops::Value;

namespace {

constexpr int64_t kBatch = 8, kIn = 4, kHidden = 6, kClasses = 3;

Tensor random_tensor(const Shape& shape, std::mt19937_64& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return Tensor::from<float>(shape, v);
}

// logits = Relu(X @ fc.w + fc.b) @ head.w + head.b; X f32 [8, 4], logits f32 [8, 3].
Model classifier() {
  auto m = std::make_shared<ir::Model>();
  GraphBuilder b(*m);
  std::mt19937_64 rng(7);
  const Value x = b.input("X", DType::kF32, {kBatch, kIn});
  const Value w1 = b.constant(random_tensor({kIn, kHidden}, rng, 0.5f), "fc.w");
  const Value b1 = b.constant(random_tensor({kHidden}, rng, 0.5f), "fc.b");
  const Value w2 = b.constant(random_tensor({kHidden, kClasses}, rng, 0.4f), "head.w");
  const Value b2 = b.constant(random_tensor({kClasses}, rng, 0.4f), "head.b");
  const Value h = b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w1}), b1})});
  b.output(b.op("Add", {b.op("MatMul", {h, w2}), b2}), "logits");
  REQUIRE(b.status().ok());
  return Model(std::move(m));
}

// A learnable batch: the class is the index of the largest of the first three features.
struct Batch {
  Tensor x, labels;
};
Batch batch(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch out{random_tensor({kBatch, kIn}, rng, 1.0f), Tensor()};
  std::vector<int64_t> labels(kBatch);
  const float* x = out.x.data<float>();
  for (int64_t i = 0; i < kBatch; ++i)
    labels[static_cast<size_t>(i)] = static_cast<int64_t>(std::max_element(x + i * kIn, x + i * kIn + 3) - (x + i * kIn));
  out.labels = Tensor::from<int64_t>({kBatch}, labels);
  return out;
}

template <typename T>
T value_of(Expected<T> e) {
  INFO(e.status().to_string());
  REQUIRE(e.ok());
  return std::move(e).value();
}

void require_ok(const Status& s) {
  INFO(s.to_string());
  REQUIRE(s.ok());
}

Model prepared(TrainingSpec spec = {}) { return value_of(prepare_training(classifier(), spec)); }

std::unique_ptr<Trainer> trainer_of(const Model& m) {
  SessionOptions o;
  o.num_threads = 1;
  return value_of(Trainer::create(m, o));
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

const Tensor& variable(const Model& checkpoint, const std::string& name) {
  for (const ir::Variable& v : checkpoint.graph().variables)
    if (v.name == name) return v.value;
  FAIL("no variable " << name);
  throw 0;
}

const Tensor& constant(const Model& m, const std::string& name) {
  for (const ir::TensorInfo& t : m.graph().main().tensors)
    if (t.name == name && t.constant.defined()) return t.constant;
  FAIL("no constant " << name);
  throw 0;
}

}  // namespace

TEST_CASE("name_matches: whole-name glob with * and ?", "[trainer]") {
  CHECK(name_matches("head.*", "head.w"));
  CHECK(name_matches("*", ""));
  CHECK(name_matches("*.w", "fc.w"));
  CHECK(name_matches("fc.?", "fc.b"));
  CHECK(name_matches("*a*b*", "xxaYYbzz"));
  CHECK(name_matches("a**b", "ab"));
  CHECK_FALSE(name_matches("head", "head.w"));  // whole name, not a prefix
  CHECK_FALSE(name_matches("fc.?", "fc.ww"));
  CHECK_FALSE(name_matches("*.w", "fc.b"));
  CHECK_FALSE(name_matches("?", ""));
  CHECK_FALSE(name_matches("*a*b", "xxaYYbzz"));
}

TEST_CASE("prepare_training: trainable and frozen patterns pick the weights a step changes", "[trainer]") {
  TrainingSpec spec;
  spec.optimizer = "sgd";
  spec.learning_rate = 0.1;
  spec.trainable = {"*.w", "head.*"};
  spec.frozen = {"fc.*"};
  const Model m = prepared(spec);
  auto t = trainer_of(m);
  CHECK(t->weights() == std::vector<std::string>{"head.w", "head.b"});
  REQUIRE(t->inputs().size() == 1);
  CHECK(t->inputs()[0].name == "X");
  CHECK(t->labels().dtype == DType::kI64);
  const Batch d = batch(1);
  value_of(t->step({d.x}, d.labels));
  CHECK(t->step_count() == 1);
  const Model after = value_of(t->export_inference());
  const Model before = classifier();
  for (const char* name : {"fc.w", "fc.b"}) {
    INFO(name);
    CHECK(same_bytes(constant(after, name), constant(before, name)));
  }
  for (const char* name : {"head.w", "head.b"}) {
    INFO(name);
    CHECK_FALSE(same_bytes(constant(after, name), constant(before, name)));
  }
}

TEST_CASE("prepare_training errors name the pattern, loss or optimizer", "[trainer]") {
  TrainingSpec spec;
  spec.trainable = {"head.*", "encoder.*"};
  spec.frozen = {"nothing?"};
  auto r = prepare_training(classifier(), spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(r.status().message().find("trainable \"encoder.*\"") != std::string::npos);
  CHECK(r.status().message().find("frozen \"nothing?\"") != std::string::npos);
  CHECK(r.status().message().find("head.*") == std::string::npos);
  spec = {};
  spec.frozen = {"*"};
  r = prepare_training(classifier(), spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("no weight to train") != std::string::npos);
  spec = {};
  spec.optimizer = "lbfgs";
  r = prepare_training(classifier(), spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("lbfgs") != std::string::npos);
  // A training model is not an inference model to prepare again.
  r = prepare_training(prepared(), {});
  CHECK_FALSE(r.ok());
  // And an inference model is not a training model.
  auto c = Trainer::create(classifier());
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::kNotFound);
  CHECK(c.status().message().find("train_step") != std::string::npos);
}

TEST_CASE("Trainer::step lowers the loss, eval_step gives train_step's loss before the update", "[trainer]") {
  TrainingSpec spec;
  spec.optimizer = "adam";
  spec.learning_rate = 0.05;
  auto t = trainer_of(prepared(spec));
  const Batch d = batch(3);
  const EvalResult first = value_of(t->eval({d.x}, d.labels));
  REQUIRE(first.prediction.shape() == Shape{kBatch, kClasses});
  // eval does not update: twice the same, then the step reports exactly that loss.
  CHECK(value_of(t->eval({d.x}, d.labels)).loss == first.loss);
  CHECK(t->step_count() == 0);
  const float step_loss = value_of(t->step({d.x}, d.labels));
  CHECK(step_loss == first.loss);
  // The prediction is infer's output on the same weights.
  float last = step_loss;
  for (int k = 0; k < 40; ++k) last = value_of(t->step({d.x}, d.labels));
  CHECK(t->step_count() == 41);
  const EvalResult now = value_of(t->eval({d.x}, d.labels));
  CHECK(now.loss < 0.5f * first.loss);
  CHECK(now.loss <= last);
  const std::vector<Tensor> inferred = value_of(t->infer({d.x}));
  CHECK(same_bytes(inferred.at(0), now.prediction));
  // step_with_prediction: the same loss and prediction as eval on the weights before its update.
  const EvalResult stepped = value_of(t->step_with_prediction({d.x}, d.labels));
  CHECK(stepped.loss == now.loss);
  CHECK(same_bytes(stepped.prediction, now.prediction));
  CHECK(t->step_count() == 42);
}

TEST_CASE("Trainer::set_learning_rate: 0 keeps the weights, bad rates are refused", "[trainer]") {
  TrainingSpec spec;
  spec.optimizer = "sgd";
  spec.learning_rate = 0.1;
  spec.momentum = 0.9;
  auto t = trainer_of(prepared(spec));
  CHECK(t->learning_rate() == Approx(0.1f));
  const Batch d = batch(4);
  value_of(t->step({d.x}, d.labels));
  const Model before = t->checkpoint();
  require_ok(t->set_learning_rate(0.0f));
  CHECK(t->learning_rate() == 0.0f);
  value_of(t->step({d.x}, d.labels));  // momentum buffer moves, weights must not
  const Model after = t->checkpoint();
  for (const std::string& w : t->weights()) {
    INFO(w);
    CHECK(same_bytes(variable(after, w), variable(before, w)));
  }
  CHECK(t->set_learning_rate(NAN).code() == StatusCode::kInvalidArgument);
  CHECK(t->set_learning_rate(-1.0f).code() == StatusCode::kInvalidArgument);
  CHECK(t->learning_rate() == 0.0f);
  require_ok(t->set_learning_rate(0.1f));
  value_of(t->step({d.x}, d.labels));
  CHECK_FALSE(same_bytes(variable(t->checkpoint(), "head.w"), variable(before, "head.w")));
}

TEST_CASE("Trainer: a checkpoint resumes bit-identically to an uninterrupted run", "[trainer]") {
  TrainingSpec spec;
  spec.optimizer = "adamw";
  spec.learning_rate = 0.01;
  spec.weight_decay = 0.01;
  const Model m = prepared(spec);
  auto straight = trainer_of(m);
  auto first = trainer_of(m);
  for (uint64_t k = 0; k < 3; ++k) {
    const Batch d = batch(10 + k);
    CHECK(value_of(straight->step({d.x}, d.labels)) == value_of(first->step({d.x}, d.labels)));
  }
  // Through bytes, as a file would go: a fresh Trainer from the checkpoint.
  const std::vector<uint8_t> bytes = value_of(first->checkpoint().serialize());
  first.reset();
  auto resumed = trainer_of(value_of(Model::load_bytes(bytes.data(), bytes.size(), "ckpt.tsr")));
  CHECK(resumed->step_count() == 3);
  for (uint64_t k = 3; k < 6; ++k) {
    const Batch d = batch(10 + k);
    CHECK(value_of(straight->step({d.x}, d.labels)) == value_of(resumed->step({d.x}, d.labels)));
  }
  const Model a = straight->checkpoint(), b = resumed->checkpoint();
  REQUIRE(a.graph().variables.size() == b.graph().variables.size());
  for (const ir::Variable& v : a.graph().variables) {
    INFO(v.name);
    CHECK(same_bytes(v.value, variable(b, v.name)));
  }
  // load_checkpoint into a trainer that trained elsewhere: the same state again.
  auto other = trainer_of(m);
  require_ok(other->load_checkpoint(a));
  CHECK(other->step_count() == 6);
  const Batch d = batch(99);
  CHECK(value_of(other->step({d.x}, d.labels)) == value_of(straight->step({d.x}, d.labels)));
}

TEST_CASE("Trainer::load_checkpoint mismatches are errors that change nothing", "[trainer]") {
  TrainingSpec adam;
  auto t = trainer_of(prepared(adam));
  const Batch d = batch(5);
  value_of(t->step({d.x}, d.labels));
  const Model before = t->checkpoint();
  // Another optimizer: other state variables (m/v vs momentum), named.
  TrainingSpec sgd;
  sgd.optimizer = "sgd";
  sgd.momentum = 0.9;
  Status s = t->load_checkpoint(prepared(sgd));
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("does not match") != std::string::npos);
  // Fewer trainable weights: the missing ones named.
  TrainingSpec head = adam;
  head.trainable = {"head.*"};
  s = t->load_checkpoint(prepared(head));
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("lacks") != std::string::npos);
  CHECK(s.message().find("\"fc.w\"") != std::string::npos);
  // Same names, one variable of another shape: named, and nothing else was replaced first.
  auto other = std::make_shared<ir::Model>(prepared(adam).graph());
  for (ir::Variable& v : other->variables) {
    if (v.name == "train.step") v.value = Tensor::scalar<int64_t>(1000);
    if (v.name == "head.w") v.value = Tensor::from<float>({1}, {1.0f});
  }
  s = t->load_checkpoint(Model(other));
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("\"head.w\"") != std::string::npos);
  CHECK(t->load_checkpoint(Model()).code() == StatusCode::kInvalidArgument);
  const Model after = t->checkpoint();
  CHECK(t->step_count() == 1);
  for (const ir::Variable& v : before.graph().variables) {
    INFO(v.name);
    CHECK(same_bytes(v.value, variable(after, v.name)));
  }
}

TEST_CASE("Trainer: bad inputs and labels are named and update nothing", "[trainer]") {
  auto t = trainer_of(prepared());
  const Batch d = batch(6);
  auto r = t->step({d.x}, Tensor::from<float>({kBatch}, std::vector<float>(kBatch, 0.0f)));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  r = t->step({}, d.labels);
  REQUIRE_FALSE(r.ok());
  r = t->step({d.x, d.x}, d.labels);
  REQUIRE_FALSE(r.ok());
  CHECK(t->step_count() == 0);
}

TEST_CASE("Trainer::export_inference runs and equals infer", "[trainer]") {
  TrainingSpec spec;
  spec.optimizer = "sgd";
  spec.learning_rate = 0.2;
  auto t = trainer_of(prepared(spec));
  for (uint64_t k = 0; k < 4; ++k) {
    const Batch d = batch(20 + k);
    value_of(t->step({d.x}, d.labels));
  }
  const Model exported = value_of(t->export_inference());
  CHECK(exported.graph().variables.empty());
  const std::vector<uint8_t> bytes = value_of(exported.serialize());
  const Model loaded = value_of(Model::load_bytes(bytes.data(), bytes.size(), "tuned.tsr"));
  SessionOptions o;
  o.num_threads = 1;
  auto s = value_of(Session::create(loaded, o));
  const Batch d = batch(30);
  const std::vector<Tensor> got = value_of(s->run({d.x}));
  const std::vector<Tensor> want = value_of(t->infer({d.x}));
  REQUIRE(got.size() == want.size());
  CHECK(same_bytes(got.at(0), want.at(0)));
  // And the exported model is not the untrained one.
  auto untrained = value_of(Session::create(classifier(), o));
  CHECK_FALSE(same_bytes(value_of(untrained->run({d.x})).at(0), got.at(0)));
}
