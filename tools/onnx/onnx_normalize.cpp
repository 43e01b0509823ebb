// Opset normalization to the opset-17 form (see onnx_normalize.h). The version thresholds are the
// opsets in which ONNX changed each operator's signature (onnx/docs/Changelog.md).
#include "tools/onnx/onnx_normalize.h"

#include <cctype>
#include <optional>
#include <string_view>

namespace tsr::onnx_import {

namespace {

using ir::Attribute;
using ir::AttrKind;
using ir::Node;

std::optional<Attribute> take_attr(Node& n, std::string_view name) {
  for (auto it = n.attributes.begin(); it != n.attributes.end(); ++it) {
    if (it->name == name) {
      Attribute a = std::move(*it);
      n.attributes.erase(it);
      return a;
    }
  }
  return std::nullopt;
}

void set_attr(Node& n, Attribute a) {
  for (auto& x : n.attributes) {
    if (x.name == a.name) {
      x = std::move(a);
      return;
    }
  }
  n.attributes.push_back(std::move(a));
}

void set_input(Node& n, size_t i, int32_t id) {
  if (n.inputs.size() <= i) n.inputs.resize(i + 1, -1);
  n.inputs[i] = id;
}

std::string base_name(const Node& n, std::string_view suffix) {
  std::string b = n.name.empty() ? n.op : n.name;
  return str_cat(b, "/", suffix);
}

// Moves an INTS attribute into input `slot` as an i64 1-D constant; false if absent.
Expected<bool> ints_attr_to_input(Node& n, std::string_view attr, size_t slot, GraphEdit& edit,
                                  const std::string& place) {
  std::optional<Attribute> a = take_attr(n, attr);
  if (!a) return false;
  if (a->kind != AttrKind::kInts && a->kind != AttrKind::kInt)
    return invalid_model(place, ": attribute '", attr, "' must be a list of ints");
  std::vector<int64_t> v = a->kind == AttrKind::kInts ? a->ints : std::vector<int64_t>{a->i};
  const auto len = static_cast<int64_t>(v.size());
  set_input(n, slot, edit.add_constant(base_name(n, attr), Tensor::from<int64_t>({len}, v)));
  return true;
}

// A scalar of dtype `dt` holding `v` (floats and integers; anything else falls back to f32).
Tensor scalar_of(DType dt, double v) {
  if (dt == DType::kF64) return Tensor::scalar<double>(v);
  if (dt == DType::kF16 || dt == DType::kBF16) {
    Tensor t = Tensor::empty(dt, {}).value();
    *t.mut_data<uint16_t>() = dt == DType::kF16 ? f32_to_f16(static_cast<float>(v)) : f32_to_bf16(static_cast<float>(v));
    return t;
  }
  switch (dt) {
    case DType::kI8: return Tensor::scalar<int8_t>(static_cast<int8_t>(v));
    case DType::kU8: return Tensor::scalar<uint8_t>(static_cast<uint8_t>(v));
    case DType::kI16: return Tensor::scalar<int16_t>(static_cast<int16_t>(v));
    case DType::kU16: return Tensor::scalar<uint16_t>(static_cast<uint16_t>(v));
    case DType::kI32: return Tensor::scalar<int32_t>(static_cast<int32_t>(v));
    case DType::kI64: return Tensor::scalar<int64_t>(static_cast<int64_t>(v));
    case DType::kU32: return Tensor::scalar<uint32_t>(static_cast<uint32_t>(v));
    case DType::kU64: return Tensor::scalar<uint64_t>(static_cast<uint64_t>(v));
    default: return Tensor::scalar<float>(static_cast<float>(v));
  }
}

DType input_dtype(const Node& n, size_t i, GraphEdit& edit) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return DType::kUndefined;
  const ir::TensorInfo* info = edit.info(n.inputs[i]);
  return info ? info->dtype : DType::kUndefined;
}

bool is_legacy_broadcast_op(std::string_view op) {
  for (std::string_view o : {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"})
    if (op == o) return true;
  return false;
}

// Legacy (opset < 7) broadcasting aligns B at `axis` of A; numpy broadcasting aligns it at the end.
// A constant B is reshaped with trailing 1s, which makes both agree.
Status fix_legacy_broadcast(Node& n, GraphEdit& edit, const std::string& place) {
  take_attr(n, "broadcast");
  std::optional<Attribute> axis = take_attr(n, "axis");
  if (!axis || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return ok_status();
  const ir::TensorInfo* a = edit.info(n.inputs[0]);
  const ir::TensorInfo* b = edit.info(n.inputs[1]);
  if (!a || !b || !a->has_shape || !b->has_shape)
    return unsupported(place, ": legacy broadcast with 'axis' needs known ranks");
  const auto ra = static_cast<int64_t>(a->shape.size());
  const auto rb = static_cast<int64_t>(b->shape.size());
  int64_t ax = axis->i < 0 ? axis->i + ra : axis->i;
  if (ax + rb == ra) return ok_status();
  const Tensor* bc = edit.constant(n.inputs[1]);
  if (!bc || ax < 0 || ax + rb > ra) return unsupported(place, ": legacy broadcast with axis ", axis->i, " is not supported");
  Shape s = bc->shape();
  s.resize(static_cast<size_t>(ra - ax), 1);
  TSR_ASSIGN_OR_RETURN(Tensor r, bc->reshaped(s));
  n.inputs[1] = edit.add_constant(base_name(n, "B"), r);
  return ok_status();
}

// Softmax-1..12 flattens to 2-D at `axis`; Softmax-13 works along one axis. They agree when
// `axis` is the last axis; otherwise Flatten → Softmax(axis=1) → Reshape(original shape).
void normalize_softmax(Node n, GraphEdit& edit, std::vector<Node>& out) {
  const int64_t axis = n.attr_int("axis", 1);
  const ir::TensorInfo* x = n.inputs.empty() || n.inputs[0] < 0 ? nullptr : edit.info(n.inputs[0]);
  if (x && x->has_shape) {
    const auto rank = static_cast<int64_t>(x->shape.size());
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a == rank - 1 || rank == 0) {
      set_attr(n, Attribute::make_int("axis", -1));
      out.push_back(std::move(n));
      return;
    }
  }
  if (n.inputs.empty() || n.outputs.empty() || n.outputs[0] < 0) {
    out.push_back(std::move(n));
    return;
  }
  const int32_t in = n.inputs[0];
  const int32_t y = n.outputs[0];
  Node shape{"Shape", n.version, base_name(n, "shape"), {in}, {edit.add_value(base_name(n, "shape"))}, {}};
  Node flat{"Flatten", n.version, base_name(n, "flatten"), {in}, {edit.add_value(base_name(n, "flat"))},
            {Attribute::make_int("axis", axis)}};
  const int32_t sm = edit.add_value(base_name(n, "flat_out"));
  n.inputs = {flat.outputs[0]};
  n.outputs = {sm};
  set_attr(n, Attribute::make_int("axis", 1));
  Node reshape{"Reshape", n.version, base_name(n, "reshape"), {sm, shape.outputs[0]}, {y}, {}};
  out.push_back(std::move(shape));
  out.push_back(std::move(flat));
  out.push_back(std::move(n));
  out.push_back(std::move(reshape));
}

void set_resize_legacy_modes(Node& n) {
  std::string mode = n.attr_string("mode", "nearest");
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  set_attr(n, Attribute::make_string("mode", mode));
  set_attr(n, Attribute::make_string("coordinate_transformation_mode", "asymmetric"));
  if (mode == "nearest") set_attr(n, Attribute::make_string("nearest_mode", "floor"));
}

bool empty_constant(const Node& n, size_t i, GraphEdit& edit) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return false;
  const Tensor* c = edit.constant(n.inputs[i]);
  return c && c->numel() == 0;
}

bool is_reduce_with_axes_input_since_18(std::string_view op) {
  for (std::string_view o : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    if (op == o) return true;
  return false;
}

// Opset >= 18 moved these Reduce* axes from an attribute to an input; opset 17 wants the attribute.
Status reduce_axes_input_to_attr(Node& n, GraphEdit& edit, const std::string& place) {
  std::optional<Attribute> noop = take_attr(n, "noop_with_empty_axes");
  const bool has_axes = n.inputs.size() > 1 && n.inputs[1] >= 0;
  if (!has_axes) {
    if (noop && noop->i != 0) return unsupported(place, ": noop_with_empty_axes=1 without axes");
    return ok_status();
  }
  const Tensor* axes = edit.constant(n.inputs[1]);
  if (!axes) return unsupported(place, ": axes computed at run time (opset >= 18 form) are not supported");
  if (axes->numel() == 0 && noop && noop->i != 0) return unsupported(place, ": noop_with_empty_axes=1 with empty axes");
  n.inputs.erase(n.inputs.begin() + 1, n.inputs.end());
  if (axes->numel() > 0) set_attr(n, Attribute::make_ints("axes", axes->to_i64_vector()));
  return ok_status();
}

// Pad-18's optional `axes` input: expand the pads to every axis (opset-17 form), which needs the
// data rank and constant pads/axes.
Status pad_axes_to_full(Node& n, GraphEdit& edit, const std::string& place) {
  if (n.inputs.size() < 4 || n.inputs[3] < 0) return ok_status();
  const Tensor* axes = edit.constant(n.inputs[3]);
  const Tensor* pads = n.inputs[1] >= 0 ? edit.constant(n.inputs[1]) : nullptr;
  const ir::TensorInfo* x = edit.info(n.inputs[0]);
  if (!axes || !pads || !x || !x->has_shape)
    return unsupported(place, ": Pad with 'axes' needs constant pads/axes and a known input rank");
  const auto rank = static_cast<int64_t>(x->shape.size());
  const std::vector<int64_t> ax = axes->to_i64_vector();
  const std::vector<int64_t> p = pads->to_i64_vector();
  const auto na = static_cast<int64_t>(ax.size());
  if (static_cast<int64_t>(p.size()) != 2 * na) return invalid_model(place, ": pads length ", p.size(), ", axes ", na);
  std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
  for (int64_t k = 0; k < na; ++k) {
    const int64_t a = ax[static_cast<size_t>(k)] < 0 ? ax[static_cast<size_t>(k)] + rank : ax[static_cast<size_t>(k)];
    if (a < 0 || a >= rank) return invalid_model(place, ": axis ", ax[static_cast<size_t>(k)], " out of range");
    full[static_cast<size_t>(a)] = p[static_cast<size_t>(k)];
    full[static_cast<size_t>(a + rank)] = p[static_cast<size_t>(k + na)];
  }
  n.inputs[1] = edit.add_constant(base_name(n, "pads"), Tensor::from<int64_t>({2 * rank}, full));
  n.inputs.erase(n.inputs.begin() + 3, n.inputs.end());
  while (!n.inputs.empty() && n.inputs.back() < 0) n.inputs.pop_back();
  return ok_status();
}

// Attributes of newer opsets whose default is the opset-17 behaviour: dropped when at that
// default, otherwise unsupported.
Status drop_default_attr(Node& n, std::string_view name, const Attribute& def, const std::string& place) {
  std::optional<Attribute> a = take_attr(n, name);
  if (!a) return ok_status();
  bool same = true;
  if (def.kind == AttrKind::kInts) {
    same = a->kind == AttrKind::kInts;
    for (int64_t v : a->ints) same = same && v == 1;
  } else {
    same = a->kind == def.kind && a->i == def.i && a->s == def.s;
  }
  if (!same) return unsupported(place, ": attribute '", name, "' (opset > 17) is not supported with this value");
  return ok_status();
}

Status normalize(Node& n, int64_t v, const std::string& place, GraphEdit& edit, std::vector<Node>& out,
                 bool& appended) {
  const std::string& op = n.op;
  if (v < 7) {
    take_attr(n, "consumed_inputs");
    if (is_legacy_broadcast_op(op)) TSR_RETURN_IF_ERROR(fix_legacy_broadcast(n, edit, place));
  }
  if ((op == "Squeeze" || op == "Unsqueeze") && v < 13) {
    TSR_ASSIGN_OR_RETURN(bool had, ints_attr_to_input(n, "axes", 1, edit, place));
    (void)had;
  } else if (op == "ReduceSum" && v < 13) {
    TSR_ASSIGN_OR_RETURN(bool had, ints_attr_to_input(n, "axes", 1, edit, place));
    (void)had;
  } else if (op == "Split" && v < 13) {
    TSR_ASSIGN_OR_RETURN(bool had, ints_attr_to_input(n, "split", 1, edit, place));
    (void)had;
  } else if (op == "Slice" && v < 10) {
    TSR_ASSIGN_OR_RETURN(bool s, ints_attr_to_input(n, "starts", 1, edit, place));
    TSR_ASSIGN_OR_RETURN(bool e, ints_attr_to_input(n, "ends", 2, edit, place));
    if (!s || !e) return invalid_model(place, ": Slice-", v, " needs 'starts' and 'ends'");
    TSR_ASSIGN_OR_RETURN(bool had, ints_attr_to_input(n, "axes", 3, edit, place));
    (void)had;
  } else if (op == "Reshape" && v < 5) {
    TSR_ASSIGN_OR_RETURN(bool had, ints_attr_to_input(n, "shape", 1, edit, place));
    (void)had;
  } else if (op == "TopK" && v < 10) {
    std::optional<Attribute> k = take_attr(n, "k");
    if (!k) return invalid_model(place, ": TopK-", v, " needs 'k'");
    set_input(n, 1, edit.add_constant(base_name(n, "k"), Tensor::from<int64_t>({1}, {k->i})));
  } else if (op == "Clip" && v < 11) {
    const DType dt = input_dtype(n, 0, edit);
    std::optional<Attribute> lo = take_attr(n, "min");
    std::optional<Attribute> hi = take_attr(n, "max");
    if (lo) set_input(n, 1, edit.add_constant(base_name(n, "min"), scalar_of(dt, lo->f)));
    if (hi) set_input(n, 2, edit.add_constant(base_name(n, "max"), scalar_of(dt, hi->f)));
  } else if (op == "Pad" && v < 11) {
    TSR_ASSIGN_OR_RETURN(bool p, ints_attr_to_input(n, v < 2 ? "paddings" : "pads", 1, edit, place));
    if (!p) return invalid_model(place, ": Pad-", v, " needs 'pads'");
    std::optional<Attribute> value = take_attr(n, "value");
    const DType dt = input_dtype(n, 0, edit);
    if (value && (value->f != 0 || dt != DType::kUndefined))
      set_input(n, 2, edit.add_constant(base_name(n, "value"), scalar_of(dt, value->f)));
  } else if (op == "Dropout" && v < 12) {
    take_attr(n, "is_test");
    std::optional<Attribute> ratio = take_attr(n, "ratio");
    if (ratio) set_input(n, 1, edit.add_constant(base_name(n, "ratio"), Tensor::scalar<float>(static_cast<float>(ratio->f))));
  } else if (op == "BatchNormalization" && v < 14) {
    take_attr(n, "is_test");
    std::optional<Attribute> spatial = take_attr(n, "spatial");
    // Opset < 14 models are inference graphs here; the optional statistics outputs of the old
    // training form have no opset-17 counterpart outside training_mode.
    if (n.outputs.size() > 1) n.outputs.resize(1);
    if (spatial && spatial->i == 0)
      return unsupported(place, ": BatchNormalization with spatial=0 (per-activation statistics)");
  } else if (op == "Upsample") {
    if (v < 7) return unsupported(place, ": Upsample-", v, " (experimental form) is not supported");
    n.op = "Resize";
    std::optional<Attribute> scales = take_attr(n, "scales");
    int32_t scales_id = n.inputs.size() > 1 ? n.inputs[1] : -1;
    if (scales) {
      std::vector<float> f(scales->floats.begin(), scales->floats.end());
      scales_id = edit.add_constant(base_name(n, "scales"), Tensor::from<float>({static_cast<int64_t>(f.size())}, f));
    }
    n.inputs.resize(1);
    n.inputs.push_back(-1);
    n.inputs.push_back(scales_id);
    set_resize_legacy_modes(n);
  } else if (op == "Resize" && v < 11) {
    const int32_t scales_id = n.inputs.size() > 1 ? n.inputs[1] : -1;
    n.inputs.resize(1);
    n.inputs.push_back(-1);
    n.inputs.push_back(scales_id);
    set_resize_legacy_modes(n);
  } else if (op == "Resize" && v < 13) {
    // Opset 11/12 require roi and scales; an empty constant stands for "absent".
    if (empty_constant(n, 1, edit)) n.inputs[1] = -1;
    if (n.inputs.size() > 3 && n.inputs[3] >= 0 && empty_constant(n, 2, edit)) n.inputs[2] = -1;
  } else if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && v < 13) {
    appended = true;
    normalize_softmax(std::move(n), edit, out);
    return ok_status();
  } else if (op == "Cast" && v < 6) {
    const ir::Attribute* to = n.attr("to");
    if (to && to->kind == AttrKind::kString) {
      std::string lower = to->s;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const DType dt = dtype_from_name(lower);
      if (dt == DType::kUndefined) return invalid_model(place, ": Cast to unknown type '", to->s, "'");
      set_attr(n, Attribute::make_int("to", static_cast<int64_t>(dt)));
    }
  } else if (op == "Concat" && v < 4) {
    if (!n.attr("axis")) set_attr(n, Attribute::make_int("axis", 1));
  } else if (op == "Gemm" && v < 7) {
    take_attr(n, "broadcast");
  } else if (op == "Scatter") {
    n.op = "ScatterElements";
  } else if (op == "Scan" && v < 9) {
    // Scan-8 scans every batch element (dim 0) separately: Tessera's Scan with `batched` = 1.
    if (!n.inputs.empty() && n.inputs[0] >= 0)
      return unsupported(place, ": Scan-8 with a sequence_lens input is not supported (omit it or use opset >= 9)");
    if (!n.inputs.empty()) n.inputs.erase(n.inputs.begin());
    if (const ir::Attribute* dirs = n.attr("directions")) {
      ir::Attribute a = *dirs;
      a.name = "scan_input_directions";
      take_attr(n, "directions");
      set_attr(n, a);
    }
    set_attr(n, Attribute::make_int("batched", 1));
  } else if (op == "Tile" && v < 6) {
    return unsupported(place, ": Tile-", v, " (tiles/axis form) is not supported; use opset >= 6");
  } else if (v >= 18 && is_reduce_with_axes_input_since_18(op)) {
    return reduce_axes_input_to_attr(n, edit, place);
  } else if (op == "Split" && v >= 18) {
    take_attr(n, "num_outputs");  // opset 17 splits evenly into as many parts as outputs
  } else if (op == "Pad" && v >= 18) {
    return pad_axes_to_full(n, edit, place);
  } else if (op == "Resize" && v >= 18) {
    TSR_RETURN_IF_ERROR(drop_default_attr(n, "antialias", Attribute::make_int("antialias", 0), place));
    TSR_RETURN_IF_ERROR(drop_default_attr(n, "keep_aspect_ratio_policy",
                                          Attribute::make_string("keep_aspect_ratio_policy", "stretch"), place));
    if (n.attr("axes")) return unsupported(place, ": Resize with 'axes' (opset >= 18) is not supported");
  } else if ((op == "Cast" || op == "CastLike") && v >= 19) {
    take_attr(n, "saturate");  // only affects float8 targets, which Tessera lacks
  } else if ((op == "AveragePool" || op == "LpPool") && v >= 18) {
    TSR_RETURN_IF_ERROR(drop_default_attr(n, "dilations", Attribute::make_ints("dilations", {}), place));
  }
  return ok_status();
}

}  // namespace

std::string GraphEdit::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = str_cat(base, "_", k);
  return name;
}

int32_t GraphEdit::add_constant(const std::string& base, Tensor value) {
  ir::TensorInfo info;
  info.name = fresh(base);
  info.dtype = value.dtype();
  info.has_shape = true;
  info.shape = value.shape();
  info.constant = std::move(value);
  const std::string name = info.name;
  const int32_t id = graph_.add_tensor(std::move(info));
  names_[name] = id;
  return id;
}

int32_t GraphEdit::add_value(const std::string& base) {
  ir::TensorInfo info;
  info.name = fresh(base);
  const std::string name = info.name;
  const int32_t id = graph_.add_tensor(std::move(info));
  names_[name] = id;
  return id;
}

const Tensor* GraphEdit::constant(int32_t id) const {
  const ir::TensorInfo* i = info(id);
  return i && i->constant.defined() ? &i->constant : nullptr;
}

const ir::TensorInfo* GraphEdit::info(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= graph_.tensors.size()) return nullptr;
  return &graph_.tensors[static_cast<size_t>(id)];
}

Status normalize_and_append(ir::Node node, int64_t opset, const std::string& place, GraphEdit& edit) {
  std::vector<Node> out;
  bool appended = false;
  Status st = normalize(node, opset, place, edit, out, appended);
  if (!appended) out.push_back(std::move(node));
  for (auto& n : out) edit.graph().nodes.push_back(std::move(n));
  return st;
}

}  // namespace tsr::onnx_import
