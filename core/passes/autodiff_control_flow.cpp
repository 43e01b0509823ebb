// Gradients of If, Loop and Scan (see the overview in autodiff.h).
#include <algorithm>

#include "core/ops/grad.h"
#include "core/passes/autodiff_internal.h"

namespace tsr::passes {

using ops::GraphBuilder;
using ir::Attribute;
using ir::Graph;
using ir::Model;
using ir::Node;
using ir::TensorInfo;

namespace {

ops::ValueType type_of(const TensorInfo& t) { return {t.dtype, t.has_shape, t.shape, t.kind}; }

// Adds an input of type `t` to b's graph.
Value add_input(GraphBuilder& b, const std::string& name, const ops::ValueType& t) {
  const Value v = b.input(name, t.dtype, t.shape);
  TensorInfo& info = b.graph().tensors[static_cast<size_t>(v.id)];
  info.has_shape = t.has_shape;
  info.kind = t.kind == ValueKind::kSequence ? ValueKind::kSequence : ValueKind::kTensor;
  return v;
}

// The same rank with every dim dynamic (loop-carried values may change shape per iteration).
ops::ValueType dynamic_dims(ops::ValueType t) {
  std::fill(t.shape.begin(), t.shape.end(), -1);
  return t;
}

ops::ValueType seq_of(const ops::ValueType& elem) {
  ops::ValueType t = elem;
  t.kind = ValueKind::kSequence;
  return t;
}

int32_t new_graph(Model& model, const std::string& name) {
  model.graphs.emplace_back();
  model.graphs.back().name = name;
  return static_cast<int32_t>(model.graphs.size() - 1);
}

// The VJP graph of `graph` (the branches of If): inputs (graph inputs..., dL/d outputs...),
// outputs dL/d input[k] for each k with wanted[k] (zeros where no path exists). The forward is
// recomputed inside.
Expected<int32_t> vjp_graph(Model& model, int32_t graph, const std::vector<bool>& wanted,
                            const std::vector<ops::ValueType>& dy_types) {
  const Graph src = model.graphs.at(static_cast<size_t>(graph));
  const int32_t gi = new_graph(model, str_cat(src.name, "_vjp"));
  GraphBuilder gb(model, gi);
  std::vector<Value> xs, dys;
  for (int32_t t : src.inputs) xs.push_back(add_input(gb, src.tensors[static_cast<size_t>(t)].name, type_of(src.tensors[static_cast<size_t>(t)])));
  for (size_t j = 0; j < dy_types.size(); ++j) dys.push_back(add_input(gb, str_cat("d_out", j), dy_types[j]));
  TSR_ASSIGN_OR_RETURN(const std::vector<Value> ys, inline_graph(gb, graph, xs));
  std::vector<Seed> seeds;
  for (size_t j = 0; j < ys.size(); ++j)
    if (dtype_is_float(gb.type(ys[j]).dtype)) seeds.push_back({ys[j].id, dys[j]});
  std::vector<int32_t> wrt;
  for (size_t k = 0; k < xs.size(); ++k)
    if (wanted[k]) wrt.push_back(xs[k].id);
  TSR_ASSIGN_OR_RETURN(const std::vector<Value> grads, backward(gb, seeds, wrt));
  for (size_t k = 0; k < grads.size(); ++k)
    gb.output(grads[k].valid() ? grads[k] : ops::zeros_like(gb, Value{gi, wrt[k]}));
  TSR_RETURN_IF_ERROR(gb.status());
  return gi;
}

Expected<std::vector<Value>> if_vjp(GraphBuilder& b, const Node& node, const std::vector<Value>& ins,
                                    const std::vector<Value>& outs, const std::vector<Value>& grad_out,
                                    const std::vector<bool>& wants) {
  std::vector<bool> wanted(ins.size() - 1);
  for (size_t k = 1; k < ins.size(); ++k) wanted[k - 1] = wants[k];
  std::vector<Value> dys;
  std::vector<ops::ValueType> dy_types;
  for (size_t j = 0; j < outs.size(); ++j) {
    dys.push_back(grad_out[j].valid() ? grad_out[j] : ops::zeros_like(b, outs[j]));
    dy_types.push_back(b.type(outs[j]));
  }
  TSR_ASSIGN_OR_RETURN(const int32_t then_g, vjp_graph(b.model(), static_cast<int32_t>(node.attr("then_branch")->i), wanted, dy_types));
  TSR_ASSIGN_OR_RETURN(const int32_t else_g, vjp_graph(b.model(), static_cast<int32_t>(node.attr("else_branch")->i), wanted, dy_types));
  std::vector<Value> inputs(ins.begin(), ins.end());
  inputs.insert(inputs.end(), dys.begin(), dys.end());
  const size_t n_out = static_cast<size_t>(std::count(wanted.begin(), wanted.end(), true));
  const std::vector<Value> g = b.op_n("If", inputs, n_out,
                                      {Attribute::make_graph("then_branch", then_g), Attribute::make_graph("else_branch", else_g)},
                                      str_cat(node.name, "_grad"));
  std::vector<Value> grads(ins.size());
  size_t o = 0;
  for (size_t k = 1; k < ins.size(); ++k)
    if (wants[k]) grads[k] = g[o++];
  return grads;
}

Expected<std::vector<Value>> loop_vjp(GraphBuilder& b, int32_t node_index, const std::vector<Value>& ins,
                                      const std::vector<Value>& outs, const std::vector<Value>& grad_out,
                                      const std::vector<bool>& wants) {
  Model& model = b.model();
  const int32_t gi = b.graph_index();
  Node node = b.graph().nodes[static_cast<size_t>(node_index)];
  const auto body = static_cast<int32_t>(node.attr("body")->i);
  const auto C = static_cast<size_t>(node.attr_int("num_captures"));
  const size_t N = node.inputs.size() - 2 - C;
  const Graph body_g = model.graphs.at(static_cast<size_t>(body));
  const size_t K = body_g.outputs.size() - 1 - N;
  auto body_in = [&](size_t k) { return type_of(body_g.tensors[static_cast<size_t>(body_g.inputs[k])]); };
  // The per-iteration state pushed to stacks: body inputs 0..N+1 (iteration number, condition,
  // loop-carried values); captures are loop-invariant and need no stack.
  const size_t S = N + 2;

  // 1. The forward loop also carries one sequence per state value and appends to it.
  const int32_t fg = new_graph(model, str_cat(body_g.name, "_push"));
  {
    GraphBuilder fb(model, fg);
    std::vector<Value> state, stacks, caps;
    for (size_t k = 0; k < S; ++k) state.push_back(add_input(fb, str_cat("state", k), body_in(k)));
    for (size_t k = 0; k < S; ++k) stacks.push_back(add_input(fb, str_cat("stack", k), seq_of(dynamic_dims(body_in(k)))));
    for (size_t c = 0; c < C; ++c) caps.push_back(add_input(fb, str_cat("capture", c), body_in(S + c)));
    std::vector<Value> args = state;
    args.insert(args.end(), caps.begin(), caps.end());
    TSR_ASSIGN_OR_RETURN(const std::vector<Value> ys, inline_graph(fb, body, args));
    for (size_t k = 0; k <= N; ++k) fb.output(ys[k]);
    for (size_t k = 0; k < S; ++k) fb.output(fb.emit("SequenceInsert", {stacks[k], state[k]}));
    for (size_t k = 0; k < K; ++k) fb.output(ys[1 + N + k]);
    TSR_RETURN_IF_ERROR(fb.status());
  }
  std::vector<int32_t> stack_final;
  {
    std::vector<int32_t> new_in(node.inputs.begin(), node.inputs.begin() + static_cast<std::ptrdiff_t>(2 + N));
    for (size_t k = 0; k < S; ++k)
      new_in.push_back(b.emit("SequenceEmpty", {}, {Attribute::make_int("dtype", static_cast<int64_t>(body_in(k).dtype))}).id);
    new_in.insert(new_in.end(), node.inputs.begin() + static_cast<std::ptrdiff_t>(2 + N), node.inputs.end());
    std::vector<int32_t> new_out(node.outputs.begin(), node.outputs.begin() + static_cast<std::ptrdiff_t>(N));
    for (size_t k = 0; k < S; ++k) {
      TensorInfo info;
      info.name = str_cat(node.name, "_stack", k);
      info.kind = ValueKind::kSequence;
      info.dtype = body_in(k).dtype;
      stack_final.push_back(b.graph().add_tensor(std::move(info)));
      new_out.push_back(stack_final.back());
    }
    new_out.insert(new_out.end(), node.outputs.begin() + static_cast<std::ptrdiff_t>(N), node.outputs.end());
    Node& fwd = b.graph().nodes[static_cast<size_t>(node_index)];
    fwd.inputs = std::move(new_in);
    fwd.outputs = std::move(new_out);
    for (Attribute& a : fwd.attributes)
      if (a.name == "body") a.i = fg;
  }

  // 2. The reverse loop: pops iteration n-1-j's state at step j, recomputes the body, applies its VJP.
  std::vector<size_t> carried;  // loop-carried values with a gradient (float)
  for (size_t k = 0; k < N; ++k)
    if (dtype_is_float(body_in(2 + k).dtype)) carried.push_back(k);
  std::vector<size_t> want_caps;
  for (size_t c = 0; c < C; ++c)
    if (wants[2 + N + c]) want_caps.push_back(c);
  std::vector<size_t> scans;  // scan outputs with a gradient (float)
  for (size_t k = 0; k < K; ++k)
    if (dtype_is_float(b.type(outs[N + k]).dtype)) scans.push_back(k);

  const int32_t rg = new_graph(model, str_cat(body_g.name, "_reverse"));
  {
    GraphBuilder rb(model, rg);
    const Value j = rb.input("j", DType::kI64, {});
    rb.input("cond", DType::kBool, {});
    std::vector<Value> dv, acc, stacks, caps, dscan;
    for (size_t k : carried) dv.push_back(add_input(rb, str_cat("d_v", k), dynamic_dims(body_in(2 + k))));
    for (size_t c : want_caps) acc.push_back(add_input(rb, str_cat("d_capture", c), body_in(S + c)));
    for (size_t k = 0; k < S; ++k) stacks.push_back(add_input(rb, str_cat("stack", k), seq_of(dynamic_dims(body_in(k)))));
    for (size_t c = 0; c < C; ++c) caps.push_back(add_input(rb, str_cat("capture", c), body_in(S + c)));
    for (size_t k : scans) dscan.push_back(add_input(rb, str_cat("d_scan", k), b.type(outs[N + k])));
    const Value n = rb.input("n", DType::kI64, {});
    const Value idx = rb.emit("Sub", {rb.emit("Sub", {n, ops::scalar(rb, DType::kI64, 1)}), j});
    std::vector<Value> args;
    for (size_t k = 0; k < S; ++k) args.push_back(rb.emit("SequenceAt", {stacks[k], idx}));
    const std::vector<Value> state = args;
    args.insert(args.end(), caps.begin(), caps.end());
    TSR_ASSIGN_OR_RETURN(const std::vector<Value> ys, inline_graph(rb, body, args));
    std::vector<Seed> seeds;
    for (size_t i = 0; i < carried.size(); ++i) seeds.push_back({ys[1 + carried[i]].id, dv[i]});
    for (size_t i = 0; i < scans.size(); ++i)
      seeds.push_back({ys[1 + N + scans[i]].id, rb.emit("Gather", {dscan[i], idx}, {Attribute::make_int("axis", 0)})});
    std::vector<int32_t> wrt;
    for (size_t k : carried) wrt.push_back(state[2 + k].id);
    for (size_t c : want_caps) wrt.push_back(caps[c].id);
    TSR_ASSIGN_OR_RETURN(const std::vector<Value> g, backward(rb, seeds, wrt));
    rb.output(rb.constant(Tensor::scalar(true)));
    for (size_t i = 0; i < carried.size(); ++i) rb.output(g[i].valid() ? g[i] : ops::zeros_like(rb, state[2 + carried[i]]));
    for (size_t i = 0; i < want_caps.size(); ++i) {
      const Value gc = g[carried.size() + i];
      rb.output(gc.valid() ? rb.emit("Add", {acc[i], gc}) : acc[i]);
    }
    TSR_RETURN_IF_ERROR(rb.status());
  }
  const Value n = b.emit("SequenceLength", {Value{gi, stack_final[0]}});
  std::vector<Value> rin = {n, Value{}};
  for (size_t k : carried) rin.push_back(grad_out[k].valid() ? grad_out[k] : ops::zeros_like(b, outs[k]));
  for (size_t c : want_caps) rin.push_back(ops::zeros_like(b, ins[2 + N + c]));
  const size_t first_capture = rin.size();
  for (size_t k = 0; k < S; ++k) rin.push_back(Value{gi, stack_final[k]});
  for (size_t c = 0; c < C; ++c) rin.push_back(ins[2 + N + c]);
  for (size_t k : scans) rin.push_back(grad_out[N + k].valid() ? grad_out[N + k] : ops::zeros_like(b, outs[N + k]));
  rin.push_back(n);
  const std::vector<Value> r = b.op_n("Loop", rin, carried.size() + want_caps.size(),
                                      {Attribute::make_graph("body", rg),
                                       Attribute::make_int("num_captures", static_cast<int64_t>(rin.size() - first_capture))},
                                      str_cat(node.name, "_grad"));
  std::vector<Value> grads(ins.size());
  for (size_t i = 0; i < carried.size(); ++i)
    if (wants[2 + carried[i]]) grads[2 + carried[i]] = r[i];
  for (size_t i = 0; i < want_caps.size(); ++i) grads[2 + N + want_caps[i]] = r[carried.size() + i];
  return grads;
}

// Scan: the forward Scan also stacks each iteration's starting states as extra scan outputs
// (so a state must keep its shape across iterations, as scan outputs must); the gradient is a
// Scan running the other way over (stacked states, scan inputs, output gradients) that
// recomputes each iteration's body and applies its VJP. Iteration t of the forward is step
// len-1-t of the reverse, so every scanned value flips its direction (axes stay), and the slice
// gradients are stacked with the flipped direction of their scan input.
Expected<std::vector<Value>> scan_vjp(GraphBuilder& b, int32_t node_index, const std::vector<Value>& ins,
                                      const std::vector<Value>& outs, const std::vector<Value>& grad_out,
                                      const std::vector<bool>& wants) {
  Model& model = b.model();
  const int32_t gi = b.graph_index();
  const Node node = b.graph().nodes[static_cast<size_t>(node_index)];
  if (node.attr_int("batched") != 0) return unsupported("the gradient of a batched (ONNX Scan-8) Scan is not implemented");
  const auto body = static_cast<int32_t>(node.attr("body")->i);
  const auto C = static_cast<size_t>(node.attr_int("num_captures"));
  const auto M = static_cast<size_t>(node.attr_int("num_scan_inputs"));
  const size_t N = node.inputs.size() - M - C;
  const Graph body_g = model.graphs.at(static_cast<size_t>(body));
  const size_t K = body_g.outputs.size() - N;
  auto body_in = [&](size_t k) { return type_of(body_g.tensors[static_cast<size_t>(body_g.inputs[k])]); };
  auto body_out = [&](size_t k) { return type_of(body_g.tensors[static_cast<size_t>(body_g.outputs[k])]); };
  const auto in_axes = node.attr_ints("scan_input_axes", std::vector<int64_t>(M, 0));
  const auto in_dirs = node.attr_ints("scan_input_directions", std::vector<int64_t>(M, 0));
  auto out_axes = node.attr_ints("scan_output_axes", std::vector<int64_t>(K, 0));
  auto out_dirs = node.attr_ints("scan_output_directions", std::vector<int64_t>(K, 0));
  if (in_axes.size() != M || in_dirs.size() != M || out_axes.size() != K || out_dirs.size() != K)
    return invalid_model("scan axes/directions attributes do not match the number of scan inputs/outputs");
  auto flip = [](int64_t d) -> int64_t { return d == 1 ? 0 : 1; };

  // 1. Forward: body outputs gain Identity(state_k) for each state; the node gains N outputs.
  std::vector<int32_t> stacked;
  if (N > 0) {
    const int32_t fg = new_graph(model, str_cat(body_g.name, "_push"));
    GraphBuilder fb(model, fg);
    std::vector<Value> args;
    for (size_t k = 0; k < body_g.inputs.size(); ++k)
      args.push_back(add_input(fb, body_g.tensors[static_cast<size_t>(body_g.inputs[k])].name, body_in(k)));
    TSR_ASSIGN_OR_RETURN(const std::vector<Value> ys, inline_graph(fb, body, args));
    for (const Value& y : ys) fb.output(y);
    for (size_t k = 0; k < N; ++k) fb.output(fb.emit("Identity", {args[k]}));
    TSR_RETURN_IF_ERROR(fb.status());
    for (size_t k = 0; k < N; ++k) {
      TensorInfo info;
      info.name = str_cat(node.name, "_states", k);
      const ops::ValueType t = body_in(k);
      info.dtype = t.dtype;
      info.has_shape = t.has_shape;
      if (t.has_shape) {
        info.shape = t.shape;
        info.shape.insert(info.shape.begin(), -1);
      }
      stacked.push_back(b.graph().add_tensor(std::move(info)));
    }
    Node& fwd = b.graph().nodes[static_cast<size_t>(node_index)];
    fwd.outputs.insert(fwd.outputs.end(), stacked.begin(), stacked.end());
    std::vector<int64_t> axes = out_axes, dirs = out_dirs;
    axes.resize(K + N, 0);
    dirs.resize(K + N, 0);
    std::erase_if(fwd.attributes, [](const Attribute& a) {
      return a.name == "body" || a.name == "scan_output_axes" || a.name == "scan_output_directions";
    });
    fwd.attributes.push_back(Attribute::make_graph("body", fg));
    fwd.attributes.push_back(Attribute::make_ints("scan_output_axes", axes));
    fwd.attributes.push_back(Attribute::make_ints("scan_output_directions", dirs));
  }

  // 2. The reverse Scan. States: gradients of the float states, accumulated capture gradients.
  // Scan inputs: the stacked states, the forward scan inputs, the scan-output gradients.
  std::vector<size_t> carried, want_caps, want_xs, scans;
  for (size_t k = 0; k < N; ++k)
    if (dtype_is_float(body_in(k).dtype)) carried.push_back(k);
  for (size_t c = 0; c < C; ++c)
    if (wants[N + M + c]) want_caps.push_back(c);
  for (size_t j = 0; j < M; ++j)
    if (wants[N + j]) want_xs.push_back(j);
  for (size_t k = 0; k < K; ++k)
    if (dtype_is_float(body_out(N + k).dtype)) scans.push_back(k);

  const int32_t rg = new_graph(model, str_cat(body_g.name, "_reverse"));
  {
    GraphBuilder rb(model, rg);
    std::vector<Value> dv, acc, st, xs, dys, caps;
    for (size_t k : carried) dv.push_back(add_input(rb, str_cat("d_state", k), body_in(k)));
    for (size_t c : want_caps) acc.push_back(add_input(rb, str_cat("d_capture", c), body_in(N + M + c)));
    for (size_t k = 0; k < N; ++k) st.push_back(add_input(rb, str_cat("state", k), body_in(k)));
    for (size_t j = 0; j < M; ++j) xs.push_back(add_input(rb, str_cat("slice", j), body_in(N + j)));
    for (size_t k : scans) dys.push_back(add_input(rb, str_cat("d_scan", k), body_out(N + k)));
    for (size_t c = 0; c < C; ++c) caps.push_back(add_input(rb, str_cat("capture", c), body_in(N + M + c)));
    std::vector<Value> args = st;
    args.insert(args.end(), xs.begin(), xs.end());
    args.insert(args.end(), caps.begin(), caps.end());
    TSR_ASSIGN_OR_RETURN(const std::vector<Value> ys, inline_graph(rb, body, args));
    std::vector<Seed> seeds;
    for (size_t i = 0; i < carried.size(); ++i) seeds.push_back({ys[carried[i]].id, dv[i]});
    for (size_t i = 0; i < scans.size(); ++i) seeds.push_back({ys[N + scans[i]].id, dys[i]});
    std::vector<int32_t> wrt;
    for (size_t k : carried) wrt.push_back(st[k].id);
    for (size_t c : want_caps) wrt.push_back(caps[c].id);
    for (size_t j : want_xs) wrt.push_back(xs[j].id);
    TSR_ASSIGN_OR_RETURN(const std::vector<Value> g, backward(rb, seeds, wrt));
    size_t o = 0;
    for (size_t k : carried) {
      rb.output(g[o].valid() ? g[o] : ops::zeros_like(rb, st[k]));
      ++o;
    }
    for (size_t i = 0; i < want_caps.size(); ++i, ++o) rb.output(g[o].valid() ? rb.emit("Add", {acc[i], g[o]}) : acc[i]);
    for (size_t j : want_xs) {
      rb.output(g[o].valid() ? g[o] : ops::zeros_like(rb, xs[j]));
      ++o;
    }
    TSR_RETURN_IF_ERROR(rb.status());
  }
  std::vector<Value> rin;
  for (size_t k : carried) rin.push_back(grad_out[k].valid() ? grad_out[k] : ops::zeros_like(b, outs[k]));
  for (size_t c : want_caps) rin.push_back(ops::zeros_like(b, ins[N + M + c]));
  std::vector<int64_t> r_in_axes, r_in_dirs, r_out_axes, r_out_dirs;
  for (size_t k = 0; k < N; ++k) {
    rin.push_back(Value{gi, stacked[k]});
    r_in_axes.push_back(0);
    r_in_dirs.push_back(1);
  }
  for (size_t j = 0; j < M; ++j) {
    rin.push_back(ins[N + j]);
    r_in_axes.push_back(in_axes[j]);
    r_in_dirs.push_back(flip(in_dirs[j]));
  }
  for (size_t k : scans) {
    rin.push_back(grad_out[N + k].valid() ? grad_out[N + k] : ops::zeros_like(b, outs[N + k]));
    r_in_axes.push_back(out_axes[k]);
    r_in_dirs.push_back(flip(out_dirs[k]));
  }
  for (size_t c = 0; c < C; ++c) rin.push_back(ins[N + M + c]);
  for (size_t j : want_xs) {
    r_out_axes.push_back(in_axes[j]);
    r_out_dirs.push_back(flip(in_dirs[j]));
  }
  const size_t n_states = carried.size() + want_caps.size();
  const std::vector<Value> r =
      b.op_n("Scan", rin, n_states + want_xs.size(),
             {Attribute::make_graph("body", rg), Attribute::make_int("num_scan_inputs", static_cast<int64_t>(r_in_axes.size())),
              Attribute::make_int("num_captures", static_cast<int64_t>(C)), Attribute::make_ints("scan_input_axes", r_in_axes),
              Attribute::make_ints("scan_input_directions", r_in_dirs), Attribute::make_ints("scan_output_axes", r_out_axes),
              Attribute::make_ints("scan_output_directions", r_out_dirs)},
             str_cat(node.name, "_grad"));
  std::vector<Value> grads(ins.size());
  for (size_t i = 0; i < carried.size(); ++i)
    if (wants[carried[i]]) grads[carried[i]] = r[i];
  for (size_t i = 0; i < want_caps.size(); ++i) grads[N + M + want_caps[i]] = r[carried.size() + i];
  for (size_t i = 0; i < want_xs.size(); ++i) grads[N + want_xs[i]] = r[n_states + i];
  return grads;
}

}  // namespace

Expected<std::vector<Value>> control_flow_vjp(GraphBuilder& b, int32_t node_index, const std::string& place,
                                              const std::vector<Value>& ins, const std::vector<Value>& outs,
                                              const std::vector<Value>& grad_out, const std::vector<bool>& wants) {
  const Node node = b.graph().nodes[static_cast<size_t>(node_index)];
  Expected<std::vector<Value>> r = unsupported("no gradient");
  if (node.op == "If") r = if_vjp(b, node, ins, outs, grad_out, wants);
  else if (node.op == "Loop") r = loop_vjp(b, node_index, ins, outs, grad_out, wants);
  else if (node.op == "Scan") r = scan_vjp(b, node_index, ins, outs, grad_out, wants);
  else return unsupported(place, ": gradient: ", node.op, " is not differentiable yet");
  if (!r.ok()) return Status(r.status().code(), str_cat(place, ": gradient: ", r.status().message()));
  return r;
}

namespace {

void capture_constants_in(Model& model, int32_t graph, const std::vector<std::string>& names) {
  for (size_t n = 0; n < model.graphs[static_cast<size_t>(graph)].nodes.size(); ++n) {
    const Node& node = model.graphs[static_cast<size_t>(graph)].nodes[n];
    const ops::OpDef* def = ops::OpRegistry::global().find(node.op);
    if (!def || !def->subgraph_inputs) continue;  // If, Loop, Scan
    const bool if_node = node.op == "If";
    std::vector<int32_t> subs;
    for (const Attribute& a : node.attributes)
      if (a.kind == ir::AttrKind::kGraph) subs.push_back(static_cast<int32_t>(a.i));
    for (const std::string& name : names) {
      const int32_t outer = model.graphs[static_cast<size_t>(graph)].find_tensor(name);
      if (outer < 0) continue;
      bool copied = false;
      for (int32_t sg : subs) {
        const int32_t t = model.graphs[static_cast<size_t>(sg)].find_tensor(name);
        copied |= t >= 0 && model.graphs[static_cast<size_t>(sg)].tensors[static_cast<size_t>(t)].constant.defined();
      }
      if (!copied) continue;
      for (int32_t sg : subs) {
        Graph& g = model.graphs[static_cast<size_t>(sg)];
        int32_t t = g.find_tensor(name);
        if (t >= 0 && !g.tensors[static_cast<size_t>(t)].constant.defined()) continue;  // a value of its own
        if (t < 0) {
          TensorInfo info = model.graphs[static_cast<size_t>(graph)].tensors[static_cast<size_t>(outer)];
          info.constant = Tensor();
          t = g.add_tensor(std::move(info));
        }
        g.tensors[static_cast<size_t>(t)].constant = Tensor();
        g.inputs.push_back(t);
      }
      Node& mut = model.graphs[static_cast<size_t>(graph)].nodes[n];
      mut.inputs.push_back(outer);
      if (!if_node)
        for (Attribute& a : mut.attributes)
          if (a.name == "num_captures") ++a.i;
      if (!if_node && !mut.attr("num_captures")) mut.attributes.push_back(Attribute::make_int("num_captures", 1));
    }
    for (int32_t sg : subs) capture_constants_in(model, sg, names);
  }
}

}  // namespace

void capture_constants(Model& model, const std::vector<std::string>& names) {
  if (!model.graphs.empty()) capture_constants_in(model, 0, names);
}

void prune_unused_graphs(Model& model) {
  std::vector<char> used(model.graphs.size(), 0);
  std::vector<int32_t> work = {0};
  for (const auto& s : model.signatures) work.push_back(s.graph);
  while (!work.empty()) {
    const int32_t g = work.back();
    work.pop_back();
    if (g < 0 || static_cast<size_t>(g) >= used.size() || used[static_cast<size_t>(g)]) continue;
    used[static_cast<size_t>(g)] = 1;
    for (const Node& n : model.graphs[static_cast<size_t>(g)].nodes)
      for (const Attribute& a : n.attributes) {
        if (a.kind == ir::AttrKind::kGraph) work.push_back(static_cast<int32_t>(a.i));
        if (a.kind == ir::AttrKind::kGraphs)
          for (int64_t x : a.ints) work.push_back(static_cast<int32_t>(x));
      }
  }
  std::vector<int64_t> remap(model.graphs.size(), -1);
  std::vector<Graph> kept;
  for (size_t g = 0; g < model.graphs.size(); ++g)
    if (used[g]) {
      remap[g] = static_cast<int64_t>(kept.size());
      kept.push_back(std::move(model.graphs[g]));
    }
  for (Graph& g : kept)
    for (Node& n : g.nodes)
      for (Attribute& a : n.attributes) {
        if (a.kind == ir::AttrKind::kGraph) a.i = remap[static_cast<size_t>(a.i)];
        if (a.kind == ir::AttrKind::kGraphs)
          for (int64_t& x : a.ints) x = remap[static_cast<size_t>(x)];
      }
  for (auto& s : model.signatures) s.graph = static_cast<int32_t>(remap[static_cast<size_t>(s.graph)]);
  model.graphs = std::move(kept);
}

}  // namespace tsr::passes
