import PTKVocabulary

/// The walk of a `moov` box's content for `MP4Check`: its boxes, counted and nested within
/// bounds, the movie header, each track's header, handler, media header, sample description
/// and sample tables, checked as they come and gathered into the `Report`.
struct MP4MovieWalk {
    /// What one track declared.
    private struct Track {
        var headers = 0
        var handler: String?
        var width = 0.0
        var height = 0.0
        var rotation = 0
        var timescale: UInt64 = 0
        var mediaDuration: UInt64 = 0
        var codec: String?
        var samples: UInt64 = 0
        var sampleTime: UInt64 = 0
        /// What `stsz` declares: each sample's size when all have one (else 0), and their count.
        var sizes: (fixed: UInt64, count: UInt64)?
    }

    /// Containers walked into; every other box is checked (when known) and passed over.
    private static let containers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "mvex", "dinf"]

    let fileSize: Int64
    private var boxes = 0
    private var movieHeaders = 0
    private var timescale: UInt64 = 0
    private var duration: UInt64 = 0
    private var created: UInt64 = 0
    private var tracks: [Track] = []
    private var chunks = 0

    init(fileSize: Int64) {
        self.fileSize = fileSize
    }

    /// Walks the boxes in `range` of `bytes`, inside the box at `path` (outermost first).
    mutating func container(_ bytes: [UInt8], _ range: Range<Int>, path: [String]) throws(FormatError) {
        guard path.count <= MP4Limits.depth else {
            throw FormatError("boxes nested over \(MP4Limits.depth) deep in \(path.joined(separator: "/"))")
        }
        var at = range.lowerBound
        while at < range.upperBound {
            boxes += 1
            guard boxes <= MP4Limits.moovBoxes else {
                throw FormatError("over \(MP4Limits.moovBoxes) boxes in the moov box")
            }
            let left = range.upperBound - at
            let inside = path.joined(separator: "/")
            guard left >= 8 else { throw FormatError("\(left) stray bytes at the end of \(inside)") }
            let size32 = Int(be(bytes, at, 4))
            let type = printableType(bytes[at + 4..<at + 8])
            var length = size32
            var header = 8
            if size32 == 1 {
                guard left >= 16 else { throw FormatError("\(type) box's 64-bit size is cut off in \(inside)") }
                let large = be(bytes, at + 8, 8)
                length = large > UInt64(left) ? left + 1 : Int(large)
                header = 16
            } else if size32 == 0 {
                length = left
            }
            guard length >= header, length <= left else {
                throw FormatError("\(type) box of \(length) bytes does not fit in \(inside)")
            }
            let body = at + header..<at + length
            try box(type, bytes, body, path: path)
            at += length
        }
    }

    /// Checks one box (`body` is its content) and walks into it when it is a container.
    private mutating func box(_ type: String, _ bytes: [UInt8], _ body: Range<Int>, path: [String]) throws(FormatError)
    {
        let parent = path.last ?? ""
        if Self.containers.contains(type) {
            if type == "trak" {
                guard parent == "moov" else { throw FormatError("a trak box inside \(parent)") }
                guard tracks.count < MP4Limits.tracks else { throw FormatError("over \(MP4Limits.tracks) tracks") }
                tracks.append(Track())
            }
            try container(bytes, body, path: path + [type])
            if type == "trak" { try trackEnded() }
            return
        }
        // A track's boxes count inside a track only (`moov/trak/...`); elsewhere they are passed over.
        guard path.count < 2 || path[1] == "trak" else { return }
        let full = FullBox(bytes, body, type)
        switch (type, parent) {
        case ("mvhd", "moov"): try movieHeader(full)
        case ("tkhd", "trak"): try trackHeader(full)
        case ("hdlr", "mdia"): tracks[tracks.count - 1].handler = try full.fourCC(at: 8)
        case ("mdhd", "mdia"): try mediaHeader(full)
        case ("stsd", "stbl"): try sampleDescription(full)
        case ("stts", "stbl"): try timeToSample(full)
        case ("stco", "stbl"): try chunkOffsets(full, wide: false)
        case ("co64", "stbl"): try chunkOffsets(full, wide: true)
        case ("stsz", "stbl"):
            let fixed = try full.number(at: 4, 4)
            let count = fixed == 0 ? UInt64(try full.entries(countAt: 8, each: 4)) : try full.number(at: 8, 4)
            tracks[tracks.count - 1].sizes = (fixed, count)
        case ("stsc", "stbl"): try full.entries(countAt: 4, each: 12)
        case ("ctts", "stbl"), ("stss", "stbl"), ("stps", "stbl"):
            try full.entries(countAt: 4, each: type == "ctts" ? 8 : 4)
        default: break
        }
    }

    /// A track's boxes were all walked: one header, and sample counts that agree and are bounded.
    private func trackEnded() throws(FormatError) {
        let t = tracks[tracks.count - 1]
        let n = tracks.count
        guard t.headers == 1 else { throw FormatError("track \(n) has \(t.headers) tkhd boxes, not one") }
        guard let (fixed, count) = t.sizes else { return }
        // The sample count is declared twice (stsz and stts): FFmpeg trusts the first.
        guard count == t.samples else {
            throw FormatError("track \(n)'s stsz declares \(count) samples, its stts \(t.samples)")
        }
        if t.handler == "soun" && fixed > 0 {
            guard count <= UInt64(fileSize) / fixed else {
                throw FormatError(
                    "track \(n) declares \(count) samples of \(fixed) bytes, more than the \(fileSize)-byte file holds")
            }
        } else {
            guard count <= MP4Limits.samplesPerTrack else {
                throw FormatError("track \(n) declares \(count) samples, over \(MP4Limits.samplesPerTrack)")
            }
            guard fixed == 0 || count <= UInt64(fileSize) / fixed else {
                throw FormatError(
                    "track \(n) declares \(count) samples of \(fixed) bytes, more than the \(fileSize)-byte file holds")
            }
        }
    }

    private mutating func movieHeader(_ b: FullBox) throws(FormatError) {
        movieHeaders += 1
        guard movieHeaders == 1 else { throw FormatError("a second mvhd box") }
        let wide = try b.version() == 1
        created = try b.number(at: 4, wide ? 8 : 4)
        timescale = try b.number(at: wide ? 20 : 12, 4)
        duration = try b.number(at: wide ? 24 : 16, wide ? 8 : 4)
        guard timescale > 0 else { throw FormatError("the mvhd box's time scale is 0") }
    }

    private mutating func trackHeader(_ b: FullBox) throws(FormatError) {
        let wide = try b.version() == 1
        let matrix = wide ? 52 : 40
        let fixed = { (i: Int) throws(FormatError) -> Double in
            Double(Int32(truncatingIfNeeded: try b.number(at: matrix + 4 * i, 4))) / 65536
        }
        // The matrix's a, b (first row) turn the picture: atan2(b, a).
        let (a, c) = (try fixed(0), try fixed(1))
        var t = tracks[tracks.count - 1]
        t.headers += 1
        t.rotation = a == 0 && c > 0 ? 90 : a == 0 && c < 0 ? 270 : a < 0 ? 180 : 0
        t.width = Double(try b.number(at: matrix + 36, 4)) / 65536
        t.height = Double(try b.number(at: matrix + 40, 4)) / 65536
        tracks[tracks.count - 1] = t
    }

    private mutating func mediaHeader(_ b: FullBox) throws(FormatError) {
        let wide = try b.version() == 1
        tracks[tracks.count - 1].timescale = try b.number(at: wide ? 20 : 12, 4)
        tracks[tracks.count - 1].mediaDuration = try b.number(at: wide ? 24 : 16, wide ? 8 : 4)
    }

    private mutating func sampleDescription(_ b: FullBox) throws(FormatError) {
        let count = try b.number(at: 4, 4)
        guard count > 0 else { return }
        tracks[tracks.count - 1].codec = try b.fourCC(at: 12)
    }

    private mutating func timeToSample(_ b: FullBox) throws(FormatError) {
        let count = try b.entries(countAt: 4, each: 8)
        var samples: UInt64 = 0
        var time: UInt64 = 0
        for i in 0..<count {
            let n = try b.number(at: 8 + 8 * i, 4)
            let delta = try b.number(at: 12 + 8 * i, 4)
            samples &+= n
            time &+= n &* delta
        }
        tracks[tracks.count - 1].samples = samples
        tracks[tracks.count - 1].sampleTime = time
    }

    private mutating func chunkOffsets(_ b: FullBox, wide: Bool) throws(FormatError) {
        let count = try b.entries(countAt: 4, each: wide ? 8 : 4)
        chunks += count
        guard chunks <= MP4Limits.chunks else {
            throw FormatError(
                "over \(MP4Limits.chunks) chunks in the movie's tracks (track \(tracks.count)'s \(b.type) has \(count))"
            )
        }
        for i in 0..<count {
            let offset = try b.number(at: 8 + i * (wide ? 8 : 4), wide ? 8 : 4)
            guard offset < UInt64(fileSize) else {
                throw FormatError(
                    "track \(tracks.count)'s chunk \(i + 1) is at byte \(offset), past the end of the \(fileSize)-byte file"
                )
            }
        }
    }

    /// The facts, once every box was walked; throws when the movie lacks its header or tracks.
    func report() throws(FormatError) -> MP4Check.Report {
        guard movieHeaders == 1 else { throw FormatError("no mvhd box (the movie's header)") }
        guard !tracks.isEmpty else { throw FormatError("no track") }
        var r = MP4Check.Report()
        r.tracks = tracks.count
        if duration > 0 && duration != UInt64(UInt32.max) && duration != UInt64.max {
            r.duration = Double(duration) / Double(timescale)
        }
        // Seconds from 1904 (QuickTime's and ISO's epoch) to 1970.
        if created > 2_082_844_800 { r.created = Int64(clamping: created - 2_082_844_800) }
        if let video = tracks.first(where: { $0.handler == "vide" }) {
            // The movie's length as its video track's samples add up (stts), when mvhd says
            // otherwise by over a second and a tenth: the header is a number on its own, the
            // samples are what plays.
            let media = video.timescale > 0 ? Double(video.sampleTime) / Double(video.timescale) : 0
            if media > 0 && media.isFinite, abs((r.duration ?? 0) - media) > max(1, media / 10) {
                r.duration = media
            }
            let turned = video.rotation == 90 || video.rotation == 270
            let (w, h) = (Int(video.width.rounded()), Int(video.height.rounded()))
            (r.width, r.height) = turned ? (h, w) : (w, h)
            r.rotation = video.rotation
            r.codec = video.codec
            if video.timescale > 0 && video.sampleTime > 0 && video.samples > 0 {
                r.frameRate = Double(video.samples) * Double(video.timescale) / Double(video.sampleTime)
            }
        }
        return r
    }
}

/// A full box's content (`version`, 3 bytes of flags, then its fields), read with bounds checks.
private struct FullBox {
    let bytes: [UInt8]
    let body: Range<Int>
    let type: String

    init(_ bytes: [UInt8], _ body: Range<Int>, _ type: String) {
        self.bytes = bytes
        self.body = body
        self.type = type
    }

    func version() throws(FormatError) -> UInt64 { try number(at: 0, 1) }

    /// The big-endian number of `width` bytes at `offset` into the content.
    func number(at offset: Int, _ width: Int) throws(FormatError) -> UInt64 {
        guard offset >= 0, body.count >= width, offset <= body.count - width else {
            throw FormatError("\(type) box of \(body.count) bytes is too short for its fields")
        }
        return be(bytes, body.lowerBound + offset, width)
    }

    /// Four characters at `offset`.
    func fourCC(at offset: Int) throws(FormatError) -> String {
        _ = try number(at: offset, 4)
        return printableType(bytes[body.lowerBound + offset..<body.lowerBound + offset + 4])
    }

    /// The entry count at `countAt`, checked: that many entries of `each` bytes follow within the box.
    @discardableResult
    func entries(countAt: Int, each: Int) throws(FormatError) -> Int {
        let count = try number(at: countAt, 4)
        let room = UInt64(body.count - countAt - 4) / UInt64(each)
        guard count <= room else {
            throw FormatError("\(type) box declares \(count) entries; its \(body.count) bytes hold \(room)")
        }
        return Int(count)
    }
}

/// The big-endian number of `width` bytes at `at`.
private func be(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
    bytes[at..<at + width].reduce(0) { $0 << 8 | UInt64($1) }
}

/// A box type as text: its four bytes, each one that is not printable ASCII as "?" (it goes
/// into messages that logs, terminals and pages show).
func printableType(_ bytes: ArraySlice<UInt8>) -> String {
    String(decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}
