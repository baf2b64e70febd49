#!/usr/bin/env python3
"""Rewrites an MP4's moov (at the end of the file, as ffmpeg writes it by default) to make
hostile files for ptkd's video checks (from the issue 58 attack's probes).

  mp4patch.py declare-size IN OUT WIDTH HEIGHT   every video track's tkhd and stsd declare
                                                 WIDTH x HEIGHT, whatever its SPS says"""
import struct, sys

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"mvex"}

def parse(data, start=0, end=None):
    end = len(data) if end is None else end
    out, at = [], start
    while at < end:
        size, typ = struct.unpack(">I4s", data[at:at + 8])
        hdr = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]; hdr = 16
        elif size == 0:
            size = end - at
        body = data[at + hdr:at + size]
        out.append([typ, parse(data, at + hdr, at + size) if typ in CONTAINERS else body])
        at += size
    return out

def build(boxes):
    out = b""
    for typ, body in boxes:
        b = build(body) if isinstance(body, list) else body
        out += struct.pack(">I4s", 8 + len(b), typ) + b
    return out

def find(boxes, typ):
    return [b for b in boxes if b[0] == typ]

def stbl_of(trak):
    return find(find(find(trak[1], b"mdia")[0][1], b"minf")[0][1], b"stbl")

def top(path):
    data = open(path, "rb").read()
    return data, parse(data)

def write(path, boxes):
    open(path, "wb").write(build(boxes))

def full(v, payload):
    return struct.pack(">I", v) + payload

def declare_size(src, dst, w, h):
    """Every video track's tkhd and stsd (first entry) declare w x h, whatever its SPS says."""
    data, boxes = top(src)
    moov = find(boxes, b"moov")[0]
    for trak in find(moov[1], b"trak"):
        tkhd = find(trak[1], b"tkhd")[0]
        body = bytearray(tkhd[1])
        off = 76 if body[0] == 0 else 88
        body[off:off + 8] = struct.pack(">II", w << 16, h << 16)
        tkhd[1] = bytes(body)
        stsd = find(stbl_of(trak)[0][1], b"stsd")[0]
        body = bytearray(stsd[1])
        body[40:44] = struct.pack(">HH", w, h)
        stsd[1] = bytes(body)
    write(dst, boxes)

if __name__ == "__main__" and sys.argv[1] == "declare-size":
    declare_size(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
