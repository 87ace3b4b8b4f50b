// Every unit under handshake stress, results checked bit for bit against golden: long output
// back-pressure (the pipeline fills, the input stalls for 1000 cycles at a time), and reset in
// mid-stream (one reset cycle every 97 cycles with instructions in flight; the driver re-sends what
// was lost, so any stale output after a reset shows as a mismatch), each alone and together with
// random bubbles and stalls.
#include <gtest/gtest.h>

#include "rtl_check.hpp"

namespace {

using fp4sim::rtl::DriverOptions;
using fp4sim::rtl::Unit;
using rtlcheck::Case;
using rtlcheck::Checker;
using rtlcheck::Rng;

constexpr Unit kUnits[] = {Unit::BsDotK64Ue4m3B16, Unit::BsDotK64Ue8m0B32, Unit::BsDotK64Ue8m0B16,
                           Unit::BsDotK64Ue4m3B32, Unit::BsDotK32,         Unit::Hif4Pe,
                           Unit::Nvfp4Pe64};

// Random finite operands of the unit's formats (codes above a format's width are ignored).
Case random_case(Unit u, Rng& rng) {
  Case c;
  for (int k = 0; k < 64; ++k) {
    c.a[k] = static_cast<uint8_t>(u == Unit::BsDotK32 ? rng.below(0x77) : rng.below(16));
    c.b[k] = static_cast<uint8_t>(u == Unit::BsDotK32 ? rng.below(0x77) : rng.below(16));
  }
  for (int j = 0; j < 4; ++j) {
    c.sfa[j] = u == Unit::Hif4Pe ? (static_cast<uint32_t>(rng.range(0xA0, 0xE0)) | (rng.u32() & 0xFFFFFF00u))
                                 : static_cast<uint32_t>(rng.range(0x70, 0x88));
    c.sfb[j] = u == Unit::Hif4Pe ? (static_cast<uint32_t>(rng.range(0xA0, 0xE0)) | (rng.u32() & 0xFFFFFF00u))
                                 : static_cast<uint32_t>(rng.range(0x70, 0x88));
  }
  c.c = rng.c_bits(0);
  return c;
}

void stress(const DriverOptions& opt, const char* what) {
  for (Unit u : kUnits) {
    SCOPED_TRACE(std::string(fp4sim::rtl::unit_info(u).name));
    Checker chk(u, nullptr, nullptr, opt);
    Rng rng(rtlcheck::seed_base() * 53 + static_cast<uint64_t>(u));
    for (int i = 0; i < 3000; ++i) chk.add(random_case(u, rng));
    chk.expect_clean(what);
    EXPECT_EQ(chk.checked(), 3000u);
  }
}

TEST(RtlStress, LongBackPressure) { stress({std::string(), 0, 1000, 0}, "long back-pressure"); }
TEST(RtlStress, ResetInMidStream) { stress({std::string(), 0, 0, 97}, "reset in mid-stream"); }
TEST(RtlStress, EverythingAtOnce) { stress({std::string(), 7, 300, 131}, "bubbles, stalls, holds and resets"); }

}  // namespace
