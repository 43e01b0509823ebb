#include "core/exec/control_flow.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/base/selective.h"
#include "core/exec/plan.h"

namespace tsr::exec {

bool is_control_flow_op(std::string_view op) {
  const ops::OpDef* def = ops::OpRegistry::global().find(op);
  return def && def->control_flow;
}

Expected<Tensor> stack_tensors(const std::vector<Tensor>& parts, int64_t axis, DType dtype,
                               const Shape& empty_shape) {
  if (parts.empty()) {
    Shape s = empty_shape;
    for (auto& d : s) d = std::max<int64_t>(d, 0);
    s.insert(s.begin() + std::clamp<int64_t>(axis, 0, static_cast<int64_t>(s.size())), 0);
    return Tensor::zeros(dtype, s);
  }
  const Tensor& first = parts.front();
  if (first.dtype() == DType::kString) return unsupported("stacking string tensors");
  for (size_t t = 1; t < parts.size(); ++t)
    if (parts[t].dtype() != first.dtype() || parts[t].shape() != first.shape())
      return invalid_argument("iteration ", t, " produced ", dtype_name(parts[t].dtype()), shape_str(parts[t].shape()),
                              " but iteration 0 produced ", dtype_name(first.dtype()), shape_str(first.shape()),
                              ": scan outputs must keep one shape");
  Shape out_shape = first.shape();
  out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(parts.size()));
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(first.dtype(), out_shape));
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= first.shape()[static_cast<size_t>(d)];
  const size_t inner_bytes = first.nbytes() / static_cast<size_t>(std::max<int64_t>(outer, 1));
  auto* dst = static_cast<char*>(out.raw_mut());
  for (int64_t o = 0; o < outer; ++o)
    for (size_t t = 0; t < parts.size(); ++t) {
      std::memcpy(dst, static_cast<const char*>(parts[t].raw()) + static_cast<size_t>(o) * inner_bytes, inner_bytes);
      dst += inner_bytes;
    }
  return out;
}

namespace {

// Slice `i` of `t` along `axis` (a view for axis 0, else a copy).
Expected<Tensor> slice_axis(const Tensor& t, int64_t axis, int64_t i) {
  if (axis == 0) return t.index0(i);
  Shape s = t.shape();
  const int64_t len = s[static_cast<size_t>(axis)];
  s.erase(s.begin() + axis);
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(t.dtype(), s));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape()[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= t.shape()[static_cast<size_t>(d)];
  const size_t row = static_cast<size_t>(inner) * dtype_size(t.dtype());
  const auto* src = static_cast<const char*>(t.raw());
  auto* dst = static_cast<char*>(out.raw_mut());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>(o * len + i) * row, row);
  return out;
}

// `where` describes the value for the error message; it is only called on failure (this runs
// once per loop iteration).
template <typename Where>
Expected<bool> read_cond(const Tensor& t, const Where& where) {
  if (t.kind() != ValueKind::kTensor || t.dtype() != DType::kBool || t.numel() != 1)
    return invalid_argument(where(), ": condition must be one bool, got ", dtype_name(t.dtype()), shape_str(t.shape()));
  return t.data<bool>()[0];
}

// A child Plan's inputs and outputs for one invocation, leased from the kernel's ScratchPool so
// that steady-state invocations reuse the vectors (kernels may run on several threads at once).
struct Frame {
  std::vector<Tensor> in, out;
  std::vector<std::vector<Tensor>> scans;  // Loop: scan outputs per iteration
  // Drops every tensor (the frame outlives the invocation) and keeps the capacity.
  void release() {
    for (Tensor& t : in) t = Tensor();
    for (Tensor& t : out) t = Tensor();
    for (auto& s : scans) s.clear();
  }
};

Shape declared_shape(const ir::Graph& g, int32_t t) {
  const auto& info = g.tensors[static_cast<size_t>(t)];
  return info.has_shape ? info.shape : Shape{};
}

class IfKernel final : public Kernel {
 public:
  IfKernel(std::unique_ptr<Plan> then_plan, std::unique_ptr<Plan> else_plan)
      : then_(std::move(then_plan)), else_(std::move(else_plan)) {}

  Status run(KernelContext& ctx) override {
    TSR_ASSIGN_OR_RETURN(bool cond, read_cond(*ctx.input(0), [&] { return ctx.place() + ".input[0]"; }));
    const Plan& branch = cond ? *then_ : *else_;
    auto frame = frames_.acquire();
    Frame& f = *frame;
    f.in.resize(ctx.num_inputs() - 1);
    for (size_t k = 1; k < ctx.num_inputs(); ++k) f.in[k - 1] = ctx.input(k) ? *ctx.input(k) : Tensor();
    Status st = branch.run(f.in, ctx.pool(), &f.out);
    if (st.ok())
      for (size_t k = 0; k < f.out.size(); ++k) ctx.set_output(k, std::move(f.out[k]));
    f.release();
    if (!st.ok()) return st.with_context(str_cat(ctx.place(), cond ? " then_branch" : " else_branch"));
    return ok_status();
  }

 private:
  std::unique_ptr<Plan> then_, else_;
  ScratchPool<Frame> frames_;
};

class LoopKernel final : public Kernel {
 public:
  LoopKernel(std::unique_ptr<Plan> body, size_t captures, int64_t limit)
      : body_(std::move(body)), captures_(captures), limit_(limit) {}

  Status run(KernelContext& ctx) override {
    const size_t n = ctx.num_inputs() - 2 - captures_;
    const size_t k_scan = body_->graph().outputs.size() - 1 - n;
    int64_t trip = std::numeric_limits<int64_t>::max();
    if (ctx.input(0)) {
      if (ctx.input(0)->numel() != 1) return ctx.error("input[0] (M) must be one int64");
      trip = ctx.input(0)->scalar_i64();
    }
    bool cond = true;
    if (ctx.input(1)) {
      TSR_ASSIGN_OR_RETURN(cond, read_cond(*ctx.input(1), [&] { return ctx.place() + ".input[1]"; }));
    }

    auto lease = frames_.acquire();
    Frame& f = *lease;
    Status st = iterate(ctx, f, trip, cond, n, k_scan);
    f.release();
    return st;
  }

 private:
  Status iterate(KernelContext& ctx, Frame& f, int64_t trip, bool cond, size_t n, size_t k_scan) {
    const ir::Graph& g = body_->graph();
    std::vector<Tensor>& frame = f.in;
    frame.resize(2 + n + captures_);
    for (size_t k = 0; k < n + captures_; ++k) frame[2 + k] = ctx.input(2 + k) ? *ctx.input(2 + k) : Tensor();
    f.scans.resize(k_scan);
    for (int64_t i = 0; i < trip && cond; ++i) {
      if (limit_ > 0 && i >= limit_)
        return resource_error(ctx.place(), ": loop ran past the session's limit of ", limit_, " iterations");
      frame[0] = Tensor::scalar<int64_t>(i);
      frame[1] = Tensor::scalar<bool>(cond);
      Status st = body_->run(frame, ctx.pool(), &f.out);
      if (!st.ok()) return st.with_context(str_cat(ctx.place(), " body iteration ", i));
      TSR_ASSIGN_OR_RETURN(cond, read_cond(f.out[0], [&] { return str_cat(ctx.place(), " body output[0]"); }));
      for (size_t k = 0; k < n; ++k) frame[2 + k] = std::move(f.out[1 + k]);  // moved, not copied
      for (size_t k = 0; k < k_scan; ++k) f.scans[k].push_back(std::move(f.out[1 + n + k]));
    }
    for (size_t k = 0; k < n; ++k) ctx.set_output(k, std::move(frame[2 + k]));
    for (size_t k = 0; k < k_scan; ++k) {
      const int32_t t = g.outputs[1 + n + k];
      auto stacked = stack_tensors(f.scans[k], 0, g.tensors[static_cast<size_t>(t)].dtype, declared_shape(g, t));
      if (!stacked.ok()) return stacked.status().with_context(str_cat(ctx.place(), ".output[", n + k, "]"));
      ctx.set_output(n + k, std::move(stacked).value());
    }
    return ok_status();
  }

  std::unique_ptr<Plan> body_;
  size_t captures_;
  int64_t limit_;
  ScratchPool<Frame> frames_;
};

class ScanKernel final : public Kernel {
 public:
  ScanKernel(std::unique_ptr<Plan> body, const ir::Node& node, int64_t limit)
      : body_(std::move(body)), limit_(limit) {
    captures_ = static_cast<size_t>(node.attr_int("num_captures"));
    m_ = static_cast<size_t>(node.attr_int("num_scan_inputs"));
    batched_ = node.attr_int("batched") != 0;
    in_axes_ = node.attr_ints("scan_input_axes");
    in_dirs_ = node.attr_ints("scan_input_directions");
    out_axes_ = node.attr_ints("scan_output_axes");
    out_dirs_ = node.attr_ints("scan_output_directions");
  }

  Status run(KernelContext& ctx) override {
    std::vector<Tensor> in;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) in.push_back(ctx.input(k) ? *ctx.input(k) : Tensor());
    std::vector<Tensor> out;
    if (!batched_) {
      TSR_RETURN_IF_ERROR(scan(ctx, in, out));
      for (size_t k = 0; k < out.size(); ++k) ctx.set_output(k, std::move(out[k]));
      return ok_status();
    }
    // Batched (ONNX Scan-8): scan each batch element of the states and scan inputs on its own.
    const size_t stacked = ctx.num_inputs() - captures_;
    const int64_t batch = in.empty() ? 0 : in[0].dim(0);
    for (size_t k = 0; k < stacked; ++k)
      if (in[k].rank() < 1 || in[k].dim(0) != batch)
        return ctx.error("input[", k, "] has shape ", shape_str(in[k].shape()), ", expected batch dim ", batch);
    std::vector<std::vector<Tensor>> per_output;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> slice = in;
      for (size_t k = 0; k < stacked; ++k) slice[k] = in[k].index0(b);
      TSR_RETURN_IF_ERROR(scan(ctx, slice, out));
      per_output.resize(out.size());
      for (size_t k = 0; k < out.size(); ++k) per_output[k].push_back(std::move(out[k]));
    }
    for (size_t k = 0; k < per_output.size(); ++k) {
      auto t = stack_tensors(per_output[k], 0, per_output[k].empty() ? DType::kF32 : per_output[k][0].dtype(), {});
      if (!t.ok()) return t.status().with_context(str_cat(ctx.place(), ".output[", k, "]"));
      ctx.set_output(k, std::move(t).value());
    }
    return ok_status();
  }

 private:
  // One (unbatched) scan over `in` = (states, scan inputs, captures); fills `out`.
  Status scan(KernelContext& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& result) {
    const ir::Graph& g = body_->graph();
    const size_t n = in.size() - m_ - captures_;
    const size_t k_scan = g.outputs.size() - n;
    std::vector<int64_t> axes(m_, 0);
    int64_t len = -1;
    for (size_t j = 0; j < m_; ++j) {
      const Tensor& x = in[n + j];
      TSR_ASSIGN_OR_RETURN(axes[j], normalize_axis(j < in_axes_.size() ? in_axes_[j] : 0, x.rank()));
      const int64_t l = x.shape()[static_cast<size_t>(axes[j])];
      if (len >= 0 && l != len)
        return ctx.error("scan input ", j, " has length ", l, " along its scan axis, scan input 0 has ", len);
      len = l;
    }
    if (limit_ > 0 && len > limit_)
      return resource_error(ctx.place(), ": scan of ", len, " iterations exceeds the session's limit of ", limit_);
    std::vector<Tensor> frame(n + m_ + captures_);
    for (size_t k = 0; k < n; ++k) frame[k] = in[k];
    for (size_t k = 0; k < captures_; ++k) frame[n + m_ + k] = in[n + m_ + k];
    std::vector<std::vector<Tensor>> scans(k_scan);
    for (int64_t t = 0; t < len; ++t) {
      for (size_t j = 0; j < m_; ++j) {
        const bool reverse = j < in_dirs_.size() && in_dirs_[j] == 1;
        TSR_ASSIGN_OR_RETURN(frame[n + j], slice_axis(in[n + j], axes[j], reverse ? len - 1 - t : t));
      }
      auto outs = body_->run(frame, ctx.pool());
      if (!outs.ok()) return outs.status().with_context(str_cat(ctx.place(), " body iteration ", t));
      for (size_t k = 0; k < n; ++k) frame[k] = std::move((*outs)[k]);
      for (size_t k = 0; k < k_scan; ++k) scans[k].push_back(std::move((*outs)[n + k]));
    }
    result.assign(n + k_scan, Tensor());
    for (size_t k = 0; k < n; ++k) result[k] = std::move(frame[k]);
    for (size_t k = 0; k < k_scan; ++k) {
      if (k < out_dirs_.size() && out_dirs_[k] == 1) std::reverse(scans[k].begin(), scans[k].end());
      const int32_t t = g.outputs[n + k];
      const Shape elem = declared_shape(g, t);
      const int64_t rank = scans[k].empty() ? static_cast<int64_t>(elem.size()) : scans[k][0].rank();
      TSR_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(k < out_axes_.size() ? out_axes_[k] : 0, rank + 1));
      auto stacked = stack_tensors(scans[k], axis, g.tensors[static_cast<size_t>(t)].dtype, elem);
      if (!stacked.ok()) return stacked.status().with_context(str_cat(ctx.place(), ".output[", n + k, "]"));
      result[n + k] = std::move(stacked).value();
    }
    return ok_status();
  }

  std::unique_ptr<Plan> body_;
  int64_t limit_;
  bool batched_ = false;
  size_t captures_ = 0, m_ = 1;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

class SequenceMapKernel final : public Kernel {
 public:
  explicit SequenceMapKernel(std::unique_ptr<Plan> body) : body_(std::move(body)) {}

  Status run(KernelContext& ctx) override {
    const ir::Graph& g = body_->graph();
    if (!ctx.input(0)->is_sequence()) return ctx.error("input[0] must be a sequence");
    const size_t len = ctx.input(0)->elements().size();
    for (size_t j = 1; j < ctx.num_inputs(); ++j)
      if (ctx.input(j) && ctx.input(j)->is_sequence() && ctx.input(j)->elements().size() != len)
        return ctx.error("input[", j, "] is a sequence of ", ctx.input(j)->elements().size(), " elements, input[0] has ", len);
    std::vector<std::vector<Tensor>> outs(g.outputs.size());
    std::vector<Tensor> frame(ctx.num_inputs());
    for (size_t i = 0; i < len; ++i) {
      for (size_t j = 0; j < ctx.num_inputs(); ++j) {
        const Tensor* in = ctx.input(j);
        frame[j] = !in ? Tensor() : in->is_sequence() ? in->elements()[i] : *in;
      }
      auto r = body_->run(frame, ctx.pool());
      if (!r.ok()) return r.status().with_context(str_cat(ctx.place(), " body element ", i));
      for (size_t k = 0; k < outs.size(); ++k) outs[k].push_back(std::move((*r)[k]));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      const DType d = outs[k].empty() ? g.tensors[static_cast<size_t>(g.outputs[k])].dtype : outs[k][0].dtype();
      ctx.set_output(k, Tensor::sequence(d, std::move(outs[k])));
    }
    return ok_status();
  }

 private:
  std::unique_ptr<Plan> body_;
};

Expected<std::unique_ptr<Plan>> child_plan(const ir::Model& model, const KernelInit& init, std::string_view attr,
                                           Backend& backend, const PlanOptions& options) {
  const ir::Attribute* a = init.node.attr(attr);
  if (!a || a->kind != ir::AttrKind::kGraph) return invalid_model(init.place, ": missing graph attribute '", attr, "'");
  auto plan = Plan::create(model, static_cast<int32_t>(a->i), backend, options);
  if (!plan.ok()) return plan.status().with_context(str_cat(init.place, " ", attr));
  return plan;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> create_control_flow_kernel(const ir::Model& model, const KernelInit& init,
                                                             Backend& backend, const PlanOptions& options) {
  // A minimal runtime (core/base/selective.h) compiles this file with its op list: the kernels of
  // the control-flow ops it leaves out are not in it (their OpDefs neither, so the loader reports
  // such a node before it gets here).
  const ir::Node& node = init.node;
  TSR_IF_SELECTED("If") if (node.op == "If") {
    TSR_ASSIGN_OR_RETURN(auto then_plan, child_plan(model, init, "then_branch", backend, options));
    TSR_ASSIGN_OR_RETURN(auto else_plan, child_plan(model, init, "else_branch", backend, options));
    return std::unique_ptr<Kernel>(new IfKernel(std::move(then_plan), std::move(else_plan)));
  }
  TSR_IF_SELECTED("SequenceMap") if (node.op == "SequenceMap") {
    TSR_ASSIGN_OR_RETURN(auto body, child_plan(model, init, "body", backend, options));
    return std::unique_ptr<Kernel>(new SequenceMapKernel(std::move(body)));
  }
  TSR_IF_SELECTED("Loop") if (node.op == "Loop") {
    TSR_ASSIGN_OR_RETURN(auto body, child_plan(model, init, "body", backend, options));
    return std::unique_ptr<Kernel>(new LoopKernel(
        std::move(body), static_cast<size_t>(node.attr_int("num_captures")), options.max_loop_iterations));
  }
  TSR_IF_SELECTED("Scan") if (node.op == "Scan") {
    TSR_ASSIGN_OR_RETURN(auto body, child_plan(model, init, "body", backend, options));
    return std::unique_ptr<Kernel>(new ScanKernel(std::move(body), node, options.max_loop_iterations));
  }
  return unsupported(init.place, ": ", node.op, " has no control-flow kernel in this build");
}

}  // namespace tsr::exec
