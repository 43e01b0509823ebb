#!/usr/bin/python3
"""Renders the three sample pages of the OCR demo from known text.

    make_samples.py OUT_DIR

Writes OUT_DIR/{receipt,sign,columns}.png and, next to each, NAME.txt: the text that was drawn,
one detected line per row in the reading order tessera-ocr --page and the web page give (top to
bottom; a two-column body column by column). The tests compare what the OCR reads with these
files, so the text is the only truth here: nothing is read back from a model.

Pages stay at most 1000 px a side (the tests must be cheap) and use ASCII, which PP-OCR's
ppocr_keys_v1.txt covers in full. Rendering uses Pillow with DejaVu (Debian fonts-dejavu-core), so
the images are the same on every machine with those packages; exit 77 when either is missing.
"""
import os
import sys

FONT_DIR = "/usr/share/fonts/truetype/dejavu"

try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError:
    print("SKIP: Pillow (python3-pil) is not installed", file=sys.stderr)
    sys.exit(77)


def font(name, size):
    path = os.path.join(FONT_DIR, name)
    if not os.path.exists(path):
        print(f"SKIP: {path} missing (fonts-dejavu-core)", file=sys.stderr)
        sys.exit(77)
    return ImageFont.truetype(path, size)


def receipt():
    """A till receipt: centred header, item lines with right-aligned prices, totals; dark grey on
    off-white paper. A price is a box of its own (the gap is wide), read after its item."""
    lines = [
        ("CORNER MARKET", "DejaVuSans-Bold.ttf", 40, "center"),
        ("128 Harbour Road, Portsmouth", "DejaVuSans.ttf", 28, "center"),
        ("Tel 023 9284 7710", "DejaVuSans.ttf", 28, "center"),
        ("Date 2026-11-28 Time 12:41", "DejaVuSansMono.ttf", 27, "left"),
        ("2 x Apples 1.20", "DejaVuSansMono.ttf", 27, "left", "2.40"),
        ("1 x Whole milk 1L", "DejaVuSansMono.ttf", 27, "left", "0.95"),
        ("3 x Bread rolls 0.45", "DejaVuSansMono.ttf", 27, "left", "1.35"),
        ("1 x Coffee beans 250g", "DejaVuSansMono.ttf", 27, "left", "4.80"),
        ("1 x Dark chocolate", "DejaVuSansMono.ttf", 27, "left", "1.75"),
        ("Subtotal", "DejaVuSansMono.ttf", 27, "left", "11.25"),
        ("VAT 20%", "DejaVuSansMono.ttf", 27, "left", "1.88"),
        ("TOTAL GBP", "DejaVuSansMono-Bold.ttf", 30, "left", "11.25"),
        ("Card ending 4821 approved", "DejaVuSansMono.ttf", 27, "left"),
        ("Thank you for shopping with us", "DejaVuSans.ttf", 28, "center"),
    ]
    w, h = 640, 800
    img = Image.new("RGB", (w, h), (250, 248, 240))
    d = ImageDraw.Draw(img)
    y = 30
    for text, face, size, align, *price in lines:
        f = font(face, size)
        tw = d.textlength(text, font=f)
        x = (w - tw) / 2 if align == "center" else 40
        d.text((x, y), text, font=f, fill=(40, 40, 40))
        if price:
            d.text((w - 40 - d.textlength(price[0], font=f), y), price[0], font=f, fill=(40, 40, 40))
        y += int(size * 1.75)
        if text.startswith("Date") or text.startswith("1 x Dark") or text.startswith("VAT"):
            d.line((40, y - size * 0.5, w - 40, y - size * 0.5), fill=(150, 150, 150), width=1)
            y += 8
    return img, [" ".join([t] + price) for t, _, _, _, *price in lines]


def sign():
    """A street sign: big bold words on a coloured panel, turned by 4 degrees as if photographed."""
    lines = [("NO PARKING", 84), ("Loading Zone", 56), ("Mon-Fri 7AM - 6PM", 44), ("Tow away 24h", 44)]
    w, h = 760, 520
    panel = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(panel)
    d.rounded_rectangle((30, 30, w - 30, h - 30), radius=24, fill=(20, 70, 150))
    d.rounded_rectangle((48, 48, w - 48, h - 48), radius=16, outline=(255, 255, 255), width=6)
    y = 80
    for text, size in lines:
        f = font("DejaVuSans-Bold.ttf", size)
        d.text(((w - d.textlength(text, font=f)) / 2, y), text, font=f, fill=(255, 255, 255))
        y += int(size * 1.45)
    img = panel.rotate(4, resample=Image.BICUBIC, expand=True, fillcolor=(235, 235, 230))
    return img, [t for t, _ in lines]


def columns():
    """A heading over a two-column body of short paragraphs (read column by column)."""
    title = "Running models on small devices"
    left = [
        "A graph runtime loads a model",
        "once and then runs it many",
        "times with new inputs. Memory",
        "for every tensor is planned",
        "ahead, so a run allocates",
        "nothing on its own hot path.",
        "Kernels use the vector units",
        "of the processor at hand.",
    ]
    right = [
        "The same model can run in a",
        "browser tab through wasm, on",
        "a phone, or on a server with",
        "many cores. Results agree with",
        "the reference runtime within",
        "a small tolerance, which the",
        "tests check for each model",
        "on every platform we ship.",
    ]
    w, h = 1000, 660
    img = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(img)
    ft = font("DejaVuSerif-Bold.ttf", 40)
    d.text(((w - d.textlength(title, font=ft)) / 2, 36), title, font=ft, fill=(0, 0, 0))
    fb = font("DejaVuSerifCondensed.ttf", 28)
    for col, x in ((left, 40), (right, 530)):
        for i, text in enumerate(col):
            assert d.textlength(text, font=fb) < 440, text  # the gutter stays clear
            d.text((x, 140 + i * 60), text, font=fb, fill=(20, 20, 20))
    return img, [title] + left + right


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("receipt", receipt), ("sign", sign), ("columns", columns)):
        img, lines = make()
        assert max(img.size) <= 1000, name
        img.save(os.path.join(out, name + ".png"), optimize=True)
        with open(os.path.join(out, name + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
