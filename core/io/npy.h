// NumPy .npy files (format versions 1.0, 2.0 and 3.0), for tensors exchanged with Python tools.
//
// Format (numpy/lib/format.py, NEP 1): magic "\x93NUMPY", major and minor version bytes, a
// little-endian header length (u16 in v1, u32 in v2/v3), then an ASCII (v3: UTF-8) Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and
// '\n' so that the data starts 64-byte aligned, then the raw elements.
//
// Supported: little-endian (or byte-order-free) f16, f32, f64, i8..i64, u8..u64, bool ('|b1')
// and unicode strings ('<U<n>': n UTF-32LE code points per element, NUL-padded; read into and
// written from UTF-8 string tensors, trailing NULs stripped as numpy does), C order only.
// Rejected with an error: fortran_order True (kUnsupported), big-endian, object/bytes/structured
// descrs (kUnsupported), string elements that are not valid UTF-8 (kInvalidArgument). bf16 has no NumPy dtype: writing it is
// kUnsupported (convert to f32 first).
//
// Reading is safe on untrusted files: the header is at most kMaxNpyHeaderBytes, the rank at most
// kMaxNpyRank, every dim >= 0, the byte size is computed without overflow and bounded by
// max_tensor_bytes(), and the file size must be exactly header + data. Errors are kInvalidModel
// for malformed bytes (the CLI reports them as invalid input files), kNotFound for a missing
// file; messages start with the file name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor/tensor.h"

namespace tsr::io {

inline constexpr size_t kMaxNpyHeaderBytes = 65536;
inline constexpr size_t kMaxNpyRank = 32;

// Parses a whole .npy image held in memory; the tensor owns a copy of the data. Bool elements
// are normalized to 0/1. `name` prefixes error messages.
Expected<Tensor> parse_npy(const uint8_t* data, size_t size, std::string_view name = "npy");
// Reads a .npy file (the data is read straight into the tensor's storage).
Expected<Tensor> read_npy_file(const std::string& path);
// Serializes as .npy version 1.0 (2.0 when the header would not fit a u16 length).
Expected<std::vector<uint8_t>> serialize_npy(const Tensor& tensor);
// Writes serialize_npy(tensor) to `path` (kNotFound if the directory does not exist,
// kResource on write failure).
Status write_npy_file(const Tensor& tensor, const std::string& path);

}  // namespace tsr::io
