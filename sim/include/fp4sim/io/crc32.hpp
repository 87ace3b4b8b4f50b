// CRC-32 as zlib / PNG / IEEE 802.3 compute it: reflected polynomial 0xEDB88320, initial value
// and final XOR 0xFFFFFFFF. Check value: crc32("123456789") = 0xCBF43926.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fp4sim::io {

// Incremental like zlib's crc32(): crc32(b, crc32(a)) == crc32(a ++ b); start with prev = 0.
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t prev = 0);
uint32_t crc32(std::string_view text, uint32_t prev = 0);

// Eight lowercase hex digits, the form the manifests store ("cbf43926").
std::string crc32_hex(uint32_t crc);

}  // namespace fp4sim::io
