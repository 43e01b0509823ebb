// tsr::generate (tessera/generate.h): the KV-cache decoding loop over Session::run.
#include "tessera/generate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "core/tensor/dtype.h"

namespace tsr {
namespace {

// What the loop feeds to one model input.
enum class Role : uint8_t { kIds, kPast, kMask, kPositions };

struct Feed {
  Role role = Role::kIds;
  DType dtype = DType::kUndefined;
  size_t present = 0;  // kPast: the output that becomes this input at the next step
  Shape empty;         // kPast: the step-0 value's shape (batch 1, sequence axis 0)
};

// The model's inputs and outputs resolved against the options, once per generate() call.
struct LoopPlan {
  std::vector<Feed> feeds;  // parallel to session.inputs()
  size_t logits = 0;        // output index
};

// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014): a
// tiny, fully specified stream, so that tessera-web's JS loop can produce the same numbers.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

std::string names(const std::vector<ValueInfo>& values) {
  std::string s;
  for (const ValueInfo& v : values) s += (s.empty() ? "" : ", ") + v.name;
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

Status check_options(const GenerateOptions& o, size_t prompt_size) {
  if (prompt_size == 0) return invalid_argument("generate: the prompt is empty (give at least one token id)");
  if (o.max_new_tokens < 0) return invalid_argument("generate: max_new_tokens is ", o.max_new_tokens, ", expected >= 0");
  if (o.top_k < 0) return invalid_argument("generate: top_k is ", o.top_k, ", expected 0 (greedy) or >= 1");
  if (!(std::isfinite(o.temperature) && o.temperature > 0))
    return invalid_argument("generate: temperature is ", o.temperature, ", expected a finite value > 0");
  return ok_status();
}

// The past/present prefixes: the options' or the first default pair that names an input.
std::pair<std::string, std::string> past_naming(const std::vector<ValueInfo>& inputs, const GenerateOptions& o) {
  if (!o.past_prefix.empty() || !o.present_prefix.empty()) return {o.past_prefix, o.present_prefix};
  static const std::pair<const char*, const char*> kDefaults[] = {{"past_key_values.", "present."}, {"past_", "present_"}};
  for (const auto& [past, present] : kDefaults)
    for (const ValueInfo& in : inputs)
      if (starts_with(in.name, past)) return {past, present};
  return {kDefaults[0].first, kDefaults[0].second};
}

// Batch (dim 0) 1 and the one dynamic dim after it (the sequence axis) 0; the rest as declared.
Expected<Shape> empty_past_shape(const ValueInfo& in) {
  const std::string where = str_cat("generate: past input \"", in.name, "\" ", in.str());
  if (in.kind != ValueKind::kTensor || !in.has_shape || in.shape.empty())
    return invalid_argument(where, ": expected a tensor of known rank >= 1");
  if (in.dtype != DType::kF32 && in.dtype != DType::kF16)
    return invalid_argument(where, ": dtype ", dtype_name(in.dtype), ", expected f32 or f16");
  Shape s = in.shape;
  if (s[0] != -1 && s[0] != 1) return invalid_argument(where, ": batch (dim 0) must be 1 or dynamic");
  s[0] = 1;
  int dynamic = 0;
  for (size_t d = 1; d < s.size(); ++d)
    if (s[d] < 0) {
      s[d] = 0;
      ++dynamic;
    }
  if (dynamic != 1)
    return invalid_argument(where, ": expected exactly one dynamic dim after the batch (the sequence axis), found ",
                            dynamic);
  return s;
}

Status check_int_input(const ValueInfo& in, std::string_view what) {
  if (in.kind == ValueKind::kTensor && (in.dtype == DType::kI64 || in.dtype == DType::kI32)) return ok_status();
  return invalid_argument("generate: ", what, " input ", in.str(), ": expected an i64 or i32 tensor");
}

Expected<LoopPlan> plan_loop(const Session& session, const GenerateOptions& o) {
  const std::vector<ValueInfo>& ins = session.inputs();
  const std::vector<ValueInfo>& outs = session.outputs();
  const auto [past_prefix, present_prefix] = past_naming(ins, o);
  LoopPlan plan;
  bool has_ids = false;
  bool has_past = false;
  for (const ValueInfo& in : ins) {
    Feed f;
    f.dtype = in.dtype;
    if (in.name == o.input_ids) {
      TSR_RETURN_IF_ERROR(check_int_input(in, "input_ids"));
      f.role = Role::kIds;
      has_ids = true;
    } else if (!o.attention_mask.empty() && in.name == o.attention_mask) {
      TSR_RETURN_IF_ERROR(check_int_input(in, "attention_mask"));
      f.role = Role::kMask;
    } else if (!o.position_ids.empty() && in.name == o.position_ids) {
      TSR_RETURN_IF_ERROR(check_int_input(in, "position_ids"));
      f.role = Role::kPositions;
    } else if (!past_prefix.empty() && starts_with(in.name, past_prefix)) {
      f.role = Role::kPast;
      TSR_ASSIGN_OR_RETURN(f.empty, empty_past_shape(in));
      const std::string present = present_prefix + in.name.substr(past_prefix.size());
      auto it = std::find_if(outs.begin(), outs.end(), [&](const ValueInfo& v) { return v.name == present; });
      if (it == outs.end())
        return not_found("generate: past input \"", in.name, "\" has no present output \"", present,
                         "\" (outputs: ", names(outs), ")");
      if (it->dtype != in.dtype)
        return invalid_argument("generate: present output ", it->str(), " and past input ", in.str(),
                                " differ in dtype");
      f.present = static_cast<size_t>(it - outs.begin());
      has_past = true;
    } else {
      return invalid_argument("generate: cannot feed model input ", in.str(), " (the loop feeds ", o.input_ids,
                              ", ", past_prefix, "*, ", o.attention_mask, " and ", o.position_ids, ")");
    }
    plan.feeds.push_back(std::move(f));
  }
  if (!has_ids) return not_found("generate: the model has no input \"", o.input_ids, "\" (inputs: ", names(ins), ")");
  if (!has_past)
    return not_found("generate: the model has no past input \"", past_prefix, "*\" (inputs: ", names(ins),
                     "); set GenerateOptions::past_prefix and present_prefix");
  auto it = std::find_if(outs.begin(), outs.end(), [&](const ValueInfo& v) { return v.name == o.logits; });
  if (it == outs.end()) return not_found("generate: the model has no output \"", o.logits, "\" (outputs: ", names(outs), ")");
  plan.logits = static_cast<size_t>(it - outs.begin());
  return plan;
}

// [1, values.size()] of dtype (i64 or i32).
Expected<Tensor> int_row(DType dtype, const std::vector<int64_t>& values) {
  const Shape shape{1, static_cast<int64_t>(values.size())};
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(dtype, shape));
  if (dtype == DType::kI64) {
    std::memcpy(t.mut_data<int64_t>(), values.data(), values.size() * sizeof(int64_t));
  } else {
    int32_t* p = t.mut_data<int32_t>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<int32_t>(values[i]);
  }
  return t;
}

// The token chosen from the last row of `logits` (see the header), `row` as scratch.
Expected<int64_t> choose(const Tensor& logits, const GenerateOptions& o, SplitMix64& rng, std::vector<float>& row,
                         std::vector<int32_t>& order, int64_t step) {
  const std::string where = str_cat("generate: step ", step, ": output \"", o.logits, "\"");
  if (logits.kind() != ValueKind::kTensor || logits.shape().empty() || logits.shape().back() <= 0)
    return invalid_argument(where, " ", shape_str(logits.shape()), ": expected [..., vocab] with vocab >= 1");
  const int64_t vocab = logits.shape().back();
  const int64_t offset = logits.numel() - vocab;  // the last row
  row.resize(static_cast<size_t>(vocab));
  if (logits.dtype() == DType::kF32) {
    std::memcpy(row.data(), logits.data<float>() + offset, row.size() * sizeof(float));
  } else if (logits.dtype() == DType::kF16) {
    const uint16_t* p = logits.data<uint16_t>() + offset;
    for (size_t i = 0; i < row.size(); ++i) row[i] = f16_to_f32(p[i]);
  } else {
    return invalid_argument(where, ": dtype ", dtype_name(logits.dtype()), ", expected f32 or f16");
  }
  for (size_t i = 0; i < row.size(); ++i)
    if (std::isnan(row[i])) return invalid_argument(where, ": logit of token ", i, " is NaN");
  if (o.top_k == 0) return static_cast<int64_t>(std::max_element(row.begin(), row.end()) - row.begin());

  const size_t k = static_cast<size_t>(std::min<int64_t>(o.top_k, vocab));
  order.resize(row.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](int32_t a, int32_t b) {
    return row[static_cast<size_t>(a)] > row[static_cast<size_t>(b)] || (row[static_cast<size_t>(a)] == row[static_cast<size_t>(b)] && a < b);
  });
  const double top = row[static_cast<size_t>(order[0])];
  double total = 0;
  for (size_t i = 0; i < k; ++i) total += std::exp((row[static_cast<size_t>(order[i])] - top) / o.temperature);
  const double target = rng.uniform() * total;
  double running = 0;
  for (size_t i = 0; i < k; ++i) {
    running += std::exp((row[static_cast<size_t>(order[i])] - top) / o.temperature);
    if (running > target) return static_cast<int64_t>(order[i]);
  }
  return static_cast<int64_t>(order[k - 1]);  // rounding left target at the total
}

}  // namespace

Expected<std::vector<int64_t>> generate(Session& session, const std::vector<int64_t>& prompt,
                                        const GenerateOptions& options, const TokenCallback& on_token) {
  TSR_RETURN_IF_ERROR(check_options(options, prompt.size()));
  TSR_ASSIGN_OR_RETURN(LoopPlan plan, plan_loop(session, options));
  SplitMix64 rng(options.seed);
  std::vector<Tensor> inputs(plan.feeds.size());
  std::vector<Tensor> outputs;
  std::vector<float> row;
  std::vector<int32_t> order;
  std::vector<int64_t> generated;
  std::vector<int64_t> scratch;
  int64_t past = 0;
  for (int64_t step = 0; static_cast<int64_t>(generated.size()) < options.max_new_tokens; ++step) {
    const std::vector<int64_t>& ids = step == 0 ? prompt : std::vector<int64_t>{generated.back()};
    const int64_t s = static_cast<int64_t>(ids.size());
    for (size_t k = 0; k < plan.feeds.size(); ++k) {
      const Feed& f = plan.feeds[k];
      switch (f.role) {
        case Role::kIds: {
          TSR_ASSIGN_OR_RETURN(inputs[k], int_row(f.dtype, ids));
          break;
        }
        case Role::kPast:
          if (step == 0) {
            TSR_ASSIGN_OR_RETURN(inputs[k], Tensor::empty(f.dtype, f.empty));
          } else {
            inputs[k] = std::move(outputs[f.present]);  // by handle: the present tensor is not copied
          }
          break;
        case Role::kMask: {
          scratch.assign(static_cast<size_t>(past + s), 1);
          TSR_ASSIGN_OR_RETURN(inputs[k], int_row(f.dtype, scratch));
          break;
        }
        case Role::kPositions: {
          scratch.resize(static_cast<size_t>(s));
          for (int64_t i = 0; i < s; ++i) scratch[static_cast<size_t>(i)] = past + i;
          TSR_ASSIGN_OR_RETURN(inputs[k], int_row(f.dtype, scratch));
          break;
        }
      }
    }
    if (Status st = session.run(inputs, &outputs); !st.ok())
      return st.with_context(str_cat("generate: step ", step, " (past length ", past, ", ", s, " new tokens)"));
    past += s;
    TSR_ASSIGN_OR_RETURN(int64_t token, choose(outputs[plan.logits], options, rng, row, order, step));
    generated.push_back(token);
    const bool go_on = on_token ? on_token(token) : true;
    if (!go_on || std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end())
      break;
  }
  return generated;
}

}  // namespace tsr
