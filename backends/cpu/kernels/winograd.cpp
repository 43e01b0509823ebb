// Winograd F(4x4, 3x3) Conv (winograd.h). Compiled once per SIMD target (hwy/foreach_target.h);
// winograd_conv calls the best target this CPU supports. The tile transforms run L tiles at a
// time (L = vector lanes): the B^T pass works along a padded input row, the B pass and the
// output transform de/interleave the 4-column tile steps (LoadInterleaved4/StoreInterleaved4),
// so every transform is vectorized whatever the channel count.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/winograd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/winograd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/epilogue.h"
#include "backends/cpu/kernels/huge_pages.h"
#include "backends/cpu/kernels/scratch.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr int64_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// t = B^T p for six values p (a column or row of a 6x6 input tile), B^T of F(4x4, 3x3):
//   [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
HWY_INLINE void input_1d(DF d, VF p0, VF p1, VF p2, VF p3, VF p4, VF p5, VF& t0, VF& t1, VF& t2, VF& t3, VF& t4,
                         VF& t5) {
  const VF k2 = hn::Set(d, 2.0f), k4 = hn::Set(d, 4.0f), k5 = hn::Set(d, 5.0f);
  t0 = hn::Add(hn::NegMulAdd(k5, p2, hn::Mul(k4, p0)), p4);
  const VF s34 = hn::Add(p3, p4), d43 = hn::Sub(p4, p3);
  t1 = hn::NegMulAdd(k4, hn::Add(p1, p2), s34);
  t2 = hn::MulAdd(k4, hn::Sub(p1, p2), d43);
  const VF d31 = hn::Sub(p3, p1), d42 = hn::Sub(p4, p2);
  t3 = hn::MulAdd(k2, d31, d42);
  t4 = hn::NegMulAdd(k2, d31, d42);
  t5 = hn::Add(hn::NegMulAdd(k5, p3, hn::Mul(k4, p1)), p5);
}

// s = A^T m for six values m of a 6x6 product tile, A^T of F(4x4, 3x3):
//   [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
HWY_INLINE void output_1d(DF d, VF m0, VF m1, VF m2, VF m3, VF m4, VF m5, VF& s0, VF& s1, VF& s2, VF& s3) {
  const VF a12 = hn::Add(m1, m2), d12 = hn::Sub(m1, m2), a34 = hn::Add(m3, m4), d34 = hn::Sub(m3, m4);
  s0 = hn::Add(hn::Add(m0, a12), a34);
  s1 = hn::MulAdd(hn::Set(d, 2.0f), d34, d12);
  s2 = hn::MulAdd(hn::Set(d, 4.0f), a34, a12);
  s3 = hn::Add(hn::MulAdd(hn::Set(d, 8.0f), d34, d12), m5);
}

// The tiling of one conv. A "unit" is one row of tiles of one phase of one image: tiles_x tiles.
// A block of units is transformed as one long row: unit k's tiles are GEMM columns
// k * (tiles_x + 1) + tx, and its input columns start at 4 * k * (tiles_x + 1) of the row
// buffers. The one spare tile per unit holds the two columns that the unit's last tile reads
// beyond its 4 * tiles_x, so the transforms run whole vectors across unit boundaries.
struct Geom {
  int64_t c, m, h, wd, oh, ow, dil, pt, pl;
  int64_t hq, wq;  // dil > 1: extent of one phase plane of the input (ceil(h / dil), ceil(wd / dil))
  int64_t sh, sw;  // extent of one phase's output (ceil(oh / dil), ceil(ow / dil))
  int64_t tiles_y, tiles_x;
  int64_t unit_tiles() const { return tiles_x + 1; }
  int64_t units_per_image() const { return dil * dil * tiles_y; }
  // Image, phase (ry, rx) and tile row of unit u.
  void decode(int64_t u, int64_t* img, int64_t* ry, int64_t* rx, int64_t* ty) const {
    *img = u / units_per_image();
    const int64_t r = u % units_per_image(), phase = r / tiles_y;
    *ty = r % tiles_y;
    *ry = phase / dil;
    *rx = phase % dil;
  }
};

// Columns of the row buffers for `tiles` tile columns: the B pass reads 4 * tiles + 4 floats
// from the last vector's start, rounded to whole vectors.
int64_t row_width(int64_t tiles, int64_t nl) { return ((tiles + nl - 1) / nl * nl * 4 + 4 + nl - 1) / nl * nl; }

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// dil > 1: x split into its dil x dil phase planes, xph[img][c][qy][qx] = x[img][c][qy + dil * i]
// [qx + dil * j] (hq x wq, zero past the input), so that each phase's tile rows are contiguous.
void split_phases(const Geom& g, const float* x, int64_t plane0, int64_t plane1, float* xph) {
  const int64_t d = g.dil;
  for (int64_t pl = plane0; pl < plane1; ++pl) {
    const float* src = x + pl * g.h * g.wd;
    float* dst = xph + pl * d * d * g.hq * g.wq;
    for (int64_t qy = 0; qy < d; ++qy)
      for (int64_t qx = 0; qx < d; ++qx) {
        float* ph = dst + (qy * d + qx) * g.hq * g.wq;
        const int64_t nj = (g.wd - qx + d - 1) / d;  // columns inside the input
        for (int64_t i = 0; i < g.hq; ++i) {
          float* out = ph + i * g.wq;
          const int64_t iy = qy + d * i;
          if (iy >= g.h) {
            std::fill_n(out, g.wq, 0.0f);
            continue;
          }
          const float* row = src + iy * g.wd + qx;
          for (int64_t j = 0; j < nj; ++j) out[j] = row[d * j];
          std::fill(out + nj, out + g.wq, 0.0f);
        }
      }
  }
}

// V[xi][ci][col] for the units [u0, u1) and the input channels [c0, c1), row stride ldv (>= the
// block's columns rounded up to whole vectors). `xs` is x (dil == 1) or its phase planes
// (split_phases). `prow` and `tmp`: 6 rows of row_width(columns) floats each.
void input_tiles(const Geom& g, const float* xs, int64_t u0, int64_t u1, int64_t c0, int64_t c1, float* v,
                 int64_t ldv, float* prow, float* tmp) {
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t xi_stride = g.c * ldv, ncols = (u1 - u0) * g.unit_tiles(), pw = row_width(ncols, nl);
  const int64_t seg = 4 * g.unit_tiles();  // row columns per unit
  for (int64_t ci = c0; ci < c1; ++ci) {
    // The six input rows of each unit's tile row, padding made explicit (phase columns for dil > 1).
    for (int64_t u = u0; u < u1; ++u) {
      int64_t img, ry, rx, ty;
      g.decode(u, &img, &ry, &rx, &ty);
      // The tile rows' input: rows y0 + 4 * ty + i, columns j - left (j < seg) of a plane of
      // rows x cols, zero outside it: x's plane or, dilated, the phase plane holding input rows
      // ry - pt + dil * (...) and columns rx - pl + dil * (...).
      const float* plane;
      int64_t rows = g.h, cols = g.wd, y0 = ry - g.pt, left = g.pl;
      if (g.dil == 1) {
        plane = xs + (img * g.c + ci) * g.h * g.wd;
      } else {
        const int64_t ay = ry - g.pt, ax = rx - g.pl, qy = ay - g.dil * floor_div(ay, g.dil),
                      qx = ax - g.dil * floor_div(ax, g.dil);
        plane = xs + (((img * g.c + ci) * g.dil + qy) * g.dil + qx) * g.hq * g.wq;
        rows = g.hq;
        cols = g.wq;
        y0 = floor_div(ay, g.dil);
        left = -floor_div(ax, g.dil);
      }
      for (int64_t i = 0; i < 6; ++i) {
        const int64_t iy = y0 + 4 * ty + i;
        float* pr = prow + i * pw + (u - u0) * seg;
        if (iy < 0 || iy >= rows) {
          std::fill_n(pr, seg, 0.0f);
          continue;
        }
        const float* src = plane + iy * cols;
        const int64_t a = std::clamp<int64_t>(left, 0, seg), b = std::clamp(left + cols, a, seg);
        std::fill(pr, pr + a, 0.0f);
        std::memcpy(pr + a, src + (a - left), static_cast<size_t>(b - a) * sizeof(float));
        std::fill(pr + b, pr + seg, 0.0f);
      }
    }
    for (int64_t i = 0; i < 6; ++i) std::fill(prow + i * pw + (u1 - u0) * seg, prow + (i + 1) * pw, 0.0f);
    // B^T down the columns: tmp[a] = sum_i BT[a][i] * row i.
    for (int64_t j = 0; j < pw; j += nl) {
      VF t0, t1, t2, t3, t4, t5;
      input_1d(d, hn::LoadU(d, prow + j), hn::LoadU(d, prow + pw + j), hn::LoadU(d, prow + 2 * pw + j),
               hn::LoadU(d, prow + 3 * pw + j), hn::LoadU(d, prow + 4 * pw + j), hn::LoadU(d, prow + 5 * pw + j),
               t0, t1, t2, t3, t4, t5);
      hn::StoreU(t0, d, tmp + j);
      hn::StoreU(t1, d, tmp + pw + j);
      hn::StoreU(t2, d, tmp + 2 * pw + j);
      hn::StoreU(t3, d, tmp + 3 * pw + j);
      hn::StoreU(t4, d, tmp + 4 * pw + j);
      hn::StoreU(t5, d, tmp + 5 * pw + j);
    }
    // B along each tile's six columns (4 * col + 0..5), nl tiles per step.
    for (int64_t a = 0; a < 6; ++a) {
      const float* t = tmp + a * pw;
      float* dst = v + a * 6 * xi_stride + ci * ldv;
      for (int64_t col = 0; col < ncols; col += nl) {
        VF q0, q1, q2, q3, q4, q5, r2, r3;
        hn::LoadInterleaved4(d, t + 4 * col, q0, q1, q2, q3);
        hn::LoadInterleaved4(d, t + 4 * col + 4, q4, q5, r2, r3);
        VF o0, o1, o2, o3, o4, o5;
        input_1d(d, q0, q1, q2, q3, q4, q5, o0, o1, o2, o3, o4, o5);
        hn::StoreU(o0, d, dst + col);
        hn::StoreU(o1, d, dst + xi_stride + col);
        hn::StoreU(o2, d, dst + 2 * xi_stride + col);
        hn::StoreU(o3, d, dst + 3 * xi_stride + col);
        hn::StoreU(o4, d, dst + 4 * xi_stride + col);
        hn::StoreU(o5, d, dst + 5 * xi_stride + col);
      }
    }
  }
}

// y for the units [u0, u1) and the output channels [m0, m1) from the products P[xi][mo][col] (row
// stride ldp): Y = A^T P A per tile, + bias + z, then the activation, cropped to the output.
// `orow`: 4 rows of 4 * (columns rounded up to whole vectors) floats. Each unit has `unit_cols`
// columns of P: its tiles and the spare one, or (compact: move_spare_columns) its tiles alone;
// the tiles transform independently.
void output_tiles(const Geom& g, const float* p, int64_t ldp, int64_t u0, int64_t u1, int64_t m0, int64_t m1,
                  const float* bias, const float* z, const ops::ActivationSpec& act, float* y, float* orow,
                  int64_t unit_cols) {
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t xi_stride = g.m * ldp, ncols = (u1 - u0) * unit_cols;
  const int64_t owp = (ncols + nl - 1) / nl * nl * 4, seg = 4 * unit_cols;
  HWY_ALIGN float sbuf[24 * kMaxLanes];  // A^T along each row of the tile: [a][col] vectors
  HWY_ALIGN float obuf[16 * kMaxLanes];  // then down the columns: [row][col] vectors
  for (int64_t mo = m0; mo < m1; ++mo) {
    const float* src = p + mo * ldp;
    for (int64_t col = 0; col < ncols; col += nl) {
      for (int64_t a = 0; a < 6; ++a) {
        const float* s = src + a * 6 * xi_stride + col;
        VF s0, s1, s2, s3;
        output_1d(d, hn::LoadU(d, s), hn::LoadU(d, s + xi_stride), hn::LoadU(d, s + 2 * xi_stride),
                  hn::LoadU(d, s + 3 * xi_stride), hn::LoadU(d, s + 4 * xi_stride), hn::LoadU(d, s + 5 * xi_stride),
                  s0, s1, s2, s3);
        hn::Store(s0, d, sbuf + (a * 4 + 0) * nl);
        hn::Store(s1, d, sbuf + (a * 4 + 1) * nl);
        hn::Store(s2, d, sbuf + (a * 4 + 2) * nl);
        hn::Store(s3, d, sbuf + (a * 4 + 3) * nl);
      }
      for (int64_t k = 0; k < 4; ++k) {
        VF o0, o1, o2, o3;
        output_1d(d, hn::Load(d, sbuf + k * nl), hn::Load(d, sbuf + (4 + k) * nl), hn::Load(d, sbuf + (8 + k) * nl),
                  hn::Load(d, sbuf + (12 + k) * nl), hn::Load(d, sbuf + (16 + k) * nl),
                  hn::Load(d, sbuf + (20 + k) * nl), o0, o1, o2, o3);
        hn::Store(o0, d, obuf + k * nl);
        hn::Store(o1, d, obuf + (4 + k) * nl);
        hn::Store(o2, d, obuf + (8 + k) * nl);
        hn::Store(o3, d, obuf + (12 + k) * nl);
      }
      for (int64_t r = 0; r < 4; ++r)
        hn::StoreInterleaved4(hn::Load(d, obuf + (r * 4) * nl), hn::Load(d, obuf + (r * 4 + 1) * nl),
                              hn::Load(d, obuf + (r * 4 + 2) * nl), hn::Load(d, obuf + (r * 4 + 3) * nl), d,
                              orow + r * owp + 4 * col);
    }
    // Each unit's four output rows: bias, residual, activation, crop.
    const float bv = bias ? bias[mo] : 0.0f;
    for (int64_t u = u0; u < u1; ++u) {
      int64_t img, ry, rx, ty;
      g.decode(u, &img, &ry, &rx, &ty);
      const int64_t plane = (img * g.m + mo) * g.oh * g.ow;
      for (int64_t r = 0; r < 4; ++r) {
        const int64_t oy = ry + g.dil * (4 * ty + r);
        if (oy >= g.oh) break;
        float* row = orow + r * owp + (u - u0) * seg;
        float* yrow = y + plane + oy * g.ow;
        const float* zrow = z ? z + plane + oy * g.ow : nullptr;
        if (g.dil == 1) {
          if (zrow) {
            for (int64_t j = 0; j < g.ow; ++j) yrow[j] = row[j] + bv + zrow[j];
          } else {
            for (int64_t j = 0; j < g.ow; ++j) yrow[j] = row[j] + bv;
          }
          apply_epilogue(act, yrow, g.ow);
        } else {
          const int64_t nv = (g.ow - rx + g.dil - 1) / g.dil;  // phase columns inside the output
          for (int64_t j = 0; j < nv; ++j) row[j] += bv + (zrow ? zrow[rx + g.dil * j] : 0.0f);
          apply_epilogue(act, row, nv);
          for (int64_t j = 0; j < nv; ++j) yrow[rx + g.dil * j] = row[j];
        }
      }
    }
  }
}

// The GEMMs' columns for `units` units of tiles_x tiles: with each unit's spare tile (as the
// transforms lay them out), or without (compact: move_spare_columns) where that takes fewer whole
// vectors (ResNet's 14 x 14 maps: 4 units of 4 + 1 tiles, 20 columns in 2 vectors, 16 in one).
bool compact_pays(int64_t units, int64_t tiles_x, int64_t nl) {
  return (units * tiles_x + nl - 1) / nl < (units * (tiles_x + 1) + nl - 1) / nl;
}
int64_t gemm_columns(int64_t units, int64_t tiles_x, int64_t nl) {
  const int64_t cols = units * (compact_pays(units, tiles_x, nl) ? tiles_x : tiles_x + 1);
  return (cols + nl - 1) / nl * nl;
}

// Rows [r0, r1) of each of the 36 matrices in `buf` (xi_rows rows of ld floats each), in place:
// unit k's tiles_x columns move from k * (tiles_x + 1) to k * tiles_x, leaving out the spare
// tiles (after the input transform; the products and output_tiles then run on the tiles alone).
void move_spare_columns(float* buf, int64_t ld, int64_t xi_rows, int64_t r0, int64_t r1, int64_t units,
                        int64_t tiles_x) {
  const int64_t ut = tiles_x + 1;
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  const int64_t chunks = (units * ut + nl - 1) / nl;
  constexpr int64_t kMaxChunks = 64;
  if (nl <= 64 && chunks <= kMaxChunks) {
    // A vector at a time: its tiles' lanes compressed onto the end of the row's kept columns (in
    // place: they land at or before where they were read, and no further than that vector).
    // Element by element this took 9% of a 256-channel 14 x 14 conv.
    uint64_t keep[kMaxChunks];  // lane i of vector q: a tile of a unit, not its spare
    for (int64_t q = 0; q < chunks; ++q) {
      keep[q] = 0;
      for (int64_t i = 0; i < nl; ++i) {
        const int64_t col = q * nl + i;
        if (col < units * ut && col % ut != tiles_x) keep[q] |= uint64_t{1} << i;
      }
    }
    for (int64_t xi = 0; xi < 36; ++xi)
      for (int64_t r = r0; r < r1; ++r) {
        float* row = buf + (xi * xi_rows + r) * ld;
        size_t out = 0;
        for (int64_t q = 0; q < chunks; ++q)
          out += hn::CompressBlendedStore(hn::LoadU(d, row + q * nl),
                                          hn::LoadMaskBits(d, reinterpret_cast<const uint8_t*>(&keep[q])), d, row + out);
      }
    return;
  }
  for (int64_t xi = 0; xi < 36; ++xi)
    for (int64_t r = r0; r < r1; ++r) {
      float* row = buf + (xi * xi_rows + r) * ld;
      for (int64_t k = 1; k < units; ++k)
        for (int64_t t = 0; t < tiles_x; ++t) row[k * tiles_x + t] = row[k * ut + t];
    }
}

// Whether a conv of `cols` tile columns in all (the spare tile per unit included) is bound by
// its transformed weights at more than one thread: it fits one block, and its 36 weight matrices
// hold several times the floats of its tiles (36 * C * M against 36 * (C + M) * cols).
bool winograd_weights_bound(int64_t cols, int64_t want_tiles, int64_t c, int64_t m) {
  return cols <= 2 * want_tiles && 2 * cols * (c + m) <= c * m;
}

}  // namespace

Status winograd_conv_impl(exec::KernelContext& ctx, const WinogradWeights& u, const float* x, int64_t n,
                          const Window3& w, const float* bias, const float* z, const ops::ActivationSpec& act, float* y) {
  ThreadPool& pool = ctx.pool();
  const int64_t nl = static_cast<int64_t>(hn::Lanes(DF()));
  Geom g;
  g.c = u.c;
  g.m = u.m;
  g.h = w.in[1];
  g.wd = w.in[2];
  g.oh = w.out[1];
  g.ow = w.out[2];
  g.dil = w.d[1];
  g.pt = w.pb[1];
  g.pl = w.pb[2];
  g.sh = (g.oh + g.dil - 1) / g.dil;
  g.sw = (g.ow + g.dil - 1) / g.dil;
  g.tiles_y = (g.sh + 3) / 4;
  g.tiles_x = (g.sw + 3) / 4;
  g.hq = (g.h + g.dil - 1) / g.dil;
  g.wq = (g.wd + g.dil - 1) / g.dil;
  const int64_t units = n * g.units_per_image();
  // Tiles per block: about want_tiles, so that the transformed inputs and the products of a block
  // (36 * (C + M) floats per tile, ~2 MiB: L2 and L3) are still cached when the GEMMs and the
  // output transform read them back while the 36 weight matrices, streamed once per block, are
  // amortized over many tiles (2 MiB ran M-LSD and PP-OCRv4 det 5% faster than 1 MiB, 4 MiB no
  // faster), and at least 32 keep the GEMMs' columns busy. Among block sizes up
  // to twice that, the one that best fills the GEMMs' whole vectors of columns and, with
  // threads, spreads the units evenly over them; the nearest to want_tiles when about equal.
  const int64_t want_tiles = std::max<int64_t>(32, (int64_t{1} << 19) / (36 * (g.c + g.m)));
  const int threads = n * g.m * g.c * 9 * g.oh * g.ow < kMinParallelConvMacs ? 1 : pool.num_threads();
  // The GEMMs run whole vectors of columns (the transforms write whole vectors, so the padding
  // columns up to one are valid).
  const int64_t panel = nl;
  int64_t per_block = 1;
  double best = -1;
  for (int64_t pb = 1; pb <= std::max<int64_t>(1, 2 * want_tiles / g.unit_tiles()); ++pb) {
    const int64_t cols = pb * g.unit_tiles(), panels = (cols + panel - 1) / panel;
    const int64_t blocks = (units + pb - 1) / pb, rounds = (blocks + threads - 1) / threads;
    double fill = static_cast<double>(cols) / static_cast<double>(panels * panel);
    if (threads > 1) {
      // With threads, the fill of all blocks, the last (short) one's columns included: a GEMM
      // costs whole panels, so 4 units on 14 x 14 maps (5 columns each) went as blocks of 3 + 1
      // units, one panel each, but 3 : 1 transforms (ResNet-50's layer3: 7% of each conv lost
      // on 2 threads); 2 + 2 costs the same panels and splits evenly.
      const int64_t last_cols = (units - (blocks - 1) * pb) * g.unit_tiles();
      const int64_t all_panels = (blocks - 1) * panels + (last_cols + panel - 1) / panel;
      fill = static_cast<double>(units * g.unit_tiles()) / static_cast<double>(all_panels * panel);
    }
    const double balance = static_cast<double>(units) / static_cast<double>(threads * rounds * pb);
    const double score =
        fill * balance - 0.05 * std::abs(static_cast<double>(cols - want_tiles)) / static_cast<double>(want_tiles);
    if (score > best) best = score, per_block = pb;
  }
  // Bound by the weights (winograd_weights_bound): all units in one block, the weights streamed
  // once, on the tiles alone where the spare ones would take another vector (ResNet-50's layer3 on
  // one thread went as blocks of 3 + 1 units, 15 + 5 columns in two passes over 9.4 MB of weights;
  // one block of 16 columns: 0.82 -> 0.71 ms).
  if (winograd_weights_bound(units * g.unit_tiles(), want_tiles, g.c, g.m)) per_block = units;
  const int64_t nblocks = (units + per_block - 1) / per_block;
  const int64_t max_cols = per_block * g.unit_tiles();
  const int64_t ldv = (max_cols + nl - 1) / nl * nl;  // the transforms' whole-vector stores stay inside
  const int64_t pw = row_width(max_cols, nl);
  const float* xs = x;
  if (g.dil > 1) {
    // The phases of the input, read by every slot below.
    TSR_ASSIGN_OR_RETURN(auto phases,
                         Scratch<float>::make(ctx, static_cast<size_t>(n * g.c * g.dil * g.dil * g.hq * g.wq)));
    float* xph = phases.data();
    auto split = [&](int64_t p0, int64_t p1) { split_phases(g, x, p0, p1, xph); };
    if (threads > 1) pool.parallel_for(n * g.c, 1, split);
    else split(0, n * g.c);
    xs = xph;
  }
  // Per-slot scratch (parallel_for_slots): V, the products, two row buffers and the output rows,
  // each part starting on a 64-byte boundary.
  const auto part = [](int64_t floats) { return (floats + 15) / 16 * 16; };
  if (threads > 1 && winograd_weights_bound(units * g.unit_tiles(), want_tiles, g.c, g.m)) {
    // Few tiles for many channels (ResNet-50's layer3: 256 -> 256 on 14 x 14, 16 tiles): the 36
    // transformed weight matrices (36 * C * M floats: 9.4 MB there, streamed from DRAM) cost more
    // than the tiles, and with the tiles split over the threads each thread streamed all of them
    // (2-thread work 1.34x the 1-thread one). Here all units are one block; the threads split
    // its input channels in the input transform, the 36 products, then its output channels.
    const int64_t cols = units * g.unit_tiles(), ld = (cols + nl - 1) / nl * nl, rw = part(6 * row_width(cols, nl));
    TSR_ASSIGN_OR_RETURN(auto vp, Scratch<float>::make(ctx, static_cast<size_t>(36 * (g.c + g.m) * ld)));
    TSR_ASSIGN_OR_RETURN(auto rows, SlotScratch<float>::make(ctx, static_cast<size_t>(std::max(2 * rw, 16 * ld))));
    float* v = vp.data();
    float* p = v + 36 * g.c * ld;
    const bool compact = compact_pays(units, g.tiles_x, nl);
    const int64_t gcols = gemm_columns(units, g.tiles_x, nl);
    pool.parallel_for_slots(g.c, 8, [&](int slot, int64_t c0, int64_t c1) {
      input_tiles(g, xs, 0, units, c0, c1, v, ld, rows.slot(slot), rows.slot(slot) + rw);
      if (compact) move_spare_columns(v, ld, g.c, c0, c1, units, g.tiles_x);
    });
    pool.parallel_for(36, 1, [&](int64_t x0, int64_t x1) {
      for (int64_t xi = x0; xi < x1; ++xi)
        sgemm_direct_packed(u.m, gcols, u.c, u.matrix(xi), v + xi * g.c * ld, ld, nullptr, nullptr, 0,
                            p + xi * g.m * ld, ld);
    });
    pool.parallel_for_slots(g.m, 8, [&](int slot, int64_t m0, int64_t m1) {
      output_tiles(g, p, ld, 0, units, m0, m1, bias, z, act, y, rows.slot(slot), compact ? g.tiles_x : g.unit_tiles());
    });
    return ok_status();
  }
  const int64_t nv = part(36 * g.c * ldv), np = part(36 * g.m * ldv), nr = part(6 * pw), no = part(4 * 4 * ldv);
  const bool parallel = threads > 1 && nblocks > 1;
  TSR_ASSIGN_OR_RETURN(auto scratch, SlotScratch<float>::make(ctx, static_cast<size_t>(nv + np + 2 * nr + no), parallel));
  auto run = [&](int slot, int64_t b0, int64_t b1) {
    float* v = scratch.slot(slot);
    float* p = v + nv;
    float* pr = p + np;
    float* tm = pr + nr;
    float* orows = tm + nr;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t u0 = b * per_block, u1 = std::min(units, u0 + per_block);
      const bool compact = compact_pays(u1 - u0, g.tiles_x, nl);
      const int64_t gcols = gemm_columns(u1 - u0, g.tiles_x, nl);
      input_tiles(g, xs, u0, u1, 0, g.c, v, ldv, pr, tm);
      if (compact) move_spare_columns(v, ldv, g.c, 0, g.c, u1 - u0, g.tiles_x);
      for (int64_t xi = 0; xi < 36; ++xi) {
        const float* vx = v + xi * g.c * ldv;
        float* px = p + xi * g.m * ldv;
        sgemm_direct_packed(u.m, gcols, u.c, u.matrix(xi), vx, ldv, nullptr, nullptr, 0, px, ldv);
      }
      output_tiles(g, p, ldv, u0, u1, 0, g.m, bias, z, act, y, orows, compact ? g.tiles_x : g.unit_tiles());
    }
  };
  if (parallel) pool.parallel_for_slots(nblocks, 1, run);
  else run(0, 0, nblocks);
  return ok_status();
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(winograd_conv_impl);

bool winograd_window_applies(const Window3& w) {
  if (w.in[0] != 1 || w.k[0] != 1 || w.k[1] != 3 || w.k[2] != 3) return false;
  if (w.s[1] != 1 || w.s[2] != 1 || w.d[1] != w.d[2] || w.d[1] < 1) return false;
  const int64_t dil = w.d[1];
  return (w.out[1] + dil - 1) / dil >= 4 && (w.out[2] + dil - 1) / dil >= 4;
}

bool winograd_pays(const Window3& w, int64_t n) {
  const int64_t dil = w.d[1];
  const int64_t sh = (w.out[1] + dil - 1) / dil, sw = (w.out[2] + dil - 1) / dil;
  const int64_t cols = n * dil * dil * ((sh + 3) / 4) * ((sw + 3) / 4 + 1);
  return 36 * 4 * ((cols + 15) / 16 * 16) <= 3 * 9 * n * w.out[1] * w.out[2];
}

WinogradWeights winograd_prepare(const float* w, int64_t m, int64_t c) {
  // G of F(4x4, 3x3) (Lavin & Gray 2016, interpolation points 0, 1, -1, 2, -2 and infinity).
  static constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  WinogradWeights r;
  r.m = m;
  r.c = c;
  std::vector<float> u(static_cast<size_t>(36 * m * c));  // [36][m][c]
  for (int64_t o = 0; o < m; ++o)
    for (int64_t ci = 0; ci < c; ++ci) {
      const float* g = w + (o * c + ci) * 9;
      double t[6][3];  // G g
      for (int a = 0; a < 6; ++a)
        for (int k = 0; k < 3; ++k) t[a][k] = kG[a][0] * g[k] + kG[a][1] * g[3 + k] + kG[a][2] * g[6 + k];
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b)
          u[static_cast<size_t>(((a * 6 + b) * m + o) * c + ci)] =
              static_cast<float>(t[a][0] * kG[b][0] + t[a][1] * kG[b][1] + t[a][2] * kG[b][2]);
    }
  const size_t floats = static_cast<size_t>(36 * m * c);
  r.packed.reserve(floats);  // advised before the first write: huge pages fault in directly
  advise_huge_pages(r.packed.data(), floats * sizeof(float), false);
  r.packed.resize(floats);
  for (int64_t xi = 0; xi < 36; ++xi)
    sgemm_direct_pack_a_into(m, c, u.data() + xi * m * c, c, r.packed.data() + xi * m * c);
  advise_huge_pages(r.packed.data(), floats * sizeof(float));  // those that faulted in small
  return r;
}

Status winograd_conv(exec::KernelContext& ctx, const WinogradWeights& u, const float* x, int64_t n, const Window3& w,
                     const float* bias, const float* z, const ops::ActivationSpec& act, float* y) {
  return HWY_DYNAMIC_DISPATCH(winograd_conv_impl)(ctx, u, x, n, w, bias, z, act, y);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
