// Text ops (ONNX): StringNormalizer (opset 10) and TfIdfVectorizer (opset 9).
//
// StringNormalizer: strings [C] or [1, C] -> [C'] / [1, C'] with stopwords removed (compared
// case-insensitively unless is_case_sensitive) and case changed (NONE/LOWER/UPPER); if nothing
// is left the output is one empty string. Case mapping is ASCII-only.
// TfIdfVectorizer: token ids [N] or [B, N] (i32/i64, or strings with pool_strings) -> f32
// [max(ngram_indexes) + 1] / [B, ...] n-gram counts (TF), presence (IDF) or count * weight
// (TFIDF). Source: https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html
#include <algorithm>

#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_string_normalizer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kString}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 1, 2));
  const std::string action = ctx.node().attr_string("case_change_action");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.ir_error("attribute 'case_change_action' is \"", action, "\", expected NONE, LOWER or UPPER");
  const ValueType& x = ctx.input(0);
  if (x.has_shape && x.shape.size() == 2 && x.shape[0] >= 0 && x.shape[0] != 1)
    return ctx.arg_error("input[0]: shape ", shape_str(x.shape), ", a 2-D input must be [1, C]");
  Shape out = x.has_shape ? x.shape : Shape{-1};
  out.back() = -1;  // depends on how many stopwords are removed
  ctx.set_output(0, DType::kString, out);
  return ok_status();
}

Status infer_tfidf(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kI32, DType::kI64, DType::kString}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 1, 2));
  const auto& node = ctx.node();
  const std::string mode = node.attr_string("mode");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") return ctx.ir_error("attribute 'mode' must be TF, IDF or TFIDF");
  const int64_t lo = node.attr_int("min_gram_length"), hi = node.attr_int("max_gram_length");
  if (lo < 1 || hi < lo) return ctx.ir_error("need 1 <= min_gram_length <= max_gram_length");
  if (node.attr_int("max_skip_count") < 0) return ctx.ir_error("attribute 'max_skip_count' must be >= 0");
  const auto indexes = node.attr_ints("ngram_indexes");
  if (indexes.empty()) return ctx.ir_error("attribute 'ngram_indexes' is required");
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0) return ctx.ir_error("attribute 'ngram_indexes' has a negative index ", i);
    width = std::max(width, i + 1);
  }
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) ctx.set_output_unknown_shape(0, DType::kF32);
  else if (x.shape.size() == 1) ctx.set_output(0, DType::kF32, {width});
  else ctx.set_output(0, DType::kF32, {x.shape[0], width});
  return ok_status();
}

}  // namespace

void register_text_ops(OpRegistry& r) {
  TSR_IF_SELECTED("StringNormalizer") r.add(OpDef{"StringNormalizer", "", 10, 1, 1, 1, 1,
              {string_attr("case_change_action", "NONE"), int_attr("is_case_sensitive", 0),
               {"locale", AttrKind::kString}, {"stopwords", AttrKind::kStrings}},
              infer_string_normalizer, "Removes stopwords and changes the case of strings"});
  TSR_IF_SELECTED("TfIdfVectorizer") r.add(OpDef{"TfIdfVectorizer", "", 9, 1, 1, 1, 1,
              {{"max_gram_length", AttrKind::kInt, true}, {"max_skip_count", AttrKind::kInt, true},
               {"min_gram_length", AttrKind::kInt, true}, {"mode", AttrKind::kString, true},
               {"ngram_counts", AttrKind::kInts, true}, {"ngram_indexes", AttrKind::kInts, true},
               {"pool_int64s", AttrKind::kInts}, {"pool_strings", AttrKind::kStrings}, {"weights", AttrKind::kFloats}},
              infer_tfidf, "Counts pooled n-grams (with skips) into a TF / IDF / TF-IDF vector"});
}

}  // namespace tsr::ops
