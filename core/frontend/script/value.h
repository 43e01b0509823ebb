// Values of the script language at run time: host values (None, bools, ints, floats, strings,
// tuples, lists, functions) are Python objects evaluated by the interpreter itself; tensors are
// ops::Values of the mode's Emitter (eager values, traced values or graph values).
#pragma once

#include <limits>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/frontend/script/ast.h"
#include "core/ops/emitter.h"

namespace tsr::frontend::script {

struct ScriptValue;
using ValueList = std::vector<ScriptValue>;

struct ScriptValue {
  enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kString, kTensor, kTuple, kList, kFunction, kUndefined };
  Kind kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;       // kString; kUndefined: why the name has no value here
  ops::Value v;        // kTensor
  int owner = 0;       // kTensor: the interpreter whose emitter made it
  std::shared_ptr<const ValueList> items;  // kTuple, kList
  const FunctionDef* fn = nullptr;         // kFunction

  static ScriptValue none() { return {}; }
  static ScriptValue boolean(bool v) { ScriptValue r; r.kind = Kind::kBool; r.b = v; return r; }
  static ScriptValue integer(int64_t v) { ScriptValue r; r.kind = Kind::kInt; r.i = v; return r; }
  static ScriptValue real(double v) { ScriptValue r; r.kind = Kind::kFloat; r.f = v; return r; }
  static ScriptValue string(std::string v) { ScriptValue r; r.kind = Kind::kString; r.s = std::move(v); return r; }
  static ScriptValue tensor(ops::Value v, int owner) { ScriptValue r; r.kind = Kind::kTensor; r.v = v; r.owner = owner; return r; }
  static ScriptValue tuple(ValueList items, Kind k = Kind::kTuple) {
    ScriptValue r;
    r.kind = k;
    r.items = std::make_shared<const ValueList>(std::move(items));
    return r;
  }
  static ScriptValue function(const FunctionDef* f) { ScriptValue r; r.kind = Kind::kFunction; r.fn = f; return r; }
  static ScriptValue undefined(std::string why) { ScriptValue r; r.kind = Kind::kUndefined; r.s = std::move(why); return r; }

  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_number() const { return kind == Kind::kBool || kind == Kind::kInt || kind == Kind::kFloat; }
  bool is_sequence() const { return kind == Kind::kTuple || kind == Kind::kList; }
  double as_double() const { return kind == Kind::kFloat ? f : kind == Kind::kInt ? static_cast<double>(i) : b; }
  // A float is truncated toward zero and saturated to the int64 range (NaN gives 0), so that a
  // huge literal cannot make the conversion undefined; callers range-check the result.
  int64_t as_int() const {
    if (kind == Kind::kInt) return i;
    if (kind == Kind::kBool) return b;
    if (!(f == f)) return 0;
    if (f >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (f <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(f);
  }
};

// "int", "tensor", ... for messages.
const char* kind_name(ScriptValue::Kind k);

}  // namespace tsr::frontend::script
