// ONNX → Tessera IR importer (built on Debian's libonnx / libprotobuf).
//
// Maps an ONNX ModelProto to an ir::Model:
// - graph inputs (those that are not initializers), outputs and value_info with their dtypes and
//   shapes (dim_value → the dim; dim_param or unknown → -1, the symbolic name kept in
//   TensorInfo::dim_names); initializers (dense and sparse) and `Constant` nodes (every attribute
//   form: value, sparse_value, value_float(s), value_int(s), value_string(s)) become constant
//   tensors (TensorInfo::constant), not nodes. External tensor data comes from
//   ImportOptions::external_data (in memory); without it, it is an error naming the tensor.
// - ONNX shape inference (onnx::shape_inference::InferShapes, with data propagation) runs on the
//   ModelProto first, so intermediate values arrive with dtypes and shapes; its failures are
//   ignored (types then come from Tessera's own inference).
// - Opset normalization: every default-domain node is rewritten into its opset-17 form, the only
//   form Tessera's OpDefs implement (attribute-style operands of older opsets become constant
//   inputs, obsolete attributes are dropped, Upsample becomes Resize, …; see onnx_normalize.h).
//   Node::version keeps the opset the node was written against. Forms of opsets above 17 are
//   brought back to 17 where that is exact (Reduce* constant axes inputs, Pad-18 axes, …); other
//   changes of newer opsets pass through unchanged. Nodes of other domains (com.microsoft,
//   ai.onnx.ml, …) become op "<domain>::<op_type>", which has no OpDef: reported as unsupported.
// - All ops without an OpDef are listed in one kUnsupported error (passes::check_ops_supported),
//   then the model is verified (passes::verify_model, which runs type/shape inference).
//
// Subgraph convention (If / Loop / Scan, relied upon by the control-flow OpDefs and executor):
// every GRAPH attribute becomes a new ir::Graph appended to Model::graphs and is referenced by an
// attribute of kind kGraph holding its index (GRAPHS → kGraphs). ONNX subgraphs may read values of
// enclosing graphs implicitly; Tessera subgraphs may not. Every such capture becomes explicit:
// - the subgraph gets an extra input per captured outer value, appended after its ONNX-declared
//   inputs, in first-use order;
// - the node gets the outer value as an extra input, appended after its ONNX inputs (which are
//   never trimmed for such nodes, so that omitted optional inputs keep their positions);
// - all subgraphs of one node get the union of their captures, in the same order (for If, both
//   branches take the same extra inputs even if one branch does not read some of them), so the
//   node's extra input k feeds extra input k of every subgraph;
// - Loop and Scan record the number of extra inputs in an int attribute `num_captures` (for If
//   every input after `cond` is a capture; for SequenceMap they are extra `additional_inputs`);
// - nesting is recursive: a value captured two levels down becomes an extra input at each level;
// - constant outer values (initializers, Constant nodes) are not captured: the subgraph gets its
//   own constant tensor sharing the same data, so load-time inference still sees their values.
//
// Thread safety: the functions are reentrant. No exception escapes them.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/ir/graph.h"

namespace tsr::onnx_import {

struct ImportOptions {
  // true: run passes::check_ops_supported and then verify the model (type/shape inference). false:
  // return the mapped model without those checks (for tools that show what they could map, and
  // for tests); mapping and opset-normalization errors are still returned.
  bool verify = true;
  // Cap on the tensor bytes the import allocates (initializers, Constant values, dense copies
  // of sparse tensors), as MemoryBudget in core/tensor/tensor.h; 0 = default_memory_limit().
  // Past it the import fails with kResource naming the tensor instead of exhausting memory.
  size_t max_memory_bytes = 0;
  // External tensor data from memory: the contents of each data file (e.g. "model.onnx_data") by
  // the `location` the model's TensorProtos name (a leading "./" is ignored on both sides). Every
  // tensor stored externally (data_location EXTERNAL with location / offset / length keys) gets
  // its bytes from here before mapping. The views must outlive the call. Errors: kNotFound for a
  // location not given (listing the given ones), kInvalidModel for an offset/length past the end.
  // Left empty, external data is kUnsupported naming the tensor (nothing is read from disk).
  std::map<std::string, std::string_view> external_data;
};

// Reads and imports an .onnx file. kNotFound for a missing file, kInvalidModel for bytes that
// are not a valid ModelProto (or a malformed graph), kUnsupported listing every unsupported op
// (or naming an unsupported construct such as external data), plus verification errors.
Expected<ir::Model> import_onnx_file(const std::string& path, const ImportOptions& options = {});
// Same, from the serialized ModelProto; `name_for_errors` (e.g. the file name) prefixes messages.
Expected<ir::Model> import_onnx_bytes(const std::string& bytes, const std::string& name_for_errors,
                                      const ImportOptions& options = {});

// Reads a serialized ONNX TensorProto (.pb, as in the ONNX test data: test_data_set_*/input_0.pb)
// into a Tensor. kNotFound for a missing file, kInvalidModel for bytes that do not parse or
// data that does not match the dims, kUnsupported for external data or unsupported dtypes.
// An OptionalProto holding a tensor is read as that tensor; an empty one as Tensor::none().
Expected<Tensor> read_tensor_proto_file(const std::string& path);
// The same for any ONNX test-data value of the expected `kind` (use the graph input's or
// output's TensorInfo::kind): kTensor → TensorProto, kSequence → SequenceProto of tensors
// (Tensor::sequence); an OptionalProto is accepted for either (empty → Tensor::none of that kind).
// The protos share field numbers, so `kind` decides between a one-element sequence and an optional.
Expected<Tensor> read_value_proto_file(const std::string& path, ValueKind kind);

}  // namespace tsr::onnx_import
