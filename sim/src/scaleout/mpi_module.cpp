// libfp4sim_mpi.so: Boost.MPI behind the MpiModuleApi of mpi_module.hpp (see there for why).
#include "scaleout/mpi_module.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

namespace fp4sim::scaleout {
namespace {

boost::mpi::communicator& comm() {
  static boost::mpi::communicator c;
  return c;
}

// Finalizes MPI when the process ends normally (static destructors of the module run at exit).
std::unique_ptr<boost::mpi::environment>& environment() {
  static std::unique_ptr<boost::mpi::environment> env;
  return env;
}

void init(int& rank, int& size) {
  environment() = std::make_unique<boost::mpi::environment>(boost::mpi::threading::funneled, false);
  rank = comm().rank();
  size = comm().size();
}

void barrier() { comm().barrier(); }

void broadcast(std::string& s) {
  uint64_t n = s.size();
  boost::mpi::broadcast(comm(), n, 0);
  s.resize(n);
  if (n) boost::mpi::broadcast(comm(), s.data(), static_cast<int>(n), 0);
}

std::vector<std::string> gather(const std::string& mine, int rank) {
  if (mine.size() > static_cast<size_t>(INT32_MAX))
    throw std::runtime_error("gather: more than 2 GiB of shard results on one rank (use a larger --shard-size)");
  const int n = static_cast<int>(mine.size());
  if (rank != 0) {
    boost::mpi::gather(comm(), n, 0);
    boost::mpi::gatherv(comm(), mine.data(), n, 0);
    return {};
  }
  std::vector<int> sizes;
  boost::mpi::gather(comm(), n, sizes, 0);
  std::vector<int> displs(sizes.size());
  uint64_t total = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    if (total > static_cast<uint64_t>(INT32_MAX)) throw std::runtime_error("gather: more than 2 GiB of shard results");
    displs[r] = static_cast<int>(total);
    total += static_cast<uint64_t>(sizes[r]);
  }
  std::string all(total, '\0');
  boost::mpi::gatherv(comm(), mine.data(), n, all.data(), sizes, displs, 0);
  std::vector<std::string> out(sizes.size());
  for (size_t r = 0; r < sizes.size(); ++r) out[r] = all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(sizes[r]));
  return out;
}

const MpiModuleApi kApi{kMpiModuleAbi, &init, &barrier, &broadcast, &gather};

}  // namespace
}  // namespace fp4sim::scaleout

extern "C" __attribute__((visibility("default"))) const fp4sim::scaleout::MpiModuleApi* fp4sim_mpi_module() {
  return &fp4sim::scaleout::kApi;
}
