#!/usr/bin/env python3
"""Writes the seed inputs of both fuzz targets into fuzz/corpus (run once; the fuzzer grows them).
Each input starts with one byte that sets how the rest is split into pieces."""
import hashlib, json, os, struct, sys, zlib

here = os.path.dirname(os.path.abspath(__file__))
base = os.path.join(here, 'corpus')
suite = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', 'Tests', 'Fixtures', 'pngsuite')

def frame(t, p): return bytes([t]) + len(p).to_bytes(4, 'big') + p
def js(o): return json.dumps(o, sort_keys=True, separators=(',', ':')).encode()
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))

png = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', bytes([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]))
       + chunk(b'IDAT', zlib.compress(b'\x00\x00')) + chunk(b'IEND', b''))
hello = frame(1, js({"proto": "ptk", "version": 1, "name": "a", "window": 4}))
def offer(size): return frame(3, js({"name": "x.png", "size": size, "sha256": hashlib.sha256(png).hexdigest(), "mediaType": "image/png"}))
done = frame(0x12, b'File Transfer Done')
seeds = {
    'session': hello + offer(len(png)) + frame(0x10, png) + done + frame(8, b''),
    'two-chunks': hello + offer(len(png)) + frame(0x10, png[:20]) + frame(0x10, png[20:]) + done,
    'early-done': hello + offer(len(png)) + done + offer(9) + frame(8, b''),
    'bad-json': hello + frame(3, b'{"name":1}'),
    'oversize': hello + bytes([0x10, 0xff, 0xff, 0xff, 0xff]),
    'version2': frame(1, js({"proto": "ptk", "version": 2, "name": "a"})),
    'failed-chunk': hello + offer(len(png)) + frame(0x10, b'\xff' + png[1:]) + frame(0x10, b'x') + frame(8, b''),
}
os.makedirs(os.path.join(base, 'frames'), exist_ok=True)
os.makedirs(os.path.join(base, 'png'), exist_ok=True)
for name, data in seeds.items():
    for step in (1, 7, 64):
        open(os.path.join(base, 'frames', f'seed-{name}-{step}'), 'wb').write(bytes([step - 1]) + data)
for name in sorted(os.listdir(suite))[:60:6]:
    data = open(os.path.join(suite, name), 'rb').read()
    open(os.path.join(base, 'png', f'seed-{name}'), 'wb').write(bytes([31]) + data)
open(os.path.join(base, 'png', 'seed-minimal'), 'wb').write(bytes([0]) + png)
