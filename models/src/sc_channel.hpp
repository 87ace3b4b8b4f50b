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
// point: one producer unit, one consumer unit (threads or methods). Optionally traced: occupancy, valid (an item is
// visible) and ready (not full) as sc_signals for the VCD.
#pragma once

#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: one memory-system thread per die
#include <systemc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fp4sim/models/models.hpp"

namespace fp4sim::models::detail {

inline uint64_t now_cycles() { return sc_core::sc_time_stamp().value() / kClockPs; }
inline sc_core::sc_time cycles_time(uint64_t n) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(n) * kClockPs);
}
// A job that fails (a unit throws, or the simulation runs out of events before the job is done)
// is unwound: g_aborting is set, every event a unit may wait on is notified (wake_all), and each
// unit throws Aborted from its wait and parks until the next job (sc_models.cpp unit_loop).
// Without that a failed job would leave threads mid-iteration and poison every later job of the
// process. (Waiting on `e | abort` instead would allocate an event list per wait.)
struct Aborted {};
extern bool g_aborting;
std::vector<sc_core::sc_event*>& wake_list();  // every event a unit waits on
inline void wake_all() {
  for (sc_core::sc_event* e : wake_list()) e->notify(sc_core::SC_ZERO_TIME);
}
inline void check_abort() {
  if (g_aborting) throw Aborted{};
}
// Waits for `e` or an abort.
inline void wait_event(const sc_core::sc_event& e) {
  check_abort();
  sc_core::wait(e);
  check_abort();
}
inline void wait_cycles(uint64_t n) {
  check_abort();
  if (n) sc_core::wait(cycles_time(n));
  check_abort();
}

// SC_METHOD units: true when `c` has a visible item; else the method is re-triggered when one can
// be (the event a thread's pop() would wait on) and returns false.
template <class C>
bool pop_ready(C& c) {
  if (c.can_pop()) return true;
  const uint64_t fr = c.front_ready();
  if (fr == UINT64_MAX) sc_core::next_trigger(c.written());
  else sc_core::next_trigger(cycles_time(fr - now_cycles()));
  return false;
}
template <class C>
bool push_ready(C& c) {
  if (c.can_push()) return true;
  sc_core::next_trigger(c.read());
  return false;
}

extern bool g_tracing;  // write the traced channels' signals (only while a VCD is open)

// A FIFO that reuses its storage (a std::deque allocates and frees a block every few hundred
// items: a measurable share of a long simulation). Grows by doubling; never shrinks.
template <class Item>
class Ring {
 public:
  bool empty() const { return n_ == 0; }
  size_t size() const { return n_; }
  Item& front() { return buf_[head_]; }
  const Item& front() const { return buf_[head_]; }
  void push_back(Item v) {
    if (n_ == buf_.size()) grow();
    buf_[(head_ + n_) & (buf_.size() - 1)] = std::move(v);
    ++n_;
  }
  void pop_front() {
    buf_[head_] = Item{};  // release what a moved-from item may still hold
    head_ = (head_ + 1) & (buf_.size() - 1);
    --n_;
  }
  void clear() {
    while (n_) pop_front();
    head_ = 0;
  }

 private:
  void grow() {
    std::vector<Item> b(buf_.empty() ? 4 : 2 * buf_.size());
    for (size_t i = 0; i < n_; ++i) b[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
    buf_ = std::move(b);
    head_ = 0;
  }
  std::vector<Item> buf_;  // size 0 or a power of two
  size_t head_ = 0, n_ = 0;
};

// A unit that consumes many channels (the L2 port) listens to them instead of scanning them all
// and waking on every push: it is told each push's visible cycle and when a channel runs empty.
class ChannelListener {
 public:
  virtual void pushed(size_t index, uint64_t ready) = 0;
  virtual void emptied(size_t index) = 0;

 protected:
  ~ChannelListener() = default;
};

template <class T>
class Channel {
 public:
  explicit Channel(std::string name, size_t capacity = 1) : name_(std::move(name)), cap_(capacity) {
    wake_list().push_back(&written_);
    wake_list().push_back(&read_);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Between jobs, from outside the simulation: empty it and set its capacity.
  void reset(size_t capacity) {
    q_.clear();
    cap_ = capacity;
    if (listener_) listener_->emptied(index_);
    show();
  }
  // Between jobs: an item present at the start (a free-slot token).
  void preload(T v) {
    q_.push_back({std::move(v), 0});
    written_.notify(sc_core::SC_ZERO_TIME);
    if (listener_) listener_->pushed(index_, 0);
    show();
  }
  void push(T v, uint64_t delay = 0) {
    while (q_.size() >= cap_) wait_event(read_);
    push_now(std::move(v), delay);
  }
  // Method units (no wait): push when can_push(), pop when can_pop().
  bool can_push() const { return q_.size() < cap_; }
  void push_now(T v, uint64_t delay = 0) {
    const uint64_t ready = now_cycles() + delay;
    q_.push_back({std::move(v), ready});
    written_.notify(sc_core::SC_ZERO_TIME);
    if (listener_) listener_->pushed(index_, ready);
    show();
  }
  T pop() {
    for (;;) {
      while (q_.empty()) wait_event(written_);
      const uint64_t now = now_cycles();
      if (q_.front().ready <= now) break;
      wait_cycles(q_.front().ready - now);
    }
    return pop_now();
  }
  // Takes the front item whether or not it is visible yet (a consumer that accounts for its
  // visible cycle itself, front_ready()).
  T pop_now() {
    T v = std::move(q_.front().v);
    q_.pop_front();
    read_.notify(sc_core::SC_ZERO_TIME);
    if (listener_ && q_.empty()) listener_->emptied(index_);
    show();
    return v;
  }
  bool can_pop() const { return !q_.empty() && q_.front().ready <= now_cycles(); }
  const T& front() const { return q_.front().v; }  // (not empty)
  // Cycle at which the front item becomes visible (UINT64_MAX when empty).
  uint64_t front_ready() const { return q_.empty() ? UINT64_MAX : q_.front().ready; }
  size_t size() const { return q_.size(); }
  bool empty() const { return q_.empty(); }
  const sc_core::sc_event& written() const { return written_; }
  const sc_core::sc_event& read() const { return read_; }
  void listen(ChannelListener* l, size_t index) { listener_ = l, index_ = index; }

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
  Ring<Item> q_;
  size_t cap_;
  sc_core::sc_event written_, read_;
  ChannelListener* listener_ = nullptr;
  size_t index_ = 0;
  std::unique_ptr<Signals> sig_;
};

}  // namespace fp4sim::models::detail
