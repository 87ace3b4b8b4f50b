// The SystemC side of the models: one host module per engine, elaborated once per process.
//
// Temporal decoupling: the host's SC_METHOD runs one output tile of its engine per activation (all
// of that tile's instructions, functionally and in time), then sleeps until the kernel clock reaches
// the engine's local time (next_trigger). Per-cycle events would buy nothing here: nothing outside
// the engine observes its internal state between tiles. The pins (busy, retired) are the only
// sc_signals, written at quantum boundaries.
#include <systemc.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "engine.hpp"

namespace fp4sim::models {
namespace {

using detail::Engine;

class EngineHost : public sc_core::sc_module {
 public:
  sc_core::sc_out<bool> busy;          // high while a job runs
  sc_core::sc_out<uint64_t> retired;   // output tiles finished in this job
  sc_core::sc_event start;

  SC_HAS_PROCESS(EngineHost);
  explicit EngineHost(const sc_core::sc_module_name& nm) : sc_core::sc_module(nm), busy("busy"), retired("retired") {
    SC_METHOD(run);
    sensitive << start;
    dont_initialize();
  }

  void begin(Engine* e, const Progress* progress) {
    job_ = e;
    progress_ = progress;
    t0_ = sc_core::sc_time_stamp();
    tiles_ = 0;
    finished_ = false;
    have_result_ = false;
    start.notify(sc_core::SC_ZERO_TIME);
  }
  bool finished() const { return finished_; }
  Result take() { return std::move(result_); }

 private:
  uint64_t now_cycles() const {
    const sc_core::sc_time dt = sc_core::sc_time_stamp() - t0_;
    return static_cast<uint64_t>(dt.to_seconds() * 1e12 / static_cast<double>(kClockPs) + 0.5);
  }
  void wait_until(uint64_t cycles) {
    const uint64_t now = now_cycles();
    next_trigger(sc_core::sc_time(static_cast<double>(cycles > now ? cycles - now : 0) * kClockPs, sc_core::SC_PS));
  }

  void run() {
    if (!job_) return;
    if (tiles_ == 0 && !have_result_) busy.write(true);
    if (!job_->done()) {
      const uint64_t t = job_->step();
      retired.write(++tiles_);
      if (progress_ && *progress_) (*progress_)(job_->progress());
      wait_until(t);
      return;
    }
    if (!have_result_) {  // advance to the last byte of D leaving the engine
      result_ = job_->finish();
      have_result_ = true;
      wait_until(result_.stats.cycles);
      return;
    }
    busy.write(false);
    finished_ = true;
    job_ = nullptr;
  }

  Engine* job_ = nullptr;
  const Progress* progress_ = nullptr;
  sc_core::sc_time t0_;
  uint64_t tiles_ = 0;
  bool finished_ = false, have_result_ = false;
  Result result_;
};

struct System {
  sc_core::sc_signal<bool> tc_busy{"tc_busy"}, cube_busy{"cube_busy"};
  sc_core::sc_signal<uint64_t> tc_retired{"tc_retired"}, cube_retired{"cube_retired"};
  EngineHost tc{"tensor_core"}, cube{"cube"};
  System() {
    tc.busy(tc_busy);
    tc.retired(tc_retired);
    cube.busy(cube_busy);
    cube.retired(cube_retired);
  }
};

uint64_t g_starts = 0;

System& system() {
  static std::unique_ptr<System> sys;
  if (!sys) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // keep fp4sim's stdout clean
    sys = std::make_unique<System>();
  }
  return *sys;
}

Result run_on(EngineHost& host, std::unique_ptr<Engine> engine, const Progress& progress) {
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  host.begin(engine.get(), &progress);
  sc_core::sc_start();
  ++g_starts;
  if (!host.finished()) throw std::runtime_error("models: simulation stopped before the job finished");
  Result r = host.take();
  r.stats.sim_time_ps = static_cast<uint64_t>((sc_core::sc_time_stamp() - t0).to_seconds() * 1e12 + 0.5);
  return r;
}

}  // namespace

Result run_tensor_core(const TensorCoreParams& p, const Workload& w, const Progress& progress) {
  auto e = detail::make_tensor_core(p, w);  // validates before touching the kernel
  System& s = system();
  return run_on(s.tc, std::move(e), progress);
}

Result run_cube(const CubeParams& p, const Workload& w, const Progress& progress) {
  auto e = detail::make_cube(p, w);
  System& s = system();
  return run_on(s.cube, std::move(e), progress);
}

uint64_t sim_time_ps() {
  return static_cast<uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e12 + 0.5);
}
uint64_t sim_starts() { return g_starts; }

}  // namespace fp4sim::models
