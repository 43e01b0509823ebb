// CPU kernels for StringNormalizer and TfIdfVectorizer (semantics: core/ops/families/text.cpp).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Status string_normalizer(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const std::string action = ctx.node().attr_string("case_change_action");
  const bool sensitive = ctx.node().attr_int("is_case_sensitive") != 0;
  std::set<std::string> stop;
  if (const ir::Attribute* a = ctx.node().attr("stopwords"))
    for (const auto& w : a->strings) stop.insert(sensitive ? w : ascii_case(w, false));
  std::vector<std::string> kept;
  const auto* in = x.data<std::string>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (stop.count(sensitive ? in[i] : ascii_case(in[i], false))) continue;
    kept.push_back(action == "NONE" ? in[i] : ascii_case(in[i], action == "UPPER"));
  }
  if (kept.empty()) kept.emplace_back();
  Shape shape = x.shape();
  shape.back() = static_cast<int64_t>(kept.size());
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0, DType::kString, shape));
  std::move(kept.begin(), kept.end(), y->mut_data<std::string>());
  return ok_status();
}

class TfIdfKernel final : public exec::Kernel {
 public:
  explicit TfIdfKernel(const ir::Node& node) {
    mode_ = node.attr_string("mode");
    min_n_ = node.attr_int("min_gram_length");
    max_n_ = node.attr_int("max_gram_length");
    max_skip_ = node.attr_int("max_skip_count");
    weights_ = node.attr_floats("weights");
    const auto counts = node.attr_ints("ngram_counts");
    const auto indexes = node.attr_ints("ngram_indexes");
    for (int64_t i : indexes) width_ = std::max(width_, i + 1);
    // The pool holds all 1-grams, then all 2-grams, ...; ngram_counts[n-1] is where n-grams start.
    const ir::Attribute* strings = node.attr("pool_strings");
    const auto ints = node.attr_ints("pool_int64s");
    const int64_t pool_size = strings ? static_cast<int64_t>(strings->strings.size()) : static_cast<int64_t>(ints.size());
    size_t next_index = 0;
    for (size_t level = 0; level < counts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1;
      const int64_t begin = counts[level];
      const int64_t end = level + 1 < counts.size() ? counts[level + 1] : pool_size;
      for (int64_t p = begin; p + n <= end; p += n) {
        std::vector<std::string> key;
        for (int64_t k = 0; k < n; ++k)
          key.push_back(strings ? strings->strings[static_cast<size_t>(p + k)] : std::to_string(ints[static_cast<size_t>(p + k)]));
        if (next_index < indexes.size()) pool_[key] = indexes[next_index];
        ++next_index;
      }
    }
  }

  Status run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, len = x.rank() == 2 ? x.dim(1) : x.numel();
    float* out = y->mut_data<float>();
    std::fill_n(out, y->numel(), 0.0f);
    auto token = [&](int64_t i) {
      return x.dtype() == DType::kString ? x.data<std::string>()[i] : std::to_string(x.scalar_i64(i));
    };
    std::vector<std::string> key;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = out + r * width_;
      for (int64_t n = min_n_; n <= max_n_; ++n)
        // 1-grams have no gaps: count them once, not once per skip.
        for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip_); ++skip)
          for (int64_t s = 0; s + (n - 1) * (skip + 1) < len; ++s) {
            key.clear();
            for (int64_t k = 0; k < n; ++k) key.push_back(token(r * len + s + k * (skip + 1)));
            auto it = pool_.find(key);
            if (it != pool_.end()) row[it->second] += 1.0f;
          }
      for (int64_t i = 0; i < width_; ++i) {
        const float w = static_cast<size_t>(i) < weights_.size() ? static_cast<float>(weights_[static_cast<size_t>(i)]) : 1.0f;
        if (mode_ == "IDF") row[i] = row[i] > 0 ? w : 0.0f;
        else if (mode_ == "TFIDF") row[i] *= w;
      }
    }
    return ok_status();
  }

 private:
  std::string mode_;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0, width_ = 0;
  std::vector<double> weights_;
  std::map<std::vector<std::string>, int64_t> pool_;
};

Expected<std::unique_ptr<exec::Kernel>> create_tfidf(const exec::KernelInit& init) {
  return std::unique_ptr<exec::Kernel>(new TfIdfKernel(init.node));
}

}  // namespace

void register_text_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("StringNormalizer") r.add_fn("StringNormalizer", {DType::kString}, string_normalizer);
  TSR_IF_SELECTED("TfIdfVectorizer") r.add("TfIdfVectorizer", {DType::kI32, DType::kI64, DType::kString}, &create_tfidf);
}

}  // namespace tsr::cpu
