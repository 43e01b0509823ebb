#include "core/ops/fused_activation.h"

#include <cstring>

namespace tsr::ops {

namespace {

struct ActivationInfo {
  FusedActivation kind;
  const char* name;
  size_t num_params;
};

constexpr ActivationInfo kActivations[] = {
    {FusedActivation::kRelu, "Relu", 0},           {FusedActivation::kClip, "Clip", 2},
    {FusedActivation::kHardSwish, "HardSwish", 0}, {FusedActivation::kSigmoid, "Sigmoid", 0},
    {FusedActivation::kLeakyRelu, "LeakyRelu", 1}, {FusedActivation::kHardSigmoid, "HardSigmoid", 2},
};

}  // namespace

const char* activation_name(FusedActivation kind) {
  for (const ActivationInfo& a : kActivations)
    if (a.kind == kind) return a.name;
  return "";
}

Expected<ActivationSpec> activation_of(const ir::Node& node, const std::string& place) {
  const ir::Attribute* act = node.attr("activation");
  if (!act) return ActivationSpec{};
  if (act->kind != ir::AttrKind::kString) return invalid_model(place, ": attribute activation must be a string");
  const auto params = node.attr_floats("activation_params");
  for (const ActivationInfo& a : kActivations) {
    if (act->s != a.name) continue;
    if (params.size() != a.num_params)
      return invalid_model(place, ": activation ", a.name, " takes ", a.num_params, " activation_params, got ",
                           params.size());
    ActivationSpec spec{a.kind};
    if (!params.empty()) spec.p0 = static_cast<float>(params[0]);
    if (params.size() > 1) spec.p1 = static_cast<float>(params[1]);
    if (const ir::Attribute* af = node.attr("activation_affine")) {
      if (af->kind != ir::AttrKind::kFloats || af->floats.size() != 2)
        return invalid_model(place, ": activation_affine must be 2 floats {scale, shift}");
      spec.scale = static_cast<float>(af->floats[0]);
      spec.shift = static_cast<float>(af->floats[1]);
    }
    return spec;
  }
  return invalid_model(place, ": unknown activation '", act->s,
                       "' (expected Relu, Clip, HardSwish, Sigmoid, LeakyRelu or HardSigmoid)");
}

std::vector<ir::Attribute> activation_attributes(const ActivationSpec& spec) {
  std::vector<ir::Attribute> attrs = {ir::Attribute::make_string("activation", activation_name(spec.kind))};
  for (const ActivationInfo& a : kActivations) {
    if (a.kind != spec.kind || a.num_params == 0) continue;
    std::vector<double> p = {spec.p0};
    if (a.num_params > 1) p.push_back(spec.p1);
    attrs.push_back(ir::Attribute::make_floats("activation_params", std::move(p)));
  }
  if (spec.has_affine()) attrs.push_back(ir::Attribute::make_floats("activation_affine", {spec.scale, spec.shift}));
  return attrs;
}

}  // namespace tsr::ops
