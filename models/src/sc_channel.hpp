// Internal: the clock and the bounded latency-insensitive channel every unit of the structural
// models talks through (docs/models.md "Structure"). SystemC only here and in sc_models.cpp.
//
// Clock: every wait of a unit is a whole number of cycles of the 1 GHz model clock (kClockPs), and
// every notification is a delta notification, so the simulated time is always on a clock edge. A
// busy unit waits its occupancy in one timed wait and an idle unit sleeps on a channel's event:
// neither costs a kernel activation per cycle (the same cycle counts as a per-edge clocked thread).
//
// Channel<T>: a FIFO with a capacity (back-pressure: push blocks while full) and an optional
// per-item latency (the item becomes visible `delay` cycles after the push: a pipeline). Point to
// point: one producer thread, one consumer thread. Optionally traced: occupancy, valid (an item is
// visible) and ready (not full) as sc_signals for the VCD.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "fp4sim/models/models.hpp"

namespace fp4sim::models::detail {

inline uint64_t now_cycles() { return sc_core::sc_time_stamp().value() / kClockPs; }
inline sc_core::sc_time cycles_time(uint64_t n) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(n) * kClockPs);
}
inline void wait_cycles(uint64_t n) {
  if (n) sc_core::wait(cycles_time(n));
}

extern bool g_tracing;  // write the traced channels' signals (only while a VCD is open)

template <class T>
class Channel {
 public:
  explicit Channel(std::string name, size_t capacity = 1) : name_(std::move(name)), cap_(capacity) {}
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Between jobs, from outside the simulation: empty it and set its capacity.
  void reset(size_t capacity) {
    q_.clear();
    cap_ = capacity;
    show();
  }
  // Between jobs: an item present at the start (a free-slot token).
  void preload(T v) {
    q_.push_back({std::move(v), 0});
    written_.notify(sc_core::SC_ZERO_TIME);
    if (also_) also_->notify(sc_core::SC_ZERO_TIME);
    show();
  }
  void push(T v, uint64_t delay = 0) {
    while (q_.size() >= cap_) sc_core::wait(read_);
    q_.push_back({std::move(v), now_cycles() + delay});
    written_.notify(sc_core::SC_ZERO_TIME);
    if (also_) also_->notify(sc_core::SC_ZERO_TIME);
    show();
  }
  T pop() {
    for (;;) {
      while (q_.empty()) sc_core::wait(written_);
      const uint64_t now = now_cycles();
      if (q_.front().ready <= now) break;
      wait_cycles(q_.front().ready - now);
    }
    T v = std::move(q_.front().v);
    q_.pop_front();
    read_.notify(sc_core::SC_ZERO_TIME);
    show();
    return v;
  }
  bool can_pop() const { return !q_.empty() && q_.front().ready <= now_cycles(); }
  // Cycle at which the front item becomes visible (UINT64_MAX when empty).
  uint64_t front_ready() const { return q_.empty() ? UINT64_MAX : q_.front().ready; }
  size_t size() const { return q_.size(); }
  const sc_core::sc_event& written() const { return written_; }
  void also_notify(sc_core::sc_event* e) { also_ = e; }

  // Creates the signals (elaboration only) and adds them to the trace.
  void trace(sc_core::sc_trace_file* f, const std::string& prefix) {
    sig_ = std::make_unique<Signals>();
    sc_core::sc_trace(f, sig_->occupancy, prefix + name_ + ".occupancy");
    sc_core::sc_trace(f, sig_->valid, prefix + name_ + ".valid");
    sc_core::sc_trace(f, sig_->ready, prefix + name_ + ".ready");
  }

 private:
  struct Item {
    T v;
    uint64_t ready;
  };
  struct Signals {
    // Written by both ends (push and pop), possibly in one delta: the last write of a delta wins.
    sc_core::sc_signal<uint32_t, sc_core::SC_UNCHECKED_WRITERS> occupancy;
    sc_core::sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS> valid, ready;
  };
  void show() {
    if (!sig_ || !g_tracing) return;
    sig_->occupancy.write(static_cast<uint32_t>(q_.size()));
    sig_->valid.write(!q_.empty());
    sig_->ready.write(q_.size() < cap_);
  }

  std::string name_;
  std::deque<Item> q_;
  size_t cap_;
  sc_core::sc_event written_, read_;
  sc_core::sc_event* also_ = nullptr;
  std::unique_ptr<Signals> sig_;
};

}  // namespace fp4sim::models::detail
