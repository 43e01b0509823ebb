// Emitter: the one interface through which composite ops and gradient rules produce ops
// (DESIGN.md §5). `GraphBuilder` (core/frontend) records nodes into a static graph; the eager
// emitter runs each op at once; the tracer does both. Code written against Emitter (the VJPs of
// core/ops/grads/) therefore serves graph autodiff, the eager tape and traced graphs alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/ir/graph.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

// A value produced by an emitter. What `graph` and `id` mean belongs to the emitter (for the
// GraphBuilder: a graph index and a tensor id in it). Invalid = an omitted optional input, or
// "no gradient" in a gradient rule.
struct Value {
  int32_t graph = -1;
  int32_t id = -1;
  bool valid() const { return graph >= 0 && id >= 0; }
  friend bool operator==(const Value& a, const Value& b) { return a.graph == b.graph && a.id == b.id; }
};

class Emitter {
 public:
  virtual ~Emitter() = default;

  // Emits `op` (an OpDef name) with `inputs` (invalid Values = omitted optional inputs) and
  // `attrs`, returning its `num_outputs` outputs. Errors (unknown op, type mismatch) are kept in
  // status(); the returned Values are then still usable placeholders so emission can go on.
  virtual std::vector<Value> emit_n(std::string_view op, const std::vector<Value>& inputs, size_t num_outputs,
                                    std::vector<ir::Attribute> attrs = {}) = 0;
  Value emit(std::string_view op, const std::vector<Value>& inputs, std::vector<ir::Attribute> attrs = {}) {
    return emit_n(op, inputs, 1, std::move(attrs))[0];
  }
  // A constant value.
  virtual Value constant(Tensor value) = 0;
  // The value's type as far as it is known (a graph may have -1 dims; eager values are concrete).
  virtual ValueType type(Value v) const = 0;
  // The value when it is known now (a graph constant; every eager value), else null. Rules read
  // attribute-like inputs (axes, shapes) through it.
  virtual const Tensor* known_value(Value v) const = 0;
  // The first error met while emitting (ok if none).
  virtual const Status& status() const = 0;
};

}  // namespace tsr::ops
