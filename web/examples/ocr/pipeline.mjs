// Whole-page OCR in JavaScript: the pre- and post-processing around PaddleOCR's PP-OCRv4 det,
// ch_ppocr_mobile_v2.0_cls and PP-OCRv4 rec models, a port of examples/ocr (ocr_image, ocr_detect,
// ocr_geometry, ocr_crop, ocr_recognize, ocr_page), which documents each step; the contracts are
// the same. No DOM here: the functions take and return plain arrays, so node can run them too.
//
// Images are { width, height, data: Uint8Array RGB interleaved }. Points are [x, y] in pixels;
// a quad is 4 points from the top-left corner, clockwise on screen. Tensors are tessera-web's
// { dtype: 'float32', shape, data: Float32Array }.

export const kLineHeight = 48;
const kMinWidth = 320, kMaxWidth = 4096, kClsWidth = 192;
const kMean = [0.485, 0.456, 0.406], kStd = [0.229, 0.224, 0.225];

export const defaults = {
  limitSide: 960, thresh: 0.3, boxThresh: 0.6, unclipRatio: 1.5, maxCandidates: 1000, minSize: 3,
  cropMargin: 0.15, clsThresh: 0.9, dropScore: 0.5, recBatch: 6, clsBatch: 6,
};

// RGBA (canvas ImageData) to an RGB image.
export function fromRGBA(width, height, rgba) {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0, n = width * height; i < n; i++) {
    data[i * 3] = rgba[i * 4]; data[i * 3 + 1] = rgba[i * 4 + 1]; data[i * 3 + 2] = rgba[i * 4 + 2];
  }
  return { width, height, data };
}

// One axis of a half-pixel bilinear resize (ONNX Resize linear/half_pixel, cv2.INTER_LINEAR):
// per output index, the two source indices and the weight of the second.
function axisTaps(inSize, outSize) {
  const i0 = new Int32Array(outSize), i1 = new Int32Array(outSize), a = new Float32Array(outSize);
  const scale = inSize / outSize;
  for (let o = 0; o < outSize; o++) {
    const s = Math.min(Math.max((o + 0.5) * scale - 0.5, 0), inSize - 1);
    i0[o] = Math.floor(s); i1[o] = Math.min(i0[o] + 1, inSize - 1); a[o] = s - i0[o];
  }
  return { i0, i1, a };
}

// `img` resized to ow x oh, bilinear (width first, then height, in float), rounded to 8 bits.
export function resize(img, ow, oh) {
  const { width: w, height: h, data } = img;
  if (w === ow && h === oh) return img;
  const tx = axisTaps(w, ow), ty = axisTaps(h, oh);
  const tmp = new Float32Array(h * ow * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < ow; x++) {
      const p0 = (y * w + tx.i0[x]) * 3, p1 = (y * w + tx.i1[x]) * 3, a = tx.a[x], o = (y * ow + x) * 3;
      for (let c = 0; c < 3; c++) tmp[o + c] = data[p0 + c] * (1 - a) + data[p1 + c] * a;
    }
  const out = new Uint8Array(oh * ow * 3);  // Uint8Array stores truncated: round first
  for (let y = 0; y < oh; y++) {
    const r0 = ty.i0[y] * ow * 3, r1 = ty.i1[y] * ow * 3, a = ty.a[y], o = y * ow * 3;
    for (let k = 0; k < ow * 3; k++) out[o + k] = Math.min(255, Math.max(0, Math.round(tmp[r0 + k] * (1 - a) + tmp[r1 + k] * a)));
  }
  return { width: ow, height: oh, data: out };
}

// The detector's input: longer side at most limitSide, sides rounded to multiples of 32, BGR
// planes normalised with ImageNet's mean/std.
export function detInput(img, limitSide = defaults.limitSide) {
  const ratio = Math.max(img.width, img.height) > limitSide ? limitSide / Math.max(img.width, img.height) : 1;
  const r32 = (side) => Math.max(Math.round(Math.trunc(side * ratio) / 32) * 32, 32);
  const width = r32(img.width), height = r32(img.height);
  const rs = resize(img, width, height), plane = width * height, x = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++)
    for (let c = 0; c < 3; c++) x[c * plane + i] = (rs.data[i * 3 + 2 - c] / 255 - kMean[c]) / kStd[c];
  return { width, height, tensor: { dtype: 'float32', shape: [1, 3, height, width], data: x } };
}

// ---- geometry (examples/ocr/ocr_geometry.cpp)

const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);

export function convexHull(points) {
  const pts = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .filter((p, i, arr) => i === 0 || p[0] !== arr[i - 1][0] || p[1] !== arr[i - 1][1]);
  if (pts.length < 3) return pts;
  const hull = [];
  for (const p of pts) {
    while (hull.length >= 2 && cross(hull[hull.length - 2], hull[hull.length - 1], p) <= 0) hull.pop();
    hull.push(p);
  }
  for (let i = pts.length - 2, lower = hull.length + 1; i >= 0; i--) {
    while (hull.length >= lower && cross(hull[hull.length - 2], hull[hull.length - 1], pts[i]) <= 0) hull.pop();
    hull.push(pts[i]);
  }
  hull.pop();
  return hull;
}

export function orderQuad(pts) {
  const p = [...pts].sort((a, b) => a[0] - b[0]);
  const [tl, bl] = p[1][1] > p[0][1] ? [p[0], p[1]] : [p[1], p[0]];
  const [tr, br] = p[3][1] > p[2][1] ? [p[2], p[3]] : [p[3], p[2]];
  return [tl, tr, br, bl];
}

// Minimum-area rectangle of a convex hull: one side lies on a hull edge, so try every edge.
export function minAreaRect(hull) {
  if (hull.length === 0) return { quad: [[0, 0], [0, 0], [0, 0], [0, 0]], shortSide: 0 };
  if (hull.length < 3) {
    const a = hull[0], b = hull[hull.length - 1];
    return { quad: orderQuad([a, b, b, a]), shortSide: 0 };
  }
  let best = Infinity, quad = null, shortSide = 0;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i], b = hull[(i + 1) % hull.length], len = dist(a, b);
    if (len === 0) continue;
    const ux = (b[0] - a[0]) / len, uy = (b[1] - a[1]) / len;
    let umin = 0, umax = 0, vmin = 0, vmax = 0;
    for (const p of hull) {
      const dx = p[0] - a[0], dy = p[1] - a[1], u = dx * ux + dy * uy, v = -dx * uy + dy * ux;
      umin = Math.min(umin, u); umax = Math.max(umax, u); vmin = Math.min(vmin, v); vmax = Math.max(vmax, v);
    }
    const area = (umax - umin) * (vmax - vmin);
    if (area < best) {
      best = area;
      const at = (u, v) => [a[0] + u * ux - v * uy, a[1] + u * uy + v * ux];
      quad = [at(umin, vmin), at(umax, vmin), at(umax, vmax), at(umin, vmax)];
      shortSide = Math.min(umax - umin, vmax - vmin);
    }
  }
  return { quad: orderQuad(quad), shortSide };
}

// The rectangle grown by d on every side (the unclip of a rectangle).
export function expandRect(r, d) {
  const w = dist(r[0], r[1]), h = dist(r[0], r[3]);
  let ux = 1, uy = 0, vx, vy;
  if (w > 0) { ux = (r[1][0] - r[0][0]) / w; uy = (r[1][1] - r[0][1]) / w; }
  if (h > 0) { vx = (r[3][0] - r[0][0]) / h; vy = (r[3][1] - r[0][1]) / h; } else { vx = -uy; vy = ux; }
  if (w === 0) { ux = vy; uy = -vx; }
  const move = (p, su, sv) => [p[0] + d * (su * ux + sv * vx), p[1] + d * (su * uy + sv * vy)];
  return orderQuad([move(r[0], -1, -1), move(r[1], 1, -1), move(r[2], 1, 1), move(r[3], -1, 1)]);
}

export function quadArea(q) {
  let s = 0;
  for (let i = 0; i < 4; i++) s += q[i][0] * q[(i + 1) % 4][1] - q[(i + 1) % 4][0] * q[i][1];
  return Math.abs(s) / 2;
}

export const quadPerimeter = (q) => q.reduce((s, p, i) => s + dist(p, q[(i + 1) % 4]), 0);

function insideQuad(q, x, y) {
  let pos = false, neg = false;
  for (let i = 0; i < 4; i++) {
    const c = cross(q[i], q[(i + 1) % 4], [x, y]);
    if (c > 1e-9) pos = true;
    if (c < -1e-9) neg = true;
  }
  return !(pos && neg);
}

// Homography taking (0,0), (w,0), (w,h), (0,h) to the quad's corners (8x8 Gauss-Jordan); null
// when degenerate.
export function rectToQuad(w, h, q) {
  const src = [[0, 0], [w, 0], [w, h], [0, h]], m = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = src[i], [X, Y] = q[i];
    m.push([x, y, 1, 0, 0, 0, -x * X, -y * X, X], [0, 0, 0, x, y, 1, -x * Y, -y * Y, Y]);
  }
  for (let c = 0; c < 8; c++) {
    let piv = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(m[r][c]) > Math.abs(m[piv][c])) piv = r;
    if (Math.abs(m[piv][c]) < 1e-12) return null;
    [m[c], m[piv]] = [m[piv], m[c]];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k < 9; k++) m[r][k] -= f * m[c][k];
    }
  }
  return [...m.map((row, i) => row[8] / row[i]), 1];
}

// ---- detection post-processing (examples/ocr/ocr_detect.cpp)

// 8-connected regions above thresh: per region, each row's leftmost and rightmost pixel.
function findRegions(prob, w, h, thresh) {
  const seen = new Uint8Array(w * h), regions = [], stack = [];
  for (let y0 = 0; y0 < h; y0++)
    for (let x0 = 0; x0 < w; x0++) {
      const i0 = y0 * w + x0;
      if (seen[i0] || !(prob[i0] > thresh)) continue;
      const rows = [[x0, x0]];
      let pixels = 0;
      seen[i0] = 1; stack.push(i0);
      while (stack.length) {
        const i = stack.pop(), x = i % w, y = (i - x) / w;
        pixels++;
        const k = y - y0;
        if (k >= rows.length) rows.push([x, x]);
        const row = rows[k];
        if (x < row[0]) row[0] = x;
        if (x > row[1]) row[1] = x;
        for (let dy = -1; dy <= 1; dy++)
          for (let dx = -1; dx <= 1; dx++) {
            const nx = x + dx, ny = y + dy;
            if ((dx === 0 && dy === 0) || nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
            const j = ny * w + nx;
            if (seen[j] || !(prob[j] > thresh)) continue;
            seen[j] = 1; stack.push(j);
          }
      }
      const extremes = [];
      rows.forEach(([a, b], k) => { extremes.push([a, y0 + k]); if (b !== a) extremes.push([b, y0 + k]); });
      regions.push({ extremes, pixels });
    }
  return regions;
}

function boxScore(prob, w, h, q) {
  const xs = q.map((p) => p[0]), ys = q.map((p) => p[1]);
  const clamp = (v, hi) => Math.min(Math.max(v, 0), hi);
  const x0 = clamp(Math.floor(Math.min(...xs)), w - 1), x1 = clamp(Math.ceil(Math.max(...xs)), w - 1);
  const y0 = clamp(Math.floor(Math.min(...ys)), h - 1), y1 = clamp(Math.ceil(Math.max(...ys)), h - 1);
  let sum = 0, n = 0;
  for (let y = y0; y <= y1; y++)
    for (let x = x0; x <= x1; x++) if (insideQuad(q, x, y)) { sum += prob[y * w + x]; n++; }
  return n ? sum / n : 0;
}

// Boxes ({ quad, score }, page pixels, unordered) from the map prob (Float32Array, w x h).
export function dbPostprocess(prob, w, h, pageW, pageH, opts = defaults) {
  let regions = findRegions(prob, w, h, opts.thresh);
  if (regions.length > opts.maxCandidates) regions = regions.sort((a, b) => b.pixels - a.pixels).slice(0, opts.maxCandidates);
  const sx = pageW / w, sy = pageH / h, boxes = [];
  for (const r of regions) {
    const { quad: rect, shortSide } = minAreaRect(convexHull(r.extremes));
    if (shortSide < opts.minSize) continue;
    const score = boxScore(prob, w, h, rect);
    if (score < opts.boxThresh) continue;
    const d = quadArea(rect) * opts.unclipRatio / quadPerimeter(rect);
    if (shortSide + 2 * d < opts.minSize + 2) continue;
    const grown = expandRect(rect, d);
    const quad = orderQuad(grown.map(([x, y]) => [Math.min(Math.max(Math.round(x * sx), 0), pageW - 1),
      Math.min(Math.max(Math.round(y * sy), 0), pageH - 1)]));
    if (dist(quad[0], quad[1]) <= 3 || dist(quad[0], quad[3]) <= 3) continue;
    boxes.push({ quad, score });
  }
  return boxes;
}

function widestGap(items, lo, hi) {
  items.sort((a, b) => a[lo] - b[lo]);
  let reach = items[0][hi], best = 0, at = 0;
  for (let i = 1; i < items.length; i++) {
    const g = items[i][lo] - reach;
    if (g > 0 && g > best) { best = g; at = (items[i][lo] + reach) / 2; }
    reach = Math.max(reach, items[i][hi]);
  }
  return [best, at];
}

const kColumnGap = 1.5, kColumnLine = 4;  // as examples/ocr/ocr_detect.cpp

function medianWidth(items) {
  const w = items.map((it) => it.x1 - it.x0).sort((a, b) => a - b);
  return w[Math.floor(w.length / 2)];
}

function xyCut(items, lineH, order) {
  if (items.length <= 1) { for (const it of items) order.push(it.index); return; }
  const [gx, cx] = widestGap(items, 'x0', 'x1');
  const [gy, cy] = widestGap(items, 'y0', 'y1');
  const split = (lo, hi, cut) => [items.filter((it) => (it[lo] + it[hi]) / 2 < cut), items.filter((it) => (it[lo] + it[hi]) / 2 >= cut)];
  let first = [], second = [];
  if (gx >= kColumnGap * lineH && gx > gy) {
    [first, second] = split('x0', 'x1', cx);
    // Text columns (long lines on both sides) are read one after the other; a table's fields
    // (a receipt's prices) row by row.
    if (medianWidth(first) < kColumnLine * lineH || medianWidth(second) < kColumnLine * lineH)
      [first, second] = gy > 0 ? split('y0', 'y1', cy) : [[], []];
  } else if (gy > 0) {
    [first, second] = split('y0', 'y1', cy);
  }
  if (!first.length || !second.length) {
    // PaddleOCR's sorted_boxes on the (deskewed) top-left corners.
    items.sort((a, b) => a.tl[1] - b.tl[1] || a.tl[0] - b.tl[0]);
    for (let i = 0; i + 1 < items.length; i++)
      for (let j = i; j >= 0; j--) {
        if (Math.abs(items[j + 1].tl[1] - items[j].tl[1]) < 10 && items[j + 1].tl[0] < items[j].tl[0]) {
          [items[j], items[j + 1]] = [items[j + 1], items[j]];
        } else break;
      }
    for (const it of items) order.push(it.index);
    return;
  }
  xyCut(first, lineH, order);
  xyCut(second, lineH, order);
}

// `boxes` in reading order (a new array): deskewed by the median text angle, then XY-cut.
export function sortReadingOrder(boxes) {
  if (boxes.length < 2) return [...boxes];
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const angle = median(boxes.map(({ quad: q }) => Math.atan2(q[1][1] - q[0][1], q[1][0] - q[0][0])));
  const height = median(boxes.map(({ quad: q }) => Math.min(dist(q[0], q[1]), dist(q[0], q[3]))));
  const ca = Math.cos(angle), sa = Math.sin(angle);
  const items = boxes.map(({ quad }, index) => {
    const q = quad.map(([x, y]) => [x * ca + y * sa, -x * sa + y * ca]);
    const xs = q.map((p) => p[0]), ys = q.map((p) => p[1]);
    return { index, tl: q[0], x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) };
  });
  const order = [];
  xyCut(items, height, order);
  return order.map((i) => boxes[i]);
}

// ---- crops (examples/ocr/ocr_crop.cpp)

// The quad's pixels straightened (perspective, bilinear, border replicated); a crop 1.5 times
// taller than wide is turned 90 degrees counter-clockwise. null for a degenerate quad.
export function cropQuad(img, q) {
  const w = Math.trunc(Math.max(dist(q[0], q[1]), dist(q[3], q[2])));
  const h = Math.trunc(Math.max(dist(q[0], q[3]), dist(q[1], q[2])));
  const m = w >= 1 && h >= 1 ? rectToQuad(w, h, q) : null;
  if (!m) return null;
  const { width: pw, height: ph, data } = img, out = new Uint8Array(w * h * 3);
  const px = (x, y, c) => data[(Math.min(Math.max(y, 0), ph - 1) * pw + Math.min(Math.max(x, 0), pw - 1)) * 3 + c];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const den = m[6] * x + m[7] * y + m[8];
      const sx = (m[0] * x + m[1] * y + m[2]) / den, sy = (m[3] * x + m[4] * y + m[5]) / den;
      const fx = Math.floor(sx), fy = Math.floor(sy), ax = sx - fx, ay = sy - fy;
      const x0 = Math.min(Math.max(fx, -1), pw), y0 = Math.min(Math.max(fy, -1), ph), o = (y * w + x) * 3;
      for (let c = 0; c < 3; c++) {
        const top = px(x0, y0, c) * (1 - ax) + px(x0 + 1, y0, c) * ax;
        const bottom = px(x0, y0 + 1, c) * (1 - ax) + px(x0 + 1, y0 + 1, c) * ax;
        out[o + c] = Math.min(255, Math.max(0, Math.round(top * (1 - ay) + bottom * ay)));
      }
    }
  if (h >= 1.5 * w) {
    const rot = new Uint8Array(out.length);
    for (let y = 0; y < w; y++)
      for (let x = 0; x < h; x++) for (let c = 0; c < 3; c++) rot[(y * h + x) * 3 + c] = out[(x * w + (w - 1 - y)) * 3 + c];
    return { width: h, height: w, data: rot };
  }
  return { width: w, height: h, data: out };
}

export function rotate180(img) {
  const n = img.width * img.height, data = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) for (let c = 0; c < 3; c++) data[i * 3 + c] = img.data[(n - 1 - i) * 3 + c];
  return { width: img.width, height: img.height, data };
}

// ---- line inputs and outputs (examples/ocr/ocr_image.cpp, ocr_recognize.cpp)

export const recInputWidth = (line) =>
  Math.min(kMaxWidth, Math.floor(kLineHeight * Math.max(kMinWidth / kLineHeight, line.width / line.height)));
export const clsInputWidth = kClsWidth;

// [1, 3, 48, width]: resized to (min(ceil(48 w/h), width), 48), (x/255 - 0.5)/0.5, BGR, zero-padded.
export function lineInput(line, width) {
  return linesInput([line], width);
}

// [n, 3, 48, width]: the lines of lineInput stacked, each zero-padded to the common width (the
// batch's widest line sets it, as PaddleOCR's batched recognition does).
export function linesInput(lines, width) {
  const plane = kLineHeight * width, x = new Float32Array(lines.length * 3 * plane);
  lines.forEach((line, n) => {
    const rw = Math.max(1, Math.min(Math.ceil(kLineHeight * line.width / line.height), width));
    const rs = resize(line, rw, kLineHeight), base = n * 3 * plane;
    for (let y = 0; y < kLineHeight; y++)
      for (let i = 0; i < rw; i++) {
        const p = (y * rw + i) * 3;
        for (let c = 0; c < 3; c++) x[base + c * plane + y * width + i] = (rs.data[p + 2 - c] / 255 - 0.5) / 0.5;
      }
  });
  return { dtype: 'float32', shape: [lines.length, 3, kLineHeight, width], data: x };
}

// Line indices sorted by aspect ratio (width / height), cut into batches of at most `size` whose
// widest recognizer input is at most `maxPad` times their narrowest: padding every line to the
// batch's widest then costs little (the wasm runs cost by pixels, so padding is not free).
export function recBatches(lines, size, maxPad = 1.25) {
  if (!(size >= 1)) throw new Error(`recBatch must be >= 1, got ${size}`);
  const order = lines.map((_, i) => i).sort((a, b) => lines[a].width / lines[a].height - lines[b].width / lines[b].height || a - b);
  const batches = [];
  let first = 0;
  for (const i of order) {
    const last = batches[batches.length - 1];
    if (last && last.length < size && recInputWidth(lines[i]) <= maxPad * first) last.push(i);
    else { batches.push([i]); first = recInputWidth(lines[i]); }
  }
  return batches;
}

// Keys file text to the class list (the space appended).
export function parseKeys(text) {
  const keys = text.split('\n').map((l) => l.replace(/\r$/, ''));
  if (keys[keys.length - 1] === '') keys.pop();
  if (!keys.length) throw new Error('the keys file is empty');
  keys.push(' ');
  return keys;
}

// Greedy CTC decode of row `row` of probs [N, T, C] (C = keys.length + 1).
export function ctcDecode(probs, keys, row = 0) {
  const [rows, steps, classes] = probs.shape;
  if (classes !== keys.length + 1) throw new Error(`the model has ${classes} classes, the keys file ${keys.length} + blank`);
  if (!(row >= 0 && row < rows)) throw new Error(`row ${row} of a batch of ${rows}`);
  const p = probs.data.subarray(row * steps * classes, (row + 1) * steps * classes);
  let text = '', prev = -1, conf = 0, kept = 0;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    for (let k = 1; k < classes; k++) if (p[t * classes + k] > p[t * classes + best]) best = k;
    if (best !== 0 && best !== prev) { text += keys[best - 1]; conf += p[t * classes + best]; kept++; }
    prev = best;
  }
  return { text, confidence: kept ? conf / kept : 0 };
}

// Row `row` of the classifier's [N, 2] scores for "0" and "180".
export function readDirection(scores, row = 0) {
  if (scores.shape.length !== 2 || scores.shape[1] !== 2 || !(row >= 0 && row < scores.shape[0]))
    throw new Error(`unexpected classifier output [${scores.shape}] for row ${row}, expected [N, 2]`);
  const a = scores.data[row * 2], b = scores.data[row * 2 + 1];
  return { upsideDown: b > a, score: Math.max(a, b) };
}

// The whole page: run(name, tensor) runs the named model ('det', 'cls' or null to skip, 'rec')
// and resolves to its first output. Resolves to { lines, boxes, detSize, timings } with lines
// { quad, boxScore, text, confidence, turned } in reading order and timings in ms per stage.
// cls and rec run on batches of opts.clsBatch / opts.recBatch lines (1: one line at a time); rec
// batches group lines of similar aspect ratio (recBatches), padded to the batch's widest.
export async function readPage(img, run, keys, { useCls = true, opts = defaults, now = () => performance.now() } = {}) {
  opts = { ...defaults, ...opts };
  const timings = { det: 0, post: 0, crop: 0, cls: 0, rec: 0 };
  let t = now();
  const det = detInput(img, opts.limitSide);
  const prob = await run('det', det.tensor);
  timings.det = now() - t;
  t = now();
  const boxes = sortReadingOrder(dbPostprocess(prob.data, det.width, det.height, img.width, img.height, opts));
  timings.post = now() - t;
  t = now();
  const items = [];  // { box, crop, turned } in reading order
  for (const box of boxes) {
    const q = box.quad, height = Math.min(dist(q[0], q[3]), dist(q[0], q[1]));
    const crop = cropQuad(img, opts.cropMargin > 0 ? expandRect(q, opts.cropMargin * height) : q);
    if (crop) items.push({ box, crop, turned: false });
  }
  timings.crop = now() - t;
  if (useCls) {
    t = now();
    for (let i = 0; i < items.length; i += opts.clsBatch) {
      const batch = items.slice(i, i + Math.max(1, opts.clsBatch));
      const scores = await run('cls', linesInput(batch.map((it) => it.crop), kClsWidth));
      batch.forEach((it, r) => {
        const dir = readDirection(scores, r);
        if (dir.upsideDown && dir.score > opts.clsThresh) { it.crop = rotate180(it.crop); it.turned = true; }
      });
    }
    timings.cls = now() - t;
  }
  t = now();
  for (const batch of recBatches(items.map((it) => it.crop), opts.recBatch)) {
    const width = Math.max(...batch.map((i) => recInputWidth(items[i].crop)));
    const probs = await run('rec', linesInput(batch.map((i) => items[i].crop), width));
    batch.forEach((i, r) => { items[i].decoded = ctcDecode(probs, keys, r); });
  }
  timings.rec = now() - t;
  const lines = items.filter((it) => it.decoded.confidence >= opts.dropScore).map((it) => ({
    quad: it.box.quad, boxScore: it.box.score, text: it.decoded.text, confidence: it.decoded.confidence, turned: it.turned }));
  return { lines, boxes: boxes.length, detSize: [det.width, det.height], timings };
}
