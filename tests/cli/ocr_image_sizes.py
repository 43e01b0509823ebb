#!/usr/bin/python3
"""tessera-ocr on images of every size ratio, pixel format and file format.

  ocr_image_sizes.py OCR MODEL KEYS WORKDIR

Regression test for the stb_image_resize abort on text lines taller than 48 px (issue 16).
Generates, with PIL (python3-pil) and ImageMagick for 16-bit RGB(A) PNGs:
  1. a grid of heights 8..400 x widths 4..4000 in grey / RGB / RGBA, 8- and 16-bit PNG and JPEG
     (a rendered text line stretched to the size): every image must give a line of text or a
     clear "tessera-ocr: error: <file>: ..." message, and the process must exit 0 or 1 — never a
     signal (abort, segfault) or a sanitizer report;
  2. the line "Hello Tessera 2026" rendered at its natural aspect ratio at heights 56..400 (all
     downscaled to 48, the path that aborted) in every pixel format: each must be read exactly;
  3. bytes that are not an image and a truncated PNG: a clear error naming the file, exit 1.
Exits 77 (skipped) when the model, keys, PIL or ImageMagick are missing.
"""
import os
import shutil
import subprocess
import sys

ocr, model, keys, work = sys.argv[1:5]
try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError:
    print("SKIP: python3-pil is not installed")
    sys.exit(77)
magick = shutil.which("convert")
if not magick:
    print("SKIP: ImageMagick (convert) not found")
    sys.exit(77)
for f in (model, keys):
    if not os.path.isfile(f):
        print(f"SKIP: {f} not found")
        sys.exit(77)
font_path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
if not os.path.isfile(font_path):
    print(f"SKIP: {font_path} not found (fonts-dejavu-core)")
    sys.exit(77)
os.makedirs(work, exist_ok=True)

TEXT = "Hello Tessera 2026"


def text_line(height):
    """The text in black on white, `height` px high, at its natural width."""
    font = ImageFont.truetype(font_path, max(4, int(height * 0.6)))
    x0, y0, x1, y1 = font.getbbox(TEXT)
    pad = max(1, height // 8)
    img = Image.new("L", (x1 - x0 + 2 * pad, height), 255)
    ImageDraw.Draw(img).text((pad - x0, (height - (y1 - y0)) // 2 - y0), TEXT, font=font, fill=0)
    return img


def save(img_l, path, kind):
    """Writes the grey image `img_l` as `kind`: L, RGB, RGBA (8-bit) or L16, RGB16, RGBA16."""
    if kind == "L":
        img_l.save(path)
    elif kind == "RGB":
        Image.merge("RGB", (img_l, img_l.point(lambda v: v // 2 + 100), img_l)).save(path)
    elif kind == "RGBA":
        Image.merge("RGBA", (img_l, img_l, img_l, Image.new("L", img_l.size, 200))).save(path)
    elif kind == "L16":
        img_l.point(lambda v: v * 257, "I").convert("I;16").save(path)
    else:  # RGB16 / RGBA16: 16 bits per channel through ImageMagick (PNG48 / PNG64)
        tmp = path + ".8bit.png"
        save(img_l, tmp, kind[:-2])
        subprocess.run([magick, tmp, "-depth", "16", ("PNG48:" if kind == "RGB16" else "PNG64:") + path], check=True)
        os.remove(tmp)


def run(images):
    """Runs tessera-ocr on `images`; returns (exit code, stdout lines, stderr text)."""
    p = subprocess.run([ocr, "--model", model, "--keys", keys] + images, capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines(), p.stderr


fail = 0
# PNG kinds cover 8/16-bit grey, RGB, RGBA; JPEG holds 8-bit grey and RGB.
kinds = [("L", "png"), ("RGB", "png"), ("RGBA", "png"), ("L16", "png"), ("RGB16", "png"), ("RGBA16", "png"),
         ("L", "jpg"), ("RGB", "jpg")]

# 1. The grid: every size gets a kind in turn, so each kind meets small, large, wide and tall.
heights = [8, 16, 47, 48, 49, 56, 100, 237, 400]
widths = [4, 33, 320, 1000, 4000]
grid = []
for i, h in enumerate(heights):
    for j, w in enumerate(widths):
        kind, ext = kinds[(i * len(widths) + j) % len(kinds)]
        path = os.path.join(work, f"grid_{h}x{w}_{kind}.{ext}")
        save(text_line(h).resize((w, h), Image.BILINEAR), path, kind)
        grid.append(path)
rc, out, err = run(grid)
errors = [l for l in err.splitlines() if l.startswith("tessera-ocr: error: ")]
if rc not in (0, 1) or "Sanitizer" in err or len(out) + len(errors) != len(grid):
    print(f"FAIL: grid of {len(grid)} images: exit {rc}, {len(out)} text lines, {len(errors)} errors\n{err[-3000:]}")
    fail = 1
elif errors:
    print("FAIL: images that decode must be read, not refused:\n" + "\n".join(errors))
    fail = 1
else:
    print(f"ok: {len(grid)} grid images (heights {heights[0]}..{heights[-1]}, widths {widths[0]}..{widths[-1]}) read")

# 2. Readable lines taller than 48 px (downscaled), in every kind: read exactly.
readable = []
for h in (56, 64, 100, 160, 400):
    for kind, ext in kinds:
        path = os.path.join(work, f"line_{h}_{kind}.{ext}")
        save(text_line(h), path, kind)
        readable.append(path)
rc, out, err = run(readable)
if rc != 0 or len(out) != len(readable):
    print(f"FAIL: readable lines: exit {rc}, {len(out)} lines for {len(readable)} images\n{err[-3000:]}")
    fail = 1
else:
    wrong = [f"{os.path.basename(p)}: \"{t}\"" for p, t in zip(readable, out) if t != TEXT]
    if wrong:
        print(f"FAIL: expected \"{TEXT}\":\n  " + "\n  ".join(wrong))
        fail = 1
    else:
        print(f"ok: {len(readable)} lines 56..400 px high read as \"{TEXT}\"")

# 3. Not an image / truncated: a clear error naming the file, exit 1.
junk = os.path.join(work, "junk.png")
with open(junk, "wb") as f:
    f.write(b"this is not an image\n" * 10)
trunc = os.path.join(work, "truncated.png")
with open(readable[0], "rb") as f:
    data = f.read()
with open(trunc, "wb") as f:
    f.write(data[: len(data) // 2])
for path in (junk, trunc):
    rc, out, err = run([path])
    if rc != 1 or f"tessera-ocr: error: {path}: cannot decode the image" not in err:
        print(f"FAIL: {path}: expected exit 1 and a decode error, got exit {rc}: {err.strip()}")
        fail = 1
    else:
        print(f"ok: {os.path.basename(path)}: {err.strip()}")
sys.exit(fail)
