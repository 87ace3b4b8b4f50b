// Energy per operation of the dot-product units, from rtl/energy.json (scripts/energy.sh --json:
// each unit's mapped netlist simulated gate by gate on golden-quantized operand streams, its
// toggles priced with the OSU 0.18 um liberty at 1.8 V; docs/area.md "Energy"), embedded at build
// time by sim/CMakeLists.txt and proven current by CTest energy_json_current.
#pragma once

#include <string>
#include <string_view>

#include "fp4sim/quant.hpp"

namespace fp4sim::cli {

struct UnitEnergy {
  std::string unit;
  double energy_pj = 0;   // one instruction (K MACs) of the unit, data distribution energy_dist()
  double pj_per_mac = 0;  // energy_pj / K
  double tops_per_w = 0;  // 2 operations per MAC: 2 / pj_per_mac
};

// The unit's row of rtl/energy.json at its default distribution; nullptr when the JSON has none.
// Throws std::runtime_error when the embedded JSON is malformed.
const UnitEnergy* energy_of(std::string_view unit);
// The distribution the columns describe ("llm": llm_activations x llm_weights).
std::string energy_dist();
// The unit an engine ("tensor-core", "cube") runs a format on, as `fp4sim whatif` maps them
// (nullptr: none in rtl/).
const char* unit_of(std::string_view engine, BlockFormat f);

}  // namespace fp4sim::cli
