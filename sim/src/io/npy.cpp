#include "fp4sim/io/npy.hpp"

#include <bit>
#include <limits>
#include <optional>

#include "fp4sim/io/atomic_file.hpp"

namespace fp4sim::io {

// Element bytes are copied verbatim between memory and file, which is only right on a
// little-endian host; every platform fp4sim targets is one.
static_assert(std::endian::native == std::endian::little, "fp4sim .npy I/O assumes little endian");

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes + NUL
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;  // numpy >= 1.14 pads the header so the data starts 64-aligned

struct DTypeRow {
  DType t;
  std::string_view name, descr;
  size_t size;
};
constexpr DTypeRow kDTypes[] = {
    {DType::F32, "float32", "<f4", 4},
    {DType::U8, "uint8", "|u1", 1},
    {DType::U16, "uint16", "<u2", 2},
    {DType::U32, "uint32", "<u4", 4},
};

const DTypeRow& row(DType t) {
  for (const auto& r : kDTypes)
    if (r.t == t) return r;
  throw std::logic_error("fp4sim::io: unknown DType");
}

// Which dtype a header's descr names. numpy writes '|u1' for uint8; '<u1' is accepted too since
// byte order means nothing for one byte.
std::optional<DType> dtype_from_descr(std::string_view d) {
  for (const auto& r : kDTypes)
    if (r.descr == d) return r.t;
  if (d == "<u1") return DType::U8;
  return std::nullopt;
}

[[noreturn]] void fail(std::string_view name, const std::string& what) {
  throw NpyError(std::string(name) + ": " + what);
}

// Shows untrusted header text in a message without breaking the one-line rule.
std::string printable(std::string_view s, size_t max_len = 40) {
  std::string out;
  for (char c : s.substr(0, max_len)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7F) ? c : '?';
  }
  if (s.size() > max_len) out += "...";
  return out;
}

// The header is a Python dict literal. This parser accepts the subset .npy headers use:
// string keys; string, True/False and tuple-of-int values; optional trailing commas.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : s_(text), name_(name) {}

  struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<size_t>> shape;
  };

  Header parse() {
    Header h;
    ws();
    expect('{');
    ws();
    while (!peek('}')) {
      std::string key = string_literal();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        if (h.descr) bad("duplicate key 'descr'");
        if (peek('[')) fail(name_, "structured dtypes are not supported");
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        if (h.fortran_order) bad("duplicate key 'fortran_order'");
        h.fortran_order = boolean();
      } else if (key == "shape") {
        if (h.shape) bad("duplicate key 'shape'");
        h.shape = tuple();
      } else {
        fail(name_, "malformed header: unexpected key '" + printable(key) + "'");
      }
      ws();
      if (peek(',')) {
        ++pos_;
        ws();
      } else if (!peek('}')) {
        bad("expected ',' or '}'");
      }
    }
    ++pos_;  // '}'
    ws();
    if (pos_ != s_.size()) bad("unexpected text after the dictionary");
    if (!h.descr) fail(name_, "malformed header: missing key 'descr'");
    if (!h.fortran_order) fail(name_, "malformed header: missing key 'fortran_order'");
    if (!h.shape) fail(name_, "malformed header: missing key 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) {
    fail(name_, "malformed header: " + what + " at offset " + std::to_string(pos_));
  }
  bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void expect(char c) {
    if (!peek(c)) bad(std::string("expected '") + c + "'");
    ++pos_;
  }
  void ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  std::string string_literal() {
    if (!peek('\'') && !peek('"')) bad("expected a quoted string");
    char q = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != q) {
      unsigned char u = static_cast<unsigned char>(s_[pos_]);
      if (u == '\\' || u < 0x20 || u >= 0x7F) bad("unsupported character in string");
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) bad("unterminated string");
    ++pos_;
    return out;
  }
  bool boolean() {
    if (s_.substr(pos_).starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_).starts_with("False")) {
      pos_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  size_t integer() {
    if (peek('-')) fail(name_, "malformed header: negative dimension in shape");
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') bad("expected an integer");
    size_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      size_t d = static_cast<size_t>(s_[pos_] - '0');
      if (v > (std::numeric_limits<size_t>::max() - d) / 10)
        fail(name_, "malformed header: dimension too large");
      v = v * 10 + d;
      ++pos_;
    }
    return v;
  }
  // "()", "(3,)", "(2, 3)", "(2, 3,)". "(3)" is an int in Python, not a tuple: rejected.
  std::vector<size_t> tuple() {
    expect('(');
    ws();
    std::vector<size_t> dims;
    bool trailing_comma = false;
    while (!peek(')')) {
      dims.push_back(integer());
      ws();
      trailing_comma = false;
      if (peek(',')) {
        ++pos_;
        trailing_comma = true;
        ws();
      } else if (!peek(')')) {
        bad("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    if (dims.size() == 1 && !trailing_comma) bad("shape '(n)' is not a tuple (write '(n,)')");
    return dims;
  }

  std::string_view s_;
  std::string_view name_;
  size_t pos_ = 0;
};

uint32_t read_le(const uint8_t* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

}  // namespace

std::string_view dtype_name(DType t) { return row(t).name; }
std::string_view dtype_descr(DType t) { return row(t).descr; }
size_t dtype_size(DType t) { return row(t).size; }

std::string shape_string(std::span<const size_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

size_t shape_elements(std::span<const size_t> shape, std::string_view name) {
  size_t n = 1;
  for (size_t d : shape) {
    if (d != 0 && n > std::numeric_limits<size_t>::max() / d)
      fail(name, "shape " + shape_string(shape) + " is too large");
    n *= d;
  }
  return n;
}

void NpyArray::check_dtype(DType want) const {
  if (want != dtype)
    throw NpyError("array holds " + std::string(dtype_name(dtype)) + ", not " +
                   std::string(dtype_name(want)));
}

NpyArray parse_npy(std::span<const uint8_t> file, std::string_view name) {
  const NpyView v = parse_npy_view(file, name);
  NpyArray a;
  a.dtype = v.dtype;
  a.shape = v.shape;
  a.data.assign(v.data.begin(), v.data.end());
  return a;
}

NpyView parse_npy_view(std::span<const uint8_t> file, std::string_view name) {
  const NpyHeader h = parse_npy_header(file, file.size(), name);
  NpyView v;
  v.dtype = h.dtype;
  v.shape = h.shape;
  v.data = file.subspan(h.data_offset, h.data_bytes);
  return v;
}

size_t npy_header_end(std::span<const uint8_t> head) {
  if (head.size() < kMagicLen + 2 || std::memcmp(head.data(), kMagic, kMagicLen) != 0) return 0;
  const size_t len_bytes = head[6] == 1 ? 2 : head[6] == 2 ? 4 : 0;
  if (len_bytes == 0 || head.size() < kMagicLen + 2 + len_bytes) return 0;
  return kMagicLen + 2 + len_bytes + read_le(head.data() + kMagicLen + 2, static_cast<int>(len_bytes));
}

NpyHeader parse_npy_header(std::span<const uint8_t> file, size_t file_size, std::string_view name) {
  if (file.size() < kMagicLen + 2 || std::memcmp(file.data(), kMagic, kMagicLen) != 0)
    fail(name, "not a .npy file (bad magic)");
  const int major = file[6], minor = file[7];
  size_t len_bytes;
  if (major == 1 && minor == 0) {
    len_bytes = 2;
  } else if (major == 2 && minor == 0) {
    len_bytes = 4;
  } else {
    fail(name, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (supported: 1.0, 2.0)");
  }
  const size_t prefix = kMagicLen + 2 + len_bytes;
  if (file.size() < prefix) fail(name, "truncated header");
  const size_t header_len = read_le(file.data() + kMagicLen + 2, static_cast<int>(len_bytes));
  if (file_size - prefix < header_len)
    fail(name, "truncated header (header length " + std::to_string(header_len) + ", file has " +
                   std::to_string(file_size - prefix) + " bytes after the prefix)");
  if (file.size() - prefix < header_len) fail(name, "internal error: header not read whole");
  std::string_view text(reinterpret_cast<const char*>(file.data() + prefix), header_len);
  HeaderParser::Header h = HeaderParser(text, name).parse();

  if (*h.fortran_order) fail(name, "fortran_order arrays are not supported (save in C order)");
  std::optional<DType> dt = dtype_from_descr(*h.descr);
  if (!dt) {
    const std::string& d = *h.descr;
    std::string as_little = d;
    if (!as_little.empty()) as_little[0] = '<';
    if (!d.empty() && d[0] == '>' && dtype_from_descr(as_little))
      fail(name, "big-endian dtype '" + printable(d) + "' is not supported (little endian only)");
    fail(name, "unsupported dtype '" + printable(d) + "' (supported: <f4, |u1, <u2, <u4)");
  }

  NpyHeader out;
  out.dtype = *dt;
  out.shape = std::move(*h.shape);
  const size_t n = shape_elements(out.shape, name);
  const size_t item = dtype_size(out.dtype);
  if (n > std::numeric_limits<size_t>::max() / item)
    fail(name, "shape " + shape_string(out.shape) + " is too large");
  const size_t need = n * item;
  const size_t have = file_size - prefix - header_len;
  if (have < need)
    fail(name, "truncated data: shape " + shape_string(out.shape) + " of " +
                   std::string(dtype_descr(out.dtype)) + " needs " + std::to_string(need) +
                   " bytes, file has " + std::to_string(have));
  if (have > need)
    fail(name, "size mismatch: shape " + shape_string(out.shape) + " of " +
                   std::string(dtype_descr(out.dtype)) + " needs " + std::to_string(need) +
                   " bytes, file has " + std::to_string(have) + " (trailing data)");
  out.data_offset = prefix + header_len;
  out.data_bytes = need;
  return out;
}

NpyArray read_npy(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes;
  try {
    bytes = read_file(path);
  } catch (const IoError& e) {
    throw NpyError(e.what());
  }
  return parse_npy(bytes, path.string());
}

std::vector<uint8_t> npy_header(DType dtype, std::span<const size_t> shape) {
  shape_elements(shape, "encode_npy");
  std::string header = "{'descr': '" + std::string(dtype_descr(dtype)) +
                       "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
  // Pad with spaces so magic + version + length + header + '\n' is a multiple of 64.
  const size_t prefix = kMagicLen + 2 + 2;
  const size_t total = (prefix + header.size() + 1 + kAlign - 1) / kAlign * kAlign;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > 0xFFFF) throw NpyError("encode_npy: header too long for .npy version 1.0");
  std::vector<uint8_t> out(prefix + header.size());
  std::memcpy(out.data(), kMagic, kMagicLen);
  out[6] = 1;  // version 1.0
  out[7] = 0;
  out[8] = static_cast<uint8_t>(header.size() & 0xFF);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  return out;
}

std::vector<uint8_t> encode_npy(DType dtype, std::span<const size_t> shape,
                                std::span<const uint8_t> data) {
  const size_t n = shape_elements(shape, "encode_npy");
  if (data.size() / dtype_size(dtype) != n || data.size() % dtype_size(dtype) != 0)
    throw NpyError("encode_npy: " + std::to_string(data.size()) + " data bytes do not match shape " +
                   shape_string(shape) + " of " + std::string(dtype_descr(dtype)));
  std::vector<uint8_t> out = npy_header(dtype, shape);
  const size_t head = out.size();
  // Sized up front and filled with memcpy (GCC 12 mis-warns on chained vector::insert here).
  out.resize(head + data.size());
  if (!data.empty()) std::memcpy(out.data() + head, data.data(), data.size());
  return out;
}

std::vector<uint8_t> write_npy(const std::filesystem::path& path, DType dtype,
                               std::span<const size_t> shape, std::span<const uint8_t> data) {
  std::vector<uint8_t> bytes = encode_npy(dtype, shape, data);
  write_file_atomic(path, bytes);
  return bytes;
}

}  // namespace fp4sim::io
