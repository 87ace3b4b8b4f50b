// Internal: the native-C++ core of each model (functional datapath + per-instruction timing), driven
// by the SystemC host in sc_host.cpp. No SystemC here, so this code compiles without the kernel.
#pragma once

#include <cstdint>
#include <memory>

#include "fp4sim/models/models.hpp"

namespace fp4sim::models::detail {

class Engine {
 public:
  virtual ~Engine() = default;
  virtual bool done() const = 0;
  // Runs the next output tile (all of its K steps, functionally and in time). Returns the local
  // time (cycles since the job started) up to which the engine's state is final: the host may
  // advance the SystemC clock to it before the next step (the temporal-decoupling quantum).
  virtual uint64_t step() = 0;
  virtual double progress() const = 0;
  // Running totals of the current job (what the host puts on its trace pins after each step).
  virtual uint64_t instructions() const = 0;
  virtual uint64_t compute_cycles() const = 0;
  virtual uint64_t stall_cycles() const = 0;  // datapath idle cycles charged so far (all causes)
  // After done(): the result; stats.cycles = the time the last byte of D left the engine.
  virtual Result finish() = 0;
};

// Both throw std::invalid_argument on a workload / parameter set the model cannot run.
std::unique_ptr<Engine> make_tensor_core(const TensorCoreParams& p, const Workload& w);
std::unique_ptr<Engine> make_cube(const CubeParams& p, const Workload& w);

}  // namespace fp4sim::models::detail
