#include "tools/train/idx.h"

#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <memory>

namespace tsr::train {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads exactly n bytes; false on a short read.
bool read_exact(gzFile f, void* dst, size_t n) {
  auto* p = static_cast<unsigned char*>(dst);
  while (n > 0) {
    // gzread takes an unsigned count: read in bounded chunks.
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    const int got = gzread(f, p, chunk);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

Expected<DType> idx_dtype(unsigned type) {
  switch (type) {
    case 0x08: return DType::kU8;
    case 0x09: return DType::kI8;
    case 0x0B: return DType::kI16;
    case 0x0C: return DType::kI32;
    case 0x0D: return DType::kF32;
    case 0x0E: return DType::kF64;
  }
  return invalid_argument("unknown IDX element type 0x", std::to_string(type));
}

}  // namespace

Expected<Tensor> read_idx(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found(path, ": no such file");
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) return not_found(path, ": cannot open");
  unsigned char head[4];
  if (!read_exact(f.get(), head, 4)) return invalid_argument(path, ": shorter than the 4-byte IDX magic");
  if (head[0] != 0 || head[1] != 0) return invalid_argument(path, ": not an IDX file (magic does not start with 0x0000)");
  auto dt = idx_dtype(head[2]);
  if (!dt.ok()) return invalid_argument(path, ": ", dt.status().message());
  const unsigned rank = head[3];
  if (rank == 0 || rank > 8) return invalid_argument(path, ": IDX rank ", rank, " (expected 1..8)");
  Shape shape;
  for (unsigned d = 0; d < rank; ++d) {
    unsigned char b[4];
    if (!read_exact(f.get(), b, 4)) return invalid_argument(path, ": header ends inside dim ", d);
    shape.push_back((int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | int64_t{b[3]});
  }
  auto too_short = [&] {
    return invalid_argument(path, ": the data is shorter than the header's ", shape_str(shape), " ", dtype_name(*dt),
                            " elements");
  };
  // Refuse dims the file cannot hold before allocating for them (a 34-byte file declaring 6 GB
  // was found by tests/fuzz): a plain file holds exactly its remaining bytes; a gzip stream
  // inflates at most 1032-fold (deflate's best case, 258-byte matches coded in 2 bits).
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  const uint64_t header = 4 + 4 * uint64_t{rank};
  const uint64_t capacity = gzdirect(f.get()) ? (file_size > header ? file_size - header : 0) : file_size * 1032;
  uint64_t need = dtype_size(*dt);
  for (int64_t d : shape)
    if (d != 0 && need > capacity / static_cast<uint64_t>(d)) return too_short();
    else need *= static_cast<uint64_t>(d);
  if (ec || need > capacity) return too_short();
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(*dt, shape));
  if (!read_exact(f.get(), t.raw_mut(), t.nbytes())) return too_short();
  unsigned char extra;
  if (gzread(f.get(), &extra, 1) > 0)
    return invalid_argument(path, ": trailing bytes after the ", shape_str(shape), " elements");
  // IDX is big-endian; swap multi-byte elements in place.
  const size_t es = dtype_size(*dt);
  if (es > 1) {
    auto* p = static_cast<unsigned char*>(t.raw_mut());
    for (int64_t i = 0; i < t.numel(); ++i, p += es)
      for (size_t k = 0; k < es / 2; ++k) std::swap(p[k], p[es - 1 - k]);
  }
  return t;
}

namespace {

Expected<std::string> find_file(const std::string& dir, const std::string& stem) {
  const std::string plain = dir + "/" + stem;
  std::error_code ec;
  if (std::filesystem::is_regular_file(plain + ".gz", ec)) return plain + ".gz";
  if (std::filesystem::is_regular_file(plain, ec)) return plain;
  return not_found("no ", plain, " or ", plain, ".gz");
}

}  // namespace

Expected<Dataset> load_idx_dataset(const std::string& dir, const std::string& split) {
  TSR_ASSIGN_OR_RETURN(const std::string ipath, find_file(dir, split + "-images-idx3-ubyte"));
  TSR_ASSIGN_OR_RETURN(const std::string lpath, find_file(dir, split + "-labels-idx1-ubyte"));
  TSR_ASSIGN_OR_RETURN(Tensor images, read_idx(ipath));
  TSR_ASSIGN_OR_RETURN(Tensor labels, read_idx(lpath));
  if (images.dtype() != DType::kU8 || images.rank() != 3)
    return invalid_argument(ipath, ": expected u8 images [N, H, W], got ", dtype_name(images.dtype()), shape_str(images.shape()));
  if (labels.dtype() != DType::kU8 || labels.rank() != 1)
    return invalid_argument(lpath, ": expected u8 labels [N], got ", dtype_name(labels.dtype()), shape_str(labels.shape()));
  if (images.dim(0) != labels.dim(0))
    return invalid_argument(ipath, " has ", images.dim(0), " images but ", lpath, " has ", labels.dim(0), " labels");
  Dataset d;
  TSR_ASSIGN_OR_RETURN(d.images, Tensor::empty(DType::kF32, {images.dim(0), 1, images.dim(1), images.dim(2)}));
  const uint8_t* src = images.data<uint8_t>();
  float* dst = d.images.mut_data<float>();
  for (int64_t i = 0; i < images.numel(); ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;  // as torch's x / 255
  TSR_ASSIGN_OR_RETURN(d.labels, Tensor::empty(DType::kI64, {labels.dim(0)}));
  int64_t* lab = d.labels.mut_data<int64_t>();
  for (int64_t i = 0; i < labels.numel(); ++i) {
    lab[i] = labels.data<uint8_t>()[i];
    d.num_classes = std::max(d.num_classes, lab[i] + 1);
  }
  return d;
}

}  // namespace tsr::train
