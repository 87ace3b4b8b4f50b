// fp4sim golden vector suites for kernel test binaries: one header, C++17, no dependencies (not
// fp4sim's libraries, not a JSON library), so a CUDA test can include it with nvcc. It reads what
// `fp4sim vectors` writes (docs/vectors.md):
//
//   fp4sim::suite::Suite s("smoke");                       // parses smoke/manifest.json
//   for (size_t i = 0; i < s.cases().size(); ++i) {
//     fp4sim::suite::CaseData d = s.load_case(i);          // every file CRC-checked and cross-checked
//     // d.a.codes (one code per byte, [M, K]), d.a.packed ([M, K/2], low nibble = even element),
//     // d.a.scales ([M, K/block] uint32), d.a.scales_atom (128x4 tensor-core layout), d.c, d.alpha,
//     // d.expected: (model, D bits [M, N]) -> run your kernel, compare bit patterns.
//   }
//
// Also usable piecewise: crc32, parse_npy / read_npy, npy_bytes / write_npy, Json::parse, pack / unpack of nibbles and the
// scale atom. Every failure throws fp4sim::suite::Error with one line naming the file.
// The same checks as fp4sim's own reader (vectors.hpp SuiteReader); tests/sim/test_suite_reader.cpp
// holds the two against each other.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fp4sim {
namespace suite {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kSuiteSchema = 1;

// ------------------------------------------------------------------------------------------------
// CRC-32 (zlib: reflected 0xEDB88320, init and final XOR 0xFFFFFFFF); crc32(b, crc32(a)) = crc32(a ++ b).

inline uint32_t crc32(const uint8_t* p, size_t n, uint32_t prev = 0) {
  struct Table {
    uint32_t t[256];
    Table() {
      for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
      }
    }
  };
  static const Table table;
  uint32_t c = ~prev;
  for (size_t i = 0; i < n; ++i) c = table.t[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return ~c;
}
inline uint32_t crc32(const std::vector<uint8_t>& v, uint32_t prev = 0) { return crc32(v.data(), v.size(), prev); }

// ------------------------------------------------------------------------------------------------
// A minimal JSON value and parser (RFC 8259; objects keep their key order; numbers keep their text
// so 64-bit integers stay exact).

class Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  bool as_bool() const {
    if (!is_bool()) throw Error("JSON: not a boolean");
    return b_;
  }
  const std::string& as_string() const {
    if (!is_string()) throw Error("JSON: not a string");
    return s_;
  }
  // The number's text as written ("128", "1.2e-06").
  const std::string& number_text() const {
    if (!is_number()) throw Error("JSON: not a number");
    return s_;
  }
  double as_double() const { return std::strtod(number_text().c_str(), nullptr); }
  // A non-negative integer written without fraction or exponent.
  uint64_t as_u64() const {
    const std::string& t = number_text();
    uint64_t v = 0;
    for (char ch : t) {
      if (ch < '0' || ch > '9') throw Error("JSON: " + t + " is not a non-negative integer");
      const uint64_t d = static_cast<uint64_t>(ch - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) throw Error("JSON: integer " + t + " too large");
      v = v * 10 + d;
    }
    return v;
  }

  size_t size() const { return is_array() ? arr_.size() : is_object() ? obj_.size() : 0; }
  const Json& operator[](size_t i) const {
    if (!is_array() || i >= arr_.size()) throw Error("JSON: index out of range");
    return arr_[i];
  }
  const std::vector<Json>& items() const { return arr_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return obj_; }
  // nullptr when absent (or not an object).
  const Json* find(const std::string& key) const {
    if (!is_object()) return nullptr;
    for (const auto& kv : obj_)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  const Json& at(const std::string& key) const {
    const Json* j = find(key);
    if (!j) throw Error("JSON: missing key '" + key + "'");
    return *j;
  }

  // Throws Error("NAME: invalid JSON at offset N: reason").
  static Json parse(const std::string& text, const std::string& name = "JSON") {
    Parser p{text, name, 0};
    p.ws();
    Json j = p.value(0);
    p.ws();
    if (p.pos != text.size()) p.fail("unexpected text after the value");
    return j;
  }

 private:
  struct Parser {
    const std::string& s;
    const std::string& name;
    size_t pos;
    static constexpr int kMaxDepth = 512;  // bounds recursion on hostile input

    [[noreturn]] void fail(const char* why) const {
      throw Error(name + ": invalid JSON at offset " + std::to_string(pos) + ": " + why);
    }
    void ws() {
      while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
    }
    bool eat(const char* lit) {
      const size_t n = std::strlen(lit);
      if (s.compare(pos, n, lit) != 0) return false;
      pos += n;
      return true;
    }
    Json value(int depth) {
      if (depth > kMaxDepth) fail("nested too deeply");
      if (pos >= s.size()) fail("unexpected end");
      Json j;
      const char ch = s[pos];
      if (ch == '{') {
        j.type_ = Type::Object;
        ++pos;
        ws();
        if (pos < s.size() && s[pos] == '}') {
          ++pos;
          return j;
        }
        for (;;) {
          ws();
          if (pos >= s.size() || s[pos] != '"') fail("expected a string key");
          std::string key = string();
          ws();
          if (pos >= s.size() || s[pos] != ':') fail("expected ':'");
          ++pos;
          ws();
          j.obj_.emplace_back(std::move(key), value(depth + 1));
          ws();
          if (pos < s.size() && s[pos] == ',') {
            ++pos;
            continue;
          }
          if (pos < s.size() && s[pos] == '}') {
            ++pos;
            return j;
          }
          fail("expected ',' or '}'");
        }
      }
      if (ch == '[') {
        j.type_ = Type::Array;
        ++pos;
        ws();
        if (pos < s.size() && s[pos] == ']') {
          ++pos;
          return j;
        }
        for (;;) {
          ws();
          j.arr_.push_back(value(depth + 1));
          ws();
          if (pos < s.size() && s[pos] == ',') {
            ++pos;
            continue;
          }
          if (pos < s.size() && s[pos] == ']') {
            ++pos;
            return j;
          }
          fail("expected ',' or ']'");
        }
      }
      if (ch == '"') {
        j.type_ = Type::String;
        j.s_ = string();
        return j;
      }
      if (eat("true")) {
        j.type_ = Type::Bool;
        j.b_ = true;
        return j;
      }
      if (eat("false")) {
        j.type_ = Type::Bool;
        return j;
      }
      if (eat("null")) return j;
      if (ch == '-' || (ch >= '0' && ch <= '9')) {
        j.type_ = Type::Number;
        j.s_ = number();
        return j;
      }
      fail("unexpected character");
    }
    bool digit() const { return pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; }
    std::string number() {
      const size_t start = pos;
      if (s[pos] == '-') ++pos;
      if (!digit()) fail("expected a digit");
      if (s[pos] == '0') ++pos;
      else
        while (digit()) ++pos;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        if (!digit()) fail("expected a digit after '.'");
        while (digit()) ++pos;
      }
      if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
        ++pos;
        if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
        if (!digit()) fail("expected a digit in the exponent");
        while (digit()) ++pos;
      }
      return s.substr(start, pos - start);
    }
    unsigned hex4() {
      if (s.size() - pos < 4) fail("truncated \\u escape");
      unsigned v = 0;
      for (int i = 0; i < 4; ++i) {
        const char h = s[pos++];
        v <<= 4;
        if (h >= '0' && h <= '9') v |= static_cast<unsigned>(h - '0');
        else if (h >= 'a' && h <= 'f') v |= static_cast<unsigned>(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v |= static_cast<unsigned>(h - 'A' + 10);
        else fail("bad hex digit in \\u escape");
      }
      return v;
    }
    static void utf8(std::string& out, unsigned cp) {
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    }
    std::string string() {
      ++pos;  // '"'
      std::string out;
      for (;;) {
        if (pos >= s.size()) fail("unterminated string");
        const unsigned char ch = static_cast<unsigned char>(s[pos++]);
        if (ch == '"') return out;
        if (ch < 0x20) fail("control character in string");
        if (ch != '\\') {
          out += static_cast<char>(ch);
          continue;
        }
        if (pos >= s.size()) fail("unterminated escape");
        const char e = s[pos++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned cp = hex4();
            if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
              if (!eat("\\u")) fail("lone high surrogate");
              const unsigned lo = hex4();
              if (lo < 0xDC00 || lo >= 0xE000) fail("bad low surrogate");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
              fail("lone low surrogate");
            }
            utf8(out, cp);
            break;
          }
          default: fail("bad escape");
        }
      }
    }
  };

  Type type_ = Type::Null;
  bool b_ = false;
  std::string s_;  // string value, or a number's text
  std::vector<Json> arr_;
  std::vector<std::pair<std::string, Json>> obj_;
};

// ------------------------------------------------------------------------------------------------
// .npy (NumPy format versions 1.0, 2.0 and 3.0; C order; little endian): dtypes float32 '<f4',
// uint8 '|u1' (or '<u1'), uint16 '<u2', uint32 '<u4' -- the ones suites use.

struct Array {
  std::string dtype;  // "float32", "uint8", "uint16", "uint32"
  size_t itemsize = 0;
  std::vector<size_t> shape;
  std::vector<uint8_t> data;  // raw little-endian element bytes, C order

  size_t size() const { return itemsize ? data.size() / itemsize : 0; }
  // The elements as T (T's size must be the itemsize): uint8_t, uint16_t, uint32_t, float.
  template <class T>
  std::vector<T> values() const {
    if (sizeof(T) != itemsize) throw Error("npy: " + dtype + " elements are not " + std::to_string(sizeof(T)) + " bytes");
    std::vector<T> out(size());
    if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * sizeof(T));  // x86 / ARM: little endian
    return out;
  }
};

inline std::string shape_string(const std::vector<size_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace detail {

// The header is a Python dict literal; this reads the subset .npy headers use.
struct NpyHeader {
  const std::string& s;
  const std::string& name;
  size_t pos = 0;
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(name + ": malformed .npy header: " + why + " at offset " + std::to_string(pos));
  }
  void ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  }
  bool peek(char ch) const { return pos < s.size() && s[pos] == ch; }
  void expect(char ch) {
    if (!peek(ch)) fail(std::string("expected '") + ch + "'");
    ++pos;
  }
  std::string str() {
    if (!peek('\'') && !peek('"')) fail("expected a quoted string");
    const char q = s[pos++];
    std::string out;
    while (pos < s.size() && s[pos] != q) {
      const unsigned char u = static_cast<unsigned char>(s[pos]);
      if (u == '\\' || u < 0x20 || u >= 0x7F) fail("unsupported character in string");
      out += s[pos++];
    }
    if (pos >= s.size()) fail("unterminated string");
    ++pos;
    return out;
  }
  std::vector<size_t> tuple() {
    expect('(');
    ws();
    std::vector<size_t> dims;
    bool comma = false;
    while (!peek(')')) {
      if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') fail("expected a dimension");
      size_t v = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        const size_t d = static_cast<size_t>(s[pos++] - '0');
        if (v > (std::numeric_limits<size_t>::max() - d) / 10) fail("dimension too large");
        v = v * 10 + d;
      }
      dims.push_back(v);
      ws();
      comma = peek(',');
      if (comma) {
        ++pos;
        ws();
      } else if (!peek(')')) {
        fail("expected ',' or ')' in shape");
      }
    }
    ++pos;
    if (dims.size() == 1 && !comma) fail("shape '(n)' is not a tuple");
    return dims;
  }
};

inline bool mul_overflows(size_t a, size_t b, size_t& out) {
  if (b != 0 && a > std::numeric_limits<size_t>::max() / b) return true;
  out = a * b;
  return false;
}

}  // namespace detail

// Parses the bytes of a whole .npy file. `name` goes in front of every error message.
inline Array parse_npy(const uint8_t* p, size_t n, const std::string& name) {
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (n < 8 || std::memcmp(p, kMagic, 6) != 0) throw Error(name + ": not a .npy file (bad magic)");
  const int major = p[6], minor = p[7];
  if (minor != 0 || major < 1 || major > 3)
    throw Error(name + ": unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor));
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = 8 + len_bytes;
  if (n < prefix) throw Error(name + ": truncated .npy header");
  size_t hlen = 0;
  for (size_t i = len_bytes; i-- > 0;) hlen = hlen << 8 | p[8 + i];
  if (n - prefix < hlen) throw Error(name + ": truncated .npy header");
  const std::string text(reinterpret_cast<const char*>(p + prefix), hlen);

  detail::NpyHeader h{text, name};
  std::string descr;
  int fortran = -1;
  bool have_descr = false, have_shape = false;
  Array a;
  h.ws();
  h.expect('{');
  h.ws();
  while (!h.peek('}')) {
    const std::string key = h.str();
    h.ws();
    h.expect(':');
    h.ws();
    if (key == "descr" && !have_descr) {
      descr = h.str();
      have_descr = true;
    } else if (key == "fortran_order" && fortran < 0) {
      if (text.compare(h.pos, 4, "True") == 0) {
        fortran = 1;
        h.pos += 4;
      } else if (text.compare(h.pos, 5, "False") == 0) {
        fortran = 0;
        h.pos += 5;
      } else {
        h.fail("expected True or False");
      }
    } else if (key == "shape" && !have_shape) {
      a.shape = h.tuple();
      have_shape = true;
    } else {
      h.fail("unexpected or repeated key '" + key + "'");
    }
    h.ws();
    if (h.peek(',')) {
      ++h.pos;
      h.ws();
    } else if (!h.peek('}')) {
      h.fail("expected ',' or '}'");
    }
  }
  ++h.pos;
  h.ws();
  if (h.pos != text.size()) h.fail("text after the dictionary");
  if (!have_descr || fortran < 0 || !have_shape) h.fail("needs descr, fortran_order and shape");
  if (fortran == 1) throw Error(name + ": fortran_order arrays are not supported");
  if (descr == "<f4") {
    a.dtype = "float32";
    a.itemsize = 4;
  } else if (descr == "|u1" || descr == "<u1") {
    a.dtype = "uint8";
    a.itemsize = 1;
  } else if (descr == "<u2") {
    a.dtype = "uint16";
    a.itemsize = 2;
  } else if (descr == "<u4") {
    a.dtype = "uint32";
    a.itemsize = 4;
  } else {
    throw Error(name + ": unsupported dtype '" + descr + "' (supported: <f4, |u1, <u2, <u4)");
  }
  size_t elems = 1, need = 0;
  for (size_t d : a.shape)
    if (detail::mul_overflows(elems, d, elems)) throw Error(name + ": shape " + shape_string(a.shape) + " is too large");
  if (detail::mul_overflows(elems, a.itemsize, need)) throw Error(name + ": shape " + shape_string(a.shape) + " is too large");
  const size_t have = n - prefix - hlen;
  if (have != need)
    throw Error(name + ": data is " + std::to_string(have) + " bytes, shape " + shape_string(a.shape) + " of " +
                descr + " needs " + std::to_string(need));
  a.data.assign(p + prefix + hlen, p + n);
  return a;
}
inline Array parse_npy(const std::vector<uint8_t>& file, const std::string& name) {
  return parse_npy(file.data(), file.size(), name);
}

// The whole file. Throws Error("PATH: cannot read").
inline std::vector<uint8_t> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open");
  std::vector<uint8_t> out;
  uint8_t buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + got);
  const bool bad = std::ferror(f) != 0;  // e.g. a directory
  std::fclose(f);
  if (bad) throw Error(path + ": cannot read");
  return out;
}
inline Array read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

// ------------------------------------------------------------------------------------------------
// Writing .npy (version 1.0, C order, little endian), for a harness that hands its D outputs to
// `fp4sim check` (docs/vectors.md): float32, uint8, uint16, uint32, the dtypes read above.

namespace detail {
template <class T>
struct NpyDescr;
template <>
struct NpyDescr<float> {
  static constexpr const char* value = "<f4";
};
template <>
struct NpyDescr<uint8_t> {
  static constexpr const char* value = "|u1";
};
template <>
struct NpyDescr<uint16_t> {
  static constexpr const char* value = "<u2";
};
template <>
struct NpyDescr<uint32_t> {
  static constexpr const char* value = "<u4";
};
}  // namespace detail

// The bytes of a .npy file holding `values` with shape `shape` (their product must be
// values.size()). The header is padded with spaces and a '\n' so that the data starts on a
// 64-byte boundary, as NumPy writes it.
template <class T>
std::vector<uint8_t> npy_bytes(const std::vector<T>& values, const std::vector<size_t>& shape) {
  static_assert(sizeof(detail::NpyDescr<T>::value) > 0, "dtypes: float, uint8_t, uint16_t, uint32_t");
  size_t elems = 1;
  for (size_t d : shape)
    if (detail::mul_overflows(elems, d, elems)) throw Error("npy: shape " + shape_string(shape) + " is too large");
  if (elems != values.size())
    throw Error("npy: shape " + shape_string(shape) + " holds " + std::to_string(elems) + " elements, given " +
                std::to_string(values.size()));
  std::string dict = std::string("{'descr': '") + detail::NpyDescr<T>::value +
                     "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
  const size_t unpadded = 10 + dict.size() + 1;  // magic, version, length, dict, '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xFFFF) throw Error("npy: shape " + shape_string(shape) + " makes too long a header");
  // One allocation of the final size, filled in place (GCC 12 misreads insert() after a braced list).
  std::vector<uint8_t> out(10 + dict.size() + values.size() * sizeof(T));
  static const uint8_t kMagic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  std::memcpy(out.data(), kMagic, 8);
  out[8] = static_cast<uint8_t>(dict.size() & 0xFF);
  out[9] = static_cast<uint8_t>(dict.size() >> 8);
  std::memcpy(out.data() + 10, dict.data(), dict.size());
  if (!values.empty()) std::memcpy(out.data() + 10 + dict.size(), values.data(), values.size() * sizeof(T));  // little endian
  return out;
}

// Writes the .npy file PATH: to PATH.partial first, renamed into place when complete, so that a
// failed write leaves no half-written PATH (an existing PATH is replaced). Throws Error("PATH: ...").
template <class T>
void write_npy(const std::string& path, const std::vector<T>& values, const std::vector<size_t>& shape) {
  const std::vector<uint8_t> bytes = npy_bytes(values, shape);
  const std::string tmp = path + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(path + ": cannot write (cannot create " + tmp + ")");
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write (rename failed)");
  }
}

// ------------------------------------------------------------------------------------------------
// Layouts (SPEC §1, golden's layout.hpp): nibbles row by row, low nibble = even element; the 128x4
// scale atom of cuBLAS / CUTLASS / TransformerEngine for K-major operands.

// [rows, cols] codes (each < 16) -> [rows, (cols + 1) / 2] bytes.
inline std::vector<uint8_t> pack_nibbles_rows(const uint8_t* codes, size_t rows, size_t cols) {
  const size_t pc = (cols + 1) / 2;
  std::vector<uint8_t> out(rows * pc, 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k)
      out[r * pc + k / 2] |= static_cast<uint8_t>((codes[r * cols + k] & 0x0F) << (4 * (k & 1)));
  return out;
}
// [rows, (cols + 1) / 2] bytes -> [rows, cols] codes.
inline std::vector<uint8_t> unpack_nibbles_rows(const uint8_t* packed, size_t rows, size_t cols) {
  const size_t pc = (cols + 1) / 2;
  std::vector<uint8_t> out(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k) out[r * cols + k] = (packed[r * pc + k / 2] >> (4 * (k & 1))) & 0x0F;
  return out;
}

inline constexpr size_t kAtomRows = 128, kAtomCols = 4, kAtomBytes = 512;
inline constexpr size_t scale_atom_bytes(size_t rows, size_t scols) {
  return (rows + kAtomRows - 1) / kAtomRows * kAtomRows * ((scols + kAtomCols - 1) / kAtomCols * kAtomCols);
}
// Byte of scale (r, c): tile (r / 128, c / 4) row-tile-major, (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4 inside.
inline constexpr size_t scale_atom_offset(size_t r, size_t c, size_t scols) {
  return ((r / kAtomRows) * ((scols + kAtomCols - 1) / kAtomCols) + c / kAtomCols) * kAtomBytes + (r % 32) * 16 +
         ((r % kAtomRows) / 32) * 4 + (c % kAtomCols);
}
// Row-major [rows, scols] -> the zero-padded atom buffer.
inline std::vector<uint8_t> scales_to_atom(const uint8_t* scales, size_t rows, size_t scols) {
  std::vector<uint8_t> out(scale_atom_bytes(rows, scols), 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < scols; ++c) out[scale_atom_offset(r, c, scols)] = scales[r * scols + c];
  return out;
}
// The atom buffer (at least scale_atom_bytes(rows, scols) bytes) -> row-major [rows, scols].
inline std::vector<uint8_t> scales_from_atom(const uint8_t* atom, size_t atom_bytes, size_t rows, size_t scols) {
  if (atom_bytes < scale_atom_bytes(rows, scols)) throw Error("scale atom buffer too short");
  std::vector<uint8_t> out(rows * scols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < scols; ++c) out[r * scols + c] = atom[scale_atom_offset(r, c, scols)];
  return out;
}

// Element code width of the suites' element type names.
inline int element_bits(const std::string& elem) {
  if (elem == "e2m1" || elem == "s1p2") return 4;
  if (elem == "e2m3" || elem == "e3m2") return 6;
  if (elem == "e4m3" || elem == "e5m2") return 8;
  throw Error("unknown element type '" + elem + "'");
}

// ------------------------------------------------------------------------------------------------
// The manifest and the suite.

struct FileInfo {
  std::string dtype;
  std::vector<size_t> shape;
  size_t bytes = 0;
  uint32_t crc32 = 0;
};

// Paths are relative to the suite directory; "" where the manifest has null.
struct OperandInfo {
  std::string source;  // "codes" or "float"
  std::string codes, packed, scales, scales_atom, input;
};

struct CaseInfo {
  std::string id, dir, cls, description, kind, elem_a, elem_b, scale_type;
  int instruction_k = 0, block = 0;
  size_t M = 0, N = 0, K = 0;
  uint32_t alpha_bits = 0x3F800000;  // FP32 bits of alpha
  float alpha = 1.0f;
  OperandInfo a, b;
  std::string c;
  std::vector<std::pair<std::string, std::string>> expected;  // model -> path, in manifest order
  // Chained models with K > instruction_k: model -> path of d_<model>_steps.npy, float32
  // [K / instruction_k, M, N], the accumulator after each instruction before alpha (optional: empty
  // for suites written without it).
  std::vector<std::pair<std::string, std::string>> expected_steps;
  std::vector<std::string> rows, cols;                        // corner cases: what each row stands for
  bool scale_words() const { return kind == "hif4"; }        // HiF4: uint32 scale words
};

struct Manifest {
  std::string suite;
  uint64_t seed = 0;
  std::vector<CaseInfo> cases;
  std::map<std::string, FileInfo> files;
  Json json;  // everything, for fields not mirrored above
};

namespace detail {

inline const std::string& str_at(const Json& j, const char* key) { return j.at(key).as_string(); }
inline std::string path_or_empty(const Json& j, const char* key) {
  const Json* v = j.find(key);
  return !v || v->is_null() ? std::string() : v->as_string();
}
inline size_t size_at(const Json& j, const char* key) {
  const uint64_t v = j.at(key).as_u64();
  if (static_cast<uint64_t>(static_cast<size_t>(v)) != v) throw Error(std::string("JSON: ") + key + " too large");
  return static_cast<size_t>(v);
}
inline uint32_t hex_u32(const std::string& s) {
  size_t i = s.rfind("0x", 0) == 0 ? 2 : 0;
  if (s.size() == i || s.size() - i > 8) throw Error("bad hex '" + s + "'");
  uint32_t v = 0;
  for (; i < s.size(); ++i) {
    const char h = s[i];
    v <<= 4;
    if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
    else throw Error("bad hex '" + s + "'");
  }
  return v;
}
inline OperandInfo operand(const Json& j) {
  if (!j.is_object()) throw Error("operand is not an object");
  OperandInfo o;
  o.source = str_at(j, "source");
  o.codes = path_or_empty(j, "codes");
  o.packed = path_or_empty(j, "packed");
  o.scales = path_or_empty(j, "scales");
  o.scales_atom = path_or_empty(j, "scales_atom");
  o.input = path_or_empty(j, "input");
  return o;
}
inline std::vector<std::string> strings(const Json* j) {
  std::vector<std::string> out;
  if (j && !j->is_null())
    for (const Json& e : j->items()) out.push_back(e.as_string());
  return out;
}

}  // namespace detail

// Parses a suite manifest's text (the "files" table and every case). Throws Error("NAME: ...").
inline Manifest parse_manifest(const std::string& text, const std::string& name = "manifest.json") {
  Manifest m;
  m.json = Json::parse(text, name);
  const Json& j = m.json;
  try {
    if (!j.is_object()) throw Error("not a JSON object");
    const Json* schema = j.find("suite_schema");
    if (!schema || !schema->is_number() || schema->number_text() != std::to_string(kSuiteSchema))
      throw Error("not a vector suite of suite_schema " + std::to_string(kSuiteSchema));
    if (const Json* s = j.find("suite"); s && s->is_string()) m.suite = s->as_string();
    if (const Json* s = j.find("seed"); s && s->is_number()) m.seed = s->as_u64();
    const Json& files = j.at("files");
    if (!files.is_object()) throw Error("\"files\" is not an object");
    for (const auto& kv : files.members()) {
      FileInfo f;
      f.dtype = detail::str_at(kv.second, "dtype");
      for (const Json& d : kv.second.at("shape").items()) f.shape.push_back(static_cast<size_t>(d.as_u64()));
      f.bytes = detail::size_at(kv.second, "bytes");
      const std::string& crc = detail::str_at(kv.second, "crc32");
      if (crc.size() != 8) throw Error("files: " + kv.first + ": crc32 is not 8 hex digits");
      f.crc32 = detail::hex_u32(crc);
      m.files[kv.first] = std::move(f);
    }
    const Json& cases = j.at("cases");
    if (!cases.is_array()) throw Error("\"cases\" is not an array");
    for (const Json& cj : cases.items()) {
      CaseInfo c;
      c.id = detail::str_at(cj, "id");
      try {
        c.dir = detail::str_at(cj, "dir");
        if (const Json* v = cj.find("class")) c.cls = v->as_string();
        if (const Json* v = cj.find("description")) c.description = v->as_string();
        c.kind = detail::str_at(cj, "kind");
        c.instruction_k = static_cast<int>(std::min<uint64_t>(cj.at("instruction_k").as_u64(), 1u << 20));
        c.elem_a = detail::str_at(cj, "elem_a");
        c.elem_b = detail::str_at(cj, "elem_b");
        c.scale_type = detail::str_at(cj, "scale_type");
        c.block = static_cast<int>(std::min<uint64_t>(cj.at("block").as_u64(), 1u << 20));
        c.M = detail::size_at(cj, "M");
        c.N = detail::size_at(cj, "N");
        c.K = detail::size_at(cj, "K");
        if (c.M == 0 || c.N == 0 || c.K == 0 || c.block <= 0 || c.instruction_k <= 0 ||
            c.K % static_cast<size_t>(c.instruction_k) != 0 || c.K % static_cast<size_t>(c.block) != 0)
          throw Error("M, N, K, block must be positive, K a multiple of the block and of the instruction K");
        element_bits(c.elem_a);
        element_bits(c.elem_b);
        if (const Json* v = cj.find("alpha_bits")) {
          c.alpha_bits = detail::hex_u32(v->as_string());
        } else {
          const float f = static_cast<float>(cj.at("alpha").as_double());
          std::memcpy(&c.alpha_bits, &f, 4);
        }
        std::memcpy(&c.alpha, &c.alpha_bits, 4);
        c.a = detail::operand(cj.at("a"));
        c.b = detail::operand(cj.at("b"));
        c.c = detail::str_at(cj, "c");
        const Json& ex = cj.at("expected");
        if (!ex.is_object()) throw Error("\"expected\" is not an object");
        for (const auto& kv : ex.members()) c.expected.emplace_back(kv.first, kv.second.as_string());
        if (const Json* st = cj.find("expected_steps")) {
          if (!st->is_object()) throw Error("\"expected_steps\" is not an object");
          for (const auto& kv : st->members()) c.expected_steps.emplace_back(kv.first, kv.second.as_string());
        }
        c.rows = detail::strings(cj.find("rows"));
        c.cols = detail::strings(cj.find("cols"));
      } catch (const Error& e) {
        throw Error("case " + c.id + ": " + e.what());
      }
      m.cases.push_back(std::move(c));
    }
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  return m;
}

struct OperandData {
  std::vector<uint8_t> codes;        // [rows, K] one code per byte
  std::vector<uint8_t> packed;       // [rows, K/2] (4-bit elements; else empty)
  std::vector<uint32_t> scales;      // [rows, K/block]: 8-bit codes in the low byte, or HiF4 words
  std::vector<uint8_t> scales_atom;  // 128x4 atom layout (8-bit scales; else empty)
  std::vector<float> input;          // [rows, K] float-sourced operands only
};

struct CaseData {
  const CaseInfo* info = nullptr;
  OperandData a, b;
  std::vector<float> c;  // [M, N]
  float alpha = 1.0f;
  std::vector<std::pair<std::string, std::vector<uint32_t>>> expected;  // model -> D [M, N] FP32 bits
  // model -> [S, M, N] FP32 bits of the accumulator after each instruction (CaseInfo::expected_steps)
  std::vector<std::pair<std::string, std::vector<uint32_t>>> expected_steps;
};

class Suite {
 public:
  // Reads DIR/manifest.json. Throws Error naming it.
  explicit Suite(std::string dir) : dir_(std::move(dir)) {
    const std::string p = dir_ + "/manifest.json";
    const std::vector<uint8_t> b = read_file(p);
    m_ = parse_manifest(std::string(b.begin(), b.end()), p);
  }
  const std::string& dir() const { return dir_; }
  const Manifest& manifest() const { return m_; }
  const std::vector<CaseInfo>& cases() const { return m_.cases; }

  // Reads `rel` (a path of the "files" table) and checks it against its record: byte count, CRC-32,
  // a valid .npy, dtype and shape. Throws Error("REL: reason").
  Array load(const std::string& rel) const {
    if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
      throw Error((rel.empty() ? std::string("(empty path)") : rel) + ": not a path inside the suite");
    const auto it = m_.files.find(rel);
    if (it == m_.files.end()) throw Error(rel + ": not listed under \"files\" in the manifest");
    const FileInfo& f = it->second;
    const std::vector<uint8_t> bytes = read_file(dir_ + "/" + rel);
    if (bytes.size() != f.bytes)
      throw Error(rel + ": " + std::to_string(bytes.size()) + " bytes, manifest says " + std::to_string(f.bytes));
    const uint32_t crc = crc32(bytes);
    if (crc != f.crc32) throw Error(rel + ": CRC mismatch");
    Array a = parse_npy(bytes, rel);
    if (a.dtype != f.dtype || a.shape != f.shape)
      throw Error(rel + ": " + a.dtype + " " + shape_string(a.shape) + ", manifest says " + f.dtype + " " +
                  shape_string(f.shape));
    return a;
  }

  // Case i with every file loaded and checked: the shapes the case's M, N, K, block need, codes within
  // the element width, packed equal to the codes, atom equal to the row-major scales.
  CaseData load_case(size_t i) const {
    const CaseInfo& c = m_.cases.at(i);
    CaseData d;
    d.info = &c;
    d.alpha = c.alpha;
    const size_t nblk = c.K / static_cast<size_t>(c.block);
    operand(c, c.a, c.M, nblk, c.elem_a, d.a);
    operand(c, c.b, c.N, nblk, c.elem_b, d.b);
    d.c = need(c.c, "float32", {c.M, c.N}).values<float>();
    for (const auto& e : c.expected) d.expected.emplace_back(e.first, need(e.second, "float32", {c.M, c.N}).values<uint32_t>());
    const size_t S = c.K / static_cast<size_t>(c.instruction_k);
    for (const auto& e : c.expected_steps)
      d.expected_steps.emplace_back(e.first, need(e.second, "float32", {S, c.M, c.N}).values<uint32_t>());
    return d;
  }

 private:
  Array need(const std::string& rel, const char* dtype, const std::vector<size_t>& shape) const {
    Array a = load(rel);
    if (a.dtype != dtype || a.shape != shape)
      throw Error(rel + ": " + a.dtype + " " + shape_string(a.shape) + ", the case needs " + dtype + " " +
                  shape_string(shape));
    return a;
  }
  void operand(const CaseInfo& c, const OperandInfo& o, size_t rows, size_t nblk, const std::string& elem,
               OperandData& out) const {
    const int bits = element_bits(elem);
    out.codes = need(o.codes, "uint8", {rows, c.K}).data;
    if (bits < 8)
      for (size_t k = 0; k < out.codes.size(); ++k)
        if (out.codes[k] >> bits) throw Error(o.codes + ": code at index " + std::to_string(k) + " does not fit " + elem);
    if (bits == 4 && !o.packed.empty()) {
      out.packed = need(o.packed, "uint8", {rows, (c.K + 1) / 2}).data;
      if (out.packed != pack_nibbles_rows(out.codes.data(), rows, c.K))
        throw Error(o.packed + ": packed bytes disagree with " + o.codes);
    }
    if (c.scale_words()) {
      out.scales = need(o.scales, "uint32", {rows, nblk}).values<uint32_t>();
    } else {
      const std::vector<uint8_t> s8 = need(o.scales, "uint8", {rows, nblk}).data;
      out.scales.assign(s8.begin(), s8.end());
      if (!o.scales_atom.empty()) {
        out.scales_atom = load(o.scales_atom).data;
        if (out.scales_atom != scales_to_atom(s8.data(), rows, nblk))
          throw Error(o.scales_atom + ": atom layout disagrees with " + o.scales);
      }
    }
    if (!o.input.empty()) out.input = need(o.input, "float32", {rows, c.K}).values<float>();
  }

  std::string dir_;
  Manifest m_;
};

// ------------------------------------------------------------------------------------------------
// Padding a case to a kernel's tile shape (docs/vectors.md#padding-to-tile-shapes) without changing
// a single bit of D[m < M, n < N] under any model: extra rows of A / B and of C are zero; the extra K
// columns are element code -0 (the sign bit of the element width) on A and +0 on B, and their block
// scales are code 0 (for 8-bit scales the same zero bytes the 128x4 atom pads with). A's -0 makes
// every padded product -0, and x + (-0) = x for every x, -0 included (+0 products would turn a -0
// result into +0). Rows2 >= rows, K2 >= K, K2 a multiple of the block; packed bytes and atoms are
// rebuilt for the padded shape. Inputs (floats) are not padded.
struct PaddedCase {
  size_t M = 0, N = 0, K = 0;  // the padded shape
  OperandData a, b;            // codes, packed (4-bit), scales, scales_atom (8-bit scales)
  std::vector<float> c;        // [M, N]
};

inline OperandData pad_operand(const CaseInfo& c, const OperandData& op, size_t rows, size_t rows2, size_t K2,
                               uint8_t k_pad_code) {
  const size_t blk = static_cast<size_t>(c.block), nblk = c.K / blk, nblk2 = K2 / blk;
  if (rows2 < rows || K2 < c.K || K2 % blk != 0) throw Error("pad: the padded shape must cover the case and hold whole blocks");
  OperandData out;
  out.codes.assign(rows2 * K2, 0);
  out.scales.assign(rows2 * nblk2, 0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < K2; ++k) out.codes[r * K2 + k] = k < c.K ? op.codes[r * c.K + k] : k_pad_code;
    for (size_t j = 0; j < nblk; ++j) out.scales[r * nblk2 + j] = op.scales[r * nblk + j];
  }
  if (!op.packed.empty()) out.packed = pack_nibbles_rows(out.codes.data(), rows2, K2);
  if (!c.scale_words()) {
    std::vector<uint8_t> s8(out.scales.begin(), out.scales.end());
    out.scales_atom = scales_to_atom(s8.data(), rows2, nblk2);
  }
  return out;
}

inline PaddedCase pad_case(const CaseData& d, size_t M2, size_t N2, size_t K2) {
  const CaseInfo& c = *d.info;
  if (M2 < c.M || N2 < c.N) throw Error("pad: the padded shape must cover the case");
  PaddedCase p;
  p.M = M2;
  p.N = N2;
  p.K = K2;
  p.a = pad_operand(c, d.a, c.M, M2, K2, static_cast<uint8_t>(1u << (element_bits(c.elem_a) - 1)));  // -0
  p.b = pad_operand(c, d.b, c.N, N2, K2, 0);                                                         // +0
  p.c.assign(M2 * N2, 0.0f);
  for (size_t m = 0; m < c.M; ++m)
    for (size_t n = 0; n < c.N; ++n) p.c[m * N2 + n] = d.c[m * c.N + n];
  return p;
}

}  // namespace suite
}  // namespace fp4sim
