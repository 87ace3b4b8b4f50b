// Replay targets outside fp4sim: the exec process, the plugin, and the chaining target over them.
#include "fp4sim/io/replay_external.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "fp4sim/io/lines.hpp"
#include "fp4sim/mma.hpp"
#include "fp4sim/replay_plugin.h"

namespace fp4sim::dut {
namespace {

// Lower-case hex, at least `digits` digits (more when v needs them, as printf's %0*x). By hand, not
// snprintf: a request has ~70 fields and snprintf dominated the exec target's time.
void put_hex(std::string& out, uint64_t v, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char buf[16];
  int n = 0;
  do {
    buf[n++] = kDigits[v & 0xF];
    v >>= 4;
  } while (v != 0 || n < digits);
  while (n > 0) out += buf[--n];
}

// Codes as one hex word, most significant first (element 0 is the last digits), as line vectors.
template <class T>
void put_packed(std::string& out, const T* v, size_t n, int digits) {
  for (size_t i = n; i-- > 0;) put_hex(out, v[i], digits);
}

// At most max_digits hex digits (an optional 0x).
bool hex_value(std::string_view s, int max_digits, uint32_t& out) {
  uint64_t v = 0;
  const size_t digits = s.size() - (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0);
  if (digits > static_cast<size_t>(max_digits) || !lines::parse_hex(s, v, 4 * max_digits)) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

std::string hex8(uint32_t v) {
  std::string s;
  put_hex(s, v, 8);
  return s;
}

// "instruction 1 of 2 of D[3, 0] in case 0007-mxf4-k_chaining (request 12)"
std::string where(const Request& r, std::string_view case_id, size_t request_no) {
  return "instruction " + std::to_string(r.s) + " of " + std::to_string(r.S) + " of D[" + std::to_string(r.m) + ", " +
         std::to_string(r.n) + "] in case " + std::string(case_id) + " (request " + std::to_string(request_no) + ")";
}

// A shown line, cut to fit one report line.
std::string shown(std::string_view line) {
  std::string s(line.substr(0, 60));
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7F) ch = '?';
  return "'" + s + (line.size() > 60 ? "...'" : "'");
}

// ---------------------------------------------------------------------------------------------
// exec:CMD

class ExecModel final : public InstructionModel {
 public:
  ExecModel(std::string command, double timeout_s) : command_(std::move(command)), timeout_s_(timeout_s) {
    // A process that dies leaves fp4sim writing into a closed pipe: that must be EPIPE, not a kill.
    std::signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) throw ExternalError("exec: pipe: " + std::string(std::strerror(errno)));
    if (pipe2(out, O_CLOEXEC) != 0) {
      const int e = errno;
      ::close(in[0]);
      ::close(in[1]);
      throw ExternalError("exec: pipe: " + std::string(std::strerror(e)));
    }
    pid_ = fork();
    if (pid_ < 0) {
      const int e = errno;
      for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
      throw ExternalError("exec: fork: " + std::string(std::strerror(e)));
    }
    if (pid_ == 0) {
      // Its own process group, so that the shell and whatever it started are stopped together.
      setpgid(0, 0);
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      execl("/bin/sh", "sh", "-c", command_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid_, pid_);  // also here: whichever of the two runs first
    ::close(in[0]);
    ::close(out[1]);
    wfd_ = in[1];
    rfd_ = out[0];
    fcntl(wfd_, F_SETFL, fcntl(wfd_, F_GETFL) | O_NONBLOCK);
    fcntl(rfd_, F_SETFL, fcntl(rfd_, F_GETFL) | O_NONBLOCK);
  }

  ~ExecModel() override {
    if (wfd_ >= 0) ::close(wfd_);  // end of input: a well-behaved model exits now
    if (rfd_ >= 0) ::close(rfd_);
    if (pid_ > 0 && !reaped_) {
      for (int i = 0; i < 100 && !try_reap(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!reaped_) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
  }

  std::string name() const override { return "exec:" + command_; }

  std::string supports(const Request& probe) override {
    std::vector<Answer> a = exchange({probe}, true);
    if (!a[0].unsupported) return "";
    std::string why = a[0].why.empty() ? "refused by the exec model" : a[0].why;
    return "exec model: unsupported " + why;
  }

  std::vector<Answer> compute(const std::vector<Request>& reqs) override { return exchange(reqs, false); }

  // The case id used in messages (the requests carry only its number).
  void set_case(std::string id) { case_id_ = std::move(id); }

 private:
  bool try_reap() {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = st;
    }
    return reaped_;
  }

  // How the process ended, for messages ("" when it still runs).
  std::string ending() {
    for (int i = 0; i < 50 && !try_reap(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!reaped_) return "";
    if (WIFEXITED(status_)) return "; it exited with status " + std::to_string(WEXITSTATUS(status_));
    if (WIFSIGNALED(status_)) return "; it was killed by signal " + std::to_string(WTERMSIG(status_));
    return "";
  }

  [[noreturn]] void fail(const std::string& what, const Request& r, size_t request_no) {
    throw ExternalError("exec model, " + where(r, case_id_, request_no) + ": " + what);
  }

  // Writes every request line and reads one answer each, both at once (poll), so that neither
  // side's pipe buffer filling up can block the other.
  std::vector<Answer> exchange(const std::vector<Request>& reqs, bool probe) {
    std::string wbuf;
    wbuf.reserve(reqs.size() * (reqs.empty() ? 0 : 64 + 4 * reqs[0].k + 16 * reqs[0].nscales));
    for (const Request& r : reqs) {
      wbuf += format_request(r);
      wbuf += '\n';
    }
    const size_t first_no = sent_ + 1;
    sent_ += reqs.size();
    size_t woff = 0;
    bool write_closed = false;
    std::vector<Answer> out;
    out.reserve(reqs.size());
    const int timeout_ms = static_cast<int>(std::min(timeout_s_ * 1000.0, 2.0e9));
    char chunk[65536];
    while (out.size() < reqs.size()) {
      // Lines already read first.
      size_t nl;
      while (out.size() < reqs.size() && (nl = rbuf_.find('\n', rpos_)) != std::string::npos) {
        const std::string_view line(rbuf_.data() + rpos_, nl - rpos_);
        rpos_ = nl + 1;
        std::optional<Answer> a;
        try {
          a = parse_answer(line);
        } catch (const std::invalid_argument& e) {
          fail("answer " + shown(line) + " is no result line (" + e.what() + ")", reqs[out.size()],
               first_no + out.size());
        }
        if (!a) continue;
        if (a->unsupported && !probe)
          fail("answered " + shown(line) + " to a configuration it accepted", reqs[out.size()], first_no + out.size());
        out.push_back(std::move(*a));
      }
      rbuf_.erase(0, rpos_);  // once per chunk: erasing line by line would be quadratic
      rpos_ = 0;
      if (out.size() == reqs.size()) break;
      const Request& next = reqs[out.size()];  // the instruction whose answer is awaited
      const size_t next_no = first_no + out.size();
      pollfd p[2];
      nfds_t np = 0;
      p[np++] = {rfd_, POLLIN, 0};
      const bool writing = !write_closed && woff < wbuf.size();
      if (writing) p[np++] = {wfd_, POLLOUT, 0};
      const int pr = poll(p, np, timeout_ms);
      if (pr < 0) {
        if (errno == EINTR) continue;
        fail(std::string("poll: ") + std::strerror(errno), next, next_no);
      }
      if (pr == 0)
        fail("no answer within " + std::to_string(static_cast<long>(timeout_s_)) + " s (--timeout)", next, next_no);
      if (writing && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
        const ssize_t w = ::write(wfd_, wbuf.data() + woff, wbuf.size() - woff);
        if (w > 0) woff += static_cast<size_t>(w);
        else if (w < 0 && errno != EAGAIN && errno != EINTR) write_closed = true;  // EPIPE: read what is left
      }
      if (p[0].revents & (POLLIN | POLLERR | POLLHUP)) {
        const ssize_t r = ::read(rfd_, chunk, sizeof chunk);
        if (r > 0) {
          rbuf_.append(chunk, static_cast<size_t>(r));
        } else if (r == 0) {
          if (!rbuf_.empty()) {  // a last line without its newline
            rbuf_ += '\n';
            continue;
          }
          fail("closed its output after " + std::to_string(out.size()) + " of " + std::to_string(reqs.size()) +
                   " answers" + ending(),
               next, next_no);
        } else if (errno != EAGAIN && errno != EINTR) {
          fail(std::string("read: ") + std::strerror(errno), next, next_no);
        }
      }
    }
    return out;
  }

  std::string command_;
  double timeout_s_;
  pid_t pid_ = -1;
  int wfd_ = -1, rfd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string rbuf_;  // answer text read, not yet used from rpos_ on
  size_t rpos_ = 0;
  std::string case_id_;
};

// ---------------------------------------------------------------------------------------------
// plugin:PATH

class PluginModel final : public InstructionModel {
 public:
  explicit PluginModel(const std::string& path) : path_(path) {
    // A bare file name would be searched for on the library path: it means the file here.
    const std::string open = path.find('/') == std::string::npos ? "./" + path : path;
    handle_ = dlopen(open.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = dlerror();
      throw ExternalError("plugin " + path + ": cannot load: " + std::string(e ? e : "dlopen failed"));
    }
    try {
      auto version = sym<uint32_t (*)()>("fp4sim_replay_abi_version");
      supports_ = sym<const char* (*)(uint32_t)>("fp4sim_replay_supports");
      dot_ = sym<int (*)(uint32_t, const uint8_t*, const uint8_t*, const uint32_t*, const uint32_t*, uint32_t, uint32_t*)>(
          "fp4sim_replay_dot");
      const uint32_t v = version();
      if (v != FP4SIM_REPLAY_PLUGIN_ABI_VERSION)
        throw ExternalError("plugin " + path + ": ABI version " + std::to_string(v) + ", fp4sim speaks version " +
                            std::to_string(FP4SIM_REPLAY_PLUGIN_ABI_VERSION) + " (fp4sim/replay_plugin.h)");
      dlerror();
      if (void* n = dlsym(handle_, "fp4sim_replay_name")) {
        const char* s = reinterpret_cast<const char* (*)()>(n)();
        if (s && *s) name_ = s;
      }
    } catch (...) {
      dlclose(handle_);
      throw;
    }
  }
  ~PluginModel() override { dlclose(handle_); }

  std::string name() const override { return "plugin:" + path_ + (name_.empty() ? "" : " (" + name_ + ")"); }

  std::string supports(const Request& probe) override {
    const char* why = supports_(probe.config);
    if (!why || !*why) return "";
    return "plugin: " + std::string(why);
  }

  std::vector<Answer> compute(const std::vector<Request>& reqs) override {
    std::vector<Answer> out(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      const Request& r = reqs[i];
      ++sent_;
      const int rc = dot_(r.config, r.a, r.b, r.sa, r.sb, r.c, &out[i].d);
      if (rc != 0)
        throw ExternalError("plugin " + path_ + ", " + where(r, case_id_, sent_) + ": fp4sim_replay_dot returned " +
                            std::to_string(rc));
    }
    return out;
  }

  void set_case(std::string id) { case_id_ = std::move(id); }

 private:
  template <class F>
  F sym(const char* name) {
    dlerror();
    void* p = dlsym(handle_, name);
    if (!p)
      throw ExternalError("plugin " + path_ + ": no symbol " + name + " (the ABI is fp4sim/replay_plugin.h)");
    return reinterpret_cast<F>(p);
  }

  std::string path_, name_, case_id_;
  void* handle_ = nullptr;
  const char* (*supports_)(uint32_t) = nullptr;
  int (*dot_)(uint32_t, const uint8_t*, const uint8_t*, const uint32_t*, const uint32_t*, uint32_t, uint32_t*) = nullptr;
};

void set_case(InstructionModel& m, const std::string& id) {
  if (auto* e = dynamic_cast<ExecModel*>(&m)) e->set_case(id);
  else if (auto* p = dynamic_cast<PluginModel*>(&m)) p->set_case(id);
}

size_t case_number(const std::string& id) { return static_cast<size_t>(std::strtoull(id.c_str(), nullptr, 10)); }

}  // namespace

std::string format_request(const Request& r) {
  std::string s;
  s.reserve(64 + 4 * r.k + 16 * r.nscales);
  put_hex(s, r.case_num, 4);
  for (size_t v : {r.m, r.n, r.s, r.S}) {
    s += ' ';
    put_hex(s, v, 4);
  }
  s += ' ';
  put_hex(s, r.config, 8);
  s += ' ';
  put_packed(s, r.a, r.k, 2);
  s += ' ';
  put_packed(s, r.b, r.k, 2);
  s += ' ';
  put_packed(s, r.sa, r.nscales, 8);
  s += ' ';
  put_packed(s, r.sb, r.nscales, 8);
  s += ' ';
  put_hex(s, r.c, 8);
  return s;
}

std::optional<Answer> parse_answer(std::string_view line) {
  auto space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; };
  while (!line.empty() && space(line.front())) line.remove_prefix(1);
  while (!line.empty() && space(line.back())) line.remove_suffix(1);
  if (line.empty() || line[0] == '#' || line.substr(0, 2) == "//") return std::nullopt;
  Answer a;
  if (line.substr(0, 11) == "unsupported" && (line.size() == 11 || space(line[11]))) {
    a.unsupported = true;
    std::string_view why = line.substr(11);
    while (!why.empty() && space(why.front())) why.remove_prefix(1);
    a.why = std::string(why);
    return a;
  }
  std::vector<std::string_view> tok;
  while (!line.empty()) {
    size_t e = 0;
    while (e < line.size() && !space(line[e])) ++e;
    tok.push_back(line.substr(0, e));
    line.remove_prefix(e);
    while (!line.empty() && space(line.front())) line.remove_prefix(1);
  }
  if (tok.size() > 2) throw std::invalid_argument("more than D and flags");
  if (!hex_value(tok[0], 8, a.d)) throw std::invalid_argument("D is not 1 to 8 hex digits");
  if (tok.size() == 2) {
    uint32_t f = 0;
    if (!hex_value(tok[1], 2, f)) throw std::invalid_argument("flags are not 1 or 2 hex digits");
    a.flags = static_cast<uint8_t>(f);
  }
  return a;
}

std::unique_ptr<InstructionModel> make_exec_model(std::string command, double timeout_s) {
  if (command.empty()) throw ExternalError("exec: no command given (exec:CMD)");
  return std::make_unique<ExecModel>(std::move(command), timeout_s);
}

std::unique_ptr<InstructionModel> make_plugin_model(const std::string& path) {
  if (path.empty()) throw ExternalError("plugin: no file given (plugin:PATH.so)");
  return std::make_unique<PluginModel>(path);
}

// ---------------------------------------------------------------------------------------------
// The target

ExternalTarget::ExternalTarget(std::string name, std::unique_ptr<InstructionModel> model)
    : name_(std::move(name)), model_(std::move(model)) {}

std::string ExternalTarget::cannot_run(const vectors::VectorCase& c, Model m) const {
  if (!vectors::chained_model(m) && m != Model::Exact) return name_ + " does not offer model " + std::string(model_name(m));
  if (std::string why = vectors::instruction_cannot_run(c, m); !why.empty()) return why;
  const size_t kI = static_cast<size_t>(c.cfg.kind->k);
  MmaConfig cfg = c.cfg;
  cfg.model = m;
  const uint32_t word = lines::config_word(cfg);
  for (const auto& [w, why] : support_)
    if (w == word) return why;
  // Asked once per configuration word, with the case's first instruction (its answer is dropped).
  Request probe;
  probe.case_num = case_number(c.id);
  probe.S = c.K / kI;
  probe.config = word;
  probe.a = c.a.codes.data();
  probe.b = c.b.codes.data();
  probe.sa = c.a.scales.data();
  probe.sb = c.b.scales.data();
  probe.k = kI;
  probe.nscales = kI / static_cast<size_t>(cfg.block);
  probe.c = std::bit_cast<uint32_t>(c.c[0]);
  std::string why;
  try {
    set_case(*model_, c.id);
    why = model_->supports(probe);
  } catch (const ExternalError& e) {
    fatal_ = e.what();
    throw;
  }
  support_.emplace_back(word, why);
  return why;
}

std::vector<uint32_t> ExternalTarget::run(const vectors::VectorCase& c, Model m) {
  MmaConfig cfg = c.cfg;
  cfg.model = m;
  const uint32_t word = lines::config_word(cfg);
  const size_t kI = static_cast<size_t>(cfg.kind->k), S = c.K / kI, nblk = c.K / static_cast<size_t>(cfg.block);
  const size_t spi = kI / static_cast<size_t>(cfg.block);
  const size_t MN = c.M * c.N;
  std::vector<uint32_t> acc(MN);
  for (size_t e = 0; e < MN; ++e) acc[e] = std::bit_cast<uint32_t>(c.c[e]);
  std::vector<uint32_t> got_steps(S * MN);  // what the model answered, for the diagnosis
  std::vector<Request> reqs(MN);
  std::vector<std::optional<uint8_t>> flags(S * MN);
  std::vector<size_t> request_no(S * MN);
  set_case(*model_, c.id);
  // Step s of every output element in one batch: the chain allows no more (s + 1 needs s's D).
  for (size_t s = 0; s < S; ++s) {
    for (size_t i = 0; i < c.M; ++i)
      for (size_t j = 0; j < c.N; ++j) {
        Request& r = reqs[i * c.N + j];
        r.case_num = case_number(c.id);
        r.m = i;
        r.n = j;
        r.s = s;
        r.S = S;
        r.config = word;
        r.a = c.a.codes.data() + i * c.K + s * kI;
        r.b = c.b.codes.data() + j * c.K + s * kI;
        r.sa = c.a.scales.data() + i * nblk + s * spi;
        r.sb = c.b.scales.data() + j * nblk + s * spi;
        r.k = kI;
        r.nscales = spi;
        r.c = acc[i * c.N + j];
      }
    const size_t first_no = model_->requests_sent() + 1;
    std::vector<Answer> ans;
    try {
      ans = model_->compute(reqs);
    } catch (const ExternalError& e) {
      fatal_ = e.what();
      throw;
    }
    for (size_t e = 0; e < MN; ++e) {
      acc[e] = ans[e].d;
      got_steps[s * MN + e] = ans[e].d;
      flags[s * MN + e] = ans[e].flags;
      request_no[s * MN + e] = first_no + e;
    }
  }
  std::vector<uint32_t> out(MN);
  const uint32_t alpha = std::bit_cast<uint32_t>(c.alpha);
  for (size_t e = 0; e < MN; ++e) out[e] = lines::epilogue(alpha, acc[e]);

  // The diagnosis: the first output element (row-major) whose final D, any of whose instruction
  // results (against the steps file, when the case has one) or whose flags are not golden's, and in
  // its chain the first instruction that differs from mma_dot on the very operands it was sent.
  diag_.erase(std::remove_if(diag_.begin(), diag_.end(), [&](const Diagnosis& d) { return d.case_id != c.id; }),
              diag_.end());
  const auto k = std::find(c.models.begin(), c.models.end(), m);
  const size_t ki = static_cast<size_t>(k - c.models.begin());
  const std::vector<float>* expected = k == c.models.end() ? nullptr : &c.expected[ki];
  const std::vector<float>* steps =
      k != c.models.end() && ki < c.steps.size() && c.steps[ki].size() == S * MN ? &c.steps[ki] : nullptr;
  const bool any_flags = std::any_of(flags.begin(), flags.end(), [](const auto& f) { return f.has_value(); });
  for (size_t e = 0; e < MN; ++e) {
    const bool d_differs = expected && std::bit_cast<uint32_t>((*expected)[e]) != out[e];
    bool step_differs = false;
    for (size_t s = 0; steps && s < S && !step_differs; ++s)
      step_differs = std::bit_cast<uint32_t>((*steps)[s * MN + e]) != got_steps[s * MN + e];
    if (!d_differs && !step_differs && !any_flags) continue;
    const size_t i = e / c.N, j = e % c.N;
    uint32_t cin = std::bit_cast<uint32_t>(c.c[e]);
    for (size_t s = 0; s < S; ++s) {
      const uint8_t* a = c.a.codes.data() + i * c.K + s * kI;
      const uint8_t* b = c.b.codes.data() + j * c.K + s * kI;
      const uint32_t* sa = c.a.scales.data() + i * nblk + s * spi;
      const uint32_t* sb = c.b.scales.data() + j * nblk + s * spi;
      const uint32_t got = got_steps[s * MN + e];
      const uint32_t want = mma_dot(cfg, a, b, sa, sb, cin);
      const std::optional<uint8_t>& gf = flags[s * MN + e];
      const uint8_t want_flags = gf ? lines::instruction_flags(cfg, a, b, sa, sb, cin, got) : 0;
      if (got == want && (!gf || *gf == want_flags)) {
        cin = got;
        continue;
      }
      Request r;
      r.case_num = case_number(c.id);
      r.m = i;
      r.n = j;
      r.s = s;
      r.S = S;
      r.config = word;
      r.a = a;
      r.b = b;
      r.sa = sa;
      r.sb = sb;
      r.k = kI;
      r.nscales = spi;
      r.c = cin;
      const std::string at = where(r, c.id, request_no[s * MN + e]);
      std::string what = got != want ? "mma_dot gives " + hex8(want) + ", the model " + hex8(got)
                                     : "flags: golden's " + hex8(want_flags).substr(6) + ", the model's " +
                                           hex8(*gf).substr(6) + " (D " + hex8(got) + " agrees)";
      // Outputs that compare equal are no mismatch of D to report: the case is an error instead.
      if (!d_differs)
        throw std::runtime_error(at + ": " + what + " (request: " + format_request(r) + "); the final D agrees");
      diag_.push_back({c.id, m, {"first differing " + at + ": " + what, "request: " + format_request(r)}});
      break;
    }
    if (d_differs || step_differs) break;  // the first element that differs is named
  }
  return out;
}

std::vector<std::string> ExternalTarget::explain(const std::string& case_id, Model model) const {
  for (const Diagnosis& d : diag_)
    if (d.case_id == case_id && d.model == model) return d.lines;
  return {};
}

}  // namespace fp4sim::dut
