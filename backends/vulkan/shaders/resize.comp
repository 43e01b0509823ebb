#version 450
// Resize of the last two dims (N*C planes). mode 0 nearest, 1 linear. coord: 0 half_pixel,
// 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel, 4 tf_half_pixel_for_nn. nearest: 0
// round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint NC; uint H; uint W; uint OH; uint OW; uint mode; uint coord; uint nearest; float sh; float sw;
} p;

float src_coord(uint o, uint in_len, uint out_len, float s) {
  float fo = float(o);
  switch (p.coord) {
    case 1u: return fo / s;
    case 2u: return out_len > 1u ? fo * float(in_len - 1u) / float(out_len - 1u) : 0.0;
    case 3u: return out_len > 1u ? (fo + 0.5) / s - 0.5 : 0.0;
    case 4u: return (fo + 0.5) / s;
    default: return (fo + 0.5) / s - 0.5;
  }
}

int nearest_index(float c, uint len) {
  float r;
  switch (p.nearest) {
    case 1u: r = (c - floor(c) == 0.5) ? ceil(c) : floor(c + 0.5); break;
    case 2u: r = floor(c); break;
    case 3u: r = ceil(c); break;
    default: r = (c - floor(c) == 0.5) ? floor(c) : floor(c + 0.5); break;
  }
  return clamp(int(r), 0, int(len) - 1);
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i >= p.NC * p.OH * p.OW) return;
  uint ow = i % p.OW, oh = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH);
  float ch = src_coord(oh, p.H, p.OH, p.sh), cw = src_coord(ow, p.W, p.OW, p.sw);
  uint base = nc * p.H * p.W;
  if (p.mode == 0u) {
    y[i] = x[base + uint(nearest_index(ch, p.H)) * p.W + uint(nearest_index(cw, p.W))];
    return;
  }
  ch = clamp(ch, 0.0, float(p.H - 1u));
  cw = clamp(cw, 0.0, float(p.W - 1u));
  uint h0 = uint(floor(ch)), w0 = uint(floor(cw));
  uint h1 = min(h0 + 1u, p.H - 1u), w1 = min(w0 + 1u, p.W - 1u);
  float fh = ch - float(h0), fw = cw - float(w0);
  float v00 = x[base + h0 * p.W + w0], v01 = x[base + h0 * p.W + w1];
  float v10 = x[base + h1 * p.W + w0], v11 = x[base + h1 * p.W + w1];
  y[i] = (v00 * (1.0 - fw) + v01 * fw) * (1.0 - fh) + (v10 * (1.0 - fw) + v11 * fw) * fh;
}
