// The script interpreter: runs the syntax tree over an ops::Emitter in one of three modes
// (DESIGN.md §8). Internal to core/frontend/script; the public entry points are in script.h.
//
//  - eager: each op runs as it is emitted; an `if`/`while` on a tensor reads its value;
//  - trace: the same, through a recording emitter; each tensor decision goes through the
//    target's decide() (the Tracer warns that the graph fixes it);
//  - convert: the emitter is a GraphBuilder; `if`/`while`/`for` whose condition or trip count is
//    a tensor become If/Loop nodes (control_flow.cpp), host values are computed at conversion
//    time.
// An Interpreter is single-threaded and borrows the Module and the target for its lifetime.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "core/frontend/script/ast.h"
#include "core/frontend/script/value.h"
#include "core/ops/graph_builder.h"

namespace tsr {
class Session;
}

namespace tsr::frontend::script {

// A host tensor from a number or a nested list of numbers. dtype kUndefined: f32 if any float,
// bool if all bools, else i64 (torch.tensor's rule). Errors: ragged lists, non-numbers.
Expected<Tensor> make_literal(const ScriptValue& v, DType dtype);

// The op callable as `name` in scripts: every registered op by its snake_case name (MatMul ->
// mat_mul) and its lowercase name (matmul); null if none. Control-flow ops (If, Loop, Scan) are
// not callable: scripts write if/while/for.
const ops::OpDef* find_script_op(const std::string& name);
// Every callable name, sorted, with its op (for documentation and `tessera script --list-ops`).
std::vector<std::pair<std::string, std::string>> script_op_names();

enum class Mode : uint8_t { kEager, kTrace, kConvert };
const char* mode_name(Mode m);

// What a mode supplies: the emitter, and how a tensor decides a host-level branch.
class ScriptTarget {
 public:
  virtual ~ScriptTarget() = default;
  virtual Mode mode() const = 0;
  virtual ops::Emitter& emitter() = 0;
  // Convert mode: the GraphBuilder behind emitter(). Null otherwise.
  virtual ops::GraphBuilder* builder() { return nullptr; }
  // Eager/trace: the truth value of a one-element tensor `cond` deciding a branch or loop at
  // `where` ("file:line:col"). The default reads emitter().known_value(); a tracer also warns.
  virtual Expected<bool> decide(ops::Value cond, const std::string& where);
};

// Convert mode's target: a GraphBuilder over `model` (graph 0 is the main graph).
class GraphTarget final : public ScriptTarget {
 public:
  explicit GraphTarget(ir::Model& model) : builder_(model) {}
  Mode mode() const override { return Mode::kConvert; }
  ops::Emitter& emitter() override { return builder_; }
  ops::GraphBuilder* builder() override { return &builder_; }

 private:
  ops::GraphBuilder builder_;
};

struct InterpreterOptions {
  // Convert mode: `for i in range(n)` with a host n is unrolled (true) or becomes a Loop.
  bool unroll = true;
  std::ostream* out = nullptr;   // print(); null = std::cout
  int max_call_depth = 64;
  int64_t max_host_iterations = 10000000;  // a host while loop that runs longer is an error
};

class Interpreter {
 public:
  Interpreter(const Module& module, ScriptTarget& target, InterpreterOptions options = {});
  ~Interpreter();

  // Executes the module's top-level statements (defs, globals). Call once, first.
  Status run_module();
  // The def named `name` at module level, or null.
  const FunctionDef* find_function(const std::string& name) const;
  // Calls a function with evaluated arguments (the entry point).
  Expected<ScriptValue> call(const FunctionDef& fn, const ValueList& args, Loc loc,
                             const std::vector<std::pair<std::string, ScriptValue>>& kwargs = {});
  // Wraps a Value of the target's emitter (an entry point's parameter) as a script tensor.
  ScriptValue tensor_arg(ops::Value v) { return wrap(v); }
  // Host warnings (trace mode: trip counts read from tensors), as diagnostics.
  const std::vector<std::string>& warnings() const { return warnings_; }
  const SourceFile& source() const { return *module_.source; }
  ops::Emitter& emitter() { return *em_; }
  int id() const { return id_; }

  // Makes the function's result a flat list of tensors (host numbers become constants); the
  // names are the returned variables' names where the return expression names them.
  Expected<std::vector<ops::Value>> flatten_result(const ScriptValue& result, Loc loc);
  Expected<ops::Value> as_tensor(const ScriptValue& v, DType like, Loc loc);

 private:
  struct Frame {
    std::map<std::string, ScriptValue> vars;
  };
  struct Flow {
    bool returned = false;
    ScriptValue value;
  };
  struct StaticEntry {  // a @static function converted for one argument signature
    std::shared_ptr<ir::Model> model;
    std::unique_ptr<Session> session;  // eager mode runs the graph through it
    bool has_control_flow = false;
    std::vector<size_t> tensor_args;  // which arguments are graph inputs, in order
    bool returns_tuple = false;
    size_t num_outputs = 0;
  };

  // statements (interpreter.cpp)
  Expected<Flow> exec_block(const Block& block, size_t start = 0, const Block* rest = nullptr, size_t rest_start = 0);
  Expected<Flow> exec(const Stmt& s, const Block& block, size_t index, bool* consumed_rest, const Block* rest,
                      size_t rest_start);
  Status assign(const Expr& target, const ScriptValue& value);
  Expected<Flow> exec_for(const Stmt& s);
  Expected<bool> truth(const ScriptValue& v, Loc loc);

  // expressions (interpreter.cpp, operators.cpp)
  Expected<ScriptValue> eval(const Expr& e);
  Expected<ScriptValue> lookup(const std::string& name, Loc loc);
  Expected<ScriptValue> binary(BinOp op, const ScriptValue& a, const ScriptValue& b, Loc loc);
  Expected<ScriptValue> compare(CmpOp op, const ScriptValue& a, const ScriptValue& b, Loc loc);
  Expected<ScriptValue> logical(ExprKind kind, const Expr& e);
  Expected<ScriptValue> negate(const ScriptValue& a, Loc loc);
  Expected<ScriptValue> subscript(const ScriptValue& a, const ScriptValue& index, Loc loc);
  // Emits through the current emitter; an emitter error becomes a diagnostic at `loc`.
  Expected<std::vector<ops::Value>> emit(const std::string& op, const std::vector<ops::Value>& inputs, size_t n,
                                         std::vector<ir::Attribute> attrs, Loc loc);
  Expected<ops::Value> emit1(const std::string& op, const std::vector<ops::Value>& inputs, Loc loc,
                             std::vector<ir::Attribute> attrs = {});
  ScriptValue wrap(ops::Value v) { return ScriptValue::tensor(v, id_); }
  Expected<ops::Value> to_bool_scalar(ops::Value v, Loc loc);

  // calls (builtins.cpp)
  Expected<ScriptValue> eval_call(const Expr& e);
  // A builtin by name through a table of the builtin_* below; *found: whether `name` was one.
  Expected<ScriptValue> call_builtin(const std::string& name, const Expr& e, bool* found);
  struct BuiltinArgs;  // a builtin call's evaluated arguments (builtins.cpp)
  Expected<ScriptValue> builtin_range(BuiltinArgs& a);
  Expected<ScriptValue> builtin_print(BuiltinArgs& a);
  Expected<ScriptValue> builtin_tensor(BuiltinArgs& a);
  Expected<ScriptValue> builtin_fill(BuiltinArgs& a);  // zeros, ones, randn
  Expected<ScriptValue> builtin_len(BuiltinArgs& a);
  Expected<ScriptValue> builtin_number(BuiltinArgs& a);     // int, float
  Expected<ScriptValue> builtin_host_math(BuiltinArgs& a);  // min, max, abs of host numbers
  Expected<ScriptValue> call_op(const std::string& op, const Expr& e);
  // call_op's inputs (arity checked; host numbers and lists as constants) and one attribute.
  Expected<std::vector<ops::Value>> op_inputs(const ops::OpDef& def, const std::string& op_name, const Expr& e);
  Expected<ir::Attribute> op_attribute(const ops::OpDef& def, const Keyword& k, const ScriptValue& v);
  Expected<ScriptValue> call_function(const FunctionDef& fn, const ValueList& args,
                                      const std::vector<std::pair<std::string, ScriptValue>>& kwargs, Loc loc);
  Expected<ScriptValue> call_static(const FunctionDef& fn, const ValueList& args, Loc loc);  // static_call.cpp
  std::string format(const ScriptValue& v);

  // converted control flow (control_flow.cpp)
  // A converted if: how its branches end and what they hand on.
  struct IfShape {
    const Stmt& s;
    const Block* rest;  // the statements after the if, which a branch may absorb
    size_t rest_start;
    bool returning = false, then_takes_rest = false, else_takes_rest = false;
    std::vector<std::string> outputs;  // the variables the If outputs (when not returning)
    std::set<std::string> poisoned;    // assigned in one branch only: no value after the if
    ScriptValue returned_shape;        // the then branch's return value (for its structure)
  };
  // Whether both branches return (the rest joining a branch that does not); an error if one may not.
  Status if_returns(IfShape& shape);
  void if_outputs(IfShape& shape);
  void poison(const IfShape& shape, const std::string& at);
  // One branch built by `b` (errors go to pending_); branch_result runs it in `branch`.
  std::vector<ops::Value> convert_branch(ops::GraphBuilder& b, const Block& body, bool takes_rest, const char* which,
                                         IfShape& shape);
  Expected<std::vector<ops::Value>> branch_result(const Block& body, bool takes_rest, const char* which,
                                                  IfShape& shape, const Frame& branch, const Frame& before);
  Expected<Flow> convert_if(const Stmt& s, ops::Value cond, const Block* rest, size_t rest_start, bool* consumed_rest);
  Expected<Flow> convert_while(const Stmt& s, ops::Value cond);
  Expected<Flow> convert_for(const Stmt& s, const ScriptValue& start, const ScriptValue& stop, int64_t step);
  Expected<Flow> convert_loop(const Stmt* s, ops::Value cond, const ScriptValue* start, const ScriptValue* stop,
                              int64_t step);
  // The loop-carried variables' initial values (host numbers as constants) and their dtypes.
  Expected<std::vector<ops::Value>> loop_init(const Stmt& s, const char* what, const std::vector<std::string>& names,
                                              std::vector<DType>* dtypes);
  // A for loop's trip count max(0, ceil((stop - start) / step)) and its start (unset when 0).
  Status for_trip_count(const Stmt& s, const ScriptValue& start, const ScriptValue& stop, int64_t step, ops::Value* n,
                        ops::Value* start_v);
  // After a converted loop: the variables first assigned in it (and a for's variable) have no value.
  void undefine_after_loop(const Stmt& s, const char* what, const std::set<std::string>& fresh, bool is_for);

  Status error(Loc loc, const std::string& msg, StatusCode code = StatusCode::kInvalidArgument) const;
  std::string where(Loc loc) const { return module_.source->where(loc); }

  const Module& module_;
  ScriptTarget& target_;
  InterpreterOptions options_;
  const int id_;
  ops::Emitter* em_;         // the emitter ops go to now (a branch builder while converting one)
  ops::GraphBuilder* gb_;    // convert mode: em_ as a GraphBuilder
  Frame globals_;
  Frame* frame_;
  int depth_ = 0;
  bool bypass_static_ = false;  // trace mode runs a @static body with control flow as plain code
  Interpreter* outer_ = nullptr;  // a @static conversion reads the calling interpreter's globals
  std::map<std::pair<int, int32_t>, ops::Value> imported_;  // (owner, id) -> constant here
  std::vector<std::string> warnings_;
  Status pending_;  // an error raised inside a GraphBuilder callback
  std::map<std::string, std::unique_ptr<StaticEntry>> static_cache_;
};

}  // namespace tsr::frontend::script
