#include "core/ops/fused_activation.h"

#include <algorithm>
#include <cstring>
#include <string_view>

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
    {FusedActivation::kSilu, "Silu", 0},           {FusedActivation::kGelu, "Gelu", 0},
    {FusedActivation::kGeluTanh, "GeluTanh", 0},
};

}  // namespace

const char* activation_name(FusedActivation kind) {
  for (const ActivationInfo& a : kActivations)
    if (a.kind == kind) return a.name;
  return "";
}

namespace {

// prefix + suffix in a fixed buffer: activation_of runs in inference at every step, where building
// std::strings longer than the small-string buffer ("dw_activation_params") would allocate.
struct AttrName {
  char buf[64];
  size_t len = 0;
  AttrName(std::string_view prefix, std::string_view suffix) {
    len = std::min(prefix.size(), sizeof buf);
    std::memcpy(buf, prefix.data(), len);
    const size_t n = std::min(suffix.size(), sizeof buf - len);
    std::memcpy(buf + len, suffix.data(), n);
    len += n;
  }
  std::string_view view() const { return {buf, len}; }
};

}  // namespace

Expected<ActivationSpec> activation_of(const ir::Node& node, const std::string& place, const std::string& prefix) {
  const AttrName name_buf(prefix, "activation"), params_buf(prefix, "activation_params"),
      affine_buf(prefix, "activation_affine"), bounds_buf(prefix, "activation_bounds");
  const std::string_view name = name_buf.view(), params_name = params_buf.view(), affine_name = affine_buf.view(),
                         bounds_name = bounds_buf.view();
  const ir::Attribute* act = node.attr(name);
  if (!act) return ActivationSpec{};
  if (act->kind != ir::AttrKind::kString) return invalid_model(place, ": attribute ", name, " must be a string");
  const auto params = node.attr_floats(params_name);
  for (const ActivationInfo& a : kActivations) {
    if (act->s != a.name) continue;
    if (params.size() != a.num_params)
      return invalid_model(place, ": ", name, " ", a.name, " takes ", a.num_params, " ", params_name, ", got ",
                           params.size());
    ActivationSpec spec{a.kind};
    if (!params.empty()) spec.p0 = static_cast<float>(params[0]);
    if (params.size() > 1) spec.p1 = static_cast<float>(params[1]);
    if (const ir::Attribute* af = node.attr(affine_name)) {
      if (af->kind != ir::AttrKind::kFloats || af->floats.size() != 2)
        return invalid_model(place, ": ", affine_name, " must be 2 floats {scale, shift}");
      spec.scale = static_cast<float>(af->floats[0]);
      spec.shift = static_cast<float>(af->floats[1]);
    }
    if (const ir::Attribute* bd = node.attr(bounds_name)) {
      if (bd->kind != ir::AttrKind::kFloats || bd->floats.size() != 2 || !(bd->floats[0] <= bd->floats[1]))
        return invalid_model(place, ": ", bounds_name, " must be 2 floats {lo, hi} with lo <= hi");
      spec.lo = static_cast<float>(bd->floats[0]);
      spec.hi = static_cast<float>(bd->floats[1]);
    }
    return spec;
  }
  return invalid_model(place, ": unknown ", name, " '", act->s,
                       "' (expected Relu, Clip, HardSwish, Sigmoid, LeakyRelu, HardSigmoid, Silu, Gelu or GeluTanh)");
}

std::vector<ir::Attribute> activation_attributes(const ActivationSpec& spec, const std::string& prefix) {
  const std::string name = prefix + "activation";
  std::vector<ir::Attribute> attrs = {ir::Attribute::make_string(name, activation_name(spec.kind))};
  for (const ActivationInfo& a : kActivations) {
    if (a.kind != spec.kind || a.num_params == 0) continue;
    std::vector<double> p = {spec.p0};
    if (a.num_params > 1) p.push_back(spec.p1);
    attrs.push_back(ir::Attribute::make_floats(name + "_params", std::move(p)));
  }
  if (spec.has_affine()) attrs.push_back(ir::Attribute::make_floats(name + "_affine", {spec.scale, spec.shift}));
  if (spec.has_bounds()) attrs.push_back(ir::Attribute::make_floats(name + "_bounds", {spec.lo, spec.hi}));
  return attrs;
}

}  // namespace tsr::ops
