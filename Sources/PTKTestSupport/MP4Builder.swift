/// MP4 and MOV files built box by box (ISO/IEC 14496-12), for the store's video checks: a
/// well-formed movie of a few samples, and the parts to make hostile ones from.
public struct MP4Movie {
    /// The `ftyp` box's major brand (`isom` for MP4, `qt  ` for MOV).
    public var brand = "isom"
    /// Tracks; each a video track of the given size unless `handler` says otherwise.
    public var tracks: [MP4Track] = [MP4Track()]
    /// The movie's time scale and duration (`mvhd`).
    public var timescale: UInt32 = 1000
    /// See `timescale`.
    public var duration: UInt32 = 2000
    /// When the movie was made, seconds since 1904.
    public var created: UInt32 = 3_786_912_000
    /// The bytes of `mdat`.
    public var data = [UInt8](repeating: 0x5A, count: 64)
    /// Put `moov` before `mdat` (a "fast start" file) or after it, as cameras write.
    public var moovFirst = false
    /// Boxes added inside `moov` after the tracks.
    public var extraMovieBoxes: [UInt8] = []

    /// A one-track movie of 320x240.
    public init() {}

    /// The file's bytes; every track's one chunk offset points at `mdat`'s data (plus its
    /// `chunkOffsetDelta`).
    public func bytes() -> [UInt8] {
        let ftyp = isoBox("ftyp", Array(brand.utf8) + [0, 0, 2, 0] + Array(brand.utf8) + Array("mp41".utf8))
        func moov(_ dataAt: UInt32) -> [UInt8] {
            let mvhd = isoFullBox(
                "mvhd",
                be32(created) + be32(created) + be32(timescale) + be32(duration) + be32(0x0001_0000) + be16(0x0100)
                    + [UInt8](repeating: 0, count: 10) + identityMatrix + [UInt8](repeating: 0, count: 24)
                    + be32(UInt32(tracks.count + 1)))
            return isoBox(
                "moov",
                mvhd + tracks.enumerated().flatMap { $1.box(id: UInt32($0 + 1), dataAt: dataAt) } + extraMovieBoxes)
        }
        let mdat = isoBox("mdat", data)
        if moovFirst {
            let size = UInt32(ftyp.count + moov(0).count + 8)
            return ftyp + moov(size) + mdat
        }
        return ftyp + mdat + moov(UInt32(ftyp.count + 8))
    }
}

/// One track of an `MP4Movie`.
public struct MP4Track {
    /// `vide`, `soun`, `meta`...
    public var handler = "vide"
    /// The sample description's coding.
    public var codec = "avc1"
    /// The track's size (`tkhd`), before its matrix turns it.
    public var width: UInt32 = 320
    /// See `width`.
    public var height: UInt32 = 240
    /// Degrees clockwise: 0, 90, 180, 270 (the `tkhd` matrix).
    public var rotation = 0
    /// Samples, each `sampleDelta` long in the media's time scale of 30,000 a second.
    public var samples: UInt32 = 60
    /// See `samples`.
    public var sampleDelta: UInt32 = 1001
    /// Added to the chunk offset (a hostile one points outside the file).
    public var chunkOffsetDelta: UInt64 = 0
    /// Entries the `stco` box declares (nil: its one entry).
    public var declaredChunks: UInt32?
    /// Write `co64` rather than `stco`.
    public var wideOffsets = false
    /// Chunk offsets written, each the track's one offset (a hostile track has millions).
    public var chunks: UInt32 = 1

    /// A 320x240 H.264 video track of 60 samples.
    public init() {}

    func box(id: UInt32, dataAt: UInt32) -> [UInt8] {
        let (one, minus): (UInt32, UInt32) = (0x0001_0000, 0xFFFF_0000)
        let matrix: [UInt8]
        switch rotation {
        case 90:
            matrix =
                be32(0) + be32(one) + be32(0) + be32(minus) + be32(0) + be32(0) + be32(0) + be32(0) + be32(0x4000_0000)
        case 180:
            matrix =
                be32(minus) + be32(0) + be32(0) + be32(0) + be32(minus) + be32(0) + be32(0) + be32(0)
                + be32(0x4000_0000)
        case 270:
            matrix =
                be32(0) + be32(minus) + be32(0) + be32(one) + be32(0) + be32(0) + be32(0) + be32(0) + be32(0x4000_0000)
        default: matrix = identityMatrix
        }
        let tkhd = isoFullBox(
            "tkhd", flags: 3,
            be32(0) + be32(0) + be32(id) + be32(0) + be32(2000) + [UInt8](repeating: 0, count: 16) + matrix
                + be32(width << 16) + be32(height << 16))
        let mdhd = isoFullBox(
            "mdhd", be32(0) + be32(0) + be32(30000) + be32(samples &* sampleDelta) + be16(0x55C4) + be16(0))
        let hdlr = isoFullBox("hdlr", be32(0) + Array(handler.utf8) + [UInt8](repeating: 0, count: 12) + [0])
        // A visual sample entry: reserved, data reference 1, predefined, its width and height, the rest zero.
        let entry = isoBox(
            codec,
            [UInt8](repeating: 0, count: 6) + be16(1) + [UInt8](repeating: 0, count: 16) + be16(UInt16(clamping: width))
                + be16(UInt16(clamping: height)) + [UInt8](repeating: 0, count: 50))
        let stsd = isoFullBox("stsd", be32(1) + entry)
        let stts = isoFullBox("stts", be32(1) + be32(samples) + be32(sampleDelta))
        let stsc = isoFullBox("stsc", be32(1) + be32(1) + be32(samples) + be32(1))
        let stsz = isoFullBox("stsz", be32(1) + be32(samples))
        let offset = UInt64(dataAt) + chunkOffsetDelta
        let chunkEntry =
            wideOffsets
            ? be32(UInt32(offset >> 32)) + be32(UInt32(offset & 0xFFFF_FFFF)) : be32(UInt32(truncatingIfNeeded: offset))
        var entries = [UInt8]()
        entries.reserveCapacity(chunkEntry.count * Int(chunks))
        for _ in 0..<chunks { entries += chunkEntry }
        let stco = isoFullBox(wideOffsets ? "co64" : "stco", be32(declaredChunks ?? chunks) + entries)
        let stbl = isoBox("stbl", stsd + stts + stsc + stsz + stco)
        let minf = isoBox("minf", stbl)
        return isoBox("trak", tkhd + isoBox("mdia", mdhd + hdlr + minf))
    }
}

private let identityMatrix =
    be32(0x0001_0000) + be32(0) + be32(0) + be32(0) + be32(0x0001_0000) + be32(0) + be32(0) + be32(0)
    + be32(0x4000_0000)
