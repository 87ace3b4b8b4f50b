// NumPy .npy files: the only tensor container fp4sim reads and writes (SPEC §5).
//
// Read: format versions 1.0 and 2.0, C order, little endian, dtypes float32 '<f4', uint8 '|u1'
// (also '<u1'), uint16 '<u2' (BF16 bit patterns), uint32 '<u4'. Write: version 1.0, header
// padded with spaces to a multiple of 64 bytes and ended by '\n', as numpy does.
// Everything else is rejected with NpyError("NAME: reason") on one line: bad magic, other
// versions, malformed header, fortran_order True, big-endian or other dtypes, a data section
// shorter or longer than the shape says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fp4sim::io {

enum class DType : uint8_t { F32, U8, U16, U32 };

std::string_view dtype_name(DType t);   // "float32", "uint8", "uint16", "uint32"
std::string_view dtype_descr(DType t);  // "<f4", "|u1", "<u2", "<u4"
size_t dtype_size(DType t);

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::U16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::U32; };

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "(2, 3)", "(3,)", "()" — the Python spelling, used in messages and headers.
std::string shape_string(std::span<const size_t> shape);
// Product of the dimensions (1 for rank 0); throws NpyError(name: ...) on size_t overflow.
size_t shape_elements(std::span<const size_t> shape, std::string_view name = "shape");

struct NpyArray {
  DType dtype = DType::F32;
  std::vector<size_t> shape;
  std::vector<uint8_t> data;  // raw C-order little-endian element bytes

  size_t size() const { return shape_elements(shape); }
  // Copy of the elements as T; throws NpyError if T is not the stored dtype.
  template <class T> std::vector<T> values() const {
    check_dtype(DTypeOf<T>::value);
    std::vector<T> out(data.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  void check_dtype(DType want) const;
};

// Parses the bytes of a whole .npy file; `name` goes in front of every error message.
NpyArray parse_npy(std::span<const uint8_t> file, std::string_view name);
// The same checks without copying the data: `data` points into `file`.
struct NpyView {
  DType dtype = DType::F32;
  std::vector<size_t> shape;
  std::span<const uint8_t> data;
};
NpyView parse_npy_view(std::span<const uint8_t> file, std::string_view name);
// The same checks from the first bytes of a file of `file_size` bytes (for readers that read the
// data straight into its destination): `file` must hold the whole header, npy_header_end(file)
// bytes (0 when the first bytes are no .npy prefix).
struct NpyHeader {
  DType dtype = DType::F32;
  std::vector<size_t> shape;
  size_t data_offset = 0, data_bytes = 0;
};
NpyHeader parse_npy_header(std::span<const uint8_t> file, size_t file_size, std::string_view name);
size_t npy_header_end(std::span<const uint8_t> head);
// The header of a version 1.0 .npy file (magic, version, length, dict, padding): encode_npy without
// the data, for writers that stream the data behind it.
std::vector<uint8_t> npy_header(DType dtype, std::span<const size_t> shape);
// Reads and parses a file; I/O errors and format errors both come back as NpyError.
NpyArray read_npy(const std::filesystem::path& path);

// The bytes of a version 1.0 .npy file. data.size() must equal elements * dtype size.
std::vector<uint8_t> encode_npy(DType dtype, std::span<const size_t> shape,
                                std::span<const uint8_t> data);
template <class T>
std::vector<uint8_t> encode_npy(std::span<const size_t> shape, std::span<const T> values) {
  return encode_npy(DTypeOf<T>::value, shape,
                    std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                             values.size_bytes()));
}

// encode_npy + write_file_atomic. Returns the bytes written (callers hash them for manifests).
std::vector<uint8_t> write_npy(const std::filesystem::path& path, DType dtype,
                               std::span<const size_t> shape, std::span<const uint8_t> data);
template <class T>
std::vector<uint8_t> write_npy(const std::filesystem::path& path, std::span<const size_t> shape,
                               std::span<const T> values) {
  return write_npy(path, DTypeOf<T>::value, shape,
                   std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                            values.size_bytes()));
}

}  // namespace fp4sim::io
