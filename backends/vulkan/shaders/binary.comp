#version 450
// y = a (op) b with numpy broadcasting: `shape` is the output's (rank <= 6, leading dims padded
// with 1), sa/sb the inputs' element strides (0 on broadcast dims).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; uint op; uint rank; uint pad; uint shape[6]; uint sa[6]; uint sb[6]; } p;

float pow_onnx(float x, float e) {
  if (e == 2.0) return x * x;
  if (e == 1.0) return x;
  if (e == 0.5) return sqrt(x);
  if (e == 3.0) return x * x * x;
  if (x < 0.0 && e == floor(e)) {
    float r = pow(-x, e);
    return mod(e, 2.0) == 1.0 ? -r : r;
  }
  return pow(x, e);
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.n) return;
  uint rem = i, ia = 0u, ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint c = rem % p.shape[d];
    rem /= p.shape[d];
    ia += c * p.sa[d];
    ib += c * p.sb[d];
  }
  float u = a[ia], v = b[ib], r = 0.0;
  switch (p.op) {
    case 0u: r = u + v; break;
    case 1u: r = u - v; break;
    case 2u: r = u * v; break;
    case 3u: r = u / v; break;
    case 4u: r = pow_onnx(u, v); break;
    case 5u: r = max(u, v); break;
    case 6u: r = min(u, v); break;
    case 7u: r = u < 0.0 ? u * v : u; break;
  }
  y[i] = r;
}
