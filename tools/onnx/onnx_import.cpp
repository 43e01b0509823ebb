// ONNX ModelProto → ir::Model (see onnx_import.h for the contract and the subgraph convention).
// libonnx throws; every call into it is wrapped so that no exception leaves this file.
#include "tools/onnx/onnx_import.h"
#include "core/ops/op_def.h"

#include <onnx/onnx_pb.h>
// Types and shapes come from Tessera's own inference (passes::infer_types, at verification), not
// from libonnx's: its 1.12 inference functions dereference missing attributes and inputs of
// hostile files (tests/fuzz found a Scan without `body` and a Conv in convPoolShapeInference), and
// the WebAssembly build has no libonnx at all. TSR_ONNX_LITE (web/CMakeLists.txt): protoc's lite
// classes of onnx.proto, no onnx-data.proto (the test-data readers report kUnsupported).
#if !defined(TSR_ONNX_LITE)
// onnx-data.pb.h needs ONNX_API from onnx_pb.h: keep this order.
#include <onnx/onnx-data.pb.h>
#endif

#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <unordered_map>

#include "core/passes/verify_model.h"
#include "core/passes/infer_types.h"
#include "tools/onnx/onnx_gradient.h"
#include "tools/onnx/onnx_normalize.h"
#include "tools/onnx/onnx_tensor.h"

namespace tsr::onnx_import {

namespace {

using onnx::AttributeProto;

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// One graph being built, with the chain of enclosing graphs it may capture from.
struct Scope {
  Scope* parent = nullptr;
  ir::Graph graph;
  std::unordered_map<std::string, int32_t> names;
  std::vector<std::string> captures;                      // outer names, in first-use order
  std::unordered_map<std::string, int32_t> capture_ids;   // outer name → local input id
};

struct SubgraphBuild {
  int32_t index = 0;
  std::unique_ptr<Scope> scope;
};

class Importer {
 public:
  explicit Importer(ir::Model& model) : model_(model) {}

  Status read_opsets(const onnx::ModelProto& mp) {
    for (const auto& o : mp.opset_import()) opsets_[is_default_domain(o.domain()) ? "" : o.domain()] = o.version();
    // IR version < 3 models predate opset_import and mean opset 1.
    if (!opsets_.count("")) opsets_[""] = mp.opset_import_size() == 0 ? 1 : 17;
    return ok_status();
  }
  int64_t default_opset() const { return opsets_.at(""); }
  const std::unordered_map<std::string, int64_t>& opsets() const { return opsets_; }
  const Status& deferred() const { return deferred_; }

  Status build_graph(onnx::GraphProto& gp, Scope& s, int32_t gidx);

 private:
  void defer(Status st) {
    if (!st.ok() && deferred_.ok()) deferred_ = std::move(st);
  }
  Status declare(Scope& s, ir::TensorInfo info, int32_t* id_out, const std::string& where);
  Expected<int32_t> lookup(Scope& s, const std::string& name, const std::string& place);
  Status map_node(onnx::NodeProto& np, Scope& s, int32_t gidx, int onnx_index);
  Expected<ir::Attribute> map_attribute(AttributeProto& a, Scope& s, const std::string& place,
                                        std::vector<SubgraphBuild>& subs, bool& skip);
  Expected<Tensor> constant_node_value(const onnx::NodeProto& np, const std::string& place);

  ir::Model& model_;
  std::unordered_map<std::string, int64_t> opsets_;
  Status deferred_;
};

std::string onnx_place(int32_t gidx, int k, const onnx::NodeProto& np) {
  return str_cat("graph[", gidx, "] onnx node[", k, "] (", np.op_type(), " \"", np.name(), "\")");
}

Status Importer::declare(Scope& s, ir::TensorInfo info, int32_t* id_out, const std::string& where) {
  if (info.name.empty()) return invalid_model(where, ": empty value name");
  if (s.names.count(info.name)) return invalid_model(where, ": value '", info.name, "' is defined twice");
  const std::string name = info.name;
  const int32_t id = s.graph.add_tensor(std::move(info));
  s.names.emplace(name, id);
  if (id_out) *id_out = id;
  return ok_status();
}

Expected<int32_t> Importer::lookup(Scope& s, const std::string& name, const std::string& place) {
  if (auto it = s.names.find(name); it != s.names.end()) return it->second;
  if (!s.parent) return invalid_model(place, ": value '", name, "' is not defined");
  TSR_ASSIGN_OR_RETURN(int32_t outer, lookup(*s.parent, name, place));
  ir::TensorInfo info = s.parent->graph.tensors[static_cast<size_t>(outer)];
  const bool is_const = info.constant.defined();
  const int32_t id = s.graph.add_tensor(std::move(info));
  s.names.emplace(name, id);
  if (!is_const) {
    s.captures.push_back(name);
    s.capture_ids.emplace(name, id);
  }
  return id;
}

Expected<Tensor> Importer::constant_node_value(const onnx::NodeProto& np, const std::string& place) {
  if (np.attribute_size() != 1) return invalid_model(place, ": Constant needs exactly one value attribute");
  const AttributeProto& a = np.attribute(0);
  const std::string what = np.output_size() > 0 ? np.output(0) : np.name();
  const std::string& n = a.name();
  if (n == "value") return tensor_from_proto(a.t(), what);
  if (n == "sparse_value") return tensor_from_sparse_proto(a.sparse_tensor(), what);
  if (n == "value_float") return Tensor::scalar<float>(a.f());
  if (n == "value_int") return Tensor::scalar<int64_t>(a.i());
  if (n == "value_string") {
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType::kString, {}));
    *t.mut_data<std::string>() = a.s();
    return t;
  }
  if (n == "value_floats")
    return Tensor::from<float>({a.floats_size()}, std::vector<float>(a.floats().begin(), a.floats().end()));
  if (n == "value_ints")
    return Tensor::from<int64_t>({a.ints_size()}, std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  if (n == "value_strings") {
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(DType::kString, {a.strings_size()}));
    for (int k = 0; k < a.strings_size(); ++k) t.mut_data<std::string>()[k] = a.strings(k);
    return t;
  }
  return invalid_model(place, ": Constant has unknown attribute '", n, "'");
}

// Attribute kind from the set fields, for IR-v1 models that leave AttributeProto.type unset.
AttributeProto::AttributeType guess_kind(const AttributeProto& a) {
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.floats_size()) return AttributeProto::FLOATS;
  if (a.ints_size()) return AttributeProto::INTS;
  if (a.strings_size()) return AttributeProto::STRINGS;
  if (a.graphs_size()) return AttributeProto::GRAPHS;
  return AttributeProto::UNDEFINED;
}

Expected<ir::Attribute> Importer::map_attribute(AttributeProto& a, Scope& s, const std::string& place,
                                                std::vector<SubgraphBuild>& subs, bool& skip) {
  using ir::Attribute;
  skip = false;
  const std::string& n = a.name();
  auto build_sub = [&](onnx::GraphProto& g) -> Expected<int32_t> {
    const auto idx = static_cast<int32_t>(model_.graphs.size());
    model_.graphs.emplace_back();
    auto child = std::make_unique<Scope>();
    child->parent = &s;
    TSR_RETURN_IF_ERROR(build_graph(g, *child, idx));
    subs.push_back({idx, std::move(child)});
    return idx;
  };
  const auto kind = a.type() == AttributeProto::UNDEFINED ? guess_kind(a) : a.type();
  switch (kind) {
    case AttributeProto::FLOAT: return Attribute::make_float(n, a.f());
    case AttributeProto::INT: return Attribute::make_int(n, a.i());
    case AttributeProto::STRING: return Attribute::make_string(n, a.s());
    case AttributeProto::FLOATS: return Attribute::make_floats(n, std::vector<double>(a.floats().begin(), a.floats().end()));
    case AttributeProto::INTS: return Attribute::make_ints(n, std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AttributeProto::STRINGS: return Attribute::make_strings(n, std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case AttributeProto::TENSOR: {
      TSR_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(a.t(), str_cat(place, " attribute '", n, "'")));
      return Attribute::make_tensor(n, std::move(t));
    }
    case AttributeProto::SPARSE_TENSOR: {
      TSR_ASSIGN_OR_RETURN(Tensor t, tensor_from_sparse_proto(a.sparse_tensor(), str_cat(place, " attribute '", n, "'")));
      return Attribute::make_tensor(n, std::move(t));
    }
    case AttributeProto::GRAPH: {
      TSR_ASSIGN_OR_RETURN(int32_t idx, build_sub(*a.mutable_g()));
      return Attribute::make_graph(n, idx);
    }
    case AttributeProto::GRAPHS: {
      Attribute r;
      r.name = n;
      r.kind = ir::AttrKind::kGraphs;
      for (auto& g : *a.mutable_graphs()) {
        TSR_ASSIGN_OR_RETURN(int32_t idx, build_sub(g));
        r.ints.push_back(idx);
      }
      return r;
    }
    case AttributeProto::TYPE_PROTO: {
      // Only Optional uses one (its element type): stored as "tensor:<dtype>" or
      // "sequence:<dtype>" with dtype_name()'s short names, which its OpDef parses.
      const onnx::TypeProto* tp = &a.tp();
      const char* what = "tensor";
      if (tp->has_sequence_type()) {
        what = "sequence";
        tp = &tp->sequence_type().elem_type();
      }
      if (tp->has_tensor_type()) {
        const DType dt = dtype_from_onnx(tp->tensor_type().elem_type());
        if (dt != DType::kUndefined) return Attribute::make_string(n, str_cat(what, ":", dtype_name(dt)));
      }
      skip = true;
      defer(unsupported(place, ": attribute '", n, "': type attribute is not a tensor or a sequence of tensors ",
                        "of a supported dtype"));
      return Attribute{};
    }
    default:
      skip = true;
      defer(unsupported(place, ": attribute '", n, "' has ONNX attribute type ", static_cast<int>(kind),
                        ", which Tessera does not support"));
      return Attribute{};
  }
}

Status Importer::map_node(onnx::NodeProto& np, Scope& s, int32_t gidx, int onnx_index) {
  const std::string oplace = onnx_place(gidx, onnx_index, np);
  const bool default_domain = is_default_domain(np.domain());
  ir::Node node;
  node.name = np.name();
  node.op = default_domain ? np.op_type() : str_cat(np.domain(), "::", np.op_type());
  // Ops of another domain that Tessera defines under that domain (the preview-training
  // optimizers) keep their plain name.
  if (!default_domain) {
    const ops::OpDef* def = ops::OpRegistry::global().find(np.op_type());
    if (def && def->domain == np.domain()) node.op = np.op_type();
  }
  if (auto it = opsets_.find(default_domain ? "" : np.domain()); it != opsets_.end())
    node.version = static_cast<int32_t>(it->second);
  for (const auto& in : np.input()) {
    if (in.empty()) {
      node.inputs.push_back(-1);
    } else {
      TSR_ASSIGN_OR_RETURN(int32_t id, lookup(s, in, oplace));
      node.inputs.push_back(id);
    }
  }
  for (const auto& out : np.output()) node.outputs.push_back(out.empty() ? -1 : s.names.at(out));
  while (!node.outputs.empty() && node.outputs.back() < 0) node.outputs.pop_back();

  std::vector<SubgraphBuild> subs;
  for (auto& a : *np.mutable_attribute()) {
    bool skip = false;
    TSR_ASSIGN_OR_RETURN(ir::Attribute attr, map_attribute(a, s, oplace, subs, skip));
    if (!skip) node.attributes.push_back(std::move(attr));
  }
  if (subs.empty()) {
    // Trailing omitted inputs are the same as absent ones in ONNX.
    while (!node.inputs.empty() && node.inputs.back() < 0) node.inputs.pop_back();
  } else {
    // The union of the subgraphs' captures, in first-use order over the attributes.
    std::vector<std::string> all;
    std::unordered_map<std::string, bool> seen;
    for (const auto& sb : subs)
      for (const auto& c : sb.scope->captures)
        if (seen.emplace(c, true).second) all.push_back(c);
    for (auto& sb : subs) {
      Scope& cs = *sb.scope;
      for (const auto& c : all) {
        int32_t local = -1;
        if (auto it = cs.capture_ids.find(c); it != cs.capture_ids.end()) {
          local = it->second;
        } else {
          // This subgraph does not read `c`: give it an unused input of the same type.
          TSR_ASSIGN_OR_RETURN(int32_t outer, lookup(s, c, oplace));
          ir::TensorInfo info = s.graph.tensors[static_cast<size_t>(outer)];
          info.constant = Tensor();
          GraphEdit edit(cs.graph, cs.names);
          local = edit.add_value(c);
          ir::TensorInfo& li = cs.graph.tensors[static_cast<size_t>(local)];
          const std::string nm = li.name;
          li = std::move(info);
          li.name = nm;
        }
        cs.graph.inputs.push_back(local);
      }
      model_.graphs[static_cast<size_t>(sb.index)] = std::move(cs.graph);
    }
    for (const auto& c : all) {
      TSR_ASSIGN_OR_RETURN(int32_t outer, lookup(s, c, oplace));
      node.inputs.push_back(outer);
    }
    if (default_domain && (np.op_type() == "Loop" || np.op_type() == "Scan"))
      node.attributes.push_back(ir::Attribute::make_int("num_captures", static_cast<int64_t>(all.size())));
  }

  GraphEdit edit(s.graph, s.names);
  if (!default_domain) {
    s.graph.nodes.push_back(std::move(node));
    return ok_status();
  }
  const std::string place = ir::node_place(gidx, static_cast<int32_t>(s.graph.nodes.size()), node);
  defer(normalize_and_append(std::move(node), default_opset(), place, edit));
  return ok_status();
}

Status Importer::build_graph(onnx::GraphProto& gp, Scope& s, int32_t gidx) {
  const std::string gplace = str_cat("graph[", gidx, "] \"", gp.name(), "\"");
  s.graph.name = gp.name();
  for (auto& tp : *gp.mutable_initializer()) {
    ir::TensorInfo info;
    info.name = tp.name();
    TSR_ASSIGN_OR_RETURN(info.constant, tensor_from_proto(tp, tp.name()));
    tp.clear_raw_data();  // the Tensor owns a copy now; keep the peak memory near one model
    info.dtype = info.constant.dtype();
    info.has_shape = true;
    info.shape = info.constant.shape();
    TSR_RETURN_IF_ERROR(declare(s, std::move(info), nullptr, gplace + " initializer"));
  }
  for (const auto& sp : gp.sparse_initializer()) {
    ir::TensorInfo info;
    info.name = sp.values().name();
    TSR_ASSIGN_OR_RETURN(info.constant, tensor_from_sparse_proto(sp, info.name));
    info.dtype = info.constant.dtype();
    info.has_shape = true;
    info.shape = info.constant.shape();
    TSR_RETURN_IF_ERROR(declare(s, std::move(info), nullptr, gplace + " sparse initializer"));
  }
  for (const auto& vi : gp.input()) {
    // IR < 4 lists initializers among the inputs too; they stay constants.
    if (s.names.count(vi.name())) continue;
    ir::TensorInfo info;
    info.name = vi.name();
    TSR_RETURN_IF_ERROR(apply_type_proto(vi.type(), info, vi.name()));
    int32_t id = -1;
    TSR_RETURN_IF_ERROR(declare(s, std::move(info), &id, gplace + " input"));
    s.graph.inputs.push_back(id);
  }
  // Every node output is declared before any node is mapped, so that subgraphs (and unsorted
  // graphs) can refer to values produced later in the list.
  for (int k = 0; k < gp.node_size(); ++k) {
    const auto& np = gp.node(k);
    const std::string place = onnx_place(gidx, k, np);
    if (is_default_domain(np.domain()) && np.op_type() == "Constant") {
      if (np.output_size() != 1 || np.output(0).empty()) return invalid_model(place, ": Constant needs one output");
      ir::TensorInfo info;
      info.name = np.output(0);
      TSR_ASSIGN_OR_RETURN(info.constant, constant_node_value(np, place));
      info.dtype = info.constant.dtype();
      info.has_shape = true;
      info.shape = info.constant.shape();
      TSR_RETURN_IF_ERROR(declare(s, std::move(info), nullptr, place));
      continue;
    }
    for (const auto& out : np.output()) {
      if (out.empty()) continue;
      ir::TensorInfo info;
      info.name = out;
      TSR_RETURN_IF_ERROR(declare(s, std::move(info), nullptr, place));
    }
  }
  auto apply = [&](const onnx::ValueInfoProto& vi) -> Status {
    auto it = s.names.find(vi.name());
    if (it == s.names.end()) return ok_status();
    ir::TensorInfo& info = s.graph.tensors[static_cast<size_t>(it->second)];
    if (info.constant.defined()) return ok_status();
    return apply_type_proto(vi.type(), info, vi.name());
  };
  for (const auto& vi : gp.value_info()) TSR_RETURN_IF_ERROR(apply(vi));
  for (const auto& vi : gp.output()) TSR_RETURN_IF_ERROR(apply(vi));
  for (int k = 0; k < gp.node_size(); ++k) {
    auto& np = *gp.mutable_node(k);
    if (is_default_domain(np.domain()) && np.op_type() == "Constant") continue;
    TSR_RETURN_IF_ERROR(map_node(np, s, gidx, k));
  }
  for (const auto& vi : gp.output()) {
    TSR_ASSIGN_OR_RETURN(int32_t id, lookup(s, vi.name(), gplace + " output"));
    s.graph.outputs.push_back(id);
  }
  return ok_status();
}



// ONNX external data (onnx/external_data_helper.py's layout): a TensorProto with data_location
// EXTERNAL and string entries location, offset (default 0) and length (default: to the end of
// the file). Moves the bytes from `files` into raw_data, so tensor_from_proto reads it as inline.
class ExternalData {
 public:
  explicit ExternalData(const std::map<std::string, std::string_view>& files) {
    for (const auto& [loc, bytes] : files) files_[std::string(strip(loc))] = bytes;
  }

  Status graph(onnx::GraphProto& g) {
    for (auto& t : *g.mutable_initializer()) TSR_RETURN_IF_ERROR(tensor(t));
    for (auto& sp : *g.mutable_sparse_initializer()) {
      TSR_RETURN_IF_ERROR(tensor(*sp.mutable_values()));
      TSR_RETURN_IF_ERROR(tensor(*sp.mutable_indices()));
    }
    for (auto& n : *g.mutable_node())
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_t()) TSR_RETURN_IF_ERROR(tensor(*a.mutable_t()));
        for (auto& t : *a.mutable_tensors()) TSR_RETURN_IF_ERROR(tensor(t));
        if (a.has_sparse_tensor()) {
          TSR_RETURN_IF_ERROR(tensor(*a.mutable_sparse_tensor()->mutable_values()));
          TSR_RETURN_IF_ERROR(tensor(*a.mutable_sparse_tensor()->mutable_indices()));
        }
        if (a.has_g()) TSR_RETURN_IF_ERROR(graph(*a.mutable_g()));
        for (auto& sg : *a.mutable_graphs()) TSR_RETURN_IF_ERROR(graph(sg));
      }
    return ok_status();
  }

 private:
  std::map<std::string, std::string_view, std::less<>> files_;

  static std::string_view strip(std::string_view loc) { return loc.substr(0, 2) == "./" ? loc.substr(2) : loc; }

  Status tensor(onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0) return ok_status();
    std::string loc;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") loc = kv.value();
      if (kv.key() == "offset" || kv.key() == "length") {
        const std::string& v = kv.value();
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0)
          return invalid_model("tensor '", t.name(), "': external data ", kv.key(), " \"", v, "\" is not a size");
        (kv.key() == "offset" ? offset : length) = n;
      }
    }
    auto it = files_.find(strip(loc));
    if (it == files_.end()) {
      std::string given;
      for (const auto& f : files_) given += str_cat(given.empty() ? "" : ", ", "'", f.first, "'");
      return not_found("tensor '", t.name(), "': its external data file '", loc, "' was not given (given: ", given, ")");
    }
    const auto size = static_cast<int64_t>(it->second.size());
    if (offset > size || (length >= 0 && length > size - offset))
      return invalid_model("tensor '", t.name(), "': external data at offset ", offset, " length ", length,
                           " is past the end of '", loc, "' (", size, " bytes)");
    t.set_raw_data(std::string(it->second.substr(static_cast<size_t>(offset),
                                                 length < 0 ? std::string_view::npos : static_cast<size_t>(length))));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    return ok_status();
  }
};

Expected<ir::Model> import_model(onnx::ModelProto& mp, const std::string& name, const ImportOptions& options) {
  if (!mp.has_graph()) return invalid_model(name, ": not an ONNX model (no graph)");
  if (!options.external_data.empty()) {
    Status ext = ExternalData(options.external_data).graph(*mp.mutable_graph());
    if (!ext.ok()) return ext.with_context(name);
  }
  ir::Model model;
  Importer imp(model);
  TSR_RETURN_IF_ERROR(imp.read_opsets(mp));
  model.graphs.emplace_back();
  Scope main;
  Status st = imp.build_graph(*mp.mutable_graph(), main, 0);
  if (!st.ok()) return st.with_context(name);
  model.graphs[0] = std::move(main.graph);
  if (imp.deferred().ok()) {
    st = lower_gradient_nodes(model);
    if (!st.ok()) return st.with_context(name);
  }
  model.producer = str_cat("onnx:", mp.producer_name(), mp.producer_version().empty() ? "" : " ",
                           mp.producer_version());
  model.signatures.push_back(ir::Signature{"infer", 0, {}, {}});
  for (const auto& kv : mp.metadata_props()) model.metadata[kv.key()] = kv.value();
  model.metadata["onnx.ir_version"] = std::to_string(mp.ir_version());
  model.metadata["onnx.opset"] = std::to_string(imp.default_opset());
  if (!mp.doc_string().empty()) model.metadata["onnx.doc_string"] = mp.doc_string();
  if (!options.verify) {
    if (!imp.deferred().ok()) return imp.deferred().with_context(name);
    return model;
  }
  st = passes::check_ops_supported(model);
  if (st.ok()) st = imp.deferred();
  if (st.ok()) st = passes::verify_model(model);
  if (!st.ok()) return st.with_context(name);
  return model;
}

Expected<std::string> read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return not_found("file not found: ", path);
  if (std::filesystem::is_directory(path, ec)) return invalid_argument(path, ": is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open ", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return resource_error(path, ": read error");
  return ss.str();
}

}  // namespace

Expected<ir::Model> import_onnx_bytes(const std::string& bytes, const std::string& name_for_errors,
                                      const ImportOptions& options) {
  MemoryBudgetScope budget(std::make_shared<MemoryBudget>(
      options.max_memory_bytes ? options.max_memory_bytes : default_memory_limit()));
  try {
    onnx::ModelProto mp;
    if (!mp.ParseFromString(bytes))
      return invalid_model(name_for_errors, ": not a valid ONNX model (protobuf parse failed)");
    return import_model(mp, name_for_errors, options);
  } catch (const std::bad_alloc&) {
    return resource_error(name_for_errors, ": out of memory while importing");
  } catch (const std::exception& e) {
    return internal_error(name_for_errors, ": ONNX library error: ", e.what());
  } catch (...) {
    return internal_error(name_for_errors, ": unknown ONNX library error");
  }
}

Expected<ir::Model> import_onnx_file(const std::string& path, const ImportOptions& options) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  return import_onnx_bytes(bytes, path, options);
}

#if defined(TSR_ONNX_LITE)
Expected<Tensor> read_value_proto_file(const std::string& path, ValueKind) {
  return unsupported(path, ": reading ONNX test-data files needs libonnx (not in this build)");
}
#else
namespace {

Expected<Tensor> sequence_from_proto(const onnx::SequenceProto& sp, const std::string& what) {
  if (sp.elem_type() != onnx::SequenceProto::TENSOR && sp.elem_type() != onnx::SequenceProto::UNDEFINED)
    return unsupported(what, ": sequences of element type ", sp.elem_type(), " are not supported");
  std::vector<Tensor> elems;
  DType elem = DType::kUndefined;
  for (const auto& tp : sp.tensor_values()) {
    TSR_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, what));
    if (elem != DType::kUndefined && t.dtype() != elem)
      return invalid_model(what, ": sequence mixes ", dtype_name(elem), " and ", dtype_name(t.dtype()));
    elem = t.dtype();
    elems.push_back(std::move(t));
  }
  return Tensor::sequence(elem, std::move(elems));
}

Expected<Tensor> optional_from_proto(const onnx::OptionalProto& op, ValueKind kind, const std::string& what) {
  if (op.has_tensor_value()) return tensor_from_proto(op.tensor_value(), what);
  if (op.has_sequence_value()) return sequence_from_proto(op.sequence_value(), what);
  if (op.elem_type() == onnx::OptionalProto::SEQUENCE) kind = ValueKind::kSequence;
  if (op.elem_type() == onnx::OptionalProto::TENSOR) kind = ValueKind::kTensor;
  if (op.elem_type() != onnx::OptionalProto::UNDEFINED && op.elem_type() != onnx::OptionalProto::TENSOR &&
      op.elem_type() != onnx::OptionalProto::SEQUENCE)
    return unsupported(what, ": optionals of element type ", op.elem_type(), " are not supported");
  return Tensor::none(DType::kUndefined, kind);
}

}  // namespace

Expected<Tensor> read_value_proto_file(const std::string& path, ValueKind kind) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  try {
    // The three protos share field numbers, so a file may parse as the wrong one: a TensorProto
    // is taken only when it looks like one (known dtype, no segment), then the expected kind,
    // then an OptionalProto.
    Status tensor_error;
    if (kind == ValueKind::kTensor) {
      onnx::TensorProto tp;
      if (tp.ParseFromString(bytes) && !tp.has_segment() && dtype_from_onnx(tp.data_type()) != DType::kUndefined) {
        Expected<Tensor> t = tensor_from_proto(tp, tp.name().empty() ? path : tp.name());
        if (t.ok()) return t;
        tensor_error = t.status().with_context(path);  // unless it is an OptionalProto after all
      }
    } else if (kind == ValueKind::kSequence) {
      onnx::SequenceProto sp;
      if (sp.ParseFromString(bytes) && sp.elem_type() == onnx::SequenceProto::TENSOR) {
        Expected<Tensor> t = sequence_from_proto(sp, path);
        if (!t.ok()) return t.status();
        return t;
      }
    }
    onnx::OptionalProto op;
    if (op.ParseFromString(bytes) && (op.has_tensor_value() || op.has_sequence_value() ||
                                      op.elem_type() == onnx::OptionalProto::UNDEFINED ||
                                      op.elem_type() == onnx::OptionalProto::TENSOR ||
                                      op.elem_type() == onnx::OptionalProto::SEQUENCE)) {
      Expected<Tensor> t = optional_from_proto(op, kind, path);
      if (!t.ok()) return t.status();
      return t;
    }
    if (!tensor_error.ok()) return tensor_error;
    return invalid_model(path, ": not a valid ONNX ", kind == ValueKind::kSequence ? "SequenceProto" : "TensorProto");
  } catch (const std::bad_alloc&) {
    return resource_error(path, ": out of memory");
  } catch (const std::exception& e) {
    return internal_error(path, ": ", e.what());
  }
}

#endif  // TSR_ONNX_LITE

Expected<Tensor> read_tensor_proto_file(const std::string& path) {
  return read_value_proto_file(path, ValueKind::kTensor);
}

}  // namespace tsr::onnx_import
