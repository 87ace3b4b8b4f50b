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
  uint64_t instructions() const { return instr_; }
  uint64_t compute_cycles() const { return compute_cycles_; }
  uint64_t stall_cycles() const {  // datapath idle cycles charged so far (all causes)
    uint64_t t = 0;
    for (uint64_t c : stall_) t += c;
    return t;
  }
  // After done(): the result; stats.cycles = the time the last byte of D left the engine.
  virtual Result finish() = 0;

 protected:
  // Kept by each engine: instructions (tensor core) / K steps (cube) issued, datapath busy cycles,
  // and idle cycles by cause (each engine names its five causes).
  static constexpr int kStallCauses = 5;
  uint64_t instr_ = 0, compute_cycles_ = 0;
  uint64_t stall_[kStallCauses] = {};
};

// Both throw std::invalid_argument on a workload / parameter set the model cannot run.
std::unique_ptr<Engine> make_tensor_core(const TensorCoreParams& p, const Workload& w);
std::unique_ptr<Engine> make_cube(const CubeParams& p, const Workload& w);

}  // namespace fp4sim::models::detail
