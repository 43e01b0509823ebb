#version 450
// Gather along one axis: y[o, j, i] = x[o, idx[j], i] (indices int32, negatives already wrapped
// and range-checked on the host).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer I { int idx[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; uint axis_len; uint n_idx; uint inner; } p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.n) return;
  uint in_ = i % p.inner, j = (i / p.inner) % p.n_idx, o = i / (p.inner * p.n_idx);
  y[i] = x[(o * p.axis_len + uint(idx[j])) * p.inner + in_];
}
