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
    'web-range': b'GET /photo/42/original?download=1 HTTP/1.1\r\nHost: x\r\nCookie: a=1; __Host-ptk="' + b'ab' * 32 + b'"\r\nRange: bytes=0-99\r\n\r\n',
    'web-ranges': b'GET /photo/7/original HTTP/1.1\r\nRange: bytes=-10, 0-, 5-4\r\n\r\n',
    'web-upload': b'POST /upload?name=a%2F..%2Fb.png HTTP/1.1\r\nX-CSRF-Token: 00\r\nContent-Length: 5\r\n\r\nhello',
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

# The escapers (issue 40): < > " ' & beside marks that join them into one grapheme cluster.
escape_seeds = {
    'combining': 'x\u0600<b id=pwn>\u0301 "\u0301 onfocus=x \'\u0301 &\u0301amp;',
    'joiners': '<\u200d>\ufe0f"\u200d\'\ufe0f&\u202e<\u202e \U0001F469\u200d\U0001F4BB<',
    'paths': '../\u0301x/\u0600\\y;\u0301"\r\n%41.png',
    'entities': '&amp;&lt;&gt;&quot;&#39;&#x3c;&',
}
for name, text in escape_seeds.items():
    write('escape', name, text.encode())
write('escape', 'broken-utf8', b'\xff<\xcc>\xe2\x80"\xf0\x9f\'&')

# HEIF (issue 27): heif-enc's files from Tests/Fixtures/heif, and hostile ones built box by box,
# for the streaming box check (heif) and libheif behind the thumbnailer (first byte 4: HEIF,
# 6: HEIF with the small pixel limit). Hostile colour profiles go to the thumbnailer as PNGs and JPEGs.
def box(t, body): return struct.pack('>I', 8 + len(body)) + t + body
def full(t, body, version=0): return box(t, bytes([version, 0, 0, 0]) + body)
ftyp = box(b'ftyp', b'heic\0\0\0\0mif1heic')
hdlr = full(b'hdlr', b'\0\0\0\0pict' + bytes(13))
pitm = full(b'pitm', struct.pack('>H', 1))
def grid(rows, columns, width):
    data = bytes([0, 0, rows - 1, columns - 1]) + struct.pack('>HH', width, width)
    refs = b''.join(struct.pack('>H', 2 + i % 65000) for i in range(rows * columns))
    iref = full(b'iref', box(b'dimg', struct.pack('>HH', 1, min(rows * columns, 65535)) + refs))
    iinf = full(b'iinf', struct.pack('>H', 1) + full(b'infe', struct.pack('>HH', 1, 0) + b'grid\0', version=2))
    iprp = box(b'iprp', box(b'ipco', full(b'ispe', struct.pack('>II', width, width))) + full(b'ipma', struct.pack('>IHBB', 1, 1, 1, 0x81)))
    def meta(offset):
        iloc = full(b'iloc', b'\x44\x00' + struct.pack('>HHHHII', 1, 1, 0, 1, offset, len(data)))
        return full(b'meta', hdlr + pitm + iloc + iinf + iref + iprp)
    return ftyp + meta(len(ftyp + meta(0)) + 8) + box(b'mdat', data)
huge_iloc = ftyp + full(b'meta', hdlr + pitm + full(b'iloc', b'\x44\x00' + struct.pack('>HHHHHII', 65535, 1, 0, 0, 65535, 0, 16), version=1)) + box(b'mdat', bytes(16))
heifs = {'grid-65536-tiles': grid(256, 256, 4096), 'huge-iloc': huge_iloc}
fixtures = os.path.join(here, '..', 'Tests', 'Fixtures', 'heif')
for name in ('picture', 'rotated', 'portrait-exif', 'display-p3-icc'):
    heifs[name] = open(os.path.join(fixtures, name + '.heic'), 'rb').read()
picture = heifs['picture']
at = picture.index(b'iloc') - 4
heifs['iloc-past-meta'] = picture[:at] + struct.pack('>I', 4096) + picture[at + 4:]
heifs['truncated'] = picture[:2000]
heifs['meta-past-end'] = picture[:28] + struct.pack('>I', len(picture)) + picture[32:]
# Issue 54's: sizes declared twice (Tests/Fixtures/heif/hostile/make.py).
for name in ('grid-20000', 'overlay-20000', 'coded-2048', 'coded-in-band', 'alpha-2048'):
    heifs[name] = open(os.path.join(fixtures, 'hostile', name + '.heic'), 'rb').read()
for name, data in heifs.items():
    write('heif', name, bytes([63]) + data)
    write('thumbnail', 'heif-' + name, bytes([4]) + data)
write('thumbnail', 'heif-small-limit-picture', bytes([6]) + picture)
pattern = bytes((i * 131 + 7) & 255 for i in range(600))
def png_with(chunks):

    raw = b''.join(b'\0' + b''.join(bytes((x * 16, y * 16, 200)) for x in range(16)) for y in range(16))
    out = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 16, 16, 8, 2, 0, 0, 0))
    for t, d in chunks: out += chunk(t, d)
    return out + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
p3 = open(os.path.join(fixtures, 'display-p3.icc'), 'rb').read()
lying = p3[:128] + struct.pack('>I', 4096) + p3[132:]
huge_profile = struct.pack('>I', 2_000_000) + bytes(2_000_000 - 4)
for name, profile in {'p3': p3, 'junk': pattern, 'tags-past-end': lying, 'inflates-past-limit': huge_profile}.items():
    write('thumbnail', 'png-iccp-' + name, bytes([0]) + png_with([(b'iCCP', b'x\0\0' + zlib.compress(profile, 9))]))
write('thumbnail', 'png-gama-linear-chrm-wide', bytes([0]) + png_with([(b'gAMA', struct.pack('>I', 100000)),
                                                                       (b'cHRM', struct.pack('>8I', 31270, 32900, 70800, 29200, 17000, 79700, 13100, 4600))]))
if 'baseline' in jpegs:
    j = jpegs['baseline']
    for name, profile in {'p3': p3, 'junk': pattern}.items():
        app2 = b'ICC_PROFILE\0\x01\x01' + profile
        write('thumbnail', 'jpeg-icc-' + name, bytes([1]) + j[:2] + b'\xff\xe2' + struct.pack('>H', len(app2) + 2) + app2 + j[2:])

# The WebDAV door (PTKDAV): the first byte's low 2 bits pick the parser, its high bits a prefix
# (/dav, /, "", /dav/, /a%20b, /dav/x/y) or a Timeout maximum. 0: XML bodies as real clients
# send them, and hostile ones; 1: If headers (RFC 4918 section 10.4's examples); 2: request-target,
# Destination and Host on lines of their own; 3: text for Multistatus.escape.
dav_bodies = {
    'propfind-finder': '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:">\n<D:prop>\n<D:getlastmodified/>\n<D:getcontentlength/>\n<D:resourcetype/>\n</D:prop>\n</D:propfind>\n',
    'propfind-allprop-include': '<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:supported-live-property-set/></D:include></D:propfind>',
    'propfind-propname': '<propfind xmlns="DAV:"><propname/></propfind>',
    'propfind-nextcloud': '<?xml version="1.0"?>\n<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">\n <d:prop>\n  <d:displayname />\n  <oc:checksums />\n  <nc:has-preview />\n </d:prop>\n</d:propfind>',
    'proppatch-windows': '<?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop><Z:Win32CreationTime>Wed, 04 Nov 2020 13:25:51 GMT</Z:Win32CreationTime><Z:Win32FileAttributes>00000000</Z:Win32FileAttributes></D:prop></D:set></D:propertyupdate>',
    'proppatch-rfc': '<?xml version="1.0" encoding="utf-8" ?>\n<D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://ns.example.com/standards/z39.50/">\n<D:set><D:prop><Z:Authors><Z:Author>Jim Whitehead</Z:Author><Z:Author>Roy Fielding</Z:Author></Z:Authors></D:prop></D:set>\n<D:remove><D:prop><Z:Copyright-Owner/></D:prop></D:remove>\n</D:propertyupdate>',
    'proppatch-attributes': '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:p xmlns:x="urn:x" xml:lang="en" x:a="1&#9;2&#10;3&#13;" b=\'&lt;&amp;&quot;\'>t&#13;<y/><![CDATA[<&>]]></x:p><q xmlns=""/></D:prop></D:set></D:propertyupdate>',
    'lock-neon': '<?xml version="1.0" encoding="utf-8" ?>\n<D:lockinfo xmlns:D="DAV:">\n <D:lockscope><D:exclusive /></D:lockscope>\n <D:locktype><D:write /></D:locktype>\n<D:owner>svn &amp; co &lt;lock&gt;</D:owner></D:lockinfo>',
    'lock-rfc-href': "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n<D:lockinfo xmlns:D='DAV:'>\n  <D:lockscope><D:shared/></D:lockscope>\n  <D:locktype><D:write/></D:locktype>\n  <D:owner>\n    <D:href>http://example.org/~ejw/contact.html</D:href>\n  </D:owner>\n</D:lockinfo>",
    'billion-laughs': '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n<!ENTITY lol2 "&lol;&lol;&lol;&lol;">\n]>\n<lolz>&lol2;</lolz>',
    'xxe': '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop>&x;</D:prop></D:propfind>',
    'parameter-entity': '<!DOCTYPE d [<!ENTITY % p SYSTEM "http://example.com/p.dtd"> %p;]><a/>',
    'comment-doctype': '<!-- <!DOCTYPE x> --><a>&lt;!ENTITY&gt;</a>',
    'deep': '<a>' * 33 + '</a>' * 33,
    'latin1': '<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>',
    'undefined-entity': '<a>&nope;</a>',
}
for name, text in dav_bodies.items():
    write('webdav', 'xml-' + name, bytes([0]) + text.encode('latin-1' if name == 'latin1' else 'utf-8'))
write('webdav', 'xml-utf16', bytes([0]) + '<?xml version="1.0" encoding="UTF-16"?><a b="c">\u00e9</a>'.encode('utf-16'))
dav_ifs = {  # RFC 4918 section 10.4's examples, and hostile ones
    'untagged': '(<urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2> ["I am an ETag"]) (["I am another ETag"])',
    'not': '(Not <urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2> <urn:uuid:58f202ac-22cf-11d1-b12d-002035b29092>)',
    'no-lock': '(<urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2>) (Not <DAV:no-lock>)',
    'tagged': '<http://www.example.com/specs/> (<urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2>)\r\n <http://www.example.com/users/f/fielding/index.html> (<urn:uuid:58f202ac-22cf-11d1-b12d-002035b29092>) (W/"weak")',
    'etag-weak': '<http://www.example.com/specs/rfc2518.doc> (["4217"]) ([W/"A weak one"] not <opaquelocktoken:x>)',
    'mixed': '(<a>) <http://h/x> (<b>)',
    'unicode': '(<urn:\u00e9\u0301> [">\u0301"])',
}
for name, text in dav_ifs.items():
    write('webdav', 'if-' + name, bytes([1]) + text.encode())
dav_paths = {  # (prefix index, target, destination, host)
    'plain': (0, '/dav/2026/IMG_0001.JPG', 'http://ptk.local:8080/dav/2026/IMG_0002.JPG', 'ptk.local:8080'),
    'dot-dot': (0, '/dav/%2e%2e/etc/passwd', 'https://PTK.LOCAL/dav/a/%2E./b', 'ptk.local'),
    'encoded-slash': (0, '/dav/a%2fb/c%5Cd', '/dav/a%2Fb', 'h'),
    'unicode': (0, '/dav/caf%C3%A9/e%CC%81t%C3%A9.png?x=1#f', 'http://h/dav/\u00e9\u0301?\u0301/x', 'h'),
    'other-host': (0, 'http://evil/dav/a', 'http://evil.example/dav/a', 'ptk.local'),
    'host-prefix': (0, '/dav', 'http://ptk.local.evil/dav/a', 'ptk.local'),
    'root-prefix': (4, '//a//b/', 'Http://h:80', 'h:80'),
    'empty-prefix': (8, '/%00/%7F/%C2%85', '/x/%ZZ', 'h'),
    'spaced-prefix': (16, '/a%20b/c d', ' /a b/e\t', 'h'),
    'long': (0, '/dav/' + '/'.join(['%41' * 200] * 6), '/dav/' + 'x/' * 40, 'h'),
    'query-mark': (0, '/dav/a?\u0301b/c#\u0301', 'http://h/\u0301dav/x', 'h/\u0301dav'),
    'dotted-name': (0, '.\u0301hidden', '._\u0301x', 'h'),
    'timeout': (40, '1', 'Second-4100000000, Infinite', 'h'),
    'timeout-extra': (8, 'Infinity', 'Extended, Second-99999999999999999999', 'h'),
}
for name, (choice, target, dest, host) in dav_paths.items():
    write('webdav', 'path-' + name, bytes([2 | choice]) + '\n'.join([target, dest, host]).encode())
dav_texts = {
    'markup': '<D:href>a&b</D:href> "x" \'y\' ]]> &amp;',
    'controls': '\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\x85\ufffe\uffff\U0001fffe',
    'combining': '<\u0301 &\u0301 >\u0301 "\u0301 \r\n',
}
for name, text in dav_texts.items():
    write('webdav', 'escape-' + name, bytes([3]) + text.encode('utf-8', 'surrogatepass'))
write('webdav', 'escape-broken-utf8', bytes([3]) + b'\xff<\xcc&\xe2\x80\r\xf0\x9f')

# Videos (issue 58): MP4 and MOV movies built box by box, and hostile ones, for the streaming
# box walk and the moov walk (first byte: how the rest is split).
def movie(brand=b'isom', tracks=1, offset_delta=0, declared=1, moov_first=False, extra=b''):
    ftyp = box(b'ftyp', brand + b'\0\0\2\0' + brand + b'mp41')
    ident = struct.pack('>9I', 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    def moov(data_at):
        mvhd = full(b'mvhd', struct.pack('>5I', 0, 0, 1000, 2000, 0x10000) + b'\1\0' + bytes(10) + ident + bytes(24) + struct.pack('>I', 2))
        def trak(i):
            tkhd = full(b'tkhd', struct.pack('>5I', 0, 0, i + 1, 0, 2000) + bytes(16) + ident + struct.pack('>2I', 320 << 16, 240 << 16))
            mdhd = full(b'mdhd', struct.pack('>4I', 0, 0, 30000, 60060) + b'\x55\xc4\0\0')
            hdlr = full(b'hdlr', bytes(4) + b'vide' + bytes(13))
            stsd = full(b'stsd', struct.pack('>I', 1) + box(b'avc1', bytes(6) + b'\0\1' + bytes(70)))
            stbl = box(b'stbl', stsd + full(b'stts', struct.pack('>3I', 1, 60, 1001)) + full(b'stsc', struct.pack('>4I', 1, 1, 60, 1))
                       + full(b'stsz', struct.pack('>2I', 1, 60)) + full(b'stco', struct.pack('>2I', declared, data_at + offset_delta)))
            return box(b'trak', tkhd + box(b'mdia', mdhd + hdlr + box(b'minf', stbl)))
        return box(b'moov', mvhd + b''.join(trak(i) for i in range(tracks)) + extra)
    mdat = box(b'mdat', b'Z' * 64)
    if moov_first:
        return ftyp + moov(len(ftyp) + len(moov(0)) + 8) + mdat
    return ftyp + mdat + moov(len(ftyp) + 8)
nested = b''
for _ in range(20): nested = box(b'edts', nested)
videos = {
    'mp4': movie(), 'mp4-fast-start': movie(moov_first=True), 'mov': movie(brand=b'qt  '),
    'old-quicktime': box(b'wide', b'') + movie()[24:],
    'truncated': movie()[:150], 'chunk-outside': movie(offset_delta=1 << 20),
    'lying-count': movie(declared=1000000000), 'tracks-100': movie(tracks=100), 'nested': movie(extra=nested),
    'terabyte-mdat': movie()[:24] + struct.pack('>I', 1) + b'mdat' + struct.pack('>Q', 1 << 40) + b'Z' * 64,
    'tiny-boxes': movie()[:24] + box(b'free', b'') * 2000,
}
for name, data in videos.items():
    write('video', name, bytes([6]) + data)

# An iPhone's EXIF with Apple's MakerNote (issue 58: tag 0x11 is a Live Photo's content
# identifier, read by ptk_exif.c's apple_content_id), in a JPEG for the thumbnailer: as an
# iPhone writes it, and with the MakerNote's count, offsets and lengths hostile.
def apple_exif(makernote):
    def ifd(entries, start):
        out, area = struct.pack('>H', len(entries)), b''
        area_at = start + 2 + 12 * len(entries) + 4
        for tag, fmt, count, value in entries:
            if len(value) <= 4:
                out += struct.pack('>HHI', tag, fmt, count) + value.ljust(4, b'\0')
            else:
                out += struct.pack('>HHII', tag, fmt, count, area_at + len(area))
                area += value + (b'\0' if len(value) % 2 else b'')
        return out + b'\0\0\0\0' + area
    ifd0 = lambda at: [(0x010F, 2, 6, b'Apple\0'), (0x8769, 4, 1, struct.pack('>I', at))]
    exif_at = 8 + len(ifd(ifd0(0), 8))
    tiff = b'MM\0\x2a' + struct.pack('>I', 8) + ifd(ifd0(exif_at), 8) + ifd([(0x927C, 7, len(makernote), makernote)], exif_at)
    app1 = b'Exif\0\0' + tiff
    return b'\xff\xe1' + struct.pack('>H', len(app1) + 2) + app1
def apple_note(entries, order=b'MM', count=None):
    header = b'Apple iOS\0\0\1' + order
    pack = '>' if order == b'MM' else '<'
    body, tail = b'', b''
    data_at = 16 + 12 * len(entries) + 4
    for tag, fmt, n, value, offset in entries:
        if len(value) <= 4 and offset is None:
            body += struct.pack(pack + 'HHI', tag, fmt, n) + value.ljust(4, b'\0')
        else:
            body += struct.pack(pack + 'HHII', tag, fmt, n, data_at + len(tail) if offset is None else offset)
            tail += value
    return header + struct.pack(pack + 'H', len(entries) if count is None else count) + body + b'\0\0\0\0' + tail
uuid = b'1F6A2C4E-0B3D-4E5F-8A9B-C0D1E2F3A4B5\0'
notes = {
    'iphone': apple_note([(1, 9, 1, struct.pack('>i', 14), None), (0x11, 2, len(uuid), uuid, None)]),
    'intel': apple_note([(0x11, 2, len(uuid), uuid, None)], order=b'II'),
    'offset-past-end': apple_note([(0x11, 2, len(uuid), uuid, 0xFFFFFFF0)]),
    'length-wraps': apple_note([(0x11, 2, 0xFFFFFFFF, uuid, None)]),
    'count-65535': apple_note([(0x11, 2, len(uuid), uuid, None)], count=65535),
    'no-nul': apple_note([(0x11, 2, 8, b'ABCDEFGH', None)]),
    'short': b'Apple iOS\0\0\1MM',
}
base_jpeg = jpegs.get('baseline', jpegs['markers-only'])
for name, note in notes.items():
    write('thumbnail', 'jpeg-apple-makernote-' + name, bytes([1]) + base_jpeg[:2] + apple_exif(note) + base_jpeg[2:])
