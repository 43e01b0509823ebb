// `tessera inspect MODEL --placement DEVICE [--json]` and `tessera run ... --check-against cpu`:
// where the placement pass puts each node, and the first node whose device output differs from
// the CPU's.
#include <cmath>
#include <iostream>

#include "core/exec/device.h"
#include "tessera/session.h"
#include "core/ir/topo.h"
#include "core/passes/placement.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/json_writer.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {

int inspect_placement(const ir::Model& m, const std::string& device, bool json) {
  auto dev = exec::create_device_backend(device);
  if (!dev.ok()) return report_error(dev.status());
  exec::DeviceBackend& d = **dev;
  auto support = [&d](const ir::Node& node, const std::vector<ops::ValueType>& types) {
    const exec::DeviceSupport s = d.device_support(node, types);
    return passes::NodeSupport{s.supported, s.host_inputs};
  };
  // Every graph is placed on its own, as the executor places If/Loop bodies.
  std::vector<passes::Placement> places;
  size_t total = 0, on_device = 0, copies = 0;
  for (size_t g = 0; g < m.graphs.size(); ++g) {
    auto order = ir::topological_order(m.graphs[g], static_cast<int32_t>(g));
    if (!order.ok()) return report_error(order.status());
    places.push_back(passes::place_graph(m, static_cast<int32_t>(g), *order, support));
    total += m.graphs[g].nodes.size();
    on_device += places.back().device_nodes;
    copies += places.back().copies;
  }
  const std::string name(d.name());
  if (json) {
    JsonWriter w(std::cout);
    w.begin_object().key("device").value(name).key("nodes").begin_array();
    for (size_t g = 0; g < m.graphs.size(); ++g)
      for (const passes::PlacedStep& st : places[g].steps) {
        if (st.kind != passes::PlacedStep::Kind::kNode) continue;
        const ir::Node& node = m.graphs[g].nodes[static_cast<size_t>(st.index)];
        const bool dv = places[g].node_device[static_cast<size_t>(st.index)] == passes::Device::kDevice;
        w.begin_object().key("graph").value(int64_t(g)).key("node").value(int64_t(st.index)).key("op").value(node.op);
        w.key("name").value(node.name).key("device").value(dv ? name : std::string("cpu")).end_object();
      }
    w.end_array().key("copies").value(uint64_t(copies)).key("device_nodes").value(uint64_t(on_device));
    w.key("total_nodes").value(uint64_t(total)).end_object().finish();
    return kExitOk;
  }
  for (size_t g = 0; g < m.graphs.size(); ++g) {
    std::cout << "graph[" << g << "] \"" << m.graphs[g].name << "\": " << places[g].device_nodes << " of "
              << m.graphs[g].nodes.size() << " nodes on " << name << ", " << places[g].copies << " copies\n";
    for (const passes::PlacedStep& st : places[g].steps) {
      if (st.kind != passes::PlacedStep::Kind::kNode) {
        std::cout << "  " << (st.kind == passes::PlacedStep::Kind::kUpload ? "upload   " : "download ") << "\""
                  << m.graphs[g].tensors[static_cast<size_t>(st.index)].name << "\"\n";
        continue;
      }
      const ir::Node& node = m.graphs[g].nodes[static_cast<size_t>(st.index)];
      const bool dv = places[g].node_device[static_cast<size_t>(st.index)] == passes::Device::kDevice;
      std::cout << "  " << (dv ? name : std::string("cpu")) << std::string(9 - std::min<size_t>(8, dv ? name.size() : 3), ' ')
                << "node[" << st.index << "] " << node.op << " \"" << node.name << "\"\n";
    }
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "placement: %zu of %zu nodes on %s (%.1f%%), %zu copies\n", on_device, total,
                name.c_str(), total ? 100.0 * double(on_device) / double(total) : 0.0, copies);
  std::cout << buf;
  return kExitOk;
}

int check_against(const std::shared_ptr<const ir::Model>& model, const std::vector<Tensor>& inputs, const RunOptions& o) {
  if (o.check_against != "cpu") return report_error(invalid_argument("--check-against ", o.check_against, ": only cpu"));
  for (const auto& sig : model->signatures)
    if (sig.graph == 0 && (!sig.bound_inputs.empty() || !sig.updates.empty()))
      return report_error(unsupported("--check-against: models whose main graph is bound to variables"));
  // Every float tensor a main-graph node produces becomes an output, in execution order.
  auto probe = std::make_shared<ir::Model>(*model);
  ir::Graph& g = probe->graphs[0];
  auto order = ir::topological_order(g, 0);
  if (!order.ok()) return report_error(order.status());
  const size_t declared = g.outputs.size();
  std::vector<bool> is_out(g.tensors.size(), false);
  for (int32_t t : g.outputs) is_out[static_cast<size_t>(t)] = true;
  std::vector<std::pair<int32_t, int32_t>> probes;  // (node, tensor)
  for (int32_t n : *order)
    for (int32_t t : g.nodes[static_cast<size_t>(n)].outputs) {
      if (t < 0 || g.tensors[static_cast<size_t>(t)].kind != ValueKind::kTensor) continue;
      probes.push_back({n, t});
      if (!is_out[static_cast<size_t>(t)]) {
        g.outputs.push_back(t);
        is_out[static_cast<size_t>(t)] = true;
      }
    }
  auto out_index = [&](int32_t t) {
    for (size_t i = 0; i < g.outputs.size(); ++i)
      if (g.outputs[i] == t) return i;
    return size_t(0);
  };
  SessionOptions so;
  so.num_threads = o.threads;
  so.device = o.device;
  auto dev = Session::create(probe, so);
  if (!dev.ok()) return report_error(dev.status());
  so.device = "cpu";
  auto cpu = Session::create(probe, so);
  if (!cpu.ok()) return report_error(cpu.status());
  auto a = (*dev)->run(inputs);
  if (!a.ok()) return report_error(a.status());
  auto b = (*cpu)->run(inputs);
  if (!b.ok()) return report_error(b.status());
  const double atol = 1e-4, rtol = 1e-4;
  for (const auto& [n, t] : probes) {
    const Tensor& x = (*a)[out_index(t)];
    const Tensor& y = (*b)[out_index(t)];
    const ir::Node& node = g.nodes[static_cast<size_t>(n)];
    const std::string where = str_cat("graph[0] node[", n, "] ", node.op, " \"", node.name, "\" output \"",
                                      g.tensors[static_cast<size_t>(t)].name, "\"");
    if (x.dtype() != y.dtype() || x.shape() != y.shape()) {
      std::cout << "check-against cpu: first difference at " << where << ": " << dtype_name(x.dtype()) << shape_str(x.shape())
                << " vs cpu " << dtype_name(y.dtype()) << shape_str(y.shape()) << "\n";
      return 1;
    }
    if (x.dtype() != DType::kF32) continue;
    double worst = 0;
    bool bad = false;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double u = x.data<float>()[i], v = y.data<float>()[i];
      const double err = std::fabs(u - v);
      if (std::isnan(u) != std::isnan(v)) bad = true, worst = INFINITY;
      if (err > worst) worst = err;
      if (err > atol + rtol * std::fabs(v)) bad = true;
    }
    if (bad) {
      std::cout << "check-against cpu: first difference at " << where << ": max abs error " << worst
                << " (tolerance " << atol << " + " << rtol << " * |cpu|)\n";
      return 1;
    }
  }
  std::cout << "check-against cpu: all " << probes.size() << " node outputs of graph[0] agree within atol " << atol
            << ", rtol " << rtol << " (" << declared << " model outputs)\n";
  return kExitOk;
}

}  // namespace tsr::cli
