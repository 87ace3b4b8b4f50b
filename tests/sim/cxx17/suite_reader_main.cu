// The same program as suite_reader_main.cpp, compiled by nvcc: fp4sim/suite_reader.hpp in a CUDA TU.
#include "suite_reader_main.cpp"
