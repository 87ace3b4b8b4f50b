#include "cli/energy_table.hpp"

#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "fp4sim_energy_json.hpp"  // kEnergyJson: rtl/energy.json (sim/CMakeLists.txt)

namespace fp4sim::cli {
namespace {

struct Table {
  std::vector<UnitEnergy> rows;
  std::string dist;
};

const Table& table() {
  static const Table t = [] {
    const auto fail = [](const std::string& why) {
      return std::runtime_error("the energy data built in from rtl/energy.json " + why +
                                " (re-run scripts/energy.sh --json rtl/energy.json)");
    };
    Table out;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(kEnergyJson);
    } catch (const nlohmann::json::exception& e) {
      throw fail(std::string("is not JSON: ") + e.what());
    }
    if (!j.contains("_default_dist") || !j["_default_dist"].is_string()) throw fail("has no _default_dist");
    out.dist = j["_default_dist"].get<std::string>();
    for (const auto& [name, u] : j.items()) {
      if (name.empty() || name[0] == '_') continue;
      const auto pos = [&](const char* k) {
        if (!u.contains(k) || !u[k].is_number() || u[k].get<double>() <= 0)
          throw fail(std::string("has no positive ") + k + " for " + name);
        return u[k].get<double>();
      };
      if (!u.contains("pj_per_mac") || u["pj_per_mac"].is_null()) continue;  // not a dot unit (pts multiply)
      out.rows.push_back({name, pos("energy_pj"), pos("pj_per_mac"), pos("tops_per_w")});
    }
    return out;
  }();
  return t;
}

}  // namespace

const UnitEnergy* energy_of(std::string_view unit) {
  for (const UnitEnergy& e : table().rows)
    if (e.unit == unit) return &e;
  return nullptr;
}

std::string energy_dist() { return table().dist; }

const char* unit_of(std::string_view engine, BlockFormat f) {
  if (engine == "tensor-core") {
    if (f == BlockFormat::Nvfp4) return "bs_dot_k64_ue4m3_b16";
    if (f == BlockFormat::Mxfp4) return "bs_dot_k64_ue8m0_b32";
    return nullptr;
  }
  if (engine != "cube") return nullptr;
  if (f == BlockFormat::Hif4) return "hif4_pe";
  if (f == BlockFormat::Nvfp4) return "nvfp4_pe64";
  if (f == BlockFormat::Mxfp4) return "bs_dot_k64_ue8m0_b32";  // the cube has no MXFP4 PE in rtl/
  return nullptr;
}

}  // namespace fp4sim::cli
