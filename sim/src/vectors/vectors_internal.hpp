// Pieces of the vector suites shared between vectors.cpp and vectors_quant.cpp (not installed).
#pragma once

#include <cstdint>
#include <vector>

#include "fp4sim/io/vectors.hpp"

namespace fp4sim::vectors {

// The cases of the `quant` suite, without ids or expected outputs, quantized under `conv` (only the
// cases whose format and options that library has).
std::vector<VectorCase> quant_suite_cases(uint64_t seed, Convention conv);

}  // namespace fp4sim::vectors
