#version 450
// Direct 2-D convolution (NCHW, weights [M, C/group, KH, KW]), one output element per thread;
// 1-D convolutions run with H = KH = 1.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint N; uint C; uint H; uint W; uint M; uint OH; uint OW; uint KH; uint KW;
  uint sh; uint sw; uint dh; uint dw; int ph; int pw; uint group; uint has_bias;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  uint total = p.N * p.M * p.OH * p.OW;
  if (i >= total) return;
  uint ow = i % p.OW, oh = (i / p.OW) % p.OH, m = (i / (p.OW * p.OH)) % p.M, n = i / (p.OW * p.OH * p.M);
  uint cg = p.C / p.group, mg = p.M / p.group, g = m / mg;
  float acc = p.has_bias != 0u ? bias[m] : 0.0;
  int ih0 = int(oh * p.sh) - p.ph, iw0 = int(ow * p.sw) - p.pw;
  for (uint ic = 0u; ic < cg; ++ic) {
    uint c = g * cg + ic;
    uint xbase = (n * p.C + c) * p.H * p.W, wbase = (m * cg + ic) * p.KH * p.KW;
    for (uint kh = 0u; kh < p.KH; ++kh) {
      int ih = ih0 + int(kh * p.dh);
      if (ih < 0 || ih >= int(p.H)) continue;
      for (uint kw = 0u; kw < p.KW; ++kw) {
        int iw = iw0 + int(kw * p.dw);
        if (iw < 0 || iw >= int(p.W)) continue;
        acc += x[xbase + uint(ih) * p.W + uint(iw)] * w[wbase + kh * p.KW + kw];
      }
    }
  }
  y[i] = acc;
}
