#include "core/frontend/eager_emitter.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "core/exec/control_flow.h"
#include "core/exec/plan.h"
#include "core/ops/grad.h"

namespace tsr::frontend {

using ops::Value;

namespace {

// Kernels cached per op; an op called with ever-changing attributes (a fill value) evicts the
// oldest entry instead of growing without bound.
constexpr size_t kMaxKernelsPerOp = 16;

struct OpTable {
  std::map<std::string, OpRef, std::less<>> by_name;
  size_t size = 0;
};

const OpTable& op_table() {
  static const OpTable* table = [] {
    auto* t = new OpTable();
    int32_t ordinal = 0;
    for (const auto& [name, def] : ops::OpRegistry::global().all()) t->by_name[name] = OpRef{&def, ordinal++};
    t->size = static_cast<size_t>(ordinal);
    return t;
  }();
  return *table;
}

// Tags start far above any graph index so a GraphBuilder Value is never taken for an eager one.
int32_t next_tag() {
  static std::atomic<int32_t> next{1 << 24};
  return next.fetch_add(1);
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

bool tensors_equal(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.kind() != ValueKind::kTensor || b.kind() != ValueKind::kTensor) return false;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.raw() == b.raw()) return true;
  if (a.dtype() == DType::kString) return false;  // not worth comparing: a cache miss
  return std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// Whether the first b.size() attributes of `a` (the caller's, ahead of the defaults the entry
// filled in) equal `b`, and `a` has no other caller attributes (`a_given` of them).
bool attrs_equal(const std::vector<ir::Attribute>& a, size_t a_given, const std::vector<ir::Attribute>& b) {
  if (a_given != b.size()) return false;
  for (size_t k = 0; k < b.size(); ++k) {
    const ir::Attribute& x = a[k];
    const ir::Attribute& y = b[k];
    if (x.kind != y.kind || x.name != y.name || x.i != y.i || x.f != y.f || x.s != y.s || x.ints != y.ints ||
        x.floats != y.floats || x.strings != y.strings || !tensors_equal(x.t, y.t))
      return false;
  }
  return true;
}

}  // namespace

OpRef EagerEmitter::resolve(std::string_view op) {
  const OpTable& t = op_table();
  auto it = t.by_name.find(op);
  return it == t.by_name.end() ? OpRef{} : it->second;
}

EagerEmitter::EagerEmitter(int num_threads) : tag_(next_tag()), pool_(num_threads) {
  auto backend = exec::create_backend("cpu");
  if (backend.ok()) backend_ = std::move(backend).value();
  else status_ = backend.status();
  kernels_.resize(op_table().size);
  size_t n = 64;
  while (n < 2 * op_table().size) n *= 2;
  names_.resize(n);
}

EagerEmitter::~EagerEmitter() = default;

void EagerEmitter::fail(const Status& s) {
  if (status_.ok() && !s.ok()) status_ = s;
}

EagerEmitter::Slot* EagerEmitter::live_slot(Value v) {
  if (v.graph != tag_ || v.id < 0 || static_cast<size_t>(v.id) >= slots_.size()) return nullptr;
  Slot& s = slots_[static_cast<size_t>(v.id)];
  return s.refs > 0 ? &s : nullptr;
}

const EagerEmitter::Slot* EagerEmitter::live_slot(Value v) const {
  return const_cast<EagerEmitter*>(this)->live_slot(v);
}

bool EagerEmitter::owns(Value v) const { return live_slot(v) != nullptr; }

Value EagerEmitter::new_slot(Tensor value, bool requires_grad, bool poison) {
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[static_cast<size_t>(id)];
  s.value = std::move(value);
  s.refs = 1;
  s.grad = -1;
  s.requires_grad = requires_grad;
  s.poison = poison;
  s.produced = false;
  ++live_;
  if (scope_) scope_->push_back(id);
  return {tag_, id};
}

void EagerEmitter::retain(Value v) {
  if (Slot* s = live_slot(v)) ++s->refs;
}

void EagerEmitter::release(Value v) {
  Slot* s = live_slot(v);
  if (!s || --s->refs > 0) return;
  s->value = Tensor();
  const int32_t grad = s->grad;
  s->grad = -1;
  free_.push_back(v.id);
  --live_;
  if (grad >= 0) release(Value{tag_, grad});
}

void EagerEmitter::poison_outputs(std::span<Value> outputs) {
  for (Value& o : outputs) o = new_slot(Tensor(), false, true);
}

Value EagerEmitter::poisoned(const Status& error) {
  fail(error);
  return new_slot(Tensor(), false, true);
}

Value EagerEmitter::wrap(Tensor t, bool requires_grad) {
  if (!t.defined()) return poisoned(invalid_argument("eager: wrap of an undefined tensor"));
  const bool rg = requires_grad && t.kind() == ValueKind::kTensor && dtype_is_float(t.dtype());
  return new_slot(std::move(t), rg, false);
}

const Tensor& EagerEmitter::tensor(Value v) const {
  static const Tensor kNone;
  const Slot* s = live_slot(v);
  return s ? s->value : kNone;
}

ops::ValueType EagerEmitter::type(Value v) const {
  const Slot* s = live_slot(v);
  if (!s || s->poison) return {};
  return ops::ValueType::of(s->value);
}

const Tensor* EagerEmitter::known_value(Value v) const {
  const Slot* s = live_slot(v);
  return s && !s->poison ? &s->value : nullptr;
}

OpRef EagerEmitter::resolve_cached(std::string_view op) {
  const size_t mask = names_.size() - 1;
  size_t i = static_cast<size_t>(fnv1a(op)) & mask;
  for (size_t probes = 0; probes < names_.size(); ++probes, i = (i + 1) & mask) {
    NameCacheEntry& e = names_[i];
    if (e.name.empty()) {
      const OpRef r = resolve(op);
      if (r.valid()) {  // at most one entry per registered op: the table never fills past half
        e.name = std::string(op);
        e.ref = r;
      }
      return r;
    }
    if (e.name == op) return e.ref;
  }
  return resolve(op);
}

EagerEmitter::KernelEntry* EagerEmitter::kernel_entry(OpRef op, size_t num_outputs, std::vector<ir::Attribute>& attrs) {
  const size_t ni = in_values_.size();
  auto& list = kernels_[static_cast<size_t>(op.ordinal)];
  for (const auto& e : list) {
    if (e->node.outputs.size() != num_outputs || e->in_dtypes.size() != ni) continue;
    bool same = true;
    for (size_t k = 0; k < ni && same; ++k)
      same = e->in_dtypes[k] == (in_values_[k] ? in_values_[k]->dtype() : DType::kUndefined);
    if (same && attrs_equal(e->node.attributes, e->given_attrs, attrs)) return e.get();
  }
  // A miss: validate the node once and create its kernel.
  const ops::OpDef& def = *op.def;
  if (!backend_) return nullptr;  // status_ holds the backend's error
  if (exec::is_control_flow_op(def.name)) {
    fail(unsupported("eager: ", def.name, " takes subgraphs; eager code branches and loops on the host"));
    return nullptr;
  }
  auto e = std::make_unique<KernelEntry>();
  e->place = str_cat("eager ", def.name);
  e->node.op = def.name;
  e->given_attrs = attrs.size();
  e->node.attributes = std::move(attrs);
  std::vector<ops::ValueType> types(ni);
  for (size_t k = 0; k < ni; ++k) {
    const Tensor* v = in_values_[k];
    e->in_dtypes.push_back(v ? v->dtype() : DType::kUndefined);
    e->node.inputs.push_back(v ? static_cast<int32_t>(k) : -1);
    // Only the dtype: the kernel is reused for every shape, as a Plan's is for dynamic shapes.
    if (v) types[k] = ops::ValueType{v->dtype(), false, {}, v->kind()};
  }
  for (size_t k = 0; k < num_outputs; ++k) e->node.outputs.push_back(static_cast<int32_t>(ni + k));
  Status s = ops::check_node_against_def(def, e->node, e->place);
  if (!s.ok()) {
    fail(s);
    return nullptr;
  }
  ops::fill_attribute_defaults(def, e->node);
  exec::KernelInit init{e->node, e->place, std::move(types), std::vector<const Tensor*>(ni, nullptr)};
  auto kernel = backend_->create_kernel(init);
  if (!kernel.ok()) {
    fail(kernel.status());
    return nullptr;
  }
  e->kernel = std::move(kernel).value();
  if (list.size() >= kMaxKernelsPerOp) list.erase(list.begin());
  list.push_back(std::move(e));
  return list.back().get();
}

void EagerEmitter::run(OpRef op, std::span<const Value> inputs, std::span<Value> outputs,
                       std::vector<ir::Attribute> attrs) {
  if (!op.valid()) {
    fail(unsupported("eager: unresolved op"));
    return poison_outputs(outputs);
  }
  const size_t ni = inputs.size();
  in_values_.resize(ni);
  bool any_grad = false;
  for (size_t k = 0; k < ni; ++k) {
    const Value v = inputs[k];
    if (!v.valid()) {
      in_values_[k] = nullptr;
      continue;
    }
    const Slot* s = live_slot(v);
    if (!s) {
      fail(invalid_argument("eager ", op.def->name, ".input[", k, "]: not a live value of this emitter"));
      return poison_outputs(outputs);
    }
    if (s->poison) return poison_outputs(outputs);  // the error is already recorded
    in_values_[k] = &s->value;
    any_grad |= s->requires_grad;
  }
  KernelEntry* e = kernel_entry(op, outputs.size(), attrs);
  if (!e) return poison_outputs(outputs);
  Status s = exec::run_node(e->node, *op.def, e->place, *e->kernel, {in_values_, in_types_, out_types_, outs_, scratch_}, pool_, nullptr);
  if (!s.ok()) {
    fail(s);
    return poison_outputs(outputs);
  }
  // in_values_ points into slots_, which new_slot may grow: it is not read past this point.
  const bool record = any_grad && grad_enabled_;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const bool rg = record && outs_[k].kind() == ValueKind::kTensor && dtype_is_float(outs_[k].dtype());
    outputs[k] = new_slot(std::move(outs_[k]), rg, false);
  }
  if (!record) return;
  TapeEntry t;
  t.def = op.def;
  t.node = e->node;
  t.inputs.assign(inputs.begin(), inputs.end());
  t.outputs.assign(outputs.begin(), outputs.end());
  for (const Value& v : t.inputs) retain(v);
  for (const Value& v : t.outputs) {
    retain(v);
    slots_[static_cast<size_t>(v.id)].produced = true;
  }
  tape_.push_back(std::move(t));
}

std::vector<Value> EagerEmitter::emit_n(std::string_view op, const std::vector<Value>& inputs, size_t num_outputs,
                                        std::vector<ir::Attribute> attrs) {
  std::vector<Value> outs(num_outputs);
  const OpRef r = resolve_cached(op);
  if (!r.valid()) {
    fail(unsupported("eager: unsupported op '", op, "'"));
    poison_outputs(outs);
    return outs;
  }
  run(r, inputs, outs, std::move(attrs));
  return outs;
}

// ---- Gradients -------------------------------------------------------------------------------

bool EagerEmitter::requires_grad(Value v) const {
  const Slot* s = live_slot(v);
  return s && s->requires_grad;
}

void EagerEmitter::set_requires_grad(Value v, bool on) {
  Slot* s = live_slot(v);
  if (!s || s->poison) return;
  s->requires_grad = on && s->value.kind() == ValueKind::kTensor && dtype_is_float(s->value.dtype());
}

void EagerEmitter::clear_tape() {
  std::vector<TapeEntry> tape = std::move(tape_);
  tape_.clear();
  for (const TapeEntry& t : tape) {
    for (const Value& v : t.inputs) release(v);
    for (const Value& v : t.outputs) release(v);
  }
}

Value EagerEmitter::accumulated_grad(Value v) const {
  const Slot* s = live_slot(v);
  return s && s->grad >= 0 ? Value{tag_, s->grad} : Value{};
}

void EagerEmitter::set_accumulated_grad(Value v, Value g) {
  Slot* s = live_slot(v);
  if (!s) return;
  const Value old = s->grad >= 0 ? Value{tag_, s->grad} : Value{};
  retain(g);
  s = live_slot(v);
  s->grad = owns(g) ? g.id : -1;
  release(old);
}

std::vector<size_t> EagerEmitter::path_entries(Value loss, const std::vector<Value>& wrt,
                                               std::vector<char>& active) const {
  const size_t n = slots_.size();
  auto in_range = [&](const Value& v) { return v.valid() && static_cast<size_t>(v.id) < n; };
  // Forward: which values depend differentiably on some wrt value.
  active.assign(n, 0);
  for (const Value& w : wrt)
    if (in_range(w)) active[static_cast<size_t>(w.id)] = 1;
  for (const TapeEntry& t : tape_) {
    const bool any = std::any_of(t.inputs.begin(), t.inputs.end(),
                                 [&](const Value& v) { return in_range(v) && active[static_cast<size_t>(v.id)]; });
    if (!any) continue;
    for (const Value& o : t.outputs)
      if (slots_[static_cast<size_t>(o.id)].requires_grad) active[static_cast<size_t>(o.id)] = 1;
  }
  // Backward: entries with an active input and an output that reaches the loss.
  std::vector<char> reaches(n, 0);
  if (in_range(loss)) reaches[static_cast<size_t>(loss.id)] = 1;
  std::vector<size_t> path;
  for (size_t i = tape_.size(); i-- > 0;) {
    const TapeEntry& t = tape_[i];
    const bool out = std::any_of(t.outputs.begin(), t.outputs.end(), [&](const Value& v) {
      return reaches[static_cast<size_t>(v.id)] && active[static_cast<size_t>(v.id)];
    });
    bool in = false;
    for (const Value& v : t.inputs)
      if (in_range(v) && active[static_cast<size_t>(v.id)]) {
        in = true;
        if (out) reaches[static_cast<size_t>(v.id)] = 1;
      }
    if (out && in) path.push_back(i);
  }
  return path;
}

std::vector<Value> EagerEmitter::leaves_of(Value loss) const {
  const size_t n = slots_.size();
  std::vector<char> reaches(n, 0), seen(n, 0);
  if (!owns(loss)) return {};
  reaches[static_cast<size_t>(loss.id)] = 1;
  std::vector<Value> leaves;
  auto leaf = [&](const Value& v) {
    const Slot& s = slots_[static_cast<size_t>(v.id)];
    return s.requires_grad && !s.produced;
  };
  if (leaf(loss)) leaves.push_back(loss);
  for (size_t i = tape_.size(); i-- > 0;) {
    const TapeEntry& t = tape_[i];
    if (!std::any_of(t.outputs.begin(), t.outputs.end(), [&](const Value& v) { return reaches[static_cast<size_t>(v.id)]; }))
      continue;
    for (const Value& v : t.inputs) {
      if (!v.valid()) continue;
      reaches[static_cast<size_t>(v.id)] = 1;
      if (leaf(v) && !seen[static_cast<size_t>(v.id)]) {
        seen[static_cast<size_t>(v.id)] = 1;
        leaves.push_back(v);
      }
    }
  }
  std::reverse(leaves.begin(), leaves.end());
  return leaves;
}

Expected<std::vector<Value>> EagerEmitter::gradients(Value loss, const std::vector<Value>& wrt, bool consume) {
  if (!status_.ok()) return Status(status_.code(), str_cat("gradients: an earlier eager op failed: ", status_.message()));
  const Slot* ls = live_slot(loss);
  if (!ls || ls->poison) return invalid_argument("gradients: the loss is not a live value of this emitter");
  if (!dtype_is_float(ls->value.dtype()))
    return invalid_argument("gradients: the loss has dtype ", dtype_name(ls->value.dtype()),
                            "; a gradient needs a floating-point loss");
  for (size_t i = 0; i < wrt.size(); ++i)
    if (!owns(wrt[i])) return invalid_argument("gradients: wrt[", i, "] is not a live value of this emitter");

  std::vector<char> active;
  const std::vector<size_t> path = path_entries(loss, wrt, active);
  // Every op on the path needs a rule: one error lists them all (as passes::backward does).
  std::map<std::string, std::vector<std::string>> missing;
  for (size_t i : path)
    if (!tape_[i].def->grad) missing[tape_[i].node.op].push_back(str_cat("eager op #", i, " (", tape_[i].node.op, ")"));
  if (!missing.empty()) return ops::missing_rules_error(missing, "eager op");

  // The rules run eagerly, unrecorded; whatever they create is released at the end except the
  // results.
  const bool saved_mode = grad_enabled_;
  grad_enabled_ = false;
  std::vector<int32_t> created;
  scope_ = &created;
  std::vector<Value> grad_of(slots_.size());
  auto accumulate = [&](const Value& v, Value g) {
    Value& acc = grad_of[static_cast<size_t>(v.id)];
    acc = acc.valid() ? emit("Add", {acc, g}) : g;
  };
  Status error;
  grad_of[static_cast<size_t>(loss.id)] = ops::fill_like(*this, loss, 1.0);
  for (size_t i : path) {
    TapeEntry& t = tape_[i];
    std::vector<Value> grad_out(t.outputs.size());
    bool any = false;
    for (size_t k = 0; k < t.outputs.size(); ++k) {
      grad_out[k] = grad_of[static_cast<size_t>(t.outputs[k].id)];
      any |= grad_out[k].valid();
    }
    if (!any) continue;
    std::vector<bool> wants(t.inputs.size());
    for (size_t k = 0; k < t.inputs.size(); ++k)
      wants[k] = t.inputs[k].valid() && active[static_cast<size_t>(t.inputs[k].id)];
    ops::GradContext ctx(*this, t.node, str_cat("eager op #", i, " (", t.node.op, ")"), t.inputs, t.outputs,
                         grad_out, wants);
    error = t.def->grad(ctx);
    if (error.ok() && !status_.ok()) error = Status(status_.code(), str_cat(ctx.place(), ": gradient: ", status_.message()));
    if (!error.ok()) break;
    for (size_t k = 0; k < t.inputs.size(); ++k)
      if (wants[k] && ctx.grad(k).valid()) accumulate(t.inputs[k], ctx.grad(k));
  }
  std::vector<Value> result;
  if (error.ok()) {
    for (const Value& w : wrt) {
      const Value g = grad_of[static_cast<size_t>(w.id)];
      result.push_back(g.valid() ? g : ops::zeros_like(*this, w));
    }
    if (!status_.ok()) error = status_;
  }
  scope_ = nullptr;
  grad_enabled_ = saved_mode;
  if (error.ok())
    for (const Value& r : result) retain(r);
  for (int32_t id : created) release(Value{tag_, id});
  if (!error.ok()) {
    status_ = Status();  // reported through the result; the emitter stays usable
    return error;
  }
  if (consume) {
    std::vector<char> used(tape_.size(), 0);
    for (size_t i : path) used[i] = 1;
    std::vector<TapeEntry> kept, dropped;
    for (size_t i = 0; i < tape_.size(); ++i) (used[i] ? dropped : kept).push_back(std::move(tape_[i]));
    tape_ = std::move(kept);
    for (const TapeEntry& t : dropped) {
      for (const Value& v : t.inputs) release(v);
      for (const Value& v : t.outputs) release(v);
    }
  }
  return result;
}

}  // namespace tsr::frontend
