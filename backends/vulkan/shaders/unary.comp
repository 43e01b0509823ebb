#version 450
// y = f(x) elementwise; op codes match backends/vulkan/kernels/elementwise.cpp (UnaryOp).
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; uint op; float a; float b; } p;

float erf_approx(float v) {
  // Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
  float s = sign(v), t = 1.0 / (1.0 + 0.3275911 * abs(v));
  float r = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-v * v);
  return s * r;
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.n) return;
  float v = x[i], r = v;
  switch (p.op) {
    case 0u: r = max(v, 0.0); break;
    case 1u: r = 1.0 / (1.0 + exp(-v)); break;
    case 2u: r = tanh(clamp(v, -15.0, 15.0)); break;
    case 3u: r = exp(v); break;
    case 4u: r = log(v); break;
    case 5u: r = sqrt(v); break;
    case 6u: r = abs(v); break;
    case 7u: r = -v; break;
    case 8u: r = 1.0 / v; break;
    case 9u: r = clamp(p.a * v + p.b, 0.0, 1.0); break;
    case 10u: r = v * clamp(v / 6.0 + 0.5, 0.0, 1.0); break;
    case 11u: r = v < 0.0 ? p.a * v : v; break;
    case 12u: r = min(max(v, p.a), p.b); break;
    case 13u: r = erf_approx(v); break;
    case 14u: r = floor(v); break;
    case 15u: r = ceil(v); break;
    case 16u: r = v > 15.0 ? v : log(1.0 + exp(v)); break;
    case 17u: r = v < 0.0 ? p.a * (exp(v) - 1.0) : v; break;
    case 18u: r = sin(v); break;
    case 19u: r = cos(v); break;
    case 20u: r = roundEven(v); break;
    case 21u: r = sign(v); break;
    case 22u: r = v * 0.5 * (1.0 + erf_approx(v * 0.70710678118654752)); break;
    case 23u: r = v / (1.0 + abs(v)); break;
  }
  y[i] = r;
}
