// The MPI side of the scale-out World (scaleout.cpp) as a module of its own, libfp4sim_mpi.so,
// dlopen'ed only when a launcher (mpirun, srun) started the process: every other run of fp4sim
// starts without mapping OpenMPI, hwloc, libevent and Boost.MPI. Both sides are built together
// with one compiler and the shared libstdc++, so C++ types and exceptions cross the boundary.
#pragma once

#include <string>
#include <vector>

namespace fp4sim::scaleout {

inline constexpr int kMpiModuleAbi = 1;
inline constexpr const char* kMpiModuleFile = "libfp4sim_mpi.so";
inline constexpr const char* kMpiModuleEntry = "fp4sim_mpi_module";

struct MpiModuleApi {
  int abi;
  // MPI_Init with MPI_THREAD_FUNNELED (only the main thread calls MPI); MPI_Finalize at exit.
  void (*init)(int& rank, int& size);
  void (*barrier)();
  void (*broadcast)(std::string& s);  // rank 0's string on every rank
  // Every rank's string on rank 0 (index = rank); the others get an empty vector.
  std::vector<std::string> (*gather)(const std::string& mine, int rank);
};

}  // namespace fp4sim::scaleout
