// The per-node half of the executor (DESIGN.md §6): output allocation, inference from the actual
// inputs, the kernel call, input checks and the profiler. Shared by Plan (plan.cpp) and the eager
// emitter (core/frontend/eager_emitter.cpp).
#include <algorithm>
#include <cstdio>
#include <map>

#include "core/exec/plan.h"

namespace tsr::exec {

Expected<Tensor*> KernelContext::alloc_output(size_t i) {
  const ops::ValueType& t = output_types_.at(i);
  if (!t.fully_known())
    return internal_error(place_, ".output[", i, "]: type ", t.str(),
                          " is not fully known; the kernel must pass dtype and shape");
  return alloc_output(i, t.dtype, t.shape);
}

Expected<Tensor*> KernelContext::alloc_output(size_t i, DType dtype, const Shape& shape) {
  Tensor::Recycling recycling;
  if (offsets_) {
    const int64_t off = offsets_[i];
    const ops::ValueType& planned = output_types_.at(i);
    if (off >= 0 && dtype == planned.dtype && shape == planned.shape) {
      outputs_.at(i) = Tensor::alias(*arena_, static_cast<size_t>(off), dtype, shape);
      return &outputs_.at(i);
    }
    if (off == kTransient) recycling.give = false;
  }
  auto t = Tensor::empty(dtype, shape, recycling);
  if (!t.ok()) return t.status().with_context(str_cat(place_, ".output[", i, "]"));
  outputs_.at(i) = std::move(t).value();
  return &outputs_.at(i);
}

void Profiler::record(const PlanStep& step, double ms, const Work& work) {
  const size_t i = static_cast<size_t>(step.node_index);
  if (nodes.size() <= i) nodes.resize(i + 1);
  NodeTime& t = nodes[i];
  if (t.calls == 0) {
    t.op = step.node->op;
    t.place = step.place;
  }
  t.total_ms += ms;
  ++t.calls;
  t.work_ms += work.work_ms;
  t.span_ms += work.span_ms;
  t.serial_ms += work.serial_ms;
  t.caller_chunk_ms += work.caller_chunk_ms;
  t.jobs += work.jobs;
}

namespace {

// The thread-balance part of Profiler::report: how far the split of each op's work is from
// `threads` equal parts, in CPU time (see Profiler).
std::string balance_report(const std::vector<Profiler::NodeTime>& ops, const std::vector<Profiler::NodeTime>& nodes,
                           int threads, size_t top) {
  double work = 0, span = 0, serial = 0, caller = 0;
  int64_t jobs = 0, calls = 0;
  for (const auto& t : ops) {
    work += t.work_ms;
    span += t.span_ms;
    serial += t.serial_ms;
    caller += t.caller_chunk_ms;
    jobs += t.jobs;
    calls += t.calls;
  }
  if (work <= 0) return {};
  const double n = threads;
  // What a step loses against a perfect split: its span beyond work / threads.
  auto lost = [n](const Profiler::NodeTime& t) { return t.span_ms - t.work_ms / n; };
  auto by_lost = [&](const Profiler::NodeTime& a, const Profiler::NodeTime& b) { return lost(a) > lost(b); };
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "  work balance at %d threads (thread CPU time): work %.3f ms, span %.3f ms, speedup the split "
                "allows %.2fx; serial %.1f%% of work; %lld pooled jobs in %lld steps, %.1f%% of their chunks' "
                "time on the calling thread\n",
                threads, work, span, span > 0 ? work / span : 0.0, 100 * serial / work, static_cast<long long>(jobs),
                static_cast<long long>(calls), work > serial ? 100 * caller / (work - serial) : 0.0);
  out += buf;
  if (threads <= 1) {
    // One thread: each node's work (thread CPU time), to join with a run at more threads.
    out += "  work by node:\n";
    for (size_t i = 0; i < nodes.size() && i < top; ++i) {
      std::snprintf(buf, sizeof buf, "  %10.3f ms  work %9.3f  %s\n", 0.0, nodes[i].work_ms, nodes[i].place.c_str());
      out += buf;
    }
    return out;
  }
  out += "  lost to the split, by op type (span - work/threads; work, span, serial share):\n";
  std::vector<Profiler::NodeTime> o = ops, s = nodes;
  std::sort(o.begin(), o.end(), by_lost);
  std::sort(s.begin(), s.end(), by_lost);
  for (size_t i = 0; i < o.size() && i < top; ++i) {
    std::snprintf(buf, sizeof buf, "  %10.3f ms  work %9.3f span %9.3f serial %5.1f%% jobs %6lld  %s\n", lost(o[i]),
                  o[i].work_ms, o[i].span_ms, o[i].work_ms > 0 ? 100 * o[i].serial_ms / o[i].work_ms : 0.0,
                  static_cast<long long>(o[i].jobs), o[i].op.c_str());
    out += buf;
  }
  out += "  lost to the split, by node:\n";
  for (size_t i = 0; i < s.size() && i < top; ++i) {
    std::snprintf(buf, sizeof buf, "  %10.3f ms  work %9.3f span %9.3f serial %5.1f%% jobs %6lld  %s\n", lost(s[i]),
                  s[i].work_ms, s[i].span_ms, s[i].work_ms > 0 ? 100 * s[i].serial_ms / s[i].work_ms : 0.0,
                  static_cast<long long>(s[i].jobs), s[i].place.c_str());
    out += buf;
  }
  return out;
}

}  // namespace

std::string Profiler::report(size_t top) const {
  std::map<std::string, NodeTime> by_op;
  double total = 0;
  for (const NodeTime& t : nodes) {
    if (t.calls == 0) continue;
    NodeTime& o = by_op[t.op];
    o.op = t.op;
    o.total_ms += t.total_ms;
    o.calls += t.calls;
    o.work_ms += t.work_ms;
    o.span_ms += t.span_ms;
    o.serial_ms += t.serial_ms;
    o.caller_chunk_ms += t.caller_chunk_ms;
    o.jobs += t.jobs;
    total += t.total_ms;
  }
  auto by_time = [](const NodeTime& a, const NodeTime& b) { return a.total_ms > b.total_ms; };
  std::vector<NodeTime> ops;
  for (auto& kv : by_op) ops.push_back(kv.second);
  std::sort(ops.begin(), ops.end(), by_time);
  std::vector<NodeTime> ns;
  for (const NodeTime& t : nodes)
    if (t.calls > 0) ns.push_back(t);
  std::sort(ns.begin(), ns.end(), by_time);
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "profile: %.3f ms in kernels (sum over runs)\n  by op type:\n", total);
  out += buf;
  for (size_t i = 0; i < ops.size() && i < top; ++i) {
    std::snprintf(buf, sizeof buf, "  %10.3f ms %5.1f%% %6lld calls  %s\n", ops[i].total_ms,
                  total > 0 ? 100 * ops[i].total_ms / total : 0.0, static_cast<long long>(ops[i].calls),
                  ops[i].op.c_str());
    out += buf;
  }
  out += "  by node:\n";
  for (size_t i = 0; i < ns.size() && i < top; ++i) {
    std::snprintf(buf, sizeof buf, "  %10.3f ms %5.1f%% %6lld calls  %s\n", ns[i].total_ms,
                  total > 0 ? 100 * ns[i].total_ms / total : 0.0, static_cast<long long>(ns[i].calls),
                  ns[i].place.c_str());
    out += buf;
  }
  out += balance_report(ops, ns, threads, top);
  return out;
}

Status check_input(const ir::TensorInfo& info, size_t k, const Tensor& v) {
  // The message prefix is only built on failure: this runs for every input of every run.
  auto where = [&] { return str_cat("input[", k, "] \"", info.name, "\""); };
  if (!v.defined()) return invalid_argument(where(), ": no value given");
  if (v.is_none()) return ok_status();  // an empty optional: accepted where a value may be absent
  if ((info.kind == ValueKind::kSequence) != v.is_sequence())
    return invalid_argument(where(), ": got a ", value_kind_name(v.kind()), ", expected a ", value_kind_name(info.kind));
  // An empty sequence read from a file may not know its element dtype.
  const bool untyped_empty_seq = v.is_sequence() && v.dtype() == DType::kUndefined && v.elements().empty();
  if (info.dtype != DType::kUndefined && v.dtype() != info.dtype && !untyped_empty_seq)
    return invalid_argument(where(), ": dtype ", dtype_name(v.dtype()), ", expected ", dtype_name(info.dtype));
  if (!info.has_shape || v.is_sequence()) return ok_status();
  if (static_cast<size_t>(v.rank()) != info.shape.size())
    return invalid_argument(where(), ": shape ", shape_str(v.shape()), " has rank ", v.rank(),
                            ", expected rank ", info.shape.size(), " ", shape_str(info.shape));
  for (size_t d = 0; d < info.shape.size(); ++d)
    if (info.shape[d] >= 0 && info.shape[d] != v.shape()[d])
      return invalid_argument(where(), ": shape ", shape_str(v.shape()), ", expected ", shape_str(info.shape),
                              " (dim ", d, ")");
  return ok_status();
}

Status infer_outputs(const ir::Node& node, const ops::OpDef& def, const std::string& place,
                     const std::vector<const Tensor*>& in_values, std::vector<ops::ValueType>& in_types,
                     std::vector<ops::ValueType>& out_types, const ir::Model* model, uint64_t* values_read) {
  const size_t ni = node.inputs.size();
  in_types.resize(ni);
  for (size_t k = 0; k < ni; ++k) {
    ops::ValueType& ty = in_types[k];
    const Tensor* v = in_values[k];
    if (!v) {
      ty.dtype = DType::kUndefined;
      ty.has_shape = false;
      ty.shape.clear();
      ty.kind = ValueKind::kTensor;
      continue;
    }
    if (v->kind() != ValueKind::kTensor && !def.any_value_kind)
      return invalid_argument(place, ".input[", k, "]: a ", value_kind_name(v->kind()), ", but ", node.op,
                              " takes tensors");
    // Field-wise, so the scratch shape's capacity is reused (no allocation per step).
    ty.dtype = v->dtype();
    ty.kind = v->kind();
    ty.has_shape = v->kind() == ValueKind::kTensor;
    if (ty.has_shape) ty.shape.assign(v->shape().begin(), v->shape().end());
    else ty.shape.clear();
  }
  ops::InferContext ictx(node, place, in_types, in_values, /*runtime=*/true, out_types);
  ictx.set_model(model);
  Status st = def.infer(ictx);
  if (values_read) *values_read = ictx.values_read();
  // The graph passed load-time inference with its dynamic dims unknown: a contradiction found now
  // comes from this run's values (an input too small for a pooling window, dims that do not
  // broadcast), so it is the caller's argument, not a malformed model (issue 30).
  if (st.code() == StatusCode::kInvalidModel) return Status(StatusCode::kInvalidArgument, st.message());
  return st;
}

Status run_kernel(const ir::Node& node, const std::string& place, Kernel& kernel, const KernelCall& call,
                  ThreadPool& pool) {
  std::vector<Tensor>& outs = call.outs;
  outs.resize(node.outputs.size());
  for (Tensor& t : outs) t = Tensor();
  KernelContext kctx(node, place, call.in_values, call.out_types, outs, pool, call.scratch);
  if (call.offsets) kctx.set_memory_plan(call.arena, call.offsets);
  Status st = kernel.run(kctx);
  call.scratch.reset();
  TSR_RETURN_IF_ERROR(st);
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (node.outputs[k] >= 0 && !outs[k].defined())
      return internal_error(place, ".output[", k, "]: the kernel produced no value");
  return ok_status();
}

Status run_node(const ir::Node& node, const ops::OpDef& def, const std::string& place, Kernel& kernel,
                NodeScratch scratch, ThreadPool& pool, const ir::Model* model) {
  TSR_RETURN_IF_ERROR(
      infer_outputs(node, def, place, scratch.in_values, scratch.in_types, scratch.out_types, model, nullptr));
  return run_kernel(node, place, kernel, {scratch.in_values, scratch.out_types, scratch.outs, scratch.arena}, pool);
}

}  // namespace tsr::exec
