#include "core/io/npy.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <algorithm>
#include <memory>

namespace tsr::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct NpyHeader {
  DType dtype = DType::kUndefined;
  size_t str_width = 0;  // '<U<n>': code points per element (dtype kString)
  Shape shape;
  size_t data_offset = 0;  // bytes before the first element
  size_t data_bytes = 0;
};

// descr strings for our dtypes; the byte-order char is checked separately.
struct DescrEntry {
  char kind;
  int size;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {'f', 2, DType::kF16}, {'f', 4, DType::kF32}, {'f', 8, DType::kF64},
    {'i', 1, DType::kI8},  {'i', 2, DType::kI16}, {'i', 4, DType::kI32}, {'i', 8, DType::kI64},
    {'u', 1, DType::kU8},  {'u', 2, DType::kU16}, {'u', 4, DType::kU32}, {'u', 8, DType::kU64},
    {'b', 1, DType::kBool},
};

Expected<DType> dtype_from_descr(std::string_view d, std::string_view name) {
  if (d.size() < 3) return invalid_model(name, ": descr '", d, "' is not a supported dtype");
  const char order = d[0];
  const char kind = d[1];
  std::string_view digits = d.substr(2);
  int size = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || size > 1000) return unsupported(name, ": descr '", d, "' is not supported");
    size = size * 10 + (c - '0');
  }
  if (order == '>' && (size > 1 || kind == 'U')) return unsupported(name, ": big-endian descr '", d, "' is not supported");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return invalid_model(name, ": descr '", d, "' has an unknown byte order");
  if (kind == 'U') {
    if (size == 0) return invalid_model(name, ": descr '", d, "' has a zero width");
    return DType::kString;
  }
  for (const auto& e : kDescrs)
    if (e.kind == kind && e.size == size) return e.dtype;
  return unsupported(name, ": descr '", d, "' is not supported (numeric, bool and unicode dtypes only)");
}

// The width n of a '<U<n>' descr (already validated by dtype_from_descr).
size_t unicode_width(std::string_view d) {
  size_t n = 0;
  for (char c : d.substr(2)) n = n * 10 + static_cast<size_t>(c - '0');
  return n;
}

// UTF-8 -> code points; false on malformed UTF-8 (overlong forms, surrogates, > U+10FFFF).
bool decode_utf8(std::string_view s, std::vector<uint32_t>* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? b0 : b0 & (0x7f >> len);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 2) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    out->push_back(cp);
    i += len;
  }
  return true;
}

// Code points -> UTF-8; false for a code point that is not a Unicode scalar value.
bool encode_utf8(const uint32_t* cps, size_t n, std::string* out) {
  out->clear();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = cps[i];
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return false;
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (c >> 6)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (c >> 12)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (c >> 18)));
      out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  }
  return true;
}

std::string descr_of(DType t) {
  for (const auto& e : kDescrs)
    if (e.dtype == t) return str_cat(e.size == 1 ? '|' : '<', e.kind, e.size);
  return {};
}

// A cursor over the header's Python dict literal. Only the subset np.save writes is accepted:
// string keys, values that are strings, True/False, or tuples of non-negative integers.
class DictParser {
 public:
  DictParser(std::string_view s, std::string_view name) : s_(s), name_(name) {}

  Status parse(NpyHeader* h) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    TSR_RETURN_IF_ERROR(expect('{'));
    while (true) {
      skip_ws();
      if (peek() == '}') { ++i_; break; }
      std::string key;
      TSR_RETURN_IF_ERROR(parse_string(&key));
      skip_ws();
      TSR_RETURN_IF_ERROR(expect(':'));
      skip_ws();
      if (key == "descr") {
        std::string d;
        TSR_RETURN_IF_ERROR(parse_string(&d));
        TSR_ASSIGN_OR_RETURN(h->dtype, dtype_from_descr(d, name_));
        if (h->dtype == DType::kString) h->str_width = unicode_width(d);
        have_descr = true;
      } else if (key == "fortran_order") {
        bool fortran = false;
        if (s_.substr(i_, 4) == "True") { fortran = true; i_ += 4; }
        else if (s_.substr(i_, 5) == "False") { i_ += 5; }
        else return error("fortran_order must be True or False");
        if (fortran) return unsupported(name_, ": fortran_order=True is not supported (save a C-order array)");
        have_order = true;
      } else if (key == "shape") {
        TSR_RETURN_IF_ERROR(parse_shape(&h->shape));
        have_shape = true;
      } else {
        return error(str_cat("unexpected key '", key, "'"));
      }
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      skip_ws();
      TSR_RETURN_IF_ERROR(expect('}'));
      break;
    }
    skip_ws();
    if (i_ != s_.size()) return error("trailing characters after the dict");
    if (!have_descr || !have_order || !have_shape)
      return error("the header needs the keys 'descr', 'fortran_order' and 'shape'");
    return ok_status();
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  Status error(std::string_view what) const {
    return invalid_model(name_, ": malformed .npy header at offset ", i_, ": ", what);
  }
  Status expect(char c) {
    if (peek() != c) return error(str_cat("expected '", c, "'"));
    ++i_;
    return ok_status();
  }
  Status parse_string(std::string* out) {
    const char q = peek();
    if (q != '\'' && q != '"') return error("expected a quoted string");
    ++i_;
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\') return error("escapes are not supported in header strings");
      ++i_;
    }
    if (i_ >= s_.size()) return error("unterminated string");
    *out = std::string(s_.substr(start, i_ - start));
    ++i_;
    return ok_status();
  }
  Status parse_shape(Shape* shape) {
    TSR_RETURN_IF_ERROR(expect('('));
    shape->clear();
    while (true) {
      skip_ws();
      if (peek() == ')') { ++i_; return ok_status(); }
      if (peek() < '0' || peek() > '9') return error("expected a non-negative integer dim");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) return error("dim overflows int64");
        v = v * 10 + digit;
        ++i_;
      }
      if (peek() == 'L') ++i_;  // Python 2 longs, written by old numpy
      if (shape->size() >= kMaxNpyRank) return error(str_cat("rank exceeds ", kMaxNpyRank));
      shape->push_back(v);
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      skip_ws();
      TSR_RETURN_IF_ERROR(expect(')'));
      return ok_status();
    }
  }

  std::string_view s_;
  std::string_view name_;
  size_t i_ = 0;
};

// Parses the preamble and header from `prefix` (which holds at least the first `prefix_size`
// bytes of a file of `file_size` bytes) and checks that the data size matches the file size.
Expected<NpyHeader> parse_header(const uint8_t* prefix, size_t prefix_size, size_t file_size,
                                 std::string_view name) {
  if (prefix_size < kMagicLen + 4 || std::memcmp(prefix, kMagic, kMagicLen) != 0)
    return invalid_model(name, ": not a .npy file (bad magic)");
  const int major = prefix[6];
  size_t header_len = 0;
  size_t preamble = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(prefix[8]) | (static_cast<size_t>(prefix[9]) << 8);
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (prefix_size < 12) return invalid_model(name, ": truncated .npy preamble");
    header_len = static_cast<size_t>(prefix[8]) | (static_cast<size_t>(prefix[9]) << 8) |
                 (static_cast<size_t>(prefix[10]) << 16) | (static_cast<size_t>(prefix[11]) << 24);
    preamble = 12;
  } else {
    return unsupported(name, ": .npy format version ", major, ".", int(prefix[7]), " is not supported");
  }
  if (header_len > kMaxNpyHeaderBytes)
    return invalid_model(name, ": .npy header of ", header_len, " bytes exceeds the ", kMaxNpyHeaderBytes,
                         "-byte limit");
  if (preamble + header_len > prefix_size) return invalid_model(name, ": truncated .npy header");
  NpyHeader h;
  std::string_view text(reinterpret_cast<const char*>(prefix + preamble), header_len);
  TSR_RETURN_IF_ERROR(DictParser(text, name).parse(&h));
  if (h.str_width > max_tensor_bytes() / 4)
    return resource_error(name, ": unicode width ", h.str_width, " exceeds the tensor limit");
  const size_t esize = h.dtype == DType::kString ? 4 * h.str_width : dtype_size(h.dtype);
  uint64_t numel = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && numel > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d))
      return invalid_model(name, ": shape ", shape_str(h.shape), " overflows");
    numel *= static_cast<uint64_t>(d);
  }
  if (numel > max_tensor_bytes() / esize)
    return resource_error(name, ": shape ", shape_str(h.shape), " (", dtype_name(h.dtype), ") exceeds the ",
                          max_tensor_bytes() >> 20, " MiB tensor limit");
  h.data_offset = preamble + header_len;
  h.data_bytes = static_cast<size_t>(numel) * esize;
  if (file_size != h.data_offset + h.data_bytes)
    return invalid_model(name, ": file has ", file_size, " bytes, header + data of shape ", shape_str(h.shape),
                         " ", dtype_name(h.dtype), " need ", h.data_offset + h.data_bytes);
  return h;
}

void normalize_bools(Tensor& t) {
  if (t.dtype() != DType::kBool) return;
  uint8_t* p = static_cast<uint8_t*>(t.raw_mut());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
}

// Fills a string tensor from '<U<width>' data: UTF-32LE code points, NUL-padded.
Status fill_strings(Tensor& t, const uint8_t* data, size_t width, std::string_view name) {
  std::vector<uint32_t> cps(width);
  auto* out = t.mut_data<std::string>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint8_t* e = data + static_cast<size_t>(i) * width * 4;
    size_t n = 0;
    for (size_t k = 0; k < width; ++k) {
      cps[k] = uint32_t(e[4 * k]) | uint32_t(e[4 * k + 1]) << 8 | uint32_t(e[4 * k + 2]) << 16 |
               uint32_t(e[4 * k + 3]) << 24;
      if (cps[k] != 0) n = k + 1;  // numpy strips trailing NULs only
    }
    if (!encode_utf8(cps.data(), n, &out[i]))
      return invalid_model(name, ": element ", i, " holds an invalid code point");
  }
  return ok_status();
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

Expected<Tensor> parse_npy(const uint8_t* data, size_t size, std::string_view name) {
  TSR_ASSIGN_OR_RETURN(NpyHeader h, parse_header(data, size, size, name));
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(h.dtype, h.shape));
  if (h.dtype == DType::kString) {
    TSR_RETURN_IF_ERROR(fill_strings(t, data + h.data_offset, h.str_width, name));
    return t;
  }
  if (h.data_bytes) std::memcpy(t.raw_mut(), data + h.data_offset, h.data_bytes);
  normalize_bools(t);
  return t;
}

Expected<Tensor> read_npy_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return not_found(path, ": cannot open file");
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return invalid_argument(path, ": cannot seek (not a regular file?)");
  const long end = std::ftell(f.get());
  if (end < 0) return invalid_argument(path, ": cannot determine the file size");
  const size_t file_size = static_cast<size_t>(end);
  std::rewind(f.get());
  // The preamble and header never exceed 12 + kMaxNpyHeaderBytes bytes.
  std::vector<uint8_t> prefix(std::min(file_size, 12 + kMaxNpyHeaderBytes));
  if (std::fread(prefix.data(), 1, prefix.size(), f.get()) != prefix.size())
    return invalid_model(path, ": read error");
  TSR_ASSIGN_OR_RETURN(NpyHeader h, parse_header(prefix.data(), prefix.size(), file_size, path));
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(h.dtype, h.shape));
  if (std::fseek(f.get(), static_cast<long>(h.data_offset), SEEK_SET) != 0)
    return invalid_model(path, ": cannot seek to the data");
  if (h.dtype == DType::kString) {
    std::vector<uint8_t> raw(h.data_bytes);
    if (h.data_bytes && std::fread(raw.data(), 1, h.data_bytes, f.get()) != h.data_bytes)
      return invalid_model(path, ": truncated data");
    TSR_RETURN_IF_ERROR(fill_strings(t, raw.data(), h.str_width, path));
    return t;
  }
  if (h.data_bytes && std::fread(t.raw_mut(), 1, h.data_bytes, f.get()) != h.data_bytes)
    return invalid_model(path, ": truncated data");
  normalize_bools(t);
  return t;
}

Expected<std::vector<uint8_t>> serialize_npy(const Tensor& tensor) {
  if (!tensor.defined()) return invalid_argument("cannot save an undefined tensor as .npy");
  if (tensor.kind() != ValueKind::kTensor)
    return unsupported("cannot save a ", value_kind_name(tensor.kind()), " value as .npy (tensors only)");
  // Strings: numpy's fixed-width unicode ('<U<n>', UTF-32LE, NUL-padded to the longest element).
  std::vector<std::vector<uint32_t>> cps;
  size_t width = 1;
  if (tensor.dtype() == DType::kString) {
    cps.resize(static_cast<size_t>(tensor.numel()));
    const auto* strs = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      if (!decode_utf8(strs[i], &cps[i]))
        return invalid_argument("string element ", i, " is not valid UTF-8; .npy unicode needs UTF-8 text");
      width = std::max(width, cps[i].size());
    }
  }
  const std::string descr = tensor.dtype() == DType::kString ? str_cat("<U", width) : descr_of(tensor.dtype());
  if (descr.empty())
    return unsupported("dtype ", dtype_name(tensor.dtype()), " has no .npy representation",
                       tensor.dtype() == DType::kBF16 ? " (convert bf16 to f32 first)" : "");
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i)
    shape += str_cat(i ? ", " : "", tensor.shape()[i]);
  if (tensor.shape().size() == 1) shape += ",";
  shape += ")";
  std::string header = str_cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces so that preamble + header (ending in '\n') is a multiple of 64.
  size_t preamble = 10;
  if ((header.size() + 1 + preamble + 63) / 64 * 64 - preamble > 65535) preamble = 12;
  const size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  header.append(total - preamble - header.size() - 1, ' ');
  header.push_back('\n');
  const size_t hl = header.size();
  std::vector<uint8_t> out;
  out.reserve(total + tensor.nbytes());
  out.insert(out.end(), kMagic, kMagic + kMagicLen);
  out.push_back(preamble == 10 ? 1 : 2);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(hl & 0xff));
  out.push_back(static_cast<uint8_t>((hl >> 8) & 0xff));
  if (preamble == 12) {
    out.push_back(static_cast<uint8_t>((hl >> 16) & 0xff));
    out.push_back(static_cast<uint8_t>((hl >> 24) & 0xff));
  }
  out.insert(out.end(), header.begin(), header.end());
  if (tensor.dtype() == DType::kString) {
    for (const auto& e : cps) {
      for (size_t k = 0; k < width; ++k) {
        const uint32_t c = k < e.size() ? e[k] : 0;
        for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(c >> (8 * b)));
      }
    }
    return out;
  }
  const uint8_t* p = static_cast<const uint8_t*>(tensor.raw());
  out.insert(out.end(), p, p + tensor.nbytes());
  return out;
}

Status write_npy_file(const Tensor& tensor, const std::string& path) {
  TSR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, serialize_npy(tensor));
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  if (!f) return not_found(path, ": cannot create file");
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    return resource_error(path, ": write failed");
  if (std::fflush(f.get()) != 0) return resource_error(path, ": write failed");
  return ok_status();
}

}  // namespace tsr::io
