// qgemm's output stage (qgemm.h QgemmOutput): the exact i32 tile sums of qgemm_kernels-inl.h,
// corrected by the zero-point terms, through i32 / f32 / requantized stores, by row, by whole
// requantized panel in registers, and transposed (NCHW from pixel-major rows).
//
// Textually part of qgemm.cpp: included once per SIMD target inside its per-target anonymous
// namespace, after the tile geometry (kNR), `hn` and Path it uses; no other file includes it.
// Split out to keep qgemm.cpp (the driver: packing, task split, dispatch) readable.
// What the output stage needs besides the tile: per column fix (column terms + bias_i32), per
// column zb (null: all zero), the output.
struct Epilogue {
  const int32_t* colfix;
  const int32_t* zb;
  const QgemmOutput* o;
};

template <typename Q>
HWY_INLINE Q quantize(float v, float lo, float hi, float zp) {
  return static_cast<Q>(std::clamp(std::nearbyint(v) + zp, lo, hi));
}

// Writes one row's sums `s` (cols of them, from column j0) through the output stage to the
// contiguous elements at `out_at` (the element of column j0): plain loops over arrays, which the
// compiler vectorizes for this target.
template <typename Q>
void store_quant(const QgemmOutput& o, const int32_t* s, void* out_at, int64_t j0, int64_t cols, float uniform) {
  constexpr float lo = std::is_same_v<Q, uint8_t> ? 0.0f : -128.0f;
  constexpr float hi = std::is_same_v<Q, uint8_t> ? 255.0f : 127.0f;
  const float zp = static_cast<float>(o.out_zp);
  Q* out = static_cast<Q*>(out_at);
  const float* sc = o.scale_per_col && !o.per_row ? o.scale + j0 : nullptr;
  int64_t c = 0;
#if HWY_TARGET != HWY_SCALAR
  // The same arithmetic a vector at a time (requant-inl.h): GCC does not vectorize the scalar
  // loop's nearbyint/clamp/narrowing, and a conv's output stage over 100k+ pixels cost as much
  // as its GEMM.
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const auto n = static_cast<int64_t>(hn::Lanes(df));
  const auto vsc = hn::Set(df, uniform);
  const Requant<Q, decltype(df)> rq(df, o.out_zp);
  for (; c + n <= cols; c += n)
    rq.store(hn::Mul(hn::ConvertTo(df, hn::LoadU(di, s + c)), sc ? hn::LoadU(df, sc + c) : vsc), out + c);
#endif
  for (; c < cols; ++c) out[c] = quantize<Q>(static_cast<float>(s[c]) * (sc ? sc[c] : uniform), lo, hi, zp);
}

// Row `i` of the output: its scale when the output stage goes by row.
void store_row(const QgemmOutput& o, const int32_t* s, void* out_at, int64_t j0, int64_t cols, int64_t i) {
  if (o.kind == QgemmOutput::kInt32) {
    std::copy(s, s + cols, static_cast<int32_t*>(out_at));
  } else if (o.kind == QgemmOutput::kFloat) {
    float* out = static_cast<float*>(out_at);
    if (o.scale_per_col) {
      const float* sc = o.scale + j0;
      for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(s[c]) * sc[c];
    } else {
      const float sc = o.scale[0];
      for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(s[c]) * sc;
    }
    // A separate rounding after the product (not an FMA): equal to the unfused Mul -> Add graph.
    if (o.bias_f32) {
      const float* bf = o.bias_f32 + j0;
      for (int64_t c = 0; c < cols; ++c) out[c] += bf[c];
    }
  } else if (o.out_signed) {
    store_quant<int8_t>(o, s, out_at, j0, cols, o.scale[o.per_row ? i : 0]);
  } else {
    store_quant<uint8_t>(o, s, out_at, j0, cols, o.scale[o.per_row ? i : 0]);
  }
}

#if HWY_TARGET != HWY_SCALAR
// tile_rows for a whole panel (kNR columns) of a requantized output, as Q: the zero-point
// correction, the bias and the output stage of store_row/store_quant a vector at a time in
// registers (the pointwise convs of a MobileNet spent as long in the per-row loops and calls
// of the general path as in their tiles).
template <typename Q>
HWY_INLINE void quant_rows_full(const Epilogue& e, const int32_t* tile, const int32_t* rowsum, int64_t i0,
                                int64_t rows, int64_t j0, char* dst, int64_t dst_row_bytes) {
  const QgemmOutput& o = *e.o;
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const auto nl = static_cast<int64_t>(hn::Lanes(di));
  const Requant<Q, decltype(df)> rq(df, o.out_zp);
  const int32_t* fix = e.colfix + j0;
  const int32_t* zb = e.zb ? e.zb + j0 : nullptr;
  const float* sc = o.scale_per_col && !o.per_row ? o.scale + j0 : nullptr;
  // One zero point for the panel's columns (activations as B: a pointwise conv's input) makes
  // zb * rowsum a per-row term, added with the bias.
  const bool zb_uniform = zb && std::all_of(zb, zb + kNR, [&](int32_t z) { return z == zb[0]; });
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* t = tile + r * kNR;
    Q* out = reinterpret_cast<Q*>(dst + r * dst_row_bytes);
    uint32_t row_term = o.per_row && o.bias_i32 ? static_cast<uint32_t>(o.bias_i32[i0 + r]) : 0;
    if (zb_uniform) row_term -= static_cast<uint32_t>(zb[0]) * static_cast<uint32_t>(rowsum[r]);  // wraps, as tile_rows
    const auto vb = hn::Set(di, static_cast<int32_t>(row_term));
    const auto vrs = hn::Set(di, zb ? rowsum[r] : 0);
    const auto vsc = hn::Set(df, o.scale[o.per_row ? i0 + r : 0]);
    for (int64_t c = 0; c < kNR; c += nl) {
      auto acc = hn::Add(hn::Add(hn::LoadU(di, t + c), hn::LoadU(di, fix + c)), vb);  // wraps, as tile_rows
      if (zb && !zb_uniform) acc = hn::Sub(acc, hn::Mul(hn::LoadU(di, zb + c), vrs));
      rq.store(hn::Mul(hn::ConvertTo(df, acc), sc ? hn::LoadU(df, sc + c) : vsc), out + c);
    }
  }
}

// tile_rows for a whole panel of an f32 output (kFloat: DynamicQuantizeMatMul, MatMulIntegerToFloat)
// in registers: float(acc) * scale, then + bias as a separate rounding (the unfused Mul -> Add).
// A transformer's q8 MatMuls have K of a few hundred, so this stage is a large part of each tile;
// store_row's copy and loops cost half as much as the VNNI tile itself. GCC contracts a vector
// Mul and Add into an FMA under its default -ffp-contract=fast, which would round once where the
// unfused graph rounds twice: this function is compiled without contraction (clang contracts
// only within one source expression, which these calls are not).
TSR_QGEMM_NO_CONTRACT HWY_NOINLINE void float_rows_full(const Epilogue& e, const int32_t* tile, const int32_t* rowsum, int64_t rows, int64_t j0,
                                char* dst, int64_t dst_row_bytes) {
  const QgemmOutput& o = *e.o;
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const auto nl = static_cast<int64_t>(hn::Lanes(di));
  const int32_t* fix = e.colfix + j0;
  const int32_t* zb = e.zb ? e.zb + j0 : nullptr;
  const float* sc = o.scale_per_col ? o.scale + j0 : nullptr;
  const float* bias = o.bias_f32 ? o.bias_f32 + j0 : nullptr;
  const auto vsc = hn::Set(df, o.scale[0]);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* t = tile + r * kNR;
    float* out = reinterpret_cast<float*>(dst + r * dst_row_bytes);
    const auto vrs = hn::Set(di, zb ? rowsum[r] : 0);
    for (int64_t c = 0; c < kNR; c += nl) {
      auto acc = hn::Add(hn::LoadU(di, t + c), hn::LoadU(di, fix + c));  // wraps, as tile_rows
      if (zb) acc = hn::Sub(acc, hn::Mul(hn::LoadU(di, zb + c), vrs));
      auto v = hn::Mul(hn::ConvertTo(df, acc), sc ? hn::LoadU(df, sc + c) : vsc);
      if (bias) v = hn::Add(v, hn::LoadU(df, bias + c));
      hn::StoreU(v, df, out + c);
    }
  }
}
#endif

// Writes `rows` x `cols` of the tile (row stride kNR) through the zero-point correction and the
// output stage: row r's elements to the contiguous run at dst + r * dst_row_bytes.
HWY_INLINE void tile_rows(const Epilogue& e, const int32_t* tile, const int32_t* rowsum, int64_t i0, int64_t rows,
                          int64_t j0, int64_t cols, char* dst, int64_t dst_row_bytes) {
  const QgemmOutput& o = *e.o;
#if HWY_TARGET != HWY_SCALAR
  if (cols == kNR && kNR % static_cast<int64_t>(hn::Lanes(hn::ScalableTag<int32_t>())) == 0) {
    if (o.kind == QgemmOutput::kQuant) {
      if (o.out_signed) quant_rows_full<int8_t>(e, tile, rowsum, i0, rows, j0, dst, dst_row_bytes);
      else quant_rows_full<uint8_t>(e, tile, rowsum, i0, rows, j0, dst, dst_row_bytes);
      return;
    }
    if (o.kind == QgemmOutput::kFloat && !o.per_row) {
      float_rows_full(e, tile, rowsum, rows, j0, dst, dst_row_bytes);
      return;
    }
  }
#endif
  HWY_ALIGN int32_t s[kNR];
  const int32_t* fix = e.colfix + j0;
  const int32_t* zb = e.zb ? e.zb + j0 : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* t = tile + r * kNR;
    if (zb) {
      const uint32_t rs = static_cast<uint32_t>(rowsum[r]);
      for (int64_t c = 0; c < cols; ++c)
        s[c] = static_cast<int32_t>(static_cast<uint32_t>(t[c]) + static_cast<uint32_t>(fix[c]) -
                                    static_cast<uint32_t>(zb[c]) * rs);
    } else {
      for (int64_t c = 0; c < cols; ++c)
        s[c] = static_cast<int32_t>(static_cast<uint32_t>(t[c]) + static_cast<uint32_t>(fix[c]));
    }
    if (o.per_row && o.bias_i32) {
      const auto b = static_cast<uint32_t>(o.bias_i32[i0 + r]);
      for (int64_t c = 0; c < cols; ++c) s[c] = static_cast<int32_t>(static_cast<uint32_t>(s[c]) + b);
    }
    store_row(o, s, dst + r * dst_row_bytes, j0, cols, i0 + r);
  }
}

// Writes `rows` x `cols` of the tile as C[i0 + r][j0 + c]. A transposed output (col_stride != 1:
// a conv writing NCHW from pixel-major rows) goes through a row-major buffer and leaves column by
// column, so each column's rows are one run of consecutive elements (row_stride 1) instead of
// `rows` stores `col_stride` apart per column: a 1x1 conv over 112x112 pixels spent more time in
// those scattered stores than in its GEMM. (Requantized outputs with row_stride 1 take
// transpose_bytes_impl instead, a block of tiles at a time.)
HWY_NOINLINE void store_tile(const Epilogue& e, const int32_t* tile, const int32_t* rowsum, int64_t i0, int64_t rows,
                int64_t j0, int64_t cols) {
  const QgemmOutput& o = *e.o;
  const int64_t esize = o.kind == QgemmOutput::kQuant ? 1 : 4;
  char* const base = static_cast<char*>(o.out) + (i0 * o.row_stride + j0 * o.col_stride) * esize;
  if (o.col_stride == 1) {
    tile_rows(e, tile, rowsum, i0, rows, j0, cols, base, o.row_stride * esize);
    return;
  }
  HWY_ALIGN int32_t buf[kMaxMR * kNR];  // row r's elements at byte r * kNR * esize
  char* const bytes = reinterpret_cast<char*>(buf);
  tile_rows(e, tile, rowsum, i0, rows, j0, cols, bytes, kNR * esize);
  for (int64_t c = 0; c < cols; ++c) {
    char* col = base + c * o.col_stride * esize;
    if (esize == 4) {
      for (int64_t r = 0; r < rows; ++r) std::memcpy(col + r * o.row_stride * 4, bytes + (r * kNR + c) * 4, 4);
    } else {
      for (int64_t r = 0; r < rows; ++r) col[r * o.row_stride] = bytes[r * kNR + c];
    }
  }
}

// The fused activation (QgemmOutput::act) on rows x cols f32 outputs (row stride ld), out of line:
// inlined into qgemm_impl's task loop it slowed the tiles' loop of products without one.
HWY_NOINLINE void activate_block(const ops::ActivationSpec& act, float* y, int64_t rows, int64_t cols, int64_t ld) {
  apply_epilogue_rows(act, y, rows, cols, ld);
}
