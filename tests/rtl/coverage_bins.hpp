// Functional coverpoints of the RTL tests (coverage build only: -DFP4SIM_RTL_COVERAGE=ON,
// scripts/coverage.sh, docs/rtl.md "Coverage").
//
// The bins are computed in C++ from each checked case's operands and its golden result, with exact
// integer arithmetic that follows the units' numerics (not from the RTL's internal signals, so the
// SystemVerilog stays untouched): the exponent distance at the final add, the cancellation depth,
// the round / sticky (RN) or lost-bit (RZ) class and every special-value path. The collector also
// recomputes each finite result from its own arithmetic and counts disagreements with golden in the
// bin `self_check.mismatch` (must stay 0, or the bins themselves are wrong).
//
// At exit every declared bin (hit or not) is written to
// $FP4SIM_RTL_COVERAGE_DIR/functional.<pid>.txt (default "."), one line "unit coverpoint bin count",
// bins that cannot be reached by construction marked "unreachable: why".
#pragma once

#include <cstdint>

#include "fp4sim/mma.hpp"
#include "rtl_driver.hpp"

namespace rtlcov {

// One checked case (rtl_check.hpp's Checker calls this for every case it compares).
void sample(fp4sim::rtl::Unit u, const fp4sim::MmaConfig& cfg, const uint8_t* a, const uint8_t* b,
            const uint32_t* sfa, const uint32_t* sfb, uint32_t c, uint32_t golden);

}  // namespace rtlcov
