#version 450
// y[oo + sum(idx_d * os_d)] = x[io + sum(idx_d * is_d)] over the index space `shape` (rank <= 6):
// Transpose (permuted input strides), Slice (start offset, step strides), Concat/Split (an
// output window), Expand (zero strides), Pad's interior. Strides may be negative (negative steps).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; uint rank; int io; int oo; uint shape[6]; int is_[6]; int os[6]; } p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.n) return;
  uint rem = i;
  int xi = p.io, yi = p.oo;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    int c = int(rem % p.shape[d]);
    rem /= p.shape[d];
    xi += c * p.is_[d];
    yi += c * p.os[d];
  }
  y[yi] = x[xi];
}
