#version 450
// Softmax / LogSoftmax over one axis: a row is (outer, inner) with `len` elements `inner` apart.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows; uint len; uint inner; uint log_softmax; } p;

void main() {
  uint r = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (r >= p.rows) return;
  uint base = (r / p.inner) * p.len * p.inner + r % p.inner;
  float m = -3.402823466e38;
  for (uint k = 0u; k < p.len; ++k) m = max(m, x[base + k * p.inner]);
  float s = 0.0;
  for (uint k = 0u; k < p.len; ++k) s += exp(x[base + k * p.inner] - m);
  for (uint k = 0u; k < p.len; ++k) {
    float v = x[base + k * p.inner] - m;
    y[base + k * p.inner] = p.log_softmax != 0u ? v - log(s) : exp(v) / s;
  }
}
