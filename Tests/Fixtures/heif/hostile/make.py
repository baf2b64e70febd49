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

The second image audit of issue 54 (libheif 1.15 reads what these declare twice otherwise than
HEIFCheck did):

  clap-grid-7500.heic  a 7500x7500 grid (grid, ispe and its one tile's ispe agree) over one
                       64x64 tile, with a clap cropping it to 64x64: libheif's handle says
                       64x64, and it decodes 7500x7500
  ispe2-grid-7500.heic the same with a second ispe of 64x64 in place of the clap (libheif
                       takes the last ispe)
  alpha-clap.heic      a 64x64 image whose alpha plane is coded 2048x2048 (its ispe says so)
                       and cropped to 64x64 by a clap, so libheif takes it as the alpha
  nal-zero.heic        64x64 in hvcC and ispe; its data starts with a NAL unit of 0 bytes,
                       then the parameter sets and picture of a 2048x2048 image
  nal-length2.heic     the same picture after a 2-byte unit, with hvcC saying 2-byte NAL
                       lengths (libheif 1.15 reads 4-byte ones)
  hvcC-array-type.heic the 2048x2048 parameter sets in hvcC arrays all marked as picture
                       parameter sets (the decoder goes by each unit's own header)
  iloc-twice.heic      iloc places the item twice: first the 2048x2048 data (libheif reads
                       the first), then the 64x64 data
  ipma-twice.heic      ipma lists the item twice (libheif reads the first entry)
  iref-twice.heic      a 1x2 grid whose tiles are named by two dimg boxes, one each (libheif
                       takes the first)
  pictures-2.heic      a 64x64 image whose data holds its picture twice (libde265 decodes
                       every picture it is given)
  slices-17.heic       a 1024x1024 grey picture in 17 slice segments, 16 of which start it
                       again at its first coding block (each costs a decode of the picture)

The third audit of issue 54 (libheif decodes each image an overlay names, once per naming):

  overlay-repeat.heic  a 64x64 overlay (iovl) naming its one 64x64 layer 1,024 times
  overlay-layers.heic  a 64x64 overlay of 4 layers of 64x64, each its own item (the same
                       data): 4 decodes of 64x64, 16,384 pixels
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

# --- The second image audit of issue 54.

def clap(w, h):  # clean aperture w x h (each as n/1), centred (offsets 0/1)
    return box(b'clap', struct.pack('>IIIIiIiI', w, 1, h, 1, 0, 1, 0, 1))

def heif2(items, primary, refs, properties, associations, located, blobs):
    """As heif(), with ipma entries as a list [(id, [property])] (an item may be listed twice)
    and iloc as a list [(id, blob index)] over `blobs`, placed in mdat in order."""
    hdlr = full(b'hdlr', bytes(4) + b'pict' + bytes(12) + b'\0')
    pitm = full(b'pitm', struct.pack('>H', primary))
    iinf = full(b'iinf', struct.pack('>H', len(items)) + b''.join(
        full(b'infe', struct.pack('>HH', i, 0) + t + b'\0', version=2, flags=1 if hidden else 0) for i, t, hidden in items))
    iref = full(b'iref', b''.join(box(t, struct.pack('>HH', f, len(to)) + b''.join(struct.pack('>H', x) for x in to)) for t, f, to in refs))
    ipma = full(b'ipma', struct.pack('>I', len(associations)) + b''.join(
        struct.pack('>HB', i, len(p)) + bytes(0x80 | k for k in p) for i, p in associations))
    iprp = box(b'iprp', box(b'ipco', b''.join(properties)) + ipma)
    def meta(start):
        at, where = start, []
        for b in blobs:
            where.append(at)
            at += len(b)
        body = b''.join(struct.pack('>HHHH', i, 0, 0, 1) + struct.pack('>II', where[k], len(blobs[k])) for i, k in located)
        iloc = full(b'iloc', bytes([0x44, 0x00]) + struct.pack('>H', len(located)) + body, version=1)
        return full(b'meta', hdlr + pitm + iloc + iinf + (iref if refs else b'') + iprp)
    ftyp = box(b'ftyp', b'heic' + bytes(4) + b'mif1heicmiaf')
    start = len(ftyp) + len(meta(0)) + 8
    return ftyp + meta(start) + box(b'mdat', b''.join(blobs))

def nal_units(data):
    out, i = [], 0
    while i + 4 <= len(data):
        n, = struct.unpack('>I', data[i:i + 4])
        out.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return out

def length_prefixed(units): return b''.join(struct.pack('>I', len(u)) + u for u in units)

# A 7500x7500 grid whose one tile is coded 64x64 (tiles may be coded smaller than their ispe),
# shown 64x64: through a clap, or a second ispe.
grid = bytes([0, 1, 0, 0]) + struct.pack('>II', 7500, 7500)
for name, last in [('clap-grid-7500.heic', clap(64, 64)), ('ispe2-grid-7500.heic', ispe(64, 64))]:
    write(name, heif2([(1, b'grid', False), (2, b'hvc1', True)], 1, [(b'dimg', 1, [2])],
                      [small_hvcC, ispe(7500, 7500), last], [(1, [2, 3]), (2, [1, 2])], [(1, 0), (2, 1)], [grid, small_data]))

# An alpha plane of 2048x2048 (ispe and coding agree) cropped to its image's 64x64.
write('alpha-clap.heic', heif2([(1, b'hvc1', False), (2, b'hvc1', True)], 1, [(b'auxl', 2, [1])],
                               [small_hvcC, ispe(64, 64), big_hvcC, ispe(2048, 2048), clap(64, 64), auxC],
                               [(1, [1, 2]), (2, [3, 4, 5, 6])], [(1, 0), (2, 1)], [small_data, big_data]))

# In-band parameter sets of 2048x2048 hidden from a walk that stops at an empty unit, or that
# reads the lengths hvcC declares rather than libheif's 4 bytes.
write('nal-zero.heic', heif2([(1, b'hvc1', False)], 1, [], [small_hvcC, ispe(64, 64)], [(1, [1, 2])], [(1, 0)],
                             [struct.pack('>I', 0) + in_band + big_data]))
two_byte = bytearray(small_hvcC)
two_byte[8 + 21] = (two_byte[8 + 21] & 0xFC) | 1
write('nal-length2.heic', heif2([(1, b'hvc1', False)], 1, [], [bytes(two_byte), ispe(64, 64)], [(1, [1, 2])], [(1, 0)],
                                [struct.pack('>I', 2) + bytes([0x4E, 0x01]) + in_band + big_data]))

# hvcC arrays all marked type 34 (PPS), holding the 2048x2048 VPS, SPS and PPS.
conf = bytearray(small_hvcC[8:8 + 22])
arrays = b''.join(bytes([0x80 | 34]) + struct.pack('>HH', 1, len(u)) + u for u in big_sets)
write('hvcC-array-type.heic', heif2([(1, b'hvc1', False)], 1, [], [box(b'hvcC', bytes(conf) + bytes([len(big_sets)]) + arrays), ispe(64, 64)],
                                    [(1, [1, 2])], [(1, 0)], [big_data]))

# Declared twice in the item boxes.
write('iloc-twice.heic', heif2([(1, b'hvc1', False)], 1, [], [small_hvcC, ispe(64, 64)], [(1, [1, 2])], [(1, 0), (1, 1)],
                               [in_band + big_data, small_data]))
write('ipma-twice.heic', heif2([(1, b'hvc1', False)], 1, [], [small_hvcC, ispe(64, 64)], [(1, [1, 2]), (1, [1, 2])], [(1, 0)], [small_data]))
grid2 = bytes([0, 0, 0, 1]) + struct.pack('>HH', 128, 64)
write('iref-twice.heic', heif2([(1, b'grid', False), (2, b'hvc1', True), (3, b'hvc1', True)], 1, [(b'dimg', 1, [2]), (b'dimg', 1, [3])],
                               [small_hvcC, ispe(64, 64), ispe(128, 64)], [(1, [3]), (2, [1, 2]), (3, [1, 2])], [(1, 0), (2, 1), (3, 1)],
                               [grid2, small_data]))

# Two pictures in one image's data.
write('pictures-2.heic', heif2([(1, b'hvc1', False)], 1, [], [small_hvcC, ispe(64, 64)], [(1, [1, 2])], [(1, 0)], [small_data + small_data]))

# One picture, then 16 slice segments that start it again at coding block 0. A 1024x1024
# picture has 16 x 16 = 256 coding blocks of 64x64 (x265's), so slice_segment_address is 8
# bits: inserted after the slice's parameter set id, the rest of the header keeps its byte
# alignment.
def unescape(b):
    out, zeros = bytearray(), 0
    for x in b:
        if zeros >= 2 and x == 3:
            zeros = 0
            continue
        zeros = zeros + 1 if x == 0 else 0
        out.append(x)
    return bytes(out)

def escape(b):
    out, zeros = bytearray(), 0
    for x in b:
        if zeros >= 2 and x <= 3:
            out.append(3)
            zeros = 0
        out.append(x)
        zeros = zeros + 1 if x == 0 else 0
    return bytes(out)

grey_hvcC, _, grey_data = encode(1024, ['xc:gray50'])
(slice_unit,) = [u for u in nal_units(grey_data) if (u[0] >> 1) & 0x3F < 32]
nal_type = (slice_unit[0] >> 1) & 0x3F
bits = ''.join(f'{x:08b}' for x in unescape(slice_unit[2:]))
head = 2 if 16 <= nal_type <= 23 else 1  # first_slice_segment_in_pic_flag, no_output_of_prior_pics_flag
assert bits[0] == '1' and bits[head] == '1', 'slice_pic_parameter_set_id is not 0'
again = '0' + bits[1:head + 1] + '0' * 8 + bits[head + 1:]
again = slice_unit[:2] + escape(bytes(int(again[k:k + 8], 2) for k in range(0, len(again) // 8 * 8, 8)))
write('slices-17.heic', heif2([(1, b'hvc1', False)], 1, [], [grey_hvcC, ispe(1024, 1024)], [(1, [1, 2])], [(1, 0)],
                              [grey_data + length_prefixed([again] * 16)]))

# --- The third audit of issue 54: an overlay's layers, each decoded.
def overlay_of(n):
    return bytes([0, 0]) + bytes(8) + struct.pack('>HH', 64, 64) + struct.pack('>hh', 0, 0) * n
write('overlay-repeat.heic', heif([(1, b'iovl', False), (2, b'hvc1', True)], 1, [(b'dimg', 1, [2] * 1024)],
                                  [small_hvcC, ispe(64, 64)], {1: [2], 2: [1, 2]}, {1: overlay_of(1024)}, {2: small_data}))
write('overlay-layers.heic', heif([(1, b'iovl', False)] + [(i, b'hvc1', True) for i in range(2, 6)], 1, [(b'dimg', 1, [2, 3, 4, 5])],
                                  [small_hvcC, ispe(64, 64)], {i: [1, 2] if i > 1 else [2] for i in range(1, 6)}, {1: overlay_of(4)},
                                  {i: small_data for i in range(2, 6)}))
