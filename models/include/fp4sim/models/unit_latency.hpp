// Pipeline depth (latency in clock cycles, from the cycle an instruction is accepted on in_valid_i /
// in_ready_o to the cycle its result is on out_valid_o / d_o) of each Verilated RTL datapath unit
// (rtl/*.sv, docs/rtl.md). The single C++ definition: the RTL driver's UnitInfo::pipe_depth
// (rtl/driver/rtl_driver.cpp) and the SystemC models' default datapath depths read these.
// No SystemC, no Verilator: plain constexpr C++.
//
// Every unit is verilated with a PipeDepth parameter (-GPipeDepth= in rtl/CMakeLists.txt, which must
// match the numbers here) and is fully pipelined (one instruction per cycle at any depth). The
// stages of a unit with PipeDepth = N, all fp4sim_pipe_reg valid/ready registers:
//   N >= 1  output register (fp4sim_pipe_chain u_out)
//   N >= 2  + the mid register u_mid (after the group sums / integer dot product / decode)
//   N >= 3  + the input register u_in, and N - 3 further output stages in u_out
// tests/rtl/test_unit_latency.cpp measures each unit's latency cycle by cycle on the Verilated model
// and checks it against these constants.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fp4sim::models {

// bs_dot_k64 (Blackwell K=64 FP4 slice), one Verilated model per scale format / block size. The
// variants deliberately differ in depth so that every pipeline shape of bs_dot_k64.sv is exercised.
inline constexpr int kLatencyBsDotK64Ue4m3B16 = 2;  // u_mid (after the 4 group sums) + u_out
inline constexpr int kLatencyBsDotK64Ue8m0B32 = 1;  // u_out only
inline constexpr int kLatencyBsDotK64Ue8m0B16 = 3;  // u_in + u_mid + u_out
inline constexpr int kLatencyBsDotK64Ue4m3B32 = 4;  // u_in + u_mid + 2 u_out stages
// bs_dot_k32 (Blackwell K=32 FP8/FP6/FP4 slice): u_mid (after decode / products / shifts) + u_out.
inline constexpr int kLatencyBsDotK32 = 2;
// hif4_pe (HiF4 64-length PE): u_in + u_mid (after the integer dot product) + u_out.
inline constexpr int kLatencyHif4Pe = 3;
// nvfp4_pe64 (NVFP4 64-length PE, same pipeline as hif4_pe): u_in + u_mid + u_out.
inline constexpr int kLatencyNvfp4Pe64 = 3;

// Latency of a unit by its RTL name (fp4sim::rtl::UnitInfo::name, the Verilated class name after
// "V": "bs_dot_k64_ue4m3_b16", ..., "bs_dot_k32", "hif4_pe", "nvfp4_pe64"). Throws
// std::invalid_argument for any other name.
constexpr int unit_latency(std::string_view unit) {
  if (unit == "bs_dot_k64_ue4m3_b16") return kLatencyBsDotK64Ue4m3B16;
  if (unit == "bs_dot_k64_ue8m0_b32") return kLatencyBsDotK64Ue8m0B32;
  if (unit == "bs_dot_k64_ue8m0_b16") return kLatencyBsDotK64Ue8m0B16;
  if (unit == "bs_dot_k64_ue4m3_b32") return kLatencyBsDotK64Ue4m3B32;
  if (unit == "bs_dot_k32") return kLatencyBsDotK32;
  if (unit == "hif4_pe") return kLatencyHif4Pe;
  if (unit == "nvfp4_pe64") return kLatencyNvfp4Pe64;
  throw std::invalid_argument("unit_latency: unknown RTL unit '" + std::string(unit) + "'");
}

}  // namespace fp4sim::models
