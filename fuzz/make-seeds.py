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

# The other targets (fuzz/run.sh names them): seeds kept small; the fuzzer grows them.
def write(target, name, data):
    os.makedirs(os.path.join(base, target), exist_ok=True)
    open(os.path.join(base, target, f'seed-{name}'), 'wb').write(data)

import subprocess, tempfile
jpegs = {}
with tempfile.TemporaryDirectory() as tmp:
    for name, args in {'baseline': ['-size', '16x8', 'gradient:red-blue'],
                       'grey': ['-size', '8x8', 'gradient:', '-colorspace', 'Gray'],
                       'progressive': ['-size', '24x16', 'plasma:', '-interlace', 'JPEG'],
                       'oriented': ['-size', '16x8', 'gradient:', '-orient', 'right-top']}.items():
        out = os.path.join(tmp, name + '.jpg')
        try:
            subprocess.run([next((c for c in ('/usr/bin/convert', 'convert') if c[0] != '/' or os.path.exists(c)))] + args + ['-quality', '50', out], check=True, capture_output=True)
            jpegs[name] = open(out, 'rb').read()
        except (OSError, subprocess.CalledProcessError):
            pass  # without ImageMagick the JPEG targets start from the hand-made seeds below
jpegs.setdefault('markers-only', bytes.fromhex('ffd8ffe000104a46494600010100000100010000ffd9'))
for name, data in jpegs.items():
    write('jpeg', name, bytes([63]) + data)
    write('thumbnail', 'jpeg-' + name, bytes([1]) + data)
    write('thumbnail', 'jpeg-small-limit-' + name, bytes([3]) + data)
for name in sorted(os.listdir(suite))[:60:12]:
    data = open(os.path.join(suite, name), 'rb').read()
    write('thumbnail', 'png-' + name, bytes([0]) + data)
write('thumbnail', 'png-minimal-small-limit', bytes([2]) + png)

body = js({"info": {"alias": "Phone", "version": "2.1", "deviceModel": "X", "deviceType": "mobile",
                    "fingerprint": "ab" * 32, "port": 53317, "protocol": "https", "download": False},
           "files": {"a": {"id": "a", "fileName": "a.png", "size": 10, "fileType": "image/png", "sha256": "00" * 32}}})
requests = {
    'info': b'GET /api/localsend/v2/info?fingerprint=ab%20c HTTP/1.1\r\nHost: x\r\n\r\n',
    'prepare': b'POST /api/localsend/v2/prepare-upload?pin=1234 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n' % len(body) + body,
    'upload-chunked': b'POST /api/localsend/v2/upload?sessionId=s&fileId=a&token=t HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    'two': b'GET / HTTP/1.1\r\n\r\nGET /api/localsend/v1/info HTTP/1.1\r\nConnection: close\r\n\r\n',
}
for name, data in requests.items():
    write('http', name, bytes([255]) + data)
    write('http', name + '-bytewise', bytes([0]) + data)

write('localsend-json', 'prepare', bytes([1]) + body)
write('localsend-json', 'register', bytes([0]) + js({"alias": "Phone", "version": "2.1", "deviceModel": None, "deviceType": "mobile",
                                                        "fingerprint": "ab" * 32, "port": 53317, "protocol": "https", "download": False, "announce": True}))
write('localsend-json', 'file', bytes([2]) + js({"id": "a", "fileName": "../a.png", "size": 10, "fileType": "image/png", "sha256": None, "preview": None}))
write('localsend-json', 'response', bytes([3]) + js({"sessionId": "s", "files": {"a": "t"}}))

write('package', 'v1', js({"Version": 1, "Name": "beach.png", "Size": 10, "SHA256": "00" * 32, "Width": 1, "Height": 1,
                            "Received": "2026-11-30T09:41:00.000Z", "SenderName": "laptop", "Note": "a note", "Rating": 5}))
write('package', 'newer', js({"Version": 99}))
write('package', 'no-version', b'{"Name": "x"}')

device = open(os.path.join(here, '..', 'Tests', 'Fixtures', 'identity', 'expected-id')).read().strip()
write('trust', 'list', ("# comment\n%s laptop\r\n%s  phone with spaces \n%s\n" % (device, 'ab' * 32, device[:10])).encode())
write('trust', 'pending', ("%s\t3\t1764495660\t1764495700\t192.168.1.2:5000\tAnna's phone\n" % device).encode())

write('config', 'default', open(os.path.join(here, '..', 'etc', 'ptkd.conf'), 'rb').read())
write('config', 'settings', b'port = 47851\nsenders = trusted\nmax-file-size = 64M\npartial-max-age = 2d\n\r\nlisten = ::1\nlocalsend-types = image/png, image/jpeg\nmdns = no\n')
