#include "core/ops/op_def.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace tsr::ops {

bool ValueType::fully_known() const {
  if (kind != ValueKind::kTensor || dtype == DType::kUndefined || !has_shape) return false;
  for (int64_t d : shape)
    if (d < 0) return false;
  return true;
}

std::string ValueType::str() const {
  const std::string t = str_cat(dtype_name(dtype), has_shape ? shape_str(shape) : std::string("[*]"));
  if (kind == ValueKind::kSequence) return "seq(" + t + ")";
  if (kind == ValueKind::kNone) return "none";
  return t;
}

InferContext::InferContext(const ir::Node& node, const std::string& place, const std::vector<ValueType>& inputs,
                           const std::vector<const Tensor*>& values, bool runtime)
    : node_(node), place_(place), inputs_(inputs), values_(values), outputs_(own_outputs_), runtime_(runtime) {
  outputs_.resize(node.outputs.size());
}

InferContext::InferContext(const ir::Node& node, const std::string& place, const std::vector<ValueType>& inputs,
                           const std::vector<const Tensor*>& values, bool runtime, std::vector<ValueType>& outputs)
    : node_(node), place_(place), inputs_(inputs), values_(values), outputs_(outputs), runtime_(runtime) {
  outputs_.resize(node.outputs.size());
  for (ValueType& t : outputs_) t = ValueType{};
}

Status InferContext::require_dtype(size_t i, std::initializer_list<DType> allowed) const {
  if (!has_input(i) || inputs_[i].dtype == DType::kUndefined) return ok_status();
  for (DType d : allowed)
    if (d == inputs_[i].dtype) return ok_status();
  std::string list;
  for (DType d : allowed) list += str_cat(list.empty() ? "" : ", ", dtype_name(d));
  return ir_error("input[", i, "]: dtype ", dtype_name(inputs_[i].dtype), ", expected one of {", list, "}");
}

Status InferContext::require_same_dtype(size_t i, size_t j) const {
  if (!has_input(i) || !has_input(j)) return ok_status();
  const DType a = inputs_[i].dtype, b = inputs_[j].dtype;
  if (a == DType::kUndefined || b == DType::kUndefined || a == b) return ok_status();
  return ir_error("input[", j, "]: dtype ", dtype_name(b), ", expected ", dtype_name(a),
                  " (the dtype of input[", i, "])");
}

Status InferContext::require_rank(size_t i, int64_t lo, int64_t hi) const {
  if (!has_input(i) || !inputs_[i].has_shape) return ok_status();
  const auto r = static_cast<int64_t>(inputs_[i].shape.size());
  if (r < lo || r > hi) {
    if (lo == hi) return arg_error("input[", i, "]: rank ", r, ", expected ", lo);
    return arg_error("input[", i, "]: rank ", r, ", expected ", lo, "..", hi);
  }
  return ok_status();
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_all_ops(*r);
    register_all_grads(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(OpDef def) {
  // Registration is fixed code run once: a duplicate is a bug that would silently replace an op.
  if (defs_.count(def.name)) {
    std::fprintf(stderr, "tessera: op '%s' registered twice\n", def.name.c_str());
    std::abort();
  }
  std::string key = def.name;
  defs_.emplace(std::move(key), std::move(def));
}

void OpRegistry::set_grad(std::string_view name, GradFn fn, std::vector<int> reads_outputs) {
  auto it = defs_.find(name);
  if (it == defs_.end()) {
    std::fprintf(stderr, "tessera: gradient rule registered for unknown op '%.*s'\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  // One rule per op: a second would silently replace the first.
  if (it->second.grad) {
    std::fprintf(stderr, "tessera: gradient rule for op '%.*s' registered twice\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  it->second.grad = fn;
  it->second.grad_reads_outputs = std::move(reads_outputs);
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : &it->second;
}

Status check_node_against_def(const OpDef& def, const ir::Node& node, const std::string& place) {
  const auto ni = static_cast<int>(node.inputs.size());
  const auto no = static_cast<int>(node.outputs.size());
  if (ni < def.min_inputs || (def.max_inputs >= 0 && ni > def.max_inputs))
    return invalid_model(place, ": ", ni, " inputs, expected ", def.min_inputs,
                         def.max_inputs < 0 ? str_cat(" or more")
                                            : str_cat("..", def.max_inputs));
  for (int i = 0; i < std::min(ni, def.min_inputs); ++i)
    if (node.inputs[static_cast<size_t>(i)] < 0)
      return invalid_model(place, ": input[", i, "] is required but omitted");
  if (no < def.min_outputs || (def.max_outputs >= 0 && no > def.max_outputs))
    return invalid_model(place, ": ", no, " outputs, expected ", def.min_outputs,
                         def.max_outputs < 0 ? str_cat(" or more")
                                             : str_cat("..", def.max_outputs));
  for (const auto& a : node.attributes) {
    const AttrSpec* spec = nullptr;
    for (const auto& s : def.attrs)
      if (s.name == a.name) spec = &s;
    if (!spec) return invalid_model(place, ": unknown attribute '", a.name, "'");
    if (spec->kind != a.kind)
      return invalid_model(place, ": attribute '", a.name, "' has type ", ir::attr_kind_name(a.kind),
                           ", expected ", ir::attr_kind_name(spec->kind));
  }
  for (const auto& s : def.attrs)
    if (s.required && !node.attr(s.name))
      return invalid_model(place, ": missing required attribute '", s.name, "'");
  return ok_status();
}

namespace {

AttrSpec with_default(ir::Attribute a) {
  AttrSpec spec{a.name, a.kind};
  spec.default_value = std::make_shared<const ir::Attribute>(std::move(a));
  return spec;
}

}  // namespace

AttrSpec int_attr(std::string name, int64_t def) { return with_default(ir::Attribute::make_int(std::move(name), def)); }
AttrSpec float_attr(std::string name, double def) {
  return with_default(ir::Attribute::make_float(std::move(name), def));
}
AttrSpec string_attr(std::string name, std::string def) {
  return with_default(ir::Attribute::make_string(std::move(name), std::move(def)));
}
AttrSpec ints_attr(std::string name, std::vector<int64_t> def) {
  return with_default(ir::Attribute::make_ints(std::move(name), std::move(def)));
}
AttrSpec floats_attr(std::string name, std::vector<double> def) {
  return with_default(ir::Attribute::make_floats(std::move(name), std::move(def)));
}
AttrSpec strings_attr(std::string name, std::vector<std::string> def) {
  return with_default(ir::Attribute::make_strings(std::move(name), std::move(def)));
}

size_t fill_attribute_defaults(const OpDef& def, ir::Node& node) {
  size_t added = 0;
  for (const AttrSpec& s : def.attrs) {
    if (!s.default_value || node.attr(s.name)) continue;
    node.attributes.push_back(*s.default_value);
    ++added;
  }
  return added;
}

Expected<std::vector<ValueType>> infer_node(const ir::Node& node, const std::string& place,
                                            const std::vector<ValueType>& inputs,
                                            const std::vector<const Tensor*>& values, bool runtime) {
  const OpDef* def = OpRegistry::global().find(node.op);
  if (!def) return unsupported(place, ": unsupported op '", node.op, "'");
  TSR_RETURN_IF_ERROR(check_node_against_def(*def, node, place));
  InferContext ctx(node, place, inputs, values, runtime);
  TSR_RETURN_IF_ERROR(def->infer(ctx));
  return ctx.outputs();
}

}  // namespace tsr::ops
