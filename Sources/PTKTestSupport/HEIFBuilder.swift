/// HEIF files built box by box (ISO/IEC 14496-12 and 23008-12), for the hostile ones the
/// tests need: well-formed at the top level, so the store's streaming check passes them and
/// libheif is what must refuse them.

/// A box: a 32-bit size, a four-character type, its content.
public func isoBox(_ type: String, _ body: [UInt8]) -> [UInt8] {
    be32(UInt32(8 + body.count)) + Array(type.utf8) + body
}

/// A full box: a box whose content starts with a version and 24 bits of flags.
public func isoFullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: [UInt8]) -> [UInt8] {
    isoBox(type, [version, UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)] + body)
}

func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

/// A `ftyp` box: major brand `heic`, compatible `mif1` and `heic`.
public func heifFileType(major: String = "heic", compatible: [String] = ["mif1", "heic"]) -> [UInt8] {
    isoBox("ftyp", Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) })
}

/// A HEIF whose primary item is an image grid of `rows` x `columns` tiles (at most 256 x 256,
/// the grid's own limit) of `width` x `height`, the tiles named by a `dimg` reference but
/// never stored: a file that announces tens of thousands of tiles in a few hundred bytes.
public func heifGrid(rows: Int, columns: Int, width: UInt16, height: Int16 = 0) -> [UInt8] {
    let tiles = rows * columns
    let gridData: [UInt8] =
        [0, 0, UInt8(rows - 1), UInt8(columns - 1)] + be16(width)
        + be16(UInt16(bitPattern: height == 0 ? Int16(bitPattern: width) : height))
    let hdlr = isoFullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
    let pitm = isoFullBox("pitm", be16(1))
    let infe = isoFullBox("infe", version: 2, be16(1) + be16(0) + Array("grid".utf8) + [0])
    let iinf = isoFullBox("iinf", be16(1) + infe)
    let references = (0..<tiles).flatMap { be16(UInt16(2 + $0 % 65000)) }
    let iref = isoFullBox("iref", isoBox("dimg", be16(1) + be16(UInt16(min(tiles, 65535))) + references))
    let ispe = isoFullBox("ispe", be32(UInt32(width)) + be32(UInt32(width)))
    let iprp = isoBox("iprp", isoBox("ipco", ispe) + isoFullBox("ipma", be32(1) + be16(1) + [1, 0x81]))
    // iloc version 0, offset and length 4 bytes, no base offset: item 1, one extent, patched below.
    func meta(_ offset: UInt32) -> [UInt8] {
        let iloc = isoFullBox(
            "iloc", [0x44, 0x00] + be16(1) + be16(1) + be16(0) + be16(1) + be32(offset) + be32(UInt32(gridData.count)))
        return isoFullBox("meta", hdlr + pitm + iloc + iinf + iref + iprp)
    }
    let ftyp = heifFileType()
    let head = ftyp + meta(0)
    return ftyp + meta(UInt32(head.count + 8)) + isoBox("mdat", gridData)
}

/// A HEIF whose `iloc` box claims `items` items, each with `extents` extents, in a box far too
/// small to hold them.
public func heifHugeItemLocations(items: UInt16 = 65535, extents: UInt16 = 65535) -> [UInt8] {
    let hdlr = isoFullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
    let pitm = isoFullBox("pitm", be16(1))
    let iloc = isoFullBox(
        "iloc", version: 1,
        [0x44, 0x00] + be16(items) + be16(1) + be16(0) + be16(0) + be16(extents) + be32(0) + be32(16))
    return heifFileType() + isoFullBox("meta", hdlr + pitm + iloc) + isoBox("mdat", [UInt8](repeating: 0, count: 16))
}
