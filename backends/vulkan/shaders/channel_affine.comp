#version 450
// y = x * s[c] + b[c] with c = (i / inner) % C: inference BatchNormalization with its
// statistics folded into s and b on the host.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float s[]; };
layout(std430, binding = 2) readonly buffer Bv { float b[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; uint C; uint inner; } p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.n) return;
  uint c = (i / p.inner) % p.C;
  y[i] = x[i] * s[c] + b[c];
}
