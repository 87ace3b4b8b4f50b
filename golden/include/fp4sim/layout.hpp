// Storage layouts: 4-bit nibble packing and the tensor-core scale-factor "atom".
//
// Nibble packing (SPEC §1, matching TE / torchao / PTX e2m1x2): two 4-bit codes per byte, element
// 2i in the LOW nibble, element 2i+1 in the high nibble; an odd count leaves the last high nibble 0.
//
// Scale atom: the layout cuBLAS (block-scaling-factors layout), CUTLASS (sm100_blockscaled_layout.hpp
// Sm1xxBlockScaledBasicChunk::SfKMajorAtom = Shape<Shape<_32,_4>, Shape<SFVecSize,_4>> with
// Stride<Stride<_16,_4>, Stride<_0,_1>>, tiled with Step<_2,_1> so K tiles vary fastest) and
// TransformerEngine (swizzle before GEMM; torchao to_blocked does the same) expect for block
// scales of a K-major operand. A row-major scale matrix [rows, scols] (scols = K / block) is
// zero-padded to rows -> multiple of 128, scols -> multiple of 4, and cut into 128x4 tiles of
// 512 bytes laid out row-tile-major (tile (rt, ct) at byte (rt * ceil(scols/4) + ct) * 512).
// Inside a tile, scale (r, c) with r < 128, c < 4 sits at byte (r % 32) * 16 + (r / 32) * 4 + c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fp4sim {

// Packs n codes (each < 16) into (n + 1) / 2 bytes. Throws std::invalid_argument on a code >= 16.
std::vector<uint8_t> pack_nibbles(std::span<const uint8_t> codes);
void pack_nibbles(const uint8_t* codes, size_t n, uint8_t* out);
// Unpacks n codes from (n + 1) / 2 bytes (throws if packed is shorter).
std::vector<uint8_t> unpack_nibbles(std::span<const uint8_t> packed, size_t n);
void unpack_nibbles(const uint8_t* packed, size_t n, uint8_t* out);

// Row by row: each row of `cols` codes becomes (cols + 1) / 2 bytes (differs from flat packing only
// for odd cols). Shapes [rows, cols] -> [rows, (cols + 1) / 2].
std::vector<uint8_t> pack_nibbles_rows(std::span<const uint8_t> codes, size_t rows, size_t cols);
std::vector<uint8_t> unpack_nibbles_rows(std::span<const uint8_t> packed, size_t rows, size_t cols);

inline constexpr size_t kAtomRows = 128, kAtomCols = 4, kAtomBytes = 512;

inline constexpr size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

// Size in bytes of the swizzled buffer for a [rows, scols] scale matrix.
inline constexpr size_t scale_atom_bytes(size_t rows, size_t scols) {
  return round_up(rows, kAtomRows) * round_up(scols, kAtomCols);
}

// Byte offset of scale (r, c) of a [*, scols] scale matrix in the swizzled buffer.
inline constexpr size_t scale_atom_offset(size_t r, size_t c, size_t scols) {
  const size_t col_tiles = round_up(scols, kAtomCols) / kAtomCols;
  const size_t tile = (r / kAtomRows) * col_tiles + c / kAtomCols;
  return tile * kAtomBytes + (r % 32) * 16 + ((r % kAtomRows) / 32) * 4 + (c % kAtomCols);
}

// Row-major [rows, scols] -> swizzled, zero-padded buffer of scale_atom_bytes(rows, scols) bytes.
// Throws std::invalid_argument if scales.size() != rows * scols.
std::vector<uint8_t> scales_to_atom(std::span<const uint8_t> scales, size_t rows, size_t scols);
// Swizzled buffer -> row-major [rows, scols] (the padding is dropped). Throws if atom is too short.
std::vector<uint8_t> scales_from_atom(std::span<const uint8_t> atom, size_t rows, size_t scols);

}  // namespace fp4sim
