#include "fp4sim/io/crc32.hpp"

#include <array>
#include <cstdio>

namespace fp4sim::io {
namespace {

// Byte-at-a-time table for the reflected polynomial, built at compile time.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t prev) {
  uint32_t c = prev ^ 0xFFFFFFFFu;
  for (uint8_t b : bytes) c = kTable[(c ^ b) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t crc32(std::string_view text, uint32_t prev) {
  return crc32(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
               prev);
}

std::string crc32_hex(uint32_t crc) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc));
  return buf;
}

}  // namespace fp4sim::io
