// Replay targets outside fp4sim (docs/replay-targets.md): a suite's cases replayed one MMA
// instruction at a time on a model that is not fp4sim's,
//   exec:CMD     a process started with /bin/sh -c CMD that reads one request line per instruction
//                on stdin and answers one result line on stdout, and
//   plugin:PATH  a shared object exporting the C ABI of fp4sim/replay_plugin.h.
// fp4sim chains the instructions along K (the model's own D of instruction s is the C of s + 1),
// applies the epilogue RN(alpha * D), and on a mismatch names the first instruction whose D differs
// from golden mma_dot on the same operands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fp4sim/io/vectors.hpp"

namespace fp4sim::dut {

// A failure of the outside model that ends the replay (it died, wrote something that is no answer,
// answered too few lines, did not answer in time, a plugin's call failed): one line naming the
// instruction.
class ExternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One instruction as the outside model receives it: the fields of a hex line vector before the
// expected ones (docs/line-vectors.md).
struct Request {
  size_t case_num = 0, m = 0, n = 0, s = 0, S = 1;
  uint32_t config = 0;
  const uint8_t *a = nullptr, *b = nullptr;     // k codes each
  const uint32_t *sa = nullptr, *sb = nullptr;  // k / block scales each
  size_t k = 0, nscales = 0;
  uint32_t c = 0;
};

// "case m n s S config A B SA SB C": the first eleven fields of a hex line vector, without '\n'.
std::string format_request(const Request& r);

// A result line: "D [flags]" in hex (an optional 0x), or "unsupported [why]". Blank lines and
// comment lines ("#", "//") are no answer (nullopt in `skip`). Throws std::invalid_argument for
// anything else.
struct Answer {
  uint32_t d = 0;
  std::optional<uint8_t> flags;
  bool unsupported = false;
  std::string why;  // unsupported: the rest of the line
};
std::optional<Answer> parse_answer(std::string_view line);

// A single-instruction model: the exec process or the plugin.
class InstructionModel {
 public:
  virtual ~InstructionModel() = default;
  virtual std::string name() const = 0;
  // "" when the model computes the configuration word of `probe`, else why not. May run `probe`.
  virtual std::string supports(const Request& probe) = 0;
  // One answer per request, in order. Throws ExternalError naming the instruction.
  virtual std::vector<Answer> compute(const std::vector<Request>& reqs) = 0;
  // Requests handed over so far (1-based numbers name them in reports).
  size_t requests_sent() const { return sent_; }

 protected:
  size_t sent_ = 0;
};

// The exec process. Throws ExternalError when it cannot be started. timeout_s: the longest wait
// for the next answer line.
std::unique_ptr<InstructionModel> make_exec_model(std::string command, double timeout_s);
// The plugin. Throws ExternalError (one line: not loadable, a missing symbol, another ABI version).
std::unique_ptr<InstructionModel> make_plugin_model(const std::string& path);

// A ReplayTarget over an InstructionModel: the models blackwell, ascend-hif4 and fp32-seq (and
// exact for cases of one instruction), each configuration asked of the model once.
class ExternalTarget : public vectors::ReplayTarget {
 public:
  ExternalTarget(std::string name, std::unique_ptr<InstructionModel> model);
  std::string name() const override { return name_; }
  std::string cannot_run(const vectors::VectorCase& c, Model model) const override;
  std::vector<uint32_t> run(const vectors::VectorCase& c, Model model) override;
  // Non-empty once the model failed (ExternalError): the replay must stop with this line.
  const std::string& fatal() const { return fatal_; }
  // For the last run of (case id, model) whose outputs differed: the first instruction whose D
  // differs from golden mma_dot on the same operands, and its request line.
  std::vector<std::string> explain(const std::string& case_id, Model model) const;

 private:
  struct Diagnosis {
    std::string case_id;
    Model model;
    std::vector<std::string> lines;
  };
  std::string name_;
  std::unique_ptr<InstructionModel> model_;
  mutable std::vector<std::pair<uint32_t, std::string>> support_;  // config word -> "" or why not
  mutable std::string fatal_;
  std::vector<Diagnosis> diag_;
};

}  // namespace fp4sim::dut
