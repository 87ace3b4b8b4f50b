// The Verilated outside unit examples/sv_dpi/dot32_e2m1.sv as an exec model for fp4sim replay:
//   fp4sim replay SUITE --target exec:./dot32_verilated       (verilated with PLANT_BUG = 0)
//   fp4sim replay SUITE --target exec:./dot32_verilated_bug   (verilated with -GPLANT_BUG=1)
// Each request drives the combinational unit's ports once and reads d.
#include <memory>

#include "Vdot32_e2m1.h"
#include "replay_serve.h"
#include "verilated.h"

namespace {

int answer(const fp4sim_request* r, void* ctx, uint32_t* d, int*, const char** why) {
  if (r->config != 0x22000020u) {
    *why = "dot32_e2m1 computes only mxf8f6f4 E2M1 x E2M1, UE8M0 / 32 under blackwell (config 22000020)";
    return 1;
  }
  auto* top = static_cast<Vdot32_e2m1*>(ctx);
  // element k = a[4k +: 4]: eight elements per 32-bit word of the 128-bit port
  for (int w = 0; w < 4; ++w) {
    uint32_t aw = 0, bw = 0;
    for (int i = 0; i < 8; ++i) {
      aw |= static_cast<uint32_t>(r->a[8 * w + i] & 0xFu) << (4 * i);
      bw |= static_cast<uint32_t>(r->b[8 * w + i] & 0xFu) << (4 * i);
    }
    top->a[w] = aw;
    top->b[w] = bw;
  }
  top->sa = static_cast<uint8_t>(r->sa[0]);
  top->sb = static_cast<uint8_t>(r->sb[0]);
  top->c = r->c;
  top->eval();
  *d = top->d;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vdot32_e2m1>(ctx.get());
  const int rc = fp4sim_serve(answer, top.get());
  top->final();
  return rc;
}
