#!/usr/bin/env python3
"""How the HEICs of issue 54 here were made (run once, by hand, like ../make.sh; the tests read
the files). Needs ImageMagick, libheif-examples (heif-enc) and python3. Every file is built box
by box around HEVC data heif-enc made of gradients drawn here:

  grid-20000.heic      a grid item of one 64x64 tile whose ispe says 128x128 and whose grid
                       description says 20000x20000 (libheif allocates the latter: 2.4 GB)
  overlay-20000.heic   the same as an overlay (iovl): canvas 20000x20000, ispe 128x128
  coded-2048.heic      a 2048x2048 HEVC image whose ispe says 64x64 (the decoder allocates
                       what the sequence parameter set in hvcC says)
  coded-in-band.heic   a 64x64 hvcC, ispe 64x64, but the item's data starts with the
                       parameter sets of a 2048x2048 picture, which override hvcC's
  alpha-2048.heic      a 64x64 image whose alpha plane (an auxiliary image, which libheif
                       decodes with it) says 64x64 in ispe and is coded 2048x2048
"""
import os, struct, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp()

def box(t, body): return struct.pack('>I', 8 + len(body)) + t + body
def full(t, body, version=0, flags=0): return box(t, struct.pack('>I', version << 24 | flags) + body)

def children(d, s, e):
    out = {}
    while s + 8 <= e:
        size, = struct.unpack('>I', d[s:s + 4])
        assert size >= 8
        out.setdefault(d[s + 4:s + 8], []).append((s + 8, s + size))
        s += size
    return out

def encode(side, draw):
    png, heic = os.path.join(tmp, 'in.png'), os.path.join(tmp, 'out.heic')
    subprocess.run(['convert', '-size', f'{side}x{side}'] + draw + ['-depth', '8', '-strip', png], check=True)
    subprocess.run(['heif-enc', '-q', '50', png, '-o', heic], check=True, stdout=subprocess.DEVNULL)
    d = open(heic, 'rb').read()
    top = children(d, 0, len(d))
    meta = children(d, top[b'meta'][0][0] + 4, top[b'meta'][0][1])
    ipco = children(d, *children(d, *meta[b'iprp'][0])[b'ipco'][0])
    s, e = ipco[b'hvcC'][0]
    hvcC = d[s:e]  # its content; the property is the whole box
    # The parameter sets, from hvcC's arrays (ISO/IEC 14496-15 8.3.3).
    sets, i = [], 23
    for _ in range(hvcC[22]):
        n, = struct.unpack('>H', hvcC[i + 1:i + 3]); i += 3
        for _ in range(n):
            length, = struct.unpack('>H', hvcC[i:i + 2]); sets.append(hvcC[i + 2:i + 2 + length]); i += 2 + length
    ds, de = top[b'mdat'][0]
    return d[s - 8:e], sets, d[ds:de]

small_hvcC, _, small_data = encode(64, ['gradient:#f02010-#1040e0'])
big_hvcC, big_sets, big_data = encode(2048, ['gradient:#20f010-#e04010'])

def heif(items, primary, refs, properties, associations, idat, mdat):
    """items: [(id, type, hidden)]; refs: [(type, from, [to])]; properties: [box];
    associations: {id: [1-based property index]}; idat: {id: bytes}; mdat: {id: bytes}."""
    hdlr = full(b'hdlr', bytes(4) + b'pict' + bytes(12) + b'\0')
    pitm = full(b'pitm', struct.pack('>H', primary))
    iinf = full(b'iinf', struct.pack('>H', len(items)) + b''.join(
        full(b'infe', struct.pack('>HH', i, 0) + t + b'\0', version=2, flags=1 if hidden else 0) for i, t, hidden in items))
    iref = full(b'iref', b''.join(box(t, struct.pack('>HH', f, len(to)) + b''.join(struct.pack('>H', x) for x in to)) for t, f, to in refs))
    ipco = box(b'ipco', b''.join(properties))
    ipma = full(b'ipma', struct.pack('>I', len(associations)) + b''.join(
        struct.pack('>HB', i, len(p)) + bytes(0x80 | k for k in p) for i, p in sorted(associations.items())))
    iprp = box(b'iprp', ipco + ipma)
    idat_bytes = b''.join(idat.values())
    def meta(mdat_start):
        body, at, mat = b'', 0, mdat_start
        located = sorted(set(idat) | set(mdat))
        for i in located:
            if i in idat:
                body += struct.pack('>HHHH', i, 1, 0, 1) + struct.pack('>II', at, len(idat[i])); at += len(idat[i])
            else:
                body += struct.pack('>HHHH', i, 0, 0, 1) + struct.pack('>II', mat, len(mdat[i])); mat += len(mdat[i])
        iloc = full(b'iloc', bytes([0x44, 0x00]) + struct.pack('>H', len(located)) + body, version=1)
        return full(b'meta', hdlr + pitm + iloc + iinf + iref + iprp + (box(b'idat', idat_bytes) if idat else b''))
    ftyp = box(b'ftyp', b'heic' + bytes(4) + b'mif1heicmiaf')
    start = len(ftyp) + len(meta(0)) + 8
    return ftyp + meta(start) + box(b'mdat', b''.join(mdat[i] for i in sorted(mdat)))

def ispe(w, h): return full(b'ispe', struct.pack('>II', w, h))

def write(name, data):
    open(os.path.join(here, name), 'wb').write(data)
    print(name, len(data), 'bytes')

# A grid (rows 1, columns 1, 32-bit sizes) and an overlay over one 64x64 tile, item 2.
grid = bytes([0, 1, 0, 0]) + struct.pack('>II', 20000, 20000)
overlay = bytes([0, 1]) + bytes(8) + struct.pack('>II', 20000, 20000) + struct.pack('>ii', 0, 0)
for name, kind, description in [('grid-20000.heic', b'grid', grid), ('overlay-20000.heic', b'iovl', overlay)]:
    write(name, heif([(1, kind, False), (2, b'hvc1', True)], 1, [(b'dimg', 1, [2])],
                     [small_hvcC, ispe(64, 64), ispe(128, 128)], {1: [3], 2: [1, 2]}, {1: description}, {2: small_data}))

# A coded image larger than its ispe: in hvcC, and in its data (parameter sets in band).
write('coded-2048.heic', heif([(1, b'hvc1', False)], 1, [], [big_hvcC, ispe(64, 64)], {1: [1, 2]}, {}, {1: big_data}))
in_band = b''.join(struct.pack('>I', len(s)) + s for s in big_sets)
write('coded-in-band.heic', heif([(1, b'hvc1', False)], 1, [], [small_hvcC, ispe(64, 64)], {1: [1, 2]}, {}, {1: in_band + big_data}))

# An alpha plane (auxl, auxC) coded far larger than its ispe. (One whose ispe differs from its
# image's libheif 1.15 does not take as alpha.)
auxC = full(b'auxC', b'urn:mpeg:mpegB:cicp:systems:auxiliary:alpha\0')
write('alpha-2048.heic', heif([(1, b'hvc1', False), (2, b'hvc1', True)], 1, [(b'auxl', 2, [1])],
                              [small_hvcC, ispe(64, 64), big_hvcC, auxC], {1: [1, 2], 2: [3, 2, 4]}, {},
                              {1: small_data, 2: big_data}))
