#!/usr/bin/python3
"""ocr_page_cer.py TESSERA_OCR REC DET CLS KEYS WORKDIR [MAX_CER]

Renders the three sample pages (examples/ocr/make_samples.py) into WORKDIR, reads each with
`tessera-ocr --page --json`, and compares the text with what was drawn: the character error rate
CER = Levenshtein distance / reference length, both sides being the page's lines in reading
order joined by one space, runs of whitespace collapsed (a line the detector splits in two, or a
space at a box's edge, is layout rather than a character). Fails when a page's CER exceeds MAX_CER
(default 0.02), when the page has no boxes, or when tessera-ocr fails; prints the CER and the
time per page (tessera-ocr's own stage timings: the models are loaded once, before the first
page). Also reads the two-column page turned upside down (the classifier must turn every line) and checks
that a file that is not an image fails with exit 1 and a message naming it.
Exits 77 (skipped) when a model, the keys or Pillow/DejaVu are missing.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "..", "examples", "ocr", "make_samples.py")


def normalize(lines):
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def cer(got_lines, ref_lines):
    got, ref = normalize(got_lines), normalize(ref_lines)
    return levenshtein(got, ref) / max(1, len(ref)), got, ref


def main():
    if len(sys.argv) not in (7, 8):
        print(__doc__, file=sys.stderr)
        return 2
    ocr, rec, det, cls, keys, work = sys.argv[1:7]
    max_cer = float(sys.argv[7]) if len(sys.argv) == 8 else 0.02
    for f in (rec, det, cls, keys):
        if not os.path.isfile(f):
            print(f"SKIP: {f} not found (third_party/models/fetch.sh)")
            return 77
    rc = subprocess.run([sys.executable, SAMPLES, work]).returncode
    if rc != 0:
        return rc
    names = ["receipt", "sign", "columns"]
    cmd = [ocr, "--page", "--json", "--model", rec, "--det", det, "--cls", cls, "--keys", keys] + [
        os.path.join(work, n + ".png") for n in names]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {run.returncode}\n{run.stderr}")
        return 1
    pages = json.loads(run.stdout)
    fail = 0
    for name, page in zip(names, pages):
        with open(os.path.join(work, name + ".txt"), encoding="utf-8") as f:
            ref = f.read().splitlines()
        rate, got, want = cer([l["text"] for l in page["lines"]], ref)
        t = page["timings_ms"]
        ok = rate <= max_cer and page["boxes"] > 0
        print(f"{'ok' if ok else 'FAIL'}: {name} {page['width']}x{page['height']}: CER {rate * 100:.2f}% "
              f"({len(page['lines'])} lines, {page['boxes']} boxes); {t['total']:.0f} ms "
              f"(det {t['det']:.0f}, post {t['post']:.0f}, crop {t['crop']:.0f}, cls {t['cls']:.0f}, rec {t['rec']:.0f})")
        if not ok:
            print(f"  read:     {got}\n  expected: {want}")
            fail = 1
    # The direction classifier: the two-column page turned upside down reads as the same lines in
    # reverse order (the page's last line is now on top), every one turned by the classifier.
    from PIL import Image
    flipped = os.path.join(work, "columns_180.png")
    Image.open(os.path.join(work, "columns.png")).rotate(180).save(flipped)
    with open(os.path.join(work, "columns.txt"), encoding="utf-8") as f:
        ref = f.read().splitlines()[::-1]
    run = subprocess.run(cmd[:-3] + [flipped], capture_output=True, text=True)
    page = json.loads(run.stdout)[0] if run.returncode == 0 else {"lines": []}
    rate, got, want = cer([l["text"] for l in page["lines"]], ref)
    turned = sum(l["turned"] for l in page["lines"])
    if run.returncode != 0 or rate > max_cer or turned != len(page["lines"]) or not turned:
        print(f"FAIL: columns upside down: exit {run.returncode}, CER {rate * 100:.2f}%, {turned} of "
              f"{len(page['lines'])} lines turned\n  read:     {got}\n  expected: {want}\n{run.stderr}")
        fail = 1
    else:
        print(f"ok: columns upside down: CER {rate * 100:.2f}%, all {turned} lines turned by the classifier")

    # Bad input: a clear error naming the file, exit 1, no crash.
    bad = os.path.join(work, "not_an_image.png")
    with open(bad, "wb") as f:
        f.write(b"not an image")
    run = subprocess.run(cmd[:-3] + [bad], capture_output=True, text=True)
    if run.returncode != 1 or "not_an_image.png: cannot decode the image" not in run.stderr:
        print(f"FAIL: a file that is not an image: exit {run.returncode}, stderr {run.stderr!r}")
        fail = 1
    else:
        print("ok: a file that is not an image is refused with exit 1")
    return fail


if __name__ == "__main__":
    sys.exit(main())
