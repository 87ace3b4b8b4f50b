// fp4sim_io: .npy read/write, CRC-32, atomic files and manifests.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/manifest.hpp"
#include "fp4sim/io/npy.hpp"

namespace fs = std::filesystem;
using namespace fp4sim::io;

namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> n{0};
    path_ = fs::temp_directory_path() /
            ("fp4sim_npy_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path path_;
};

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

// A .npy file from its parts, for hand-made (often broken) headers: magic, version, length
// field as given, header text verbatim, then data.
std::vector<uint8_t> npy_file(int major, int minor, std::string_view header,
                              const std::vector<uint8_t>& data, long long header_len = -1) {
  std::vector<uint8_t> f = bytes_of("\x93NUMPY");
  f.push_back(static_cast<uint8_t>(major));
  f.push_back(static_cast<uint8_t>(minor));
  const uint64_t len = header_len < 0 ? header.size() : static_cast<uint64_t>(header_len);
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) f.push_back(static_cast<uint8_t>(len >> (8 * i)));
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

// A well-formed header in numpy's spelling, not padded (padding is optional for readers).
std::string header(std::string_view descr, std::string_view shape, std::string_view fortran = "False") {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(fortran) +
         ", 'shape': " + std::string(shape) + ", }\n";
}

// Parses and returns the error message ("" if it parsed).
std::string parse_error(const std::vector<uint8_t>& file, std::string_view name = "t.npy") {
  try {
    parse_npy(file, name);
  } catch (const NpyError& e) {
    return e.what();
  }
  return "";
}

// The message names the file, carries the reason and is one line.
void expect_rejected(const std::vector<uint8_t>& file, std::string_view reason) {
  const std::string msg = parse_error(file, "dir/t.npy");
  ASSERT_FALSE(msg.empty()) << "accepted a file that should be rejected for: " << reason;
  EXPECT_EQ(msg.rfind("dir/t.npy: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(reason), std::string::npos) << "message: " << msg << "\nwanted: " << reason;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// Plain bit-by-bit CRC-32 (reflected 0xEDB88320), independent of the table-driven one.
uint32_t crc32_bitwise(const std::vector<uint8_t>& d) {
  uint32_t c = 0xFFFFFFFFu;
  for (uint8_t b : d) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// CRC-32

TEST(Crc32, CheckValues) {
  // The catalogued check value of CRC-32/ISO-HDLC (zlib, PNG, IEEE 802.3).
  EXPECT_EQ(crc32(std::string_view("123456789")), 0xCBF43926u);
  // Empty input: init and final XOR cancel.
  EXPECT_EQ(crc32(std::string_view("")), 0u);
  // Values Python's zlib.crc32 gives (checked with CPython 3.11 zlib).
  EXPECT_EQ(crc32(std::string_view("a")), 0xE8B7BE43u);
  EXPECT_EQ(crc32(std::string_view("The quick brown fox jumps over the lazy dog")), 0x414FA339u);
}

TEST(Crc32, MatchesBitwiseReferenceAndIsIncremental) {
  std::mt19937 gen(12345);
  for (size_t len : {1u, 2u, 3u, 7u, 64u, 255u, 256u, 1000u, 4097u}) {
    std::vector<uint8_t> d(len);
    for (auto& b : d) b = static_cast<uint8_t>(gen());
    const uint32_t whole = crc32(d);
    EXPECT_EQ(whole, crc32_bitwise(d)) << len;
    for (size_t cut : {size_t{0}, len / 3, len}) {
      std::span<const uint8_t> all(d);
      EXPECT_EQ(crc32(all.subspan(cut), crc32(all.first(cut))), whole) << len << " " << cut;
    }
  }
  // Every single byte value (the table's 256 entries, each through the reference).
  for (int b = 0; b < 256; ++b) {
    std::vector<uint8_t> d{static_cast<uint8_t>(b)};
    EXPECT_EQ(crc32(d), crc32_bitwise(d)) << b;
  }
}

TEST(Crc32, HexFormatting) {
  EXPECT_EQ(crc32_hex(0xCBF43926u), "cbf43926");
  EXPECT_EQ(crc32_hex(0x1234u), "00001234");
  EXPECT_EQ(crc32_hex(0u), "00000000");
  EXPECT_EQ(crc32_hex(0xFFFFFFFFu), "ffffffff");
}

// ---------------------------------------------------------------------------------------------
// .npy writing: exact bytes

TEST(Npy, EncodeLayoutIsNumpyVersion1) {
  const std::vector<size_t> shape{2, 3};
  const std::vector<float> v{1, 2, 3, 4, 5, 6};
  const std::vector<uint8_t> f = encode_npy<float>(shape, v);
  // Prefix: magic, version 1.0, little-endian 2-byte header length.
  ASSERT_GE(f.size(), 10u);
  EXPECT_EQ(std::memcmp(f.data(), "\x93NUMPY\x01\x00", 8), 0);
  const size_t hlen = f[8] | f[9] << 8;
  // NEP 1 / numpy >= 1.14: the data starts at a multiple of 64, the header ends with '\n'.
  EXPECT_EQ((10 + hlen) % 64, 0u);
  ASSERT_EQ(f.size(), 10 + hlen + 24);
  const std::string text(f.begin() + 10, f.begin() + 10 + static_cast<long>(hlen));
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(text.substr(0, dict.size()), dict);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find_first_not_of(' ', dict.size()), hlen - 1);  // only spaces, then '\n'
  EXPECT_EQ(std::memcmp(f.data() + 10 + hlen, v.data(), 24), 0);
}

TEST(Npy, ShapeSpelling) {
  EXPECT_EQ(shape_string(std::vector<size_t>{}), "()");
  EXPECT_EQ(shape_string(std::vector<size_t>{3}), "(3,)");
  EXPECT_EQ(shape_string(std::vector<size_t>{1, 2, 3}), "(1, 2, 3)");
  EXPECT_EQ(dtype_descr(DType::U8), "|u1");
  EXPECT_EQ(dtype_descr(DType::U16), "<u2");
  EXPECT_EQ(dtype_descr(DType::U32), "<u4");
  EXPECT_EQ(dtype_descr(DType::F32), "<f4");
}

TEST(Npy, EncodeRejectsSizeMismatch) {
  const std::vector<size_t> shape{4};
  const std::vector<float> v(3);
  EXPECT_THROW(encode_npy<float>(shape, v), NpyError);
}

// ---------------------------------------------------------------------------------------------
// .npy reading of files numpy wrote

TEST(Npy, ReadsNumpyVersion1File) {
  // np.save of np.array([1, 0x3f80, 0xffff], dtype=np.uint16) by numpy 1.24.2: 134 bytes, the
  // header padded to 118 bytes (numpy reserves room to grow the first axis).
  std::string h = "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }";
  h += std::string(118 - h.size() - 1, ' ') + "\n";
  const std::vector<uint8_t> f = npy_file(1, 0, h, {0x01, 0x00, 0x80, 0x3f, 0xff, 0xff});
  ASSERT_EQ(f.size(), 134u);
  const NpyArray a = parse_npy(f, "numpy.npy");
  EXPECT_EQ(a.dtype, DType::U16);
  EXPECT_EQ(a.shape, (std::vector<size_t>{3}));
  EXPECT_EQ(a.values<uint16_t>(), (std::vector<uint16_t>{1, 0x3f80, 0xffff}));
}

TEST(Npy, ReadsNumpyVersion2File) {
  // np.lib.format.write_array(f, np.array([[1.5, -2.0]], np.float32), version=(2, 0)) by
  // numpy 1.24.2: 4-byte header length 116, data at offset 128.
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }";
  h += std::string(116 - h.size() - 1, ' ') + "\n";
  const std::vector<uint8_t> f =
      npy_file(2, 0, h, {0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0});
  ASSERT_EQ(f.size(), 136u);
  const NpyArray a = parse_npy(f, "v2.npy");
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(a.values<float>(), (std::vector<float>{1.5f, -2.0f}));
}

TEST(Npy, AcceptsHeaderVariants) {
  // Key order, double quotes, no trailing comma, '<u1' for uint8, "(n,)" with spaces: all valid
  // Python literals numpy would read.
  const std::vector<uint8_t> d{7, 8};
  for (const char* h : {"{'shape': (2,), 'fortran_order': False, 'descr': '|u1'}",
                        "{\"descr\": \"<u1\", \"fortran_order\": False, \"shape\": ( 2 , )}\n",
                        "  {'descr':'|u1','fortran_order':False,'shape':(2,),}  \n"}) {
    const NpyArray a = parse_npy(npy_file(1, 0, h, d), "v.npy");
    EXPECT_EQ(a.dtype, DType::U8) << h;
    EXPECT_EQ(a.shape, (std::vector<size_t>{2})) << h;
    EXPECT_EQ(a.values<uint8_t>(), d) << h;
  }
  // Rank 0: one element.
  const NpyArray s = parse_npy(npy_file(1, 0, header("<u4", "()"), {1, 2, 3, 4}), "s.npy");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.values<uint32_t>(), (std::vector<uint32_t>{0x04030201u}));
}

// ---------------------------------------------------------------------------------------------
// Round trips through files, every dtype

TEST(Npy, RoundTripUint8AllValues) {
  TempDir t;
  std::vector<uint8_t> v(256);
  for (int i = 0; i < 256; ++i) v[i] = static_cast<uint8_t>(i);
  const std::vector<size_t> shape{4, 2, 32};
  write_npy<uint8_t>(t.path() / "a.npy", shape, v);
  const NpyArray a = read_npy(t.path() / "a.npy");
  EXPECT_EQ(a.dtype, DType::U8);
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.values<uint8_t>(), v);
}

TEST(Npy, RoundTripUint16AllValues) {
  TempDir t;
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) v[i] = static_cast<uint16_t>(i);
  const std::vector<size_t> shape{256, 256};
  write_npy<uint16_t>(t.path() / "a.npy", shape, v);
  const NpyArray a = read_npy(t.path() / "a.npy");
  EXPECT_EQ(a.dtype, DType::U16);
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.values<uint16_t>(), v);
}

TEST(Npy, RoundTripUint32AndFloat32Bits) {
  TempDir t;
  std::mt19937 gen(7);
  std::vector<uint32_t> u(1000);
  for (auto& x : u) x = static_cast<uint32_t>(gen());
  // Corners: zero, all ones, and float specials as bit patterns (NaN payloads must survive).
  const uint32_t corners[] = {0u, 0xFFFFFFFFu, 0x80000000u, 0x7F800000u, 0xFF800000u,
                              0x7FC00000u, 0x7F800001u, 0xFFFFFFFEu, 0x00000001u, 0x807FFFFFu};
  std::copy(std::begin(corners), std::end(corners), u.begin());
  const std::vector<size_t> shape{10, 100};
  write_npy<uint32_t>(t.path() / "u.npy", shape, u);
  EXPECT_EQ(read_npy(t.path() / "u.npy").values<uint32_t>(), u);

  std::vector<float> f(u.size());
  for (size_t i = 0; i < u.size(); ++i) f[i] = std::bit_cast<float>(u[i]);
  const std::vector<size_t> shape3{5, 2, 100};
  write_npy<float>(t.path() / "f.npy", shape3, f);
  const NpyArray a = read_npy(t.path() / "f.npy");
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, shape3);
  const std::vector<float> back = a.values<float>();
  ASSERT_EQ(back.size(), f.size());
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(std::bit_cast<uint32_t>(back[i]), u[i]) << i;
}

TEST(Npy, RoundTripEmptyAndScalarShapes) {
  TempDir t;
  for (const std::vector<size_t>& shape :
       {std::vector<size_t>{0}, std::vector<size_t>{3, 0, 5}, std::vector<size_t>{}}) {
    std::vector<float> v(shape_elements(shape), 2.5f);
    write_npy<float>(t.path() / "e.npy", shape, v);
    const NpyArray a = read_npy(t.path() / "e.npy");
    EXPECT_EQ(a.shape, shape) << shape_string(shape);
    EXPECT_EQ(a.values<float>(), v) << shape_string(shape);
  }
}

TEST(Npy, ValuesChecksDtype) {
  const NpyArray a = parse_npy(encode_npy<uint8_t>(std::vector<size_t>{1}, std::vector<uint8_t>{1}), "x");
  EXPECT_THROW(a.values<float>(), NpyError);
  EXPECT_THROW(a.values<uint16_t>(), NpyError);
}

// ---------------------------------------------------------------------------------------------
// Rejections: every case names the file and the reason on one line

TEST(NpyReject, BadMagic) {
  expect_rejected({}, "bad magic");
  expect_rejected(bytes_of("\x93NUMPX\x01\x00\x10\x00"), "bad magic");
  expect_rejected(bytes_of("PK\x03\x04 this is a zip"), "bad magic");
  expect_rejected(bytes_of("\x93NUMPY"), "bad magic");  // no version bytes
}

TEST(NpyReject, UnsupportedVersion) {
  expect_rejected(npy_file(3, 0, header("<f4", "(1,)"), {0, 0, 0, 0}), "unsupported .npy version 3.0");
  expect_rejected(npy_file(1, 1, header("<f4", "(1,)"), {0, 0, 0, 0}), "unsupported .npy version 1.1");
  expect_rejected(npy_file(0, 0, header("<f4", "(1,)"), {0, 0, 0, 0}), "unsupported .npy version 0.0");
}

TEST(NpyReject, TruncatedHeader) {
  // The length field says more than the file holds.
  expect_rejected(npy_file(1, 0, header("<f4", "(1,)"), {}, 500), "truncated header");
  // The length field itself is cut off.
  expect_rejected(bytes_of(std::string("\x93NUMPY\x01\x00\x05", 9)), "truncated header");
  expect_rejected(bytes_of(std::string("\x93NUMPY\x02\x00\x05\x00", 10)), "truncated header");
}

TEST(NpyReject, FortranOrder) {
  expect_rejected(npy_file(1, 0, header("<f4", "(2, 2)", "True"), std::vector<uint8_t>(16)),
                  "fortran_order arrays are not supported");
}

TEST(NpyReject, BigEndian) {
  for (const char* d : {">f4", ">u2", ">u4"})
    expect_rejected(npy_file(1, 0, header(d, "(1,)"), std::vector<uint8_t>(4)),
                    "big-endian dtype '" + std::string(d) + "' is not supported");
}

TEST(NpyReject, OtherDtypes) {
  for (const char* d : {"<f8", "<f2", "<i4", "|i1", "|b1", "<u8", "<c8", "|O", "<U3", "|V4", "=f4", "f4"})
    expect_rejected(npy_file(1, 0, header(d, "(1,)"), std::vector<uint8_t>(16)),
                    "unsupported dtype '" + std::string(d) + "'");
  // A structured dtype is a list in the header.
  expect_rejected(
      npy_file(1, 0, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}),
      "structured dtypes are not supported");
}

TEST(NpyReject, TruncatedData) {
  expect_rejected(npy_file(1, 0, header("<f4", "(2, 3)"), std::vector<uint8_t>(23)),
                  "truncated data: shape (2, 3) of <f4 needs 24 bytes, file has 23");
  expect_rejected(npy_file(1, 0, header("<u2", "(5,)"), {}), "truncated data");
}

TEST(NpyReject, TrailingData) {
  expect_rejected(npy_file(1, 0, header("|u1", "(2,)"), {1, 2, 3}), "size mismatch");
  // A rank-0 array holds exactly one element.
  expect_rejected(npy_file(1, 0, header("<u4", "()"), std::vector<uint8_t>(8)), "size mismatch");
}

TEST(NpyReject, HeaderGarbage) {
  const std::vector<uint8_t> d4(4);
  const std::pair<std::string, std::string> cases[] = {
      {"", "malformed header: expected '{'"},
      {"garbage", "malformed header: expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ", "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} extra", "unexpected text after"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "expected '('"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.0,)}", "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}", "expected an integer"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (1,)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'shape': (1,)}", "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", "expected ',' or '}'"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}", "malformed header"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (1,)}", "expected a quoted string"},
      {"{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,)}", "unsupported character"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", "dimension too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296,)}", "too large"},
  };
  for (const auto& [h, reason] : cases) {
    SCOPED_TRACE(h);
    expect_rejected(npy_file(1, 0, h, d4), reason);
  }
}

TEST(NpyReject, MissingFileNamesIt) {
  TempDir t;
  const fs::path p = t.path() / "nope.npy";
  try {
    read_npy(p);
    FAIL() << "no exception";
  } catch (const NpyError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(p.string() + ": cannot open", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  // A directory is not a file either.
  EXPECT_THROW(read_npy(t.path()), NpyError);
}

// ---------------------------------------------------------------------------------------------
// Atomic files and staging directories

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporaries) {
  TempDir t;
  const fs::path p = t.path() / "f.bin";
  write_file_atomic(p, std::string_view("first"));
  EXPECT_EQ(read_file(p), bytes_of("first"));
  write_file_atomic(p, std::string_view("second, longer"));
  EXPECT_EQ(read_file(p), bytes_of("second, longer"));
  EXPECT_EQ(t.entries(), (std::vector<std::string>{"f.bin"}));
  // The kernel applies the umask as for any new file (mkstemp's 0600 would not).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(fs::status(p).permissions(), static_cast<fs::perms>(0666 & ~mask));
}

TEST(AtomicFile, FailureNamesPathAndLeavesNothing) {
  TempDir t;
  const fs::path p = t.path() / "missing_dir" / "f.bin";
  try {
    write_file_atomic(p, std::string_view("x"));
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(p.string() + ": ", 0), 0u) << e.what();
  }
  // Renaming over a directory fails after the temporary was written: it must be cleaned up.
  fs::create_directory(t.path() / "d");
  EXPECT_THROW(write_file_atomic(t.path() / "d", std::string_view("x")), IoError);
  EXPECT_EQ(t.entries(), (std::vector<std::string>{"d"}));
}

TEST(StagingDir, CommitCreatesFinal) {
  TempDir t;
  const fs::path fin = t.path() / "out";
  {
    StagingDir s(fin);
    EXPECT_EQ(s.path().parent_path(), t.path());
    EXPECT_EQ(s.path().filename().string().rfind("out.tmp-", 0), 0u);
    write_file_atomic(s.path() / "a", std::string_view("A"));
    EXPECT_FALSE(fs::exists(fin));  // nothing visible before commit
    s.commit(false);
  }
  EXPECT_EQ(read_file(fin / "a"), bytes_of("A"));
  EXPECT_EQ(t.entries(), (std::vector<std::string>{"out"}));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(fs::status(fin).permissions(), static_cast<fs::perms>(0777 & ~mask));
}

TEST(StagingDir, AbandonedStageIsRemoved) {
  TempDir t;
  {
    StagingDir s(t.path() / "out");
    write_file_atomic(s.path() / "a", std::string_view("A"));
  }
  EXPECT_TRUE(t.entries().empty());
}

TEST(StagingDir, ExistingFinalNeedsReplace) {
  TempDir t;
  const fs::path fin = t.path() / "out";
  fs::create_directory(fin);
  write_file_atomic(fin / "old", std::string_view("old"));
  {
    StagingDir s(fin);
    write_file_atomic(s.path() / "new", std::string_view("new"));
    EXPECT_THROW(s.commit(false), IoError);
  }
  EXPECT_EQ(t.entries(), (std::vector<std::string>{"out"}));
  EXPECT_TRUE(fs::exists(fin / "old"));
  {
    StagingDir s(fin);
    write_file_atomic(s.path() / "new", std::string_view("new"));
    s.commit(true);
  }
  EXPECT_EQ(t.entries(), (std::vector<std::string>{"out"}));  // old content and stage gone
  EXPECT_FALSE(fs::exists(fin / "old"));
  EXPECT_EQ(read_file(fin / "new"), bytes_of("new"));
}

TEST(StagingDir, RefusesToReplaceAFileAndNeedsParent) {
  TempDir t;
  write_file_atomic(t.path() / "f", std::string_view("x"));
  {
    StagingDir s(t.path() / "f");
    EXPECT_THROW(s.commit(true), IoError);
  }
  EXPECT_EQ(read_file(t.path() / "f"), bytes_of("x"));
  EXPECT_EQ(t.entries(), (std::vector<std::string>{"f"}));
  EXPECT_THROW(StagingDir(t.path() / "no" / "out"), IoError);
  // A trailing separator names the same directory.
  {
    StagingDir s(t.path().string() + "/out2/");
    s.commit(false);
  }
  EXPECT_TRUE(fs::is_directory(t.path() / "out2"));
}

// ---------------------------------------------------------------------------------------------
// Manifests

TEST(Manifest, RecordsFilesAndVerifies) {
  TempDir t;
  OutputWriter w(t.path());
  const std::vector<size_t> s1{2, 4};
  const std::vector<uint8_t> codes{1, 2, 3, 4, 5, 6, 7, 8};
  w.npy<uint8_t>("codes.npy", s1, codes);
  const std::vector<size_t> s2{1};
  const std::vector<float> g{0.5f};
  w.npy<float>("g.npy", s2, g);
  Json m;
  m["files"] = w.files_json();
  write_manifest(t.path(), m);

  // Each record matches the bytes on disk.
  for (const FileRecord& r : w.files()) {
    const std::vector<uint8_t> b = read_file(t.path() / r.name);
    EXPECT_EQ(r.bytes, b.size());
    EXPECT_EQ(r.crc32, crc32(b));
    EXPECT_EQ(m["files"][r.name]["crc32"], crc32_hex(crc32(b)));
  }
  EXPECT_EQ(m["files"]["codes.npy"]["dtype"], "uint8");
  EXPECT_EQ(m["files"]["codes.npy"]["shape"], Json({2, 4}));
  EXPECT_EQ(m["files"]["g.npy"]["dtype"], "float32");
  EXPECT_TRUE(verify_manifest(t.path()).empty());

  // Flip one data byte: the CRC no longer matches.
  std::vector<uint8_t> b = read_file(t.path() / "codes.npy");
  b.back() ^= 1;
  write_file_atomic(t.path() / "codes.npy", b);
  const std::vector<std::string> problems = verify_manifest(t.path());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("CRC-32"), std::string::npos) << problems[0];
  // A missing file is reported too.
  fs::remove(t.path() / "g.npy");
  EXPECT_EQ(verify_manifest(t.path()).size(), 2u);
}

TEST(Manifest, InvalidJsonNamesFile) {
  TempDir t;
  write_file_atomic(t.path() / "manifest.json", std::string_view("{not json"));
  try {
    read_manifest(t.path());
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.json: invalid JSON"), std::string::npos) << e.what();
  }
}
