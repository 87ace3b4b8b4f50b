// The SystemC side of the models: one host module per engine, elaborated once per process.
//
// Temporal decoupling: the host's SC_METHOD runs one output tile of its engine per activation (all
// of that tile's instructions, functionally and in time), then sleeps until the kernel clock reaches
// the engine's local time (next_trigger). Per-cycle events would buy nothing here: nothing outside
// the engine observes its internal state between tiles. The pins (busy, retired, instructions,
// compute_cycles, stall_cycles) are the only sc_signals, written at quantum boundaries; open_trace()
// records them in a VCD.
#include <systemc.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine.hpp"

namespace fp4sim::models {
namespace {

using detail::Engine;

class EngineHost : public sc_core::sc_module {
 public:
  sc_core::sc_out<bool> busy;                  // high while a job runs
  sc_core::sc_out<uint64_t> retired;           // output tiles finished in this job
  sc_core::sc_out<uint64_t> instructions;      // MMA instructions / cube K steps issued in this job
  sc_core::sc_out<uint64_t> compute_cycles;    // datapath busy cycles so far
  sc_core::sc_out<uint64_t> stall_cycles;      // datapath idle cycles so far (all causes)
  sc_core::sc_event start;

  SC_HAS_PROCESS(EngineHost);
  explicit EngineHost(const sc_core::sc_module_name& nm)
      : sc_core::sc_module(nm),
        busy("busy"),
        retired("retired"),
        instructions("instructions"),
        compute_cycles("compute_cycles"),
        stall_cycles("stall_cycles") {
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
      instructions.write(job_->instructions());
      compute_cycles.write(job_->compute_cycles());
      stall_cycles.write(job_->stall_cycles());
      if (progress_ && *progress_) (*progress_)(job_->progress());
      wait_until(t);
      return;
    }
    if (!have_result_) {  // advance to the last byte of D leaving the engine
      result_ = job_->finish();
      have_result_ = true;
      stall_cycles.write(result_.stats.cycles - result_.stats.compute_cycles);  // now with the final drain
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

// The signals bound to one host's pins.
struct Pins {
  sc_core::sc_signal<bool> busy;
  sc_core::sc_signal<uint64_t> retired, instructions, compute_cycles, stall_cycles;
  explicit Pins(const std::string& p)
      : busy((p + "_busy").c_str()),
        retired((p + "_retired").c_str()),
        instructions((p + "_instructions").c_str()),
        compute_cycles((p + "_compute_cycles").c_str()),
        stall_cycles((p + "_stall_cycles").c_str()) {}
  void bind(EngineHost& h) {
    h.busy(busy);
    h.retired(retired);
    h.instructions(instructions);
    h.compute_cycles(compute_cycles);
    h.stall_cycles(stall_cycles);
  }
  void trace(sc_core::sc_trace_file* f, const std::string& p) {
    sc_core::sc_trace(f, busy, p + ".busy");
    sc_core::sc_trace(f, retired, p + ".retired");
    sc_core::sc_trace(f, instructions, p + ".instructions");
    sc_core::sc_trace(f, compute_cycles, p + ".compute_cycles");
    sc_core::sc_trace(f, stall_cycles, p + ".stall_cycles");
  }
};

struct System {
  Pins tc_pins{"tc"}, cube_pins{"cube"};
  EngineHost tc{"tensor_core"}, cube{"cube"};
  System() {
    tc_pins.bind(tc);
    cube_pins.bind(cube);
  }
};

uint64_t g_starts = 0;
sc_core::sc_trace_file* g_trace = nullptr;
std::string g_trace_final;

System& system() {
  static std::unique_ptr<System> sys;
  if (!sys) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // keep fp4sim's stdout clean
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);  // e.g. the VCD timescale note
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

void open_trace(const std::string& path) {
  if (g_trace) throw std::logic_error("models: a trace is already open");
  if (g_starts) throw std::logic_error("models: open_trace must come before the first job (SystemC adds no traces later)");
  g_trace_final = path;
  if (g_trace_final.size() < 4 || g_trace_final.compare(g_trace_final.size() - 4, 4, ".vcd") != 0) g_trace_final += ".vcd";
  // Written under a temporary name (SystemC appends ".vcd"), renamed into place by close_trace().
  const std::string tmp = g_trace_final + ".partial";
  System& s = system();
  g_trace = sc_core::sc_create_vcd_trace_file(tmp.c_str());
  if (!g_trace) throw std::runtime_error("models: cannot create the trace " + path);
  g_trace->set_time_unit(1, sc_core::SC_NS);  // one tick per cycle
  s.tc_pins.trace(g_trace, "tensor_core");
  s.cube_pins.trace(g_trace, "cube");
}

void close_trace() {
  if (!g_trace) return;
  // The kernel traces a time step when it leaves it; the last job's final pin values (busy falling)
  // were written at its end time, which nothing has left yet. One idle cycle records them (the
  // clock moves one cycle more; job statistics are per job and do not see it).
  sc_core::sc_start(sc_core::sc_time(static_cast<double>(kClockPs), sc_core::SC_PS));
  sc_core::sc_close_vcd_trace_file(g_trace);
  g_trace = nullptr;
  const std::string tmp = g_trace_final + ".partial.vcd";
  if (std::rename(tmp.c_str(), g_trace_final.c_str()) != 0)
    throw std::runtime_error("models: cannot rename " + tmp + " to " + g_trace_final);
}

}  // namespace fp4sim::models
