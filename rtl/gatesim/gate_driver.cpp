// The RTL driver (rtl/driver/rtl_driver.cpp, unchanged) compiled for a gate-level build
// (scripts/gatesim.sh): its build switches set here rather than on the command line, because
// tests/rtl/rtl_check.hpp tests FP4SIM_RTL_COVERAGE with #ifdef (any definition turns coverage on).
// The V<unit>.h headers it includes name the netlist's model (rtl/gatesim/alias.h.in).
#define FP4SIM_RTL_TRACE 0     // no FST waveforms
#define FP4SIM_RTL_COVERAGE 0  // no Verilator coverage counters
#define FP4SIM_RTL_ASSERT 0    // a netlist has no SVA checks
#include "rtl_driver.cpp"
