// `tessera ops`: the registered ops and the CPU backend's kernel dtypes.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/exec/backend.h"
#include "core/ops/op_def.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {
namespace {

std::string arity(int lo, int hi) {
  if (hi < 0) return str_cat(lo, "+");
  if (lo == hi) return str_cat(lo);
  return str_cat(lo, "-", hi);
}

std::string dtype_list(const std::vector<DType>& dts) {
  std::string s;
  for (DType d : dts) s += str_cat(s.empty() ? "" : " ", dtype_name(d));
  return s.empty() ? "-" : s;
}

// Markdown table cells must not contain '|' or newlines.
std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

// `tessera ops --used`: the union of op types over every graph (subgraphs too) of the models, each
// with the dtypes its nodes read and write (inputs and outputs, sequences by element dtype): the
// selective build compiles those ops' kernels for those dtypes only. A value whose dtype is not
// known before run time makes its op `*` (every dtype).
int used_ops_command(const OpsOptions& o) {
  std::map<std::string, std::set<DType>> used;
  for (const auto& path : o.used) {
    auto model = load_model(path);
    if (!model.ok()) return report_error(model.status());
    for (const auto& g : model->graph().graphs)
      for (const auto& n : g.nodes) {
        std::set<DType>& dts = used[n.op];
        for (const auto* ids : {&n.inputs, &n.outputs})
          for (int32_t t : *ids)
            if (t >= 0) dts.insert(g.tensors[static_cast<size_t>(t)].dtype);
      }
  }
  std::ofstream file;
  if (!o.output.empty()) {
    file.open(o.output);
    if (!file) return report_error(not_found("cannot write ", o.output));
  }
  std::ostream& out = o.output.empty() ? std::cout : file;
  out << "# tessera ops --used";
  for (const auto& path : o.used) out << " " << path.substr(path.find_last_of('/') + 1);
  out << "\n# op type, then the dtypes its nodes read and write (*: known only at run time)\n";
  for (const auto& [op, dts] : used) {
    out << op;
    if (dts.count(DType::kUndefined)) {
      out << " *";
    } else {
      for (DType d : dts) out << " " << dtype_name(d);
    }
    out << "\n";
  }
  out.flush();
  if (!out) return report_error(resource_error("writing ", o.output.empty() ? "stdout" : o.output, " failed"));
  return kExitOk;
}

}  // namespace

int ops_command(const OpsOptions& o) {
  if (!o.used.empty()) return used_ops_command(o);
  auto backend = exec::create_backend("cpu");
  if (!backend.ok()) return report_error(backend.status());
  const auto& defs = ops::OpRegistry::global().all();
  if (o.markdown) {
    std::cout << "| Op | Domain | Since | Inputs | Outputs | CPU dtypes | Gradient | Description |\n"
              << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& [name, def] : defs)
      std::cout << "| " << md_cell(name) << " | " << (def.domain.empty() ? "ai.onnx" : md_cell(def.domain)) << " | "
                << def.since_version << " | " << arity(def.min_inputs, def.max_inputs) << " | "
                << arity(def.min_outputs, def.max_outputs) << " | " << dtype_list((*backend)->kernel_dtypes(name))
                << " | " << (def.grad ? "yes" : "-") << " | " << md_cell(def.doc) << " |\n";
    return kExitOk;
  }
  size_t width = 2;
  for (const auto& [name, def] : defs) width = std::max(width, name.size());
  size_t with_kernel = 0, with_grad = 0;
  for (const auto& [name, def] : defs) {
    const auto dts = (*backend)->kernel_dtypes(name);
    with_kernel += !dts.empty();
    with_grad += def.grad != nullptr;
    std::string padded = name;
    padded.resize(width, ' ');
    std::cout << padded << "  in " << arity(def.min_inputs, def.max_inputs) << "  out "
              << arity(def.min_outputs, def.max_outputs) << "  cpu: " << dtype_list(dts) << (def.grad ? "  grad" : "");
    if (!def.doc.empty()) std::cout << "  # " << def.doc;
    std::cout << "\n";
  }
  std::cout << defs.size() << " ops, " << with_kernel << " with CPU kernels, " << with_grad << " with gradient rules\n";
  std::cout << exec::cpu_simd_description() << "\n";
  return kExitOk;
}

Subcommand register_ops(CLI::App& app) {
  auto o = std::make_shared<OpsOptions>();
  CLI::App* sub = app.add_subcommand("ops", "List the registered ops and the CPU backend's kernel dtypes");
  sub->add_flag("--markdown", o->markdown, "Print a Markdown table");
  sub->add_option("--used", o->used,
                  "Instead, list the op types these models (.tsr/.onnx) use, one per line with the "
                  "dtypes their nodes use: the file -DTSR_SELECTED_OPS takes for a selective build")
      ->expected(1, -1);
  sub->add_option("-o,--output", o->output, "With --used: write the list to this file");
  return {sub, [o] { return ops_command(*o); }};
}

}  // namespace tsr::cli
