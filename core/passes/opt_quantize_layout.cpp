// quantize_layout (optimize.h): chains of quantized CNN nodes run channels last (NHWC) on the
// codes, as onnxruntime's NHWC transformer does, with a Transpose only where a chain begins or
// ends. The CPU's QLinearConv reads its taps from an HWC copy of the input and writes NCHW; on
// NHWC input it reads them in place and writes its pixel-major rows as they come, so a chain of
// convs pays two transposes instead of one per conv and a strided store per output.
//
// The nodes that run channels last, on 4-D u8/s8 tensors of static shape:
//   QLinearConv (2-D; depthwise and other grouped convs excepted: their NCHW kernels read planes)
//       -> com.microsoft::QLinearConv with channels_last = 1
//   MaxPool (2-D, one output, storage_order 0) on the codes -> com.microsoft::NhwcMaxPool
//   com.microsoft::QLinearAdd of two inputs of one shape, tessera QLinearLookup (elementwise:
//       unchanged, their tensors NHWC)
// The chain of such nodes connected through their data inputs is rewritten only where it gains:
// it must hold more convs that gather taps (a window or stride other than a plain 1x1, which the
// NCHW kernel runs as W x X without transposes) than the values crossing its boundary (each a
// Transpose: [0, 2, 3, 1] in, [0, 3, 1, 2] out). So ResNet's whole body runs NHWC, between the
// input's QuantizeLinear and the DequantizeLinear before its pooling, while MobileNets (whose
// depthwise convs split every chain into pointwise pieces) are left as they are.
// Outputs are unchanged, bit for bit: the kernels compute the same sums and output stage.
#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <string_view>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

bool is_q8(DType t) { return t == DType::kU8 || t == DType::kI8; }

bool q8_4d(const ir::TensorInfo& t) { return is_q8(t.dtype) && t.shape.size() == 4 && has_static_shape(t); }

// What a node is in a channels-last chain.
enum class Role { kNone, kConv, kGatherConv, kPool, kElementwise };

Role role_of(const GraphIndex& ix, const ir::Graph& g, const ir::Node& n) {
  auto in4 = [&](size_t i) { return i < n.inputs.size() && n.inputs[i] >= 0 && q8_4d(g.tensors[size_t(n.inputs[i])]); };
  if (n.outputs.empty() || n.outputs[0] < 0 || !q8_4d(g.tensors[size_t(n.outputs[0])])) return Role::kNone;
  if (n.op == "QLinearConv") {
    const Tensor* w = n.inputs.size() > 3 ? ix.constant(n.inputs[3]) : nullptr;
    if (!in4(0) || !w || w->rank() != 4 || n.attr_int("group", 1) != 1) return Role::kNone;
    const Ints s = n.attr_ints("strides", Ints{1, 1}), p = n.attr_ints("pads", Ints{0, 0, 0, 0});
    const bool plain_1x1 = w->dim(2) == 1 && w->dim(3) == 1 && std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; }) &&
                           std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; }) &&
                           n.attr_string("auto_pad", "NOTSET") != "SAME_UPPER" && n.attr_string("auto_pad", "NOTSET") != "SAME_LOWER";
    return plain_1x1 ? Role::kConv : Role::kGatherConv;
  }
  if (n.op == "MaxPool") {
    const bool one_output = n.outputs.size() == 1 || n.outputs[1] < 0;
    return in4(0) && one_output && n.attr_ints("kernel_shape").size() == 2 && n.attr_int("storage_order") == 0
               ? Role::kPool
               : Role::kNone;
  }
  if (n.op == "com.microsoft::QLinearAdd")
    return in4(0) && in4(3) && g.tensors[size_t(n.inputs[0])].shape == g.tensors[size_t(n.inputs[3])].shape &&
                   g.tensors[size_t(n.inputs[0])].shape == g.tensors[size_t(n.outputs[0])].shape
               ? Role::kElementwise
               : Role::kNone;
  if (n.op == "QLinearLookup") return in4(0) ? Role::kElementwise : Role::kNone;
  return Role::kNone;
}

// The tensor inputs that carry activations (the rest are parameters, read as they are).
std::vector<size_t> data_inputs(const ir::Node& n) {
  if (n.op == "com.microsoft::QLinearAdd") return {0, 3};
  return {0};
}

int32_t find_root(std::vector<int32_t>& parent, int32_t i) {
  while (parent[size_t(i)] != i) i = parent[size_t(i)] = parent[size_t(parent[size_t(i)])];
  return i;
}

Shape permuted(const Shape& s, const std::array<int, 4>& perm) { return {s[size_t(perm[0])], s[size_t(perm[1])], s[size_t(perm[2])], s[size_t(perm[3])]}; }

constexpr std::array<int, 4> kToNhwc{0, 2, 3, 1}, kToNchw{0, 3, 1, 2};

}  // namespace

Expected<int64_t> quantize_layout(ir::Model& model, int32_t graph_index) {
  ir::Graph& g = model.graphs[size_t(graph_index)];
  GraphIndex ix(g);
  const auto nn = static_cast<int32_t>(g.nodes.size());
  std::vector<Role> role(size_t(nn), Role::kNone);
  std::vector<int32_t> parent(static_cast<size_t>(nn));
  std::iota(parent.begin(), parent.end(), 0);
  for (int32_t i = 0; i < nn; ++i) role[size_t(i)] = role_of(ix, g, g.nodes[size_t(i)]);
  for (int32_t i = 0; i < nn; ++i) {
    if (role[size_t(i)] == Role::kNone) continue;
    for (size_t k : data_inputs(g.nodes[size_t(i)])) {
      const int32_t p = ix.producer(g.nodes[size_t(i)].inputs[k]);
      if (p >= 0 && role[size_t(p)] != Role::kNone) parent[size_t(find_root(parent, i))] = find_root(parent, p);
    }
  }
  // Per chain: its gathering convs against the values crossing its boundary.
  std::vector<int32_t> chain(size_t(nn), -1);
  for (int32_t i = 0; i < nn; ++i)
    if (role[size_t(i)] != Role::kNone) chain[size_t(i)] = find_root(parent, i);
  auto in_chain = [&](int32_t node) { return node >= 0 && chain[size_t(node)] >= 0; };
  // Readers of each tensor outside every chain (or the graph's outputs).
  std::vector<bool> read_outside(g.tensors.size(), false);
  for (int32_t i = 0; i < nn; ++i) {
    const ir::Node& n = g.nodes[size_t(i)];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] < 0) continue;
      const std::vector<size_t> d = in_chain(i) ? data_inputs(n) : std::vector<size_t>{};
      if (std::find(d.begin(), d.end(), k) == d.end()) read_outside[size_t(n.inputs[k])] = true;
    }
  }
  for (int32_t o : g.outputs) read_outside[size_t(o)] = true;
  std::map<int32_t, int64_t> gain, crossing;
  std::map<int32_t, std::vector<int32_t>> entries;  // per chain: its distinct outside inputs
  for (int32_t i = 0; i < nn; ++i) {
    if (!in_chain(i)) continue;
    const ir::Node& n = g.nodes[size_t(i)];
    const int32_t c = chain[size_t(i)];
    gain[c] += role[size_t(i)] == Role::kGatherConv;
    for (size_t k : data_inputs(n)) {
      const int32_t t = n.inputs[k];
      auto& e = entries[c];
      if (!in_chain(ix.producer(t)) && std::find(e.begin(), e.end(), t) == e.end()) e.push_back(t);
    }
    crossing[c] += read_outside[size_t(n.outputs[0])];
  }
  std::vector<bool> convert(size_t(nn), false);
  int64_t rewrites = 0;
  for (int32_t i = 0; i < nn; ++i)
    if (in_chain(i) && gain[chain[size_t(i)]] > crossing[chain[size_t(i)]] + int64_t(entries[chain[size_t(i)]].size()))
      convert[size_t(i)] = true, ++rewrites;
  if (rewrites == 0) return int64_t{0};

  // Rebuild the node list: entry Transposes before a chain's first reader, exit ones after the
  // producer; chain nodes read and write the NHWC copies.
  std::map<int32_t, int32_t> nhwc;  // NCHW tensor -> its NHWC twin
  auto twin = [&](int32_t t, const char* suffix) {
    ir::TensorInfo info = g.tensors[size_t(t)];
    info.name += suffix;
    info.shape = permuted(info.shape, kToNhwc);
    info.dim_names.clear();
    info.constant = Tensor();
    return g.add_tensor(std::move(info));
  };
  auto transpose = [](const std::string& name, int32_t from, int32_t to, const std::array<int, 4>& perm) {
    return ir::Node{"Transpose", 0, name, {from}, {to},
                    {ir::Attribute::make_ints("perm", {perm[0], perm[1], perm[2], perm[3]})}};
  };
  std::vector<ir::Node> nodes;
  nodes.reserve(g.nodes.size() + 8);
  for (int32_t i = 0; i < nn; ++i) {
    ir::Node n = std::move(g.nodes[size_t(i)]);
    if (!convert[size_t(i)]) {
      nodes.push_back(std::move(n));
      continue;
    }
    for (size_t k : data_inputs(n)) {
      const int32_t t = n.inputs[k];
      auto it = nhwc.find(t);
      if (it == nhwc.end()) {  // an entry: produced outside the converted nodes
        const int32_t to = twin(t, "/nhwc");
        nodes.push_back(transpose(g.tensors[size_t(t)].name + "/to_nhwc", t, to, kToNhwc));
        it = nhwc.emplace(t, to).first;
      }
      n.inputs[k] = it->second;
    }
    if (n.op == "QLinearConv") {
      n.op = "com.microsoft::QLinearConv";
      n.version = 0;
      n.attributes.push_back(ir::Attribute::make_int("channels_last", 1));
    } else if (n.op == "MaxPool") {
      n.op = "com.microsoft::NhwcMaxPool";
      n.version = 0;
      std::erase_if(n.attributes, [](const ir::Attribute& a) { return a.name == "storage_order"; });
      n.outputs.resize(1);
    }
    const int32_t o = n.outputs[0];
    const int32_t o_nhwc = twin(o, "/nhwc");
    nhwc.emplace(o, o_nhwc);
    n.outputs[0] = o_nhwc;
    const std::string name = n.name;
    nodes.push_back(std::move(n));
    // Readers outside the chain (chains are whole components: no reader of o's is in another).
    if (read_outside[size_t(o)])
      nodes.push_back(transpose(name + "/to_nchw", o_nhwc, o, kToNchw));
  }
  g.nodes = std::move(nodes);
  return rewrites;
}

}  // namespace tsr::passes::opt
