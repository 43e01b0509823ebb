// The script language: a Python subset run in three modes over the Emitter (DESIGN.md §8).
//
// Supported: def (decorators, parameters with defaults, annotations ignored); assignment,
// tuple unpacking, augmented assignment (+= -= *= /= //= %= @= **=); operators + - * / // % @ **
// unary - +, comparisons (chained too), and/or/not; calls with keyword arguments; numbers,
// strings, True/False/None, lists and tuples (nested lists of numbers are tensor literals where
// a tensor is wanted); x[i] (host lists/tuples; Gather along axis 0 on tensors); if/elif/else;
// while; for v in range(...) or over a list/tuple; return (tuples too); pass; comments.
// Not supported (each is a diagnostic naming it): class, lambda, with, try/except/raise, import,
// global/nonlocal, yield, async, del, assert, break/continue, comprehensions, generator
// expressions, slices, dicts/sets, attribute and method access (x.shape), conditional
// expressions, bitwise operators, 'is' / 'in', *args/**kwargs, else on loops, triple-quoted
// strings, string formatting.
//
// Builtins: print(*values); tensor(data, dtype=None); zeros(shape, dtype="f32"),
// ones(shape, dtype="f32") (a tensor shape gives ConstantOfShape); randn(shape, seed=0,
// dtype="f32") (normal values from splitmix64 + Box-Muller, the same on every platform);
// len(x) (host int when known, else a tensor); min/max/abs on host numbers (on tensors they are
// the ops Min/Max/Abs); int(x), float(x) on host numbers. range() only as a for iterable.
// Ops: every registered op by its snake_case name (mat_mul, reduce_sum, conv, global_average_pool)
// or lowercase name (matmul, reducesum); inputs positional (None = omitted optional input; host
// integers become i64 tensors, host floats the dtype of the first float tensor input or f32),
// attributes as keywords (ints, floats, strings, lists; a dtype name for an integer attribute
// such as Cast's to="f64"); num_outputs= picks the output count of variadic ops.
// Tensors and host numbers: a host number meeting a tensor takes the tensor's dtype. `//` on
// integer tensors truncates (ONNX Div), `%` on float tensors is C fmod.
//
// @static: see static_call.cpp. Errors: "file:line:col: error: message" + the source line and a
// caret; kInvalidArgument for syntax and runtime errors, kUnsupported for constructs outside
// the subset, kNotFound for unknown names.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/frontend/eager_emitter.h"
#include "core/frontend/script/interpreter.h"
#include "core/frontend/script/parser.h"

namespace tsr::frontend::script {

struct ScriptOptions {
  std::string entry;  // the function to run
  Mode mode = Mode::kEager;
  // The entry's arguments by parameter name. A parameter without an input takes its default
  // value (a host value: convert mode then bakes it into the graph).
  std::vector<std::pair<std::string, Tensor>> inputs;
  // Convert mode: parameter -> axes left dynamic (-1) in the graph input.
  std::map<std::string, std::vector<int64_t>> dynamic_axes;
  bool unroll = true;           // convert mode: unroll `for` over host ranges
  // Eager mode: run on this emitter instead of a private one (the caller keeps the tape and the
  // values; it must outlive nothing but the call). Parameters named in `requires_grad` are
  // wrapped as tape leaves, so the caller can take gradients with EagerEmitter::gradients().
  EagerEmitter* eager = nullptr;
  std::vector<std::string> requires_grad;
  std::ostream* out = nullptr;  // print(); null = std::cout
  // Host `while` loops running longer than this are an error (InterpreterOptions); the fuzz
  // harness lowers it so that a script's runaway loop ends in milliseconds.
  int64_t max_host_iterations = InterpreterOptions{}.max_host_iterations;
};

struct ScriptResult {
  std::vector<std::string> output_names;
  // eager and trace: the entry's results. convert: the graph's outputs on the given inputs.
  std::vector<Tensor> outputs;
  // Eager mode: the results and the given inputs (in options.inputs order) as Values of the
  // emitter; only meaningful with options.eager (a private emitter dies with the call).
  std::vector<ops::Value> output_values, input_values;
  // trace and convert: the graph (inputs = the entry's tensor parameters). Null in eager mode.
  std::shared_ptr<ir::Model> model;
  std::vector<std::string> warnings;  // diagnostics ("file:line:col: warning: ...")
};

// Parses and runs `text` in the requested mode. Errors are diagnostics (see above).
Expected<ScriptResult> run_script(const std::string& file_name, const std::string& text, const ScriptOptions& options);

// The names of `fn`'s results: the names its return statement lists, else output_<i>.
std::vector<std::string> result_names(const FunctionDef& fn, size_t count);

// A graph-text rendering of a model (for --print-graph): each graph's inputs, nodes with
// attributes, outputs, and subgraphs indented under their If/Loop.
std::string graph_text(const ir::Model& model);

}  // namespace tsr::frontend::script
