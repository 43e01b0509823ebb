#version 450
// Max/average pooling over H, W of NCHW (1-D pooling with H = KH = 1). mode 0 max, 1 average
// counting pads (count_include_pad), 2 average over the real elements only.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint NC; uint H; uint W; uint OH; uint OW; uint KH; uint KW; uint sh; uint sw; uint dh; uint dw;
  int ph; int pw; int peh; int pew; uint mode;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.NC * p.OH * p.OW) return;
  uint ow = i % p.OW, oh = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH);
  int h0 = int(oh * p.sh) - p.ph, w0 = int(ow * p.sw) - p.pw;
  float acc = p.mode == 0u ? -3.402823466e38 : 0.0;
  uint count = 0u, padded = 0u;
  for (uint kh = 0u; kh < p.KH; ++kh) {
    int ih = h0 + int(kh * p.dh);
    if (ih >= int(p.H) + p.peh) break;
    for (uint kw = 0u; kw < p.KW; ++kw) {
      int iw = w0 + int(kw * p.dw);
      if (iw >= int(p.W) + p.pew) break;
      ++padded;
      if (ih < 0 || iw < 0 || ih >= int(p.H) || iw >= int(p.W)) continue;
      float v = x[(nc * p.H + uint(ih)) * p.W + uint(iw)];
      acc = p.mode == 0u ? max(acc, v) : acc + v;
      ++count;
    }
  }
  if (p.mode == 1u) acc /= float(max(padded, 1u));
  if (p.mode == 2u) acc /= float(max(count, 1u));
  y[i] = acc;
}
