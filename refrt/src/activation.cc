#include "activation.h"

namespace parity::refrt {
namespace {

constexpr std::pair<ActKind, const char*> kNames[] = {{ActKind::kRelu, "Relu"},
                                                      {ActKind::kClip, "Clip"},
                                                      {ActKind::kHardSigmoid, "HardSigmoid"},
                                                      {ActKind::kHardSwish, "HardSwish"},
                                                      {ActKind::kAddClipDiv, "AddClipDiv"},
                                                      {ActKind::kMulAddClipDiv, "MulAddClipDiv"},
                                                      {ActKind::kMulAddClipDiv2, "MulAddClipDiv2"},
                                                      {ActKind::kSigmoid, "Sigmoid"},
                                                      {ActKind::kSilu, "Silu"},
                                                      {ActKind::kGeluErf, "GeluErf"}};

}  // namespace

const char* act_kind_name(ActKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "?";
}

std::vector<ActStep> parse_activations(const NodeDef& node) {
  std::vector<ActStep> steps;
  const Attribute* kinds = node.attr("activations", Attribute::Type::kStrings);
  if (!kinds) return steps;
  const Attribute* params = node.attr("activation_params", Attribute::Type::kFloats);
  if (!params || params->floats.size() != 4 * kinds->strings.size())
    node.fail("activation_params must hold 4 floats per activation");
  for (size_t i = 0; i < kinds->strings.size(); ++i) {
    ActStep step{ActKind::kRelu};
    bool known = false;
    for (const auto& [k, name] : kNames)
      if (kinds->strings[i] == name) {
        step.kind = k;
        known = true;
      }
    if (!known) node.fail("unknown activation '" + kinds->strings[i] + "'");
    for (int j = 0; j < 4; ++j) step.p[j] = params->floats[4 * i + static_cast<size_t>(j)];
    steps.push_back(step);
  }
  return steps;
}

void store_activations(NodeDef& node, const std::vector<ActStep>& steps) {
  Attribute kinds, params;
  kinds.type = Attribute::Type::kStrings;
  params.type = Attribute::Type::kFloats;
  for (const ActStep& s : steps) {
    kinds.strings.push_back(act_kind_name(s.kind));
    params.floats.insert(params.floats.end(), s.p, s.p + 4);
  }
  node.attributes["activations"] = std::move(kinds);
  node.attributes["activation_params"] = std::move(params);
}

}  // namespace parity::refrt
