#!/usr/bin/env python3
"""Drops the IDR slices (NAL type 5) of an Annex B H.264 stream: its P-frames then never
give a picture FFmpeg outputs. Usage: strip-idr.py IN OUT"""
import re, sys
d = open(sys.argv[1], "rb").read()
starts = [m.start() for m in re.finditer(b"\x00\x00\x01", d)]
out = bytearray()
for k, s in enumerate(starts):
    nal = d[s + 3:starts[k + 1] if k + 1 < len(starts) else len(d)]
    if nal and nal[0] & 0x1F != 5:
        out += b"\x00\x00\x01" + nal
open(sys.argv[2], "wb").write(out)
