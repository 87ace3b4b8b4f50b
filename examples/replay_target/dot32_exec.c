/* dot32_e2m1's C model (dot32_e2m1_model.c) as an exec model for fp4sim replay:
 *   fp4sim replay SUITE --target "exec:./dot32_exec"            the unit
 *   fp4sim replay SUITE --target "exec:./dot32_exec --plant-bug"  its planted-bug variant */
#include <string.h>

#include "dot32_e2m1_model.h"
#include "replay_serve.h"

static int answer(const fp4sim_request* r, void* ctx, uint32_t* d, int* flags, const char** why) {
  (void)flags;
  if (r->config != DOT32_E2M1_CONFIG) {
    *why = "dot32_e2m1 computes only mxf8f6f4 E2M1 x E2M1, UE8M0 / 32 under blackwell (config 22000020)";
    return 1;
  }
  *d = dot32_e2m1(r->a, r->b, (uint8_t)r->sa[0], (uint8_t)r->sb[0], r->c, *(const int*)ctx);
  return 0;
}

int main(int argc, char** argv) {
  int plant_bug = argc > 1 && strcmp(argv[1], "--plant-bug") == 0;
  return fp4sim_serve(answer, &plant_bug);
}
