/* Replay plugins for the tests (tests/sim/replay_external/test_replay_external.cpp), each built from this file with
 * one definition: TEST_PLUGIN_NO_DOT (fp4sim_replay_dot missing), TEST_PLUGIN_ABI=2 (another ABI
 * version), TEST_PLUGIN_FAIL (the model's call fails). They refuse every configuration but the
 * dot32_e2m1 one, and compute that with the example's C model. */
#include "dot32_e2m1_model.h"
#include "fp4sim/replay_plugin.h"

#ifndef TEST_PLUGIN_ABI
#define TEST_PLUGIN_ABI FP4SIM_REPLAY_PLUGIN_ABI_VERSION
#endif

uint32_t fp4sim_replay_abi_version(void) { return TEST_PLUGIN_ABI; }

const char* fp4sim_replay_supports(uint32_t config) { return config == DOT32_E2M1_CONFIG ? "" : "test plugin: not 22000020"; }

#ifndef TEST_PLUGIN_NO_DOT
int fp4sim_replay_dot(uint32_t config, const uint8_t* a, const uint8_t* b, const uint32_t* sa, const uint32_t* sb,
                      uint32_t c, uint32_t* d) {
#ifdef TEST_PLUGIN_FAIL
  (void)config, (void)a, (void)b, (void)sa, (void)sb, (void)c, (void)d;
  return 7;
#else
  if (config != DOT32_E2M1_CONFIG) return 1;
  *d = dot32_e2m1(a, b, (uint8_t)sa[0], (uint8_t)sb[0], c, 0);
  return 0;
#endif
}
#endif
