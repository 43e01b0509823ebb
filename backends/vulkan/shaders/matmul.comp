#version 450
// Batched Y[b] = alpha * A[b] x B[b] + beta * C (C broadcast to [M, N]); 16x16 tiles in shared
// memory. Element (m, k) of A[b] is a[b * a_bs + m * a_rs + k * a_cs] (transposes are strides).
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint M; uint N; uint K; uint has_c;
  uint a_bs; uint a_rs; uint a_cs;
  uint b_bs; uint b_rs; uint b_cs;
  uint c_rs; uint c_cs;
  float alpha; float beta;
} p;

shared float ta[16][17];
shared float tb[16][17];

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint col = gl_WorkGroupID.x * 16u + tx, row = gl_WorkGroupID.y * 16u + ty, batch = gl_WorkGroupID.z;
  uint abase = batch * p.a_bs, bbase = batch * p.b_bs;
  float acc = 0.0;
  for (uint k0 = 0u; k0 < p.K; k0 += 16u) {
    uint ka = k0 + tx, kb = k0 + ty;
    ta[ty][tx] = (row < p.M && ka < p.K) ? a[abase + row * p.a_rs + ka * p.a_cs] : 0.0;
    tb[ty][tx] = (kb < p.K && col < p.N) ? b[bbase + kb * p.b_rs + col * p.b_cs] : 0.0;
    barrier();
    for (uint k = 0u; k < 16u; ++k) acc += ta[ty][k] * tb[k][tx];
    barrier();
  }
  if (row < p.M && col < p.N) {
    float r = p.alpha * acc;
    if (p.has_c != 0u) r += p.beta * c[row * p.c_rs + col * p.c_cs];
    y[(batch * p.M + row) * p.N + col] = r;
  }
}
