// The tile-split form of the blocked SGEMM (sgemm_impl in gemm.cpp), for products whose (M block,
// column chunk) tasks are too few to spread evenly over the threads. Textually included by
// gemm.cpp inside its per-target namespace (no include guard: foreach_target includes gemm.cpp,
// and so this file, once per SIMD target); it uses gemm.cpp's constants (kMR, kMC, kKC, kNR),
// packing routines and tiles.
//
// Why: with M = 512 and N = 49 (ResNet's 3x3 convs on 7x7 maps, im2col) the tasks were the two M
// blocks of kMC = 448 and 64 rows, so one thread did 7/8 of the work, and every K block (18 of
// them) was a fork/join of its own. Here all of op(B) is packed once (one pooled job, panels in
// parallel), then one job splits C into tiles of kMR rows by kNR columns that the threads claim
// in runs as they go; each thread walks all of K over its tiles, packing its own rows of A per K
// block (or reading sgemm_pack_a's blocks, or A in place for few columns).

// Whether sgemm_tile_split should take a product that the blocked path would split into `tasks`
// (M block, column chunk) tasks over `nthr` threads: few tasks (under 4 a thread, so whole tasks
// leave threads idle), enough tiles of C to share, all of op(B) within one N block and
// within the packed-B buffer. With one M block and panels to spare, the blocked path's own
// per-panel split is already even (transformer products with 197 or 128 rows keep it).
bool tile_split_pays(int64_t m, int64_t n, int64_t k, int64_t mblocks, int64_t tasks, int64_t nthr) {
  const int64_t npanels = (n + kNR - 1) / kNR, kblocks = (k + kKC - 1) / kKC;
  if (n > kNC || static_cast<size_t>(kblocks * kKC * npanels * kNR) > kMaxPanelFloats) return false;
  if ((m + kMR - 1) / kMR * npanels < 4 * nthr || tasks >= 4 * nthr) return false;
  return mblocks >= 2 || npanels < 4 * nthr;
}

// Whether a product with prepacked B (constant weights) takes sgemm_panel_split even where
// tile_split_pays: few rows (<= 64: conv_lanes' small planes) on a B of at least 2^15 floats
// (cold, from L3), with a panel or more for each thread and an even split or fewer than two
// panels a thread (at two threads 3 panels go 2 : 1). The tile split gives each thread whole rows
// of tiles across every panel, so each read all of B: at 2 threads EfficientNet-B0's 1152 -> 192
// projections on 7x7 (B 884 KB, 6 panels) did 50% more work than at one, MobileNetV3-small's
// 576 -> 96 ones (3 panels) 65% more, for a span of 0.83 of one thread's time.
bool panel_split_reads_b_once(int64_t m, int64_t n, int64_t k, int64_t nthr) {
  const int64_t npanels = (n + kNR - 1) / kNR;
  return m <= 64 && k * n >= (int64_t{1} << 15) && n <= kNC && npanels >= nthr &&
         (npanels % nthr == 0 || npanels < 2 * nthr);
}

// C = alpha * op(A) op(B) + beta * C (m x n, n <= kNC) with pool's threads splitting its tiles.
// `pre`: op(A) packed by sgemm_pack_a (then `a` is not read), else A packed per K block and rows,
// or read in place when `raw_a` (few columns, A row-major: see sgemm_impl). `pre_b` (may be null,
// else this target's layout): op(B) packed by sgemm_pack_b, used as is (then `b` is not read).
// `cin` (may be null), `ld_cin`: beta's C read from there instead of C (TileArgs::src).
void sgemm_tile_split(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                     int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool& pool,
                     const SgemmPackedA* pre, bool raw_a, const SgemmPackedB* pre_b, const float* cin, int64_t ld_cin) {
  const int64_t npanels = (n + kNR - 1) / kNR, kblocks = (k + kKC - 1) / kKC;
  const int64_t slice = kKC * npanels * kNR;  // the packed panels of one K block
  const int64_t mblocks = (m + kMC - 1) / kMC;
  // K block kb's panels at pb + kb * slice, each kc x kNR (pack_b's layout for that block). With
  // n <= kNC this is also sgemm_pack_b's layout (K block, then panel), so prepacked weights serve.
  const float* pb = pre_b ? pre_b->data.data() : nullptr;
  if (!pb) {
    float* const buf = thread_b_buffer(kMaxPanelFloats);
    pool.parallel_for(kblocks * npanels, 4, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t kb = q / npanels, jp = q % npanels, p0 = kb * kKC;
        pack_b(trans_b, b, ldb, p0, std::min(kKC, k - p0), 0, n, jp, jp + 1, buf + kb * slice);
      }
    });
    pb = buf;
  }
  const TileArgs ab{alpha, beta, c, cin, ld_cin};
  // Tiles of C, one micro-panel of kMR rows by one panel of kNR columns, row-major: a thread's
  // range of tiles covers consecutive rows (A packed once per row and K block) and evens out
  // where the rows alone would not (MobileNetV2's 96 output channels: 7 micro-panels).
  const int64_t rows = (m + kMR - 1) / kMR, tiles = rows * npanels;
  pool.parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
    std::vector<float>& abuf = thread_a_buffer();
    if (!pre && !raw_a && abuf.size() < static_cast<size_t>(kMR * kKC)) abuf.resize(static_cast<size_t>(kMR * kKC));
    for (int64_t kb = 0; kb < kblocks; ++kb) {
      const int64_t p0 = kb * kKC, kc = std::min(kKC, k - p0);
      const float* bk = pb + kb * slice;
      for (int64_t u = t0 / npanels; u * npanels < t1; ++u) {
        const int64_t i = u * kMR, mr = std::min(kMR, m - i);
        // This row's panels within the range.
        const int64_t jp0 = std::max(t0 - u * npanels, int64_t{0}), jp1 = std::min(t1 - u * npanels, npanels);
        const float* ap = nullptr;
        if (pre) {
          const int64_t ib = i / kMC;
          ap = pre->data.data() + (kb * mblocks + ib) * kMC * kKC + (i - ib * kMC) / kMR * kc * kMR;
        } else if (!raw_a) {
          pack_a(trans_a, a, lda, i, mr, p0, kc, abuf.data());
          ap = abuf.data();
        }
        for (int64_t jp = jp0; jp < jp1; ++jp) {
          const int64_t j = jp * kNR, nr = std::min(kNR, n - j);
#if HWY_TARGET != HWY_SCALAR
          // kSizeFirstKernels spelled out: raw_a is a parameter here, so the size-first builds
          // would otherwise keep every raw tile.
          if (!kSizeFirstKernels && raw_a) {
            kRawTiles[static_cast<size_t>(mr - 1)](kc, a + i * lda + p0, bk + jp * kc * kNR, kNR, c + i * ldc + j, ldc,
                                                  nr, &ab, kb == 0, lda);
            continue;
          }
#endif
          micro_kernel(kc, ap, bk + jp * kc * kNR, kNR, c + i * ldc + j, ldc, mr, nr, ab, kb == 0);
        }
      }
    }
  });
}

// C = alpha * op(A) op(B) + beta * C (m <= kMC rows, n <= kNC) with op(B) prepacked by
// sgemm_pack_b in this target's layout (`pre_b`): each thread takes one contiguous range of B's
// panels through all of K in one job. The blocked path forked and joined once per K block (18
// times for conv_lanes' K = 4608 on ResNet's 7x7 stage, 4 for a 1024-wide Linear), each thread
// packing the same rows of A; here each thread packs them per K block for itself. Every tile of
// C sums its K blocks in the same order as the blocked path (same results, whatever the threads).
// `cin` (may be null), `ld_cin`: beta's C read from there instead of C (TileArgs::src).
void sgemm_panel_split(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                       float beta, float* c, int64_t ldc, ThreadPool& pool, const SgemmPackedB& pre_b,
                       const float* cin, int64_t ld_cin) {
  const int64_t npanels = (n + kNR - 1) / kNR, kblocks = (k + kKC - 1) / kKC;
  const int64_t nthr = pool.num_threads();
  const TileArgs ab{alpha, beta, c, cin, ld_cin};
  pool.parallel_for(npanels, (npanels + nthr - 1) / nthr, [&](int64_t q0, int64_t q1) {
    std::vector<float>& abuf = thread_a_buffer();
    if (abuf.size() < static_cast<size_t>(kMC * kKC)) abuf.resize(static_cast<size_t>(kMC * kKC));
    for (int64_t kb = 0; kb < kblocks; ++kb) {
      const int64_t p0 = kb * kKC, kc = std::min(kKC, k - p0);
      const bool first = kb == 0;
      const float* pb = pre_b.data.data() + p0 * npanels * kNR;  // this K block's panels, kc x kNR each
      const float* ap = abuf.data();
      pack_a(trans_a, a, lda, 0, m, p0, kc, abuf.data());
      for (int64_t jp = q0; jp < q1; ++jp) {
        const int64_t j = jp * kNR, nr = std::min(kNR, n - j);
        const float* bp = pb + jp * kc * kNR;
        for (int64_t i = 0; i < m; i += kMR) {
#if HWY_TARGET != HWY_SCALAR
          if constexpr (!kSizeFirstKernels) {
            if (i == 0 && nr == kNR) {
              // Constant weights, mostly cold: the first row tile prefetches the next panel this
              // thread reads (after its range's last, its first of the next K block; the next in
              // memory is another thread's).
              const int64_t kc_next = std::min(kKC, k - p0 - kc);
              const int64_t ahead = jp + 1 < q1 || kb + 1 == kblocks ? 0 : (kc * (npanels - jp) + q0 * kc_next) * kNR;
              kNextBTiles[static_cast<size_t>(std::min(kMR, m) - 1)](kc, ap, bp, kNR, c + j, ldc, nr, &ab, first,
                                                                     ahead);
              continue;
            }
          }
#endif
          micro_kernel(kc, ap + (i / kMR) * kc * kMR, bp, kNR, c + i * ldc + j, ldc, std::min(kMR, m - i), nr, ab,
                       first);
        }
      }
    }
  });
}
