// tsr::generate (tessera/generate.h) on a counting "decoder" built with the GraphBuilder, whose
// next token is the sum of every token seen so far (prompt, generated, current) mod 1000: it
// reads that sum from its present cache, so the ids are right only if each step's present
// tensors come back as the next step's pasts. The comparison with onnxruntime on a real decoder
// is tests/transformers/check_generate.py.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "core/ops/graph_builder.h"
#include "core/passes/verify_model.h"
#include "tessera/generate.h"

namespace tsr {
namespace {

constexpr int64_t kVocab = 1000;

// input_ids i64 [1, S], past_key_values.0.key f32 [1, 2, P, 3] -> logits [1, 1, vocab] with its
// maximum at (sum of present) / 6 mod vocab, present.0.key = Concat(past, ids broadcast) on axis 2.
std::unique_ptr<Session> counting_decoder(const char* present_name = "present.0.key") {
  ir::Model m;
  ops::GraphBuilder b(m);
  const auto ids = b.input("input_ids", DType::kI64, {1, -1});
  const auto past = b.input("past_key_values.0.key", DType::kF32, {1, 2, -1, 3});
  const auto i64s = [&](std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return b.constant(Tensor::from<int64_t>({n}, v));
  };
  auto f = b.op("Cast", {ids}, {ir::Attribute::make_int("to", static_cast<int64_t>(DType::kF32))});
  f = b.op("Reshape", {f, i64s({1, 1, -1, 1})});
  f = b.op("Expand", {f, i64s({1, 2, 1, 3})});
  const auto present = b.op("Concat", {past, f}, {ir::Attribute::make_int("axis", 2)});
  auto total = b.op("ReduceSum", {present}, {ir::Attribute::make_int("keepdims", 0)});
  total = b.op("Div", {total, b.constant(Tensor::scalar(6.0f))});
  total = b.op("Mod", {total, b.constant(Tensor::scalar(static_cast<float>(kVocab)))}, {ir::Attribute::make_int("fmod", 1)});
  std::vector<float> vocab(kVocab);
  for (int64_t i = 0; i < kVocab; ++i) vocab[static_cast<size_t>(i)] = static_cast<float>(i);
  auto d = b.op("Sub", {b.constant(Tensor::from<float>({kVocab}, vocab)), total});
  auto logits = b.op("Neg", {b.op("Mul", {d, d})});
  b.output(b.op("Reshape", {logits, i64s({1, 1, kVocab})}), "logits");
  b.output(present, present_name);
  REQUIRE(b.status().ok());
  REQUIRE(passes::verify_model(m).ok());
  auto s = Session::create(std::make_shared<ir::Model>(std::move(m)));
  REQUIRE(s.ok());
  return std::move(s).value();
}

// The ids the counting decoder generates greedily after `prompt`.
std::vector<int64_t> counting(std::vector<int64_t> prompt, size_t n) {
  int64_t sum = 0;
  for (int64_t t : prompt) sum += t;
  std::vector<int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(sum % kVocab);
    sum += out.back();
  }
  return out;
}

TEST_CASE("generate: greedy ids follow the cache passed from step to step", "[generate]") {
  auto session = counting_decoder();
  GenerateOptions o;
  o.max_new_tokens = 12;
  std::vector<int64_t> seen;
  auto ids = generate(*session, {1, 2, 3}, o, [&](int64_t id) {
    seen.push_back(id);
    return true;
  });
  REQUIRE(ids.ok());
  CHECK(*ids == counting({1, 2, 3}, 12));  // 6 12 24 48 96 192 384 768 536 72 144 288
  CHECK(seen == *ids);
}

TEST_CASE("generate: the callback, stop ids and max_new_tokens end the loop", "[generate]") {
  auto session = counting_decoder();
  const std::vector<int64_t> all = counting({5}, 10);
  GenerateOptions o;
  o.max_new_tokens = 10;
  size_t calls = 0;
  auto stopped = generate(*session, {5}, o, [&](int64_t) { return ++calls < 3; });
  REQUIRE(stopped.ok());
  CHECK(*stopped == std::vector<int64_t>(all.begin(), all.begin() + 3));
  o.stop_tokens = {all[4], 999};
  auto at_stop = generate(*session, {5}, o);
  REQUIRE(at_stop.ok());
  CHECK(*at_stop == std::vector<int64_t>(all.begin(), all.begin() + 5));
  o.max_new_tokens = 0;
  auto none = generate(*session, {5}, o);
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("generate: top-k draws are reproducible per seed, top_k 1 is greedy", "[generate]") {
  auto session = counting_decoder();
  GenerateOptions o;
  o.max_new_tokens = 8;
  o.top_k = 1;
  auto greedy = generate(*session, {7}, o);
  REQUIRE(greedy.ok());
  CHECK(*greedy == counting({7}, 8));
  o.top_k = 50;
  o.temperature = 1e4f;  // logits -(v - target)^2 / 1e4: the 50 nearest tokens are all likely
  o.seed = 11;
  auto a = generate(*session, {7}, o);
  auto b = generate(*session, {7}, o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
  CHECK(*a != counting({7}, 8));
  o.seed = 12;
  auto c = generate(*session, {7}, o);
  REQUIRE(c.ok());
  CHECK(*c != *a);
}

TEST_CASE("generate: errors name the option or the missing input/output", "[generate]") {
  auto session = counting_decoder();
  const auto code = [&](const std::vector<int64_t>& prompt, const GenerateOptions& o) {
    auto r = generate(*session, prompt, o);
    return r.ok() ? StatusCode::kOk : r.status().code();
  };
  GenerateOptions o;
  CHECK(code({}, o) == StatusCode::kInvalidArgument);
  o.temperature = 0;
  o.top_k = 5;
  CHECK(code({1}, o) == StatusCode::kInvalidArgument);
  o = {};
  o.top_k = -1;
  CHECK(code({1}, o) == StatusCode::kInvalidArgument);
  o = {};
  o.logits = "scores";
  auto r = generate(*session, {1}, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK(r.status().message() == "generate: the model has no output \"scores\" (outputs: logits, present.0.key)");

  auto renamed = counting_decoder("cache.0.key");
  auto p = generate(*renamed, {1}, {});
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == StatusCode::kNotFound);
  CHECK(p.status().message() ==
        "generate: past input \"past_key_values.0.key\" has no present output \"present.0.key\" (outputs: logits, cache.0.key)");
  GenerateOptions named;
  named.present_prefix = "cache.";
  named.past_prefix = "past_key_values.";
  named.max_new_tokens = 4;
  auto ok = generate(*renamed, {1}, named);
  REQUIRE(ok.ok());
  CHECK(*ok == counting({1}, 4));
}

}  // namespace
}  // namespace tsr
