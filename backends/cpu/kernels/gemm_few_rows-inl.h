// The unpacked few-rows (and few-columns) paths of the blocked SGEMM (sgemm_impl in gemm.cpp):
// products where packing A or B would cost about as much as the product itself. Textually
// included by gemm.cpp inside its per-target namespace, after gemm_tile_split-inl.h (no include
// guard: foreach_target includes gemm.cpp, and so this file, once per SIMD target); it uses
// gemm.cpp's constants (kMR, kKC, kNV, kMaxV, kSmallM, unpacked_split_pays), tiles (tile_kernel,
// kTiles), packing routines and per-thread buffers. Not compiled for HWY_SCALAR, nor called by
// the size-first kernel set (kSizeFirstKernels: the minimal runtimes keep the blocked path alone).

#if HWY_TARGET != HWY_SCALAR

// C[r][j] = alpha * dot(A row r, B row j) + beta * C[r][j] for R rows of A and J rows of B, both
// K-contiguous (op(B) = B^T: Linear layers' weights; op(B) with few columns, transposed first).
// R x J accumulators, R + J loads per R * J FMAs; the K tail through masked loads.
template <size_t R, size_t J>
HWY_NOINLINE void dot_tile(int64_t k, const float* HWY_RESTRICT a, int64_t lda, const float* HWY_RESTRICT b,
                           int64_t ldb, float* HWY_RESTRICT c, int64_t ldc, float alpha, float beta) {
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  VF acc[R][J];
  unroll<R>([&](auto r) { unroll<J>([&](auto j) { acc[r][j] = hn::Zero(d); }); });
  int64_t p = 0;
  for (; p + nl <= k; p += nl) {
    VF bv[J];
    unroll<J>([&](auto j) { bv[j] = hn::LoadU(d, b + j * ldb + p); });
    unroll<R>([&](auto r) {
      const VF av = hn::LoadU(d, a + r * lda + p);
      unroll<J>([&](auto j) { acc[r][j] = hn::MulAdd(av, bv[j], acc[r][j]); });
    });
  }
  if (p < k) {
    const size_t tail = static_cast<size_t>(k - p);
    VF bv[J];
    unroll<J>([&](auto j) { bv[j] = load_first(d, b + j * ldb + p, tail); });
    unroll<R>([&](auto r) {
      const VF av = load_first(d, a + r * lda + p, tail);
      unroll<J>([&](auto j) { acc[r][j] = hn::MulAdd(av, bv[j], acc[r][j]); });
    });
  }
  unroll<R>([&](auto r) {
    unroll<J>([&](auto j) {
      const float s = alpha * hn::GetLane(hn::SumOfLanes(d, acc[r][j]));
      float& dst = c[r * ldc + j];
      dst = beta == 0.0f ? s : s + beta * dst;
    });
  });
}

using DotFn = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t, float, float);
constexpr int64_t kDotR = 4, kDotJ = 4;
template <size_t J, size_t... I>
constexpr std::array<DotFn, sizeof...(I)> make_dots(std::index_sequence<I...>) {
  return {&dot_tile<I + 1, J>...};
}
template <size_t... J>
constexpr std::array<std::array<DotFn, kDotR>, sizeof...(J)> make_dot_table(std::index_sequence<J...>) {
  return {make_dots<J + 1>(std::make_index_sequence<kDotR>{})...};
}
constexpr auto kDots = make_dot_table(std::make_index_sequence<kDotJ>{});  // kDots[j - 1][r - 1]

// C (m x n) from K-contiguous rows of A (m x k, lda) and of B^T (n x k, ldb): dot-product tiles,
// columns [j0, j1) only. Column blocks of kDotCols rows of B stay in L2 while every group of rows
// of A passes over them.
void dot_gemm(int64_t m, int64_t j0, int64_t j1, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
              int64_t ldb, float beta, float* c, int64_t ldc) {
  constexpr int64_t kDotCols = 64;
  for (int64_t jb = j0; jb < j1; jb += kDotCols) {
    const int64_t je = std::min(j1, jb + kDotCols);
    for (int64_t i = 0; i < m; i += kDotR) {
      const int64_t rows = std::min(kDotR, m - i);
      for (int64_t j = jb; j < je; j += kDotJ) {
        const int64_t cols = std::min(kDotJ, je - j);
        kDots[static_cast<size_t>(cols - 1)][static_cast<size_t>(rows - 1)](k, a + i * lda, lda, b + j * ldb, ldb,
                                                                           c + i * ldc + j, ldc, alpha, beta);
      }
    }
  }
}

// op(A) (m x k) as rows of K contiguous floats: `a` itself when not transposed, else a copy in the
// calling thread's `buf`.
const float* rows_of_a(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, std::vector<float>& buf,
                       int64_t* ld) {
  if (!trans_a) {
    *ld = lda;
    return a;
  }
  if (buf.size() < static_cast<size_t>(m * k)) buf.resize(static_cast<size_t>(m * k));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t i = 0; i < m; ++i) buf[static_cast<size_t>(i * k + p)] = a[p * lda + i];
  *ld = k;
  return buf.data();
}

// C = alpha * op(A) op(B) + beta * C (m x n) by dot products of K-contiguous rows, for few rows
// of C with B^T given (`few_rows_bt`: m <= kSmallM, trans_b) or else few columns (n <= 8, A not
// transposed). `pool`: null, or a pool of more than one thread to split the columns (few rows)
// or rows (few columns) over.
void sgemm_dot_rows(bool few_rows_bt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                    ThreadPool* pool) {
  const bool threaded = pool != nullptr;
  // Dot products of K-contiguous rows: few rows of C with B^T given (decode steps through
  // Linear layers: B is read once, in place), or few columns of C (strided 1-D convs,
  // matrix-vector with the vector on the right; B transposed first, packing A would cost as
  // much as the product).
  const float* bt = b;
  int64_t ldbt = ldb;
  std::vector<float> large_bt;
  if (!trans_b) {
    // The blocked path's B buffer is free here (this path returns before it); it was sized for
    // the largest panel by sgemm_prepare_thread, so only an unusually long K allocates.
    float* bt_buf = nullptr;
    if (static_cast<size_t>(n * k) <= kMaxPanelFloats) {
      bt_buf = thread_b_buffer(kMaxPanelFloats);
    } else {
      large_bt.resize(static_cast<size_t>(n * k));
      bt_buf = large_bt.data();
    }
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) bt_buf[j * k + p] = b[p * ldb + j];
    bt = bt_buf;
    ldbt = k;
  }
  int64_t ldar = 0;
  thread_local std::vector<float> arows_buf;
  const float* ar = rows_of_a(trans_a, m, k, a, lda, arows_buf, &ldar);
  if (few_rows_bt) {
    const int64_t chunk = 64, chunks = (n + chunk - 1) / chunk;
    auto run = [&](int64_t c0, int64_t c1) {
      dot_gemm(m, c0 * chunk, std::min(n, c1 * chunk), k, alpha, ar, ldar, bt, ldbt, beta, c, ldc);
    };
    if (threaded && chunks > 1 && unpacked_split_pays(m, n, k)) pool->parallel_for(chunks, 1, run);
    else run(0, chunks);
  } else {
    constexpr int64_t kRows = 16;
    const int64_t chunks = (m + kRows - 1) / kRows;
    auto run = [&](int64_t c0, int64_t c1) {
      const int64_t i0 = c0 * kRows, i1 = std::min(m, c1 * kRows);
      dot_gemm(i1 - i0, 0, n, k, alpha, ar + i0 * ldar, ldar, bt, ldbt, beta, c + i0 * ldc, ldc);
    };
    if (threaded && chunks > 1 && unpacked_split_pays(m, n, k)) pool->parallel_for(chunks, 1, run);
    else run(0, chunks);
  }
}

// C = alpha * op(A) B + beta * C (m x n) for few rows (m <= kSmallM) with B row-major (not
// transposed), read in place. `pool`: null, or a pool of more than one thread to split the
// column strips over.
void sgemm_direct_strips(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                         const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  const bool threaded = pool != nullptr;
  const int64_t nthreads = threaded ? pool->num_threads() : 1;
  const TileArgs ab{alpha, beta};
  // Few rows, B row-major: B's rows are read in place by strips of up to 4 vectors, A (m x k,
  // small) packed once; rows split evenly into at most kMR per tile.
  const int64_t tiles = (m + kMR - 1) / kMR;
  const int64_t rows = (m + tiles - 1) / tiles;  // every tile but the last has `rows` rows
  const int64_t v = direct_vectors(rows);
  const int64_t nl = static_cast<int64_t>(hn::Lanes(DF()));
  const int64_t sw = v * nl;
  // K blocks small enough that a block of B's rows (kcs x N) stays in L2 while the strips pass
  // over it: with rows 16 KiB apart a strip reads one or two lines per row, and the next strip
  // the lines beside them (4 x 4096 x 4096 on AVX2 ran at a third of OpenBLAS with 256-row blocks).
  const int64_t kcs = std::clamp<int64_t>((int64_t{1} << 18) / n, 16, kKC);
  std::vector<float>& abuf = thread_a_buffer();
  const int64_t kblocks = (k + kcs - 1) / kcs;
  const size_t a_need = static_cast<size_t>(tiles * kMR * kblocks * kcs);
  if (abuf.size() < a_need) abuf.resize(a_need);
  // Packed per (K block, tile): tile t's rows in a kc x kMR panel at ((pb * tiles) + t) * kMR * kKC.
  for (int64_t pb = 0; pb < kblocks; ++pb)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t i0 = t * rows;
      pack_a(trans_a, a, lda, i0, std::min(rows, m - i0), pb * kcs, std::min(kcs, k - pb * kcs),
             abuf.data() + (pb * tiles + t) * kMR * kcs);
    }
  const int64_t strips = (n + sw - 1) / sw;
  auto run = [&](int64_t s0, int64_t s1) {
    float* const edge = thread_strip_buffer();
    // K blocks outside the strips: each block of B's rows is read left to right, whole rows
    // at a time (a strip at a time down all of K would jump a row of B per 128 bytes read,
    // which the prefetchers do not follow: 1.6 GB/s for 16 x 4096 x 4096).
    for (int64_t pb = 0; pb < kblocks; ++pb) {
      const int64_t p0 = pb * kcs, kc = std::min(kcs, k - p0);
      // Columns [j, j + cols) through tiles of `w` vectors, B's rows at bp, ldbp apart.
      auto tiles_at = [&](int64_t w, const float* bp, int64_t ldbp, int64_t j, int64_t cols) {
        for (int64_t t = 0; t < tiles; ++t) {
          const int64_t i0 = t * rows, mr = std::min(rows, m - i0);
          const TileFn tile =
              w > kMaxV ? &tile_kernel<1, kRowV> : kTiles[static_cast<size_t>(w - 1)][static_cast<size_t>(mr - 1)];
          tile(kc, abuf.data() + (pb * tiles + t) * kMR * kcs, bp, ldbp, c + i0 * ldc + j, ldc, cols, &ab, pb == 0, 0);
        }
      };
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t j = s * sw, nr = std::min(sw, n - j);
        if (nr == sw) {
          // Several row tiles reread the strip: a copy, since B's rows are often a power of two
          // apart (4096 floats) and a strip read in place then maps to a few cache sets and is
          // refetched from L3 by every tile (16 x 4096 x 4096 ran at 16 GFLOP/s in place).
          if (tiles > 1) {
            pack_panel(false, b, ldb, p0, kc, j, nr, sw, edge);
            tiles_at(v, edge, sw, j, nr);
          } else {
            tiles_at(v, b + p0 * ldb + j, ldb, j, nr);
          }
          continue;
        }
        // The last strip: whole vectors in place, narrower tiles; the last columns (less than a
        // vector) through a zero-padded copy, one vector wide (no read past B's rows).
        int64_t q = 0;
        while (nr - q >= nl) {
          const int64_t w = std::min({v, kMaxV, (nr - q) / nl});
          tiles_at(w, b + p0 * ldb + j + q, ldb, j + q, w * nl);
          q += w * nl;
        }
        if (q < nr) {
          pack_panel(false, b, ldb, p0, kc, j + q, nr - q, nl, edge);
          tiles_at(1, edge, nl, j + q, nr - q);
        }
      }
    }
  };
  if (threaded && strips > 1 && unpacked_split_pays(m, n, k))
    pool->parallel_for(strips, std::max<int64_t>(1, strips / (4 * nthreads)), run);
  else run(0, strips);
}

#if HWY_TARGET == HWY_WASM
// C (1 x n) = alpha * op(A) (1 x k) B (k x n, row-major, rows ldb apart) + beta * C, as row
// updates: C += (alpha a[p]) B[p, :] for four rows of B at a time, each row read contiguously
// (four streams). A decode step's GEMV in tessera-web: the strips of sgemm_direct_strips read
// 64 bytes per row of B across a K block and were 1.45x slower with B from memory (512 x 8000,
// node 20: 0.95 against 0.65 ms); the 32 KiB of C per 8000 columns stays in L1.
void sgemv_row_updates(bool trans_a, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float beta, float* c) {
  const DF d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  if (beta == 0.0f) std::fill(c, c + n, 0.0f);
  else if (beta != 1.0f)
    for (int64_t j = 0; j < n; ++j) c[j] *= beta;
  const int64_t step = trans_a ? lda : 1;  // op(A)'s k elements: a row, or a column of A
  int64_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float a0 = alpha * a[p * step], a1 = alpha * a[(p + 1) * step];
    const float a2 = alpha * a[(p + 2) * step], a3 = alpha * a[(p + 3) * step];
    const VF v0 = hn::Set(d, a0), v1 = hn::Set(d, a1), v2 = hn::Set(d, a2), v3 = hn::Set(d, a3);
    const float* b0 = b + p * ldb;
    const float *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
    int64_t j = 0;
    for (; j + nl <= n; j += nl) {
      VF s = hn::LoadU(d, c + j);
      s = hn::MulAdd(v0, hn::LoadU(d, b0 + j), s);
      s = hn::MulAdd(v1, hn::LoadU(d, b1 + j), s);
      s = hn::MulAdd(v2, hn::LoadU(d, b2 + j), s);
      s = hn::MulAdd(v3, hn::LoadU(d, b3 + j), s);
      hn::StoreU(s, d, c + j);
    }
    for (; j < n; ++j) c[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
  }
  for (; p < k; ++p) {
    const float ap = alpha * a[p * step];
    const VF v = hn::Set(d, ap);
    const float* bp = b + p * ldb;
    int64_t j = 0;
    for (; j + nl <= n; j += nl) hn::StoreU(hn::MulAdd(v, hn::LoadU(d, bp + j), hn::LoadU(d, c + j)), d, c + j);
    for (; j < n; ++j) c[j] += ap * bp[j];
  }
}
#endif

#endif  // HWY_TARGET != HWY_SCALAR
