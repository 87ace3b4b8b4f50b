#include "fp4sim/layout.hpp"

#include <stdexcept>
#include <string>

namespace fp4sim {

void pack_nibbles(const uint8_t* codes, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n; ++i) {
    if (codes[i] > 0xF) {
      throw std::invalid_argument("pack_nibbles: code " + std::to_string(codes[i]) + " at " + std::to_string(i) +
                                  " does not fit in 4 bits");
    }
  }
  for (size_t i = 0; i + 1 < n; i += 2) out[i / 2] = static_cast<uint8_t>(codes[i] | (codes[i + 1] << 4));
  if (n % 2 != 0) out[n / 2] = codes[n - 1];  // high nibble of the last byte stays 0
}

std::vector<uint8_t> pack_nibbles(std::span<const uint8_t> codes) {
  std::vector<uint8_t> out((codes.size() + 1) / 2);
  pack_nibbles(codes.data(), codes.size(), out.data());
  return out;
}

void unpack_nibbles(const uint8_t* packed, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>((packed[i / 2] >> (4 * (i % 2))) & 0xFu);
}

std::vector<uint8_t> unpack_nibbles(std::span<const uint8_t> packed, size_t n) {
  if (packed.size() < (n + 1) / 2) throw std::invalid_argument("unpack_nibbles: buffer too short");
  std::vector<uint8_t> out(n);
  unpack_nibbles(packed.data(), n, out.data());
  return out;
}

std::vector<uint8_t> pack_nibbles_rows(std::span<const uint8_t> codes, size_t rows, size_t cols) {
  if (codes.size() != rows * cols) throw std::invalid_argument("pack_nibbles_rows: size != rows * cols");
  const size_t rb = (cols + 1) / 2;
  std::vector<uint8_t> out(rows * rb);
  for (size_t r = 0; r < rows; ++r) pack_nibbles(codes.data() + r * cols, cols, out.data() + r * rb);
  return out;
}

std::vector<uint8_t> unpack_nibbles_rows(std::span<const uint8_t> packed, size_t rows, size_t cols) {
  const size_t rb = (cols + 1) / 2;
  if (packed.size() < rows * rb) throw std::invalid_argument("unpack_nibbles_rows: buffer too short");
  std::vector<uint8_t> out(rows * cols);
  for (size_t r = 0; r < rows; ++r) unpack_nibbles(packed.data() + r * rb, cols, out.data() + r * cols);
  return out;
}

std::vector<uint8_t> scales_to_atom(std::span<const uint8_t> scales, size_t rows, size_t scols) {
  if (scales.size() != rows * scols) throw std::invalid_argument("scales_to_atom: size != rows * scols");
  std::vector<uint8_t> out(scale_atom_bytes(rows, scols), 0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < scols; ++c) out[scale_atom_offset(r, c, scols)] = scales[r * scols + c];
  }
  return out;
}

std::vector<uint8_t> scales_from_atom(std::span<const uint8_t> atom, size_t rows, size_t scols) {
  if (atom.size() < scale_atom_bytes(rows, scols)) throw std::invalid_argument("scales_from_atom: buffer too short");
  std::vector<uint8_t> out(rows * scols);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < scols; ++c) out[r * scols + c] = atom[scale_atom_offset(r, c, scols)];
  }
  return out;
}

}  // namespace fp4sim
