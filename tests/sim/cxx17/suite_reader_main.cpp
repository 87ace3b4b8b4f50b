// A kernel test binary's view of a vector suite, through fp4sim/suite_reader.hpp only: built as
// C++17 with g++ (suite_reader_cxx17) and, where CUDA is found, by nvcc from suite_reader_main.cu
// (suite_reader_nvcc), to prove the header needs nothing else. It loads every case (each file
// CRC-checked), re-derives the unpacked codes and row-major scales from the stored packed bytes and
// scale atoms, as a GPU test that feeds packed operands would, and prints one summary line.
//   suite_reader_main SUITE_DIR
#include <cstdio>
#include <exception>

#include "fp4sim/suite_reader.hpp"

namespace sr = fp4sim::suite;

namespace {

// Number of elements where `got` differs from the codes / scales the suite stores row-major.
size_t check_operand(const sr::CaseInfo& c, const sr::OperandData& op, size_t rows, bool four_bit) {
  size_t bad = 0;
  if (four_bit) {
    const std::vector<uint8_t> codes = sr::unpack_nibbles_rows(op.packed.data(), rows, c.K);
    for (size_t i = 0; i < codes.size(); ++i) bad += codes[i] != op.codes[i];
  }
  if (!c.scale_words()) {
    const size_t nblk = c.K / static_cast<size_t>(c.block);
    const std::vector<uint8_t> s = sr::scales_from_atom(op.scales_atom.data(), op.scales_atom.size(), rows, nblk);
    for (size_t i = 0; i < s.size(); ++i) bad += s[i] != op.scales[i];
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SUITE_DIR\n", argv[0]);
    return 2;
  }
  try {
    const sr::Suite suite(argv[1]);
    size_t outputs = 0, bad = 0;
    for (size_t i = 0; i < suite.cases().size(); ++i) {
      const sr::CaseData d = suite.load_case(i);
      const sr::CaseInfo& c = *d.info;
      bad += check_operand(c, d.a, c.M, sr::element_bits(c.elem_a) == 4);
      bad += check_operand(c, d.b, c.N, sr::element_bits(c.elem_b) == 4);
      for (const auto& e : d.expected) outputs += e.second.size();
    }
    std::printf("%s: suite %s, %zu cases, %zu expected outputs, %zu layout mismatches\n", argv[1],
                suite.manifest().suite.c_str(), suite.cases().size(), outputs, bad);
    return bad == 0 && outputs > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "suite_reader_main: error: %s\n", e.what());
    return 1;
  }
}
