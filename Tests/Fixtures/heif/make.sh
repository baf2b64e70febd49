#!/bin/sh
# How the HEIF and colour fixtures here were made (run once, by hand; the tests read the
# files, so an encoder of another version cannot change what they check). Needs ImageMagick,
# libheif-examples (heif-enc), python3 and a C compiler with liblcms2-dev. All images are
# drawn here (gradients), so they carry no one else's licence.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Profiles, by Little CMS: Display P3 (P3 primaries, D65, sRGB's curve) and sRGB.
cat > "$tmp/icc.c" <<'C'
#include <lcms2.h>
int main(void) {
    cmsCIExyY d65 = {0.3127, 0.3290, 1.0};
    cmsCIExyYTRIPLE p3 = {{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
    const cmsFloat64Number p[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
    cmsToneCurve *t = cmsBuildParametricToneCurve(NULL, 4, p);
    cmsToneCurve *c[3] = {t, t, t};
    cmsSaveProfileToFile(cmsCreateRGBProfile(&d65, &p3, c), "display-p3.icc");
    cmsSaveProfileToFile(cmsCreate_sRGBProfile(), "srgb.icc");
    return 0;
}
C
cc "$tmp/icc.c" -o "$tmp/icc" -llcms2 && "$tmp/icc"

# A 300x200 picture: gradients in every channel, a few saturated patches.
convert -size 300x200 gradient:'#f02010-#1040e0' \( -size 300x200 gradient:'#00ff00-#202020' -rotate 90 -resize 300x200\! \) \
    -compose blend -define compose:args=50 -composite \
    -fill '#ff0000' -draw 'rectangle 10,10 60,60' -fill '#00c000' -draw 'rectangle 240,140 290,190' \
    -alpha off -depth 8 -strip "$tmp/picture.png"
# Its pixels tagged Display P3 (not converted: the same numbers mean more saturated colours).
convert "$tmp/picture.png" -profile display-p3.icc -define png:exclude-chunk=date,time display-p3.png

heif-enc -q 90 "$tmp/picture.png" -o picture.heic
# Tagged Display P3 by an ICC profile (heif-enc 1.15 writes no nclx colr box for a PNG).
heif-enc -q 90 display-p3.png -o display-p3-icc.heic

# Turned: the 16-byte pixi property becomes an irot of 90 degrees anticlockwise (with padding).
python3 - <<'PY'
d = bytearray(open('picture.heic', 'rb').read())
i = d.find(b'pixi') - 4
assert d[i:i + 4] == b'\0\0\0\x10'
d[i:i + 16] = b'\0\0\0\x10irot\x01' + bytes(7)
open('rotated.heic', 'wb').write(d)
PY

# As a phone writes it: landscape pixels, EXIF Orientation 6 (turn 90 degrees clockwise to
# show) and DateTimeOriginal 2024:07:03 14:22:05, no irot: heif-enc copies a JPEG's EXIF.
convert "$tmp/picture.png" -quality 92 "$tmp/picture.jpg"
python3 - "$tmp/picture.jpg" "$tmp/portrait.jpg" <<'PY'
import struct, sys
def entry(tag, kind, count, value): return struct.pack('>HHI', tag, kind, count) + value
taken = b'2024:07:03 14:22:05\0'
exif_at = 8 + 2 + 2 * 12 + 4
taken_at = exif_at + 2 + 12 + 4
tiff = b'MM\0\x2a' + struct.pack('>I', 8)
tiff += struct.pack('>H', 2) + entry(0x0112, 3, 1, struct.pack('>HH', 6, 0)) + entry(0x8769, 4, 1, struct.pack('>I', exif_at)) + struct.pack('>I', 0)
tiff += struct.pack('>H', 1) + entry(0x9003, 2, len(taken), struct.pack('>I', taken_at)) + struct.pack('>I', 0) + taken
app1 = b'Exif\0\0' + tiff
jpeg = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(jpeg[:2] + b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1 + jpeg[2:])
PY
heif-enc -q 90 "$tmp/portrait.jpg" -o portrait-exif.heic
