// libFuzzer target: fp4sim::io::parse_npy on arbitrary bytes (scripts/fuzz.sh). Anything but a clean
// NpyError (or a successfully parsed array whose size matches its shape) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "fp4sim/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const fp4sim::io::NpyArray a = fp4sim::io::parse_npy(std::span<const uint8_t>(data, size), "fuzz.npy");
    if (a.data.size() != a.size() * fp4sim::io::dtype_size(a.dtype)) std::abort();
    // The round trip: what was read encodes back to a file that reads the same.
    const std::vector<uint8_t> again = fp4sim::io::encode_npy(a.dtype, a.shape, a.data);
    const fp4sim::io::NpyArray b = fp4sim::io::parse_npy(again, "again.npy");
    if (b.shape != a.shape || b.dtype != a.dtype || b.data != a.data) std::abort();
  } catch (const fp4sim::io::NpyError&) {
  }
  return 0;
}
