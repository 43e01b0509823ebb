// Placement: which device runs each node of one graph, and where values must be copied
// (DESIGN.md §6; the seeds' partitioning with Send/Recv).
//
// Two devices: the host (the CPU backend) and one device backend. A node goes to the device when
// the device has a kernel for it (`support`) and the cost rule does not keep it on the host: a
// node whose output is statically small (fewer than `min_device_elements`) and whose data inputs
// all live on the host stays there, so shape arithmetic does not bounce through device memory.
// Control-flow nodes (If/Loop/Scan) always run on the host: their conditions and trip counts are
// read there, and the executor places their bodies with this same pass (each body is a graph).
//
// Every value has a residence (host, device or both). Before a node, each input that is not
// resident where the node reads it gets an explicit copy step (upload or download), once per
// value and direction; graph outputs are downloaded at the end. Constants live on the host and
// are uploaded once when the plan is prepared, so they need no copy steps. Graph inputs arrive on
// the host.
//
// Thread safety: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/op_def.h"

namespace tsr::passes {

enum class Device : uint8_t { kHost = 0, kDevice = 1 };

// A device's answer for one node (mirrors exec::DeviceSupport; passes do not depend on exec).
struct NodeSupport {
  bool supported = false;
  uint32_t host_inputs = 0;  // bit k: input k (< 32) is read on the host even when the node is on the device; inputs past 32 never are
};
using SupportFn = std::function<NodeSupport(const ir::Node&, const std::vector<ops::ValueType>&)>;

struct PlacementOptions {
  int64_t min_device_elements = 16;
};

struct PlacedStep {
  enum class Kind : uint8_t { kNode, kUpload, kDownload };
  Kind kind = Kind::kNode;
  int32_t index = 0;  // node index for kNode, tensor id for copies
};

struct Placement {
  std::vector<Device> node_device;   // per node index
  std::vector<uint32_t> host_inputs;  // per node index (NodeSupport::host_inputs of device nodes)
  std::vector<PlacedStep> steps;      // execution order: nodes and copies
  size_t device_nodes = 0;
  size_t copies = 0;
};

// True for nodes that run subgraphs (If/Loop/Scan/SequenceMap: they have a graph attribute).
bool is_control_flow(const ir::Node& node);

// Places graph `graph_index` of `model` whose nodes run in `order` (a topological order). The
// graph's tensor types must be inferred (passes::infer_types). Never fails for a valid graph:
// nodes nobody supports stay on the host.
Placement place_graph(const ir::Model& model, int32_t graph_index, const std::vector<int32_t>& order,
                      const SupportFn& support, const PlacementOptions& options = {});

}  // namespace tsr::passes
