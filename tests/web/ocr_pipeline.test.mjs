// web/examples/ocr/pipeline.mjs (the OCR page's pre- and post-processing) in node, against
// references worked out by hand: geometry (hull, minimum-area rectangle, homography), the
// half-pixel bilinear resize cv2.INTER_LINEAR computes, the DB post-processing of synthetic
// probability maps (box, score, unclip distance), reading order, CTC decoding. The page itself,
// with the models, is tests/web/ocr_page.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ocr = await import(path.join(repo, 'web', 'examples', 'ocr', 'pipeline.mjs'));

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

test('convex hull and minimum-area rectangle of a rotated rectangle', () => {
  // The integer grid points inside a 60 x 20 rectangle turned by 30 degrees about (100, 80).
  const th = Math.PI / 6, c = Math.cos(th), s = Math.sin(th), pts = [];
  const inside = (x, y) => {
    const u = (x - 100) * c + (y - 80) * s, v = -(x - 100) * s + (y - 80) * c;
    return Math.abs(u) <= 30 && Math.abs(v) <= 10;
  };
  for (let y = 0; y < 200; y++) for (let x = 0; x < 200; x++) if (inside(x, y)) pts.push([x, y]);
  const hull = ocr.convexHull(pts);
  assert.ok(hull.length >= 4 && hull.length < 40, `${hull.length} hull points`);
  for (const p of pts) {  // every point inside or on the hull (counter-clockwise in y-up = clockwise on screen)
    for (let i = 0; i < hull.length; i++) {
      const a = hull[i], b = hull[(i + 1) % hull.length];
      assert.ok((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= -1e-9);
    }
  }
  const { quad, shortSide } = ocr.minAreaRect(hull);
  close(shortSide, 20, 1.5, 'short side');
  close(Math.hypot(quad[1][0] - quad[0][0], quad[1][1] - quad[0][1]), 60, 1.5, 'long side');
  close(Math.atan2(quad[1][1] - quad[0][1], quad[1][0] - quad[0][0]), th, 0.05, 'angle of the top edge');
  close((quad[0][0] + quad[2][0]) / 2, 100, 0.75, 'centre x');
  close((quad[0][1] + quad[2][1]) / 2, 80, 0.75, 'centre y');
  assert.deepEqual(ocr.convexHull([[1, 1], [1, 1]]), [[1, 1]]);
  assert.equal(ocr.minAreaRect([[3, 4], [9, 4]]).shortSide, 0, 'a segment is degenerate');
});

test('order, expand, homography', () => {
  const q = ocr.orderQuad([[10, 20], [50, 40], [10, 40], [50, 20]]);
  assert.deepEqual(q, [[10, 20], [50, 20], [50, 40], [10, 40]]);
  assert.deepEqual(ocr.expandRect(q, 5), [[5, 15], [55, 15], [55, 45], [5, 45]]);
  assert.equal(ocr.quadArea(q), 800);
  assert.equal(ocr.quadPerimeter(q), 120);
  const quad = [[12, 7], [90, 20], [85, 52], [8, 40]], m = ocr.rectToQuad(40, 10, quad);
  [[0, 0], [40, 0], [40, 10], [0, 10]].forEach(([x, y], i) => {
    const d = m[6] * x + m[7] * y + m[8];
    close((m[0] * x + m[1] * y + m[2]) / d, quad[i][0], 1e-9, `corner ${i} x`);
    close((m[3] * x + m[4] * y + m[5]) / d, quad[i][1], 1e-9, `corner ${i} y`);
  });
  assert.equal(ocr.rectToQuad(40, 10, [[0, 0], [1, 1], [2, 2], [3, 3]]), null, 'corners in line');
});

test('resize is cv2.INTER_LINEAR (half-pixel centres, edges clamped), rounded', () => {
  // One row 0, 100 doubled: source x = (i + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> 0, 25, 75, 100.
  const img = { width: 2, height: 1, data: new Uint8Array([0, 0, 0, 100, 100, 100]) };
  assert.deepEqual([...ocr.resize(img, 4, 1).data.filter((_, i) => i % 3 === 0)], [0, 25, 75, 100]);
  // 0, 10, 20, 30 halved: source x = 0.5, 2.5 -> 5, 25.
  const row = { width: 4, height: 1, data: new Uint8Array([0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30]) };
  assert.deepEqual([...ocr.resize(row, 2, 1).data.filter((_, i) => i % 3 === 0)], [5, 25]);
});

test('DB post-processing of a synthetic map: boxes, scores, unclip, scaling', () => {
  const w = 200, h = 100, prob = new Float32Array(w * h);
  const fill = (x0, y0, x1, y1, v) => { for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) prob[y * w + x] = v; };
  fill(20, 20, 119, 29, 0.9);   // a 100 x 10 pixel line: its pixel centres span 99 x 9
  fill(150, 60, 160, 80, 0.5);  // above thresh, below box_thresh: dropped
  fill(10, 70, 11, 90, 0.95);   // 2 px wide: short side 1 < min_size: dropped
  const boxes = ocr.dbPostprocess(prob, w, h, 400, 200);  // the page is twice the map
  assert.equal(boxes.length, 1);
  close(boxes[0].score, 0.9, 1e-6, 'score: the mean inside the rectangle');
  const d = (99 * 9 * 1.5) / (2 * (99 + 9));  // area * ratio / perimeter
  const expect = [[20 - d, 20 - d], [119 + d, 20 - d], [119 + d, 29 + d], [20 - d, 29 + d]].map(([x, y]) => [Math.round(x * 2), Math.round(y * 2)]);
  boxes[0].quad.forEach((p, i) => { close(p[0], expect[i][0], 1, `x ${i}`); close(p[1], expect[i][1], 1, `y ${i}`); });
});

test('reading order: a heading over two columns, a row split in two, a slanted page', () => {
  const box = (x, y, w, h = 20) => ({ quad: [[x, y], [x + w, y], [x + w, y + h], [x, y + h]] });
  const title = box(100, 10, 600), left = [0, 1, 2].map((i) => box(40, 80 + i * 40, 280)), right = [0, 1, 2].map((i) => box(420, 80 + i * 40, 280));
  const shuffled = [right[2], left[1], title, right[0], left[2], left[0], right[1]];
  assert.deepEqual(ocr.sortReadingOrder(shuffled), [title, ...left, ...right]);
  // Item and price on one row with a wide gap, then the next row: row by row, left to right.
  const item1 = box(40, 10, 200), price1 = box(400, 12, 60), item2 = box(40, 50, 220), price2 = box(400, 49, 60);
  assert.deepEqual(ocr.sortReadingOrder([price2, item2, price1, item1]), [item1, price1, item2, price2]);
  // Lines turned by 8 degrees: their upright bounding boxes overlap, the deskewed ones do not.
  const th = 8 * Math.PI / 180, turn = (b) => ({ quad: b.quad.map(([x, y]) => [x * Math.cos(th) - y * Math.sin(th), x * Math.sin(th) + y * Math.cos(th)]) });
  const lines = [0, 1, 2, 3].map((i) => turn(box(0, i * 30, 500)));
  assert.deepEqual(ocr.sortReadingOrder([lines[3], lines[1], lines[0], lines[2]]), lines);
});

test('CTC decoding and the direction classifier', () => {
  const keys = ocr.parseKeys('a\r\nb\nc\n');
  assert.deepEqual(keys, ['a', 'b', 'c', ' ']);
  // Steps: a a blank a b space c -> "aab c" (repeats merge, a blank separates them).
  const steps = [1, 1, 0, 1, 2, 4, 3], classes = 5, data = new Float32Array(steps.length * classes);
  steps.forEach((k, t) => { data.fill(0.05, t * classes, (t + 1) * classes); data[t * classes + k] = 0.8; });
  const d = ocr.ctcDecode({ shape: [1, steps.length, classes], data }, keys);
  assert.equal(d.text, 'aab c');
  close(d.confidence, 0.8, 1e-6, 'confidence');
  assert.throws(() => ocr.ctcDecode({ shape: [1, 2, 7], data: new Float32Array(14) }, keys), /7 classes/);
  assert.deepEqual(ocr.readDirection({ shape: [1, 2], data: new Float32Array([0.1, 0.9]) }), { upsideDown: true, score: 0.8999999761581421 });
  assert.throws(() => ocr.readDirection({ shape: [1, 3], data: new Float32Array(3) }), /expected \[N, 2\]/);
  // Rows of a batch: row 1 of [2, T, C] is its own line; row 1 of the classifier's [2, 2].
  const two = new Float32Array(2 * steps.length * classes);
  two.fill(0.05);
  steps.forEach((k, t) => { two[t * classes] = 0.8; two[(steps.length + t) * classes + k] = 0.8; });
  assert.equal(ocr.ctcDecode({ shape: [2, steps.length, classes], data: two }, keys, 0).text, '');
  assert.equal(ocr.ctcDecode({ shape: [2, steps.length, classes], data: two }, keys, 1).text, 'aab c');
  assert.throws(() => ocr.ctcDecode({ shape: [2, steps.length, classes], data: two }, keys, 2), /row 2 of a batch of 2/);
  assert.equal(ocr.readDirection({ shape: [2, 2], data: new Float32Array([0.9, 0.1, 0.3, 0.7]) }, 1).upsideDown, true);
});

test('recognition batches: lines sorted by aspect ratio, stacked and padded to the widest', () => {
  const line = (w, h, v) => ({ width: w, height: h, data: new Uint8Array(w * h * 3).fill(v) });
  // Ratios 10, 2, 5, 1, 8 -> order 3 (1), 1 (2), 2 (5), 4 (8), 0 (10); rec input widths 320 (the
  // minimum), 320, 320, 384, 480: batches of 2, and of 8 as long as the widest is <= 1.25 x 320.
  const lines = [line(100, 10, 0), line(20, 10, 0), line(50, 10, 0), line(10, 10, 0), line(80, 10, 0)];
  assert.deepEqual(ocr.recBatches(lines, 2), [[3, 1], [2, 4], [0]]);
  assert.deepEqual(ocr.recBatches(lines, 8), [[3, 1, 2, 4], [0]]);
  assert.deepEqual(ocr.recBatches(lines, 8, 2), [[3, 1, 2, 4, 0]]);
  assert.throws(() => ocr.recBatches(lines, 0), /recBatch must be >= 1/);
  // Two lines 48 high: 96 wide (white) and 48 wide (black) at width 128; row 1 is padded with 0
  // past column 48, and each row is what lineInput gives for its line alone.
  const a = line(96, 48, 255), b = line(48, 48, 0), x = ocr.linesInput([a, b], 128);
  assert.deepEqual(x.shape, [2, 3, 48, 128]);
  const plane = 48 * 128;
  assert.equal(x.data[0], 1);                       // row 0, white -> 1
  assert.equal(x.data[95], 1);
  assert.equal(x.data[96], 0);                       // row 0 padding
  assert.equal(x.data[3 * plane + 47], -1);          // row 1, black -> -1
  assert.equal(x.data[3 * plane + 48], 0);           // row 1 padding
  assert.deepEqual(x.data.subarray(3 * plane), ocr.lineInput(b, 128).data);
  assert.deepEqual(x.data.subarray(0, 3 * plane), ocr.lineInput(a, 128).data);
});
