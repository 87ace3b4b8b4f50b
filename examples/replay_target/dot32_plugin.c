/* dot32_e2m1's C model (dot32_e2m1_model.c) as a replay plugin (fp4sim/replay_plugin.h):
 *   fp4sim replay SUITE --target plugin:./libdot32_plugin.so
 * Built with -DPLANT_BUG=1 it is the planted-bug variant (libdot32_plugin_bug.so). */
#include "dot32_e2m1_model.h"
#include "fp4sim/replay_plugin.h"

#ifndef PLANT_BUG
#define PLANT_BUG 0
#endif

uint32_t fp4sim_replay_abi_version(void) { return FP4SIM_REPLAY_PLUGIN_ABI_VERSION; }

const char* fp4sim_replay_name(void) { return PLANT_BUG ? "dot32_e2m1 C model, planted bug" : "dot32_e2m1 C model"; }

const char* fp4sim_replay_supports(uint32_t config) {
  return config == DOT32_E2M1_CONFIG
             ? 0
             : "dot32_e2m1 computes only mxf8f6f4 E2M1 x E2M1, UE8M0 / 32 under blackwell (config 22000020)";
}

int fp4sim_replay_dot(uint32_t config, const uint8_t* a, const uint8_t* b, const uint32_t* sa, const uint32_t* sb,
                      uint32_t c, uint32_t* d) {
  if (config != DOT32_E2M1_CONFIG) return 1;
  *d = dot32_e2m1(a, b, (uint8_t)sa[0], (uint8_t)sb[0], c, PLANT_BUG);
  return 0;
}
