#version 450
// y[i] = value (Pad's border, ConstantOfShape-like fills).
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; float value; } p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i < p.n) y[i] = p.value;
}
