#version 450
// Reduction over the dims set in `mask` of a rank <= 6 input (keepdims layout of the output is
// the kept dims in order). ops: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 sum of squares, 6 L1,
// 7 L2, 8 log-sum, 9 log-sum-exp.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n_out; uint op; uint rank; uint mask; uint shape[6]; } p;

void main() {
  uint o = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (o >= p.n_out) return;
  uint stride[6];
  uint s = 1u, count = 1u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    stride[d] = s;
    s *= p.shape[d];
    if ((p.mask >> uint(d) & 1u) != 0u) count *= p.shape[d];
  }
  uint base = 0u, rem = o;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    if ((p.mask >> uint(d) & 1u) != 0u) continue;
    base += (rem % p.shape[d]) * stride[d];
    rem /= p.shape[d];
  }
  float m = -3.402823466e38;
  if (p.op == 9u) {
    for (uint j = 0u; j < count; ++j) {
      uint off = base, r2 = j;
      for (int d = int(p.rank) - 1; d >= 0; --d) {
        if ((p.mask >> uint(d) & 1u) == 0u) continue;
        off += (r2 % p.shape[d]) * stride[d];
        r2 /= p.shape[d];
      }
      m = max(m, x[off]);
    }
  }
  float acc = p.op == 2u ? -3.402823466e38 : (p.op == 3u ? 3.402823466e38 : (p.op == 4u ? 1.0 : 0.0));
  for (uint j = 0u; j < count; ++j) {
    uint off = base, r2 = j;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      if ((p.mask >> uint(d) & 1u) == 0u) continue;
      off += (r2 % p.shape[d]) * stride[d];
      r2 /= p.shape[d];
    }
    float v = x[off];
    switch (p.op) {
      case 2u: acc = max(acc, v); break;
      case 3u: acc = min(acc, v); break;
      case 4u: acc *= v; break;
      case 5u: case 7u: acc += v * v; break;
      case 6u: acc += abs(v); break;
      case 9u: acc += exp(v - m); break;
      default: acc += v; break;
    }
  }
  if (p.op == 1u) acc /= float(count);
  if (p.op == 7u) acc = sqrt(acc);
  if (p.op == 8u) acc = log(acc);
  if (p.op == 9u) acc = log(acc) + m;
  y[o] = acc;
}
