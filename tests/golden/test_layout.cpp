// Nibble packing and the 128x4 scale-factor atom.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "fp4sim/layout.hpp"
#include "fp4sim/philox.hpp"

namespace fp4sim {
namespace {

TEST(Nibbles, EveryPairExhaustively) {
  for (uint8_t a = 0; a < 16; ++a) {
    for (uint8_t b = 0; b < 16; ++b) {
      const std::vector<uint8_t> codes = {a, b};
      const auto p = pack_nibbles(codes);
      ASSERT_EQ(p.size(), 1u);
      EXPECT_EQ(p[0], static_cast<uint8_t>(a | (b << 4)));  // element 0 in the low nibble
      EXPECT_EQ(unpack_nibbles(p, 2), codes);
    }
  }
}

TEST(Nibbles, OddCountAndHandExample) {
  // E2M1 codes 1 (0.5), 2 (1.0), 0xF (-6): bytes 0x21 and 0x0F (high nibble of the last byte 0).
  const std::vector<uint8_t> codes = {0x1, 0x2, 0xF};
  const auto p = pack_nibbles(codes);
  EXPECT_EQ(p, (std::vector<uint8_t>{0x21, 0x0F}));
  EXPECT_EQ(unpack_nibbles(p, 3), codes);
  EXPECT_TRUE(pack_nibbles(std::vector<uint8_t>{}).empty());
}

TEST(Nibbles, RandomRoundTrips) {
  for (size_t n = 0; n < 300; ++n) {
    std::vector<uint8_t> codes(n);
    sr_bytes(n, 1, 0, n, codes.data());
    for (auto& c : codes) c &= 0xF;
    const auto p = pack_nibbles(codes);
    ASSERT_EQ(p.size(), (n + 1) / 2);
    ASSERT_EQ(unpack_nibbles(p, n), codes);
  }
}

TEST(Nibbles, RowsWithOddColumns) {
  // [2, 3]: rows pack separately, each row ends with a zero high nibble.
  const std::vector<uint8_t> codes = {1, 2, 3, 4, 5, 6};
  const auto p = pack_nibbles_rows(codes, 2, 3);
  EXPECT_EQ(p, (std::vector<uint8_t>{0x21, 0x03, 0x54, 0x06}));
  EXPECT_EQ(unpack_nibbles_rows(p, 2, 3), codes);
  // With even cols, row packing equals flat packing.
  EXPECT_EQ(pack_nibbles_rows(codes, 3, 2), pack_nibbles(codes));
}

TEST(Nibbles, Rejects) {
  EXPECT_THROW(pack_nibbles(std::vector<uint8_t>{1, 16}), std::invalid_argument);
  EXPECT_THROW(unpack_nibbles(std::vector<uint8_t>{0}, 3), std::invalid_argument);
  EXPECT_THROW(pack_nibbles_rows(std::vector<uint8_t>{1, 2, 3}, 2, 2), std::invalid_argument);
}

// torchao to_blocked (mx_formats/utils.py), step by step with index arithmetic:
//   padded.view(nrb, 128, ncb, 4).permute(0, 2, 1, 3)  -> [rb][cb][r][c]
//   .reshape(-1, 4, 32, 4)                              -> [tile = rb*ncb + cb][r/32][r%32][c]
//   .transpose(1, 2).reshape(-1, 32, 16).flatten()      -> [tile][r%32][r/32][c]
size_t torchao_offset(size_t r, size_t c, size_t scols) {
  const size_t ncb = (scols + 3) / 4;
  const size_t tile = (r / 128) * ncb + c / 4;
  const size_t rr = r % 128, cc = c % 4;
  return ((tile * 32 + rr % 32) * 4 + rr / 32) * 4 + cc;
}

TEST(ScaleAtom, HandDerivedOffsets) {
  // [130, 6] scales -> padded [256, 8]: 2 x 2 tiles of 512 bytes, K tiles fastest.
  EXPECT_EQ(scale_atom_bytes(130, 6), 2048u);
  EXPECT_EQ(scale_atom_offset(0, 0, 6), 0u);
  EXPECT_EQ(scale_atom_offset(0, 1, 6), 1u);
  EXPECT_EQ(scale_atom_offset(1, 0, 6), 16u);     // next row: +16
  EXPECT_EQ(scale_atom_offset(32, 0, 6), 4u);     // next 32-row group: +4
  EXPECT_EQ(scale_atom_offset(33, 2, 6), 22u);    // 16 + 4 + 2
  EXPECT_EQ(scale_atom_offset(127, 3, 6), 511u);  // 31*16 + 3*4 + 3: last byte of tile 0
  EXPECT_EQ(scale_atom_offset(0, 4, 6), 512u);    // tile (0, 1)
  EXPECT_EQ(scale_atom_offset(128, 0, 6), 1024u); // tile (1, 0)
  EXPECT_EQ(scale_atom_offset(129, 5, 6), 1553u); // tile (1, 1): 1536 + 16 + 1
}

TEST(ScaleAtom, MatchesTorchaoToBlockedAndIsABijection) {
  for (size_t rows : {1u, 31u, 128u, 129u, 300u}) {
    for (size_t scols : {1u, 3u, 4u, 5u, 17u}) {
      const size_t pr = round_up(rows, 128), pc = round_up(scols, 4);
      std::vector<int> hits(scale_atom_bytes(rows, scols), 0);
      for (size_t r = 0; r < pr; ++r) {
        for (size_t c = 0; c < pc; ++c) {
          const size_t o = scale_atom_offset(r, c, scols);
          ASSERT_EQ(o, torchao_offset(r, c, scols)) << r << "," << c;
          ASSERT_LT(o, hits.size());
          ++hits[o];
        }
      }
      for (int h : hits) ASSERT_EQ(h, 1);
    }
  }
}

TEST(ScaleAtom, RoundTripAndZeroPadding) {
  for (size_t rows : {1u, 7u, 128u, 129u, 257u}) {
    for (size_t scols : {1u, 2u, 4u, 6u, 9u}) {
      std::vector<uint8_t> s(rows * scols);
      for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(1 + i % 255);  // never 0
      const auto atom = scales_to_atom(s, rows, scols);
      ASSERT_EQ(atom.size(), round_up(rows, 128) * round_up(scols, 4));
      size_t zeros = 0;
      for (uint8_t b : atom) zeros += b == 0;
      EXPECT_EQ(zeros, atom.size() - s.size()) << "padding must be zero and nothing else";
      EXPECT_EQ(scales_from_atom(atom, rows, scols), s);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < scols; ++c) ASSERT_EQ(atom[torchao_offset(r, c, scols)], s[r * scols + c]);
      }
    }
  }
}

TEST(ScaleAtom, Rejects) {
  EXPECT_THROW(scales_to_atom(std::vector<uint8_t>(5), 2, 3), std::invalid_argument);
  EXPECT_THROW(scales_from_atom(std::vector<uint8_t>(511), 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace fp4sim
