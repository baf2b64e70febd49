/// EXIF for test photos: a little-endian TIFF structure (IFD0 with Orientation, Make, Model and
/// pointers to an Exif IFD with DateTimeOriginal, OffsetTimeOriginal and SubSecTimeOriginal,
/// and to a GPS IFD), as a camera writes it; `withEXIF` puts it into a JPEG (APP1) or a PNG
/// (eXIf).
public struct EXIFFields {
    /// Orientation (0x0112), 1 to 8; nil leaves the tag out.
    public var orientation: UInt16?
    /// DateTimeOriginal, as a camera writes it ("2024:06:01 12:30:00"); any text, so tests can write bad ones.
    public var taken: String?
    /// OffsetTimeOriginal ("+02:00"); nil leaves it out.
    public var offset: String?
    /// SubSecTimeOriginal, the digits of a second's fraction ("25").
    public var subsec: String?
    /// Make (0x010F), the camera's maker.
    public var make: String?
    /// Model (0x0110), the camera's model.
    public var model: String?
    /// Adds a GPS IFD (version and "N" only, no position): enough for code that looks for one.
    public var gps = false
    /// Every field left out by default, so a test names only those it checks.
    public init(
        orientation: UInt16? = nil, taken: String? = nil, offset: String? = nil, subsec: String? = nil,
        make: String? = nil, model: String? = nil, gps: Bool = false
    ) {
        self.orientation = orientation
        self.taken = taken
        self.offset = offset
        self.subsec = subsec
        self.make = make
        self.model = model
        self.gps = gps
    }
}

/// The TIFF structure of `fields` (what follows "Exif\0\0" in a JPEG's APP1; a PNG's eXIf).
public func exifTIFF(_ fields: EXIFFields) -> [UInt8] {
    // An entry: tag, type (2 ASCII, 3 SHORT, 4 LONG, 1 BYTE), count, and its value or data.
    enum Value {
        case ascii(String)
        case short(UInt16)
        case long(UInt32)
        case bytes([UInt8])
    }
    func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    func le32(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
    }
    var out: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8)
    // Lays out IFDs one after another; returns the offset each starts at. Data that does not
    // fit in an entry goes after its IFD.
    func ifd(_ entries: [(UInt16, Value)], at start: Int) -> [UInt8] {
        var table: [UInt8] = le16(UInt16(entries.count))
        var data: [UInt8] = []
        let dataStart = start + 2 + entries.count * 12 + 4
        for (tag, value) in entries {
            table += le16(tag)
            switch value {
            case .short(let v): table += le16(3) + le32(1) + le16(v) + [0, 0]
            case .long(let v): table += le16(4) + le32(1) + le32(v)
            case .bytes(let b): table += le16(1) + le32(UInt32(b.count)) + (b + [0, 0, 0, 0]).prefix(4)
            case .ascii(let s):
                let bytes = Array(s.utf8) + [0]
                table += le16(2) + le32(UInt32(bytes.count))
                if bytes.count <= 4 {
                    table += (bytes + [0, 0, 0, 0]).prefix(4)
                } else {
                    table += le32(UInt32(dataStart + data.count))
                    data += bytes
                    if data.count % 2 == 1 { data.append(0) }
                }
            }
        }
        return table + le32(0) + data
    }
    var exifEntries: [(UInt16, Value)] = []
    if let t = fields.taken { exifEntries.append((0x9003, .ascii(t))) }
    if let o = fields.offset { exifEntries.append((0x9011, .ascii(o))) }
    if let s = fields.subsec { exifEntries.append((0x9291, .ascii(s))) }
    // IFD0 first, sized with placeholder pointers, then the Exif and GPS IFDs after it.
    func ifd0(exifAt: UInt32, gpsAt: UInt32) -> [UInt8] {
        var entries: [(UInt16, Value)] = []
        if let m = fields.make { entries.append((0x010F, .ascii(m))) }
        if let m = fields.model { entries.append((0x0110, .ascii(m))) }
        if let o = fields.orientation { entries.append((0x0112, .short(o))) }
        if !exifEntries.isEmpty { entries.append((0x8769, .long(exifAt))) }
        if fields.gps { entries.append((0x8825, .long(gpsAt))) }
        return ifd(entries, at: 8)
    }
    let first = ifd0(exifAt: 0, gpsAt: 0)
    let exifAt = 8 + first.count
    let exif = exifEntries.isEmpty ? [] : ifd(exifEntries, at: exifAt)
    let gpsAt = exifAt + exif.count
    let gps = fields.gps ? ifd([(0x0000, .bytes([2, 3, 0, 0])), (0x0001, .ascii("N"))], at: gpsAt) : []
    out += ifd0(exifAt: UInt32(exifAt), gpsAt: UInt32(gpsAt)) + exif + gps
    return out
}

/// `jpeg` with an APP1 EXIF segment holding `tiff` right after its SOI.
public func jpegWithEXIF(_ jpeg: [UInt8], _ tiff: [UInt8]) -> [UInt8] {
    let payload = Array("Exif".utf8) + [0, 0] + tiff
    let length = payload.count + 2
    return Array(jpeg.prefix(2)) + [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        + Array(jpeg.dropFirst(2))
}
