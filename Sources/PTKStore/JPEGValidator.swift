import PTKVocabulary

/// Checks JPEG structure (ITU T.81 annex B) as bytes stream in, keeping a few bytes of state:
/// the SOI marker first; then marker segments, each with a length of at least 2 that stays
/// within the file; one frame header (SOFn) with nonzero width and 1 to 4 components before
/// the first scan; every scan header (SOS) well formed, its entropy-coded data running to the
/// next marker (0xFF00 stuffing and RSTn inside it); the EOI marker after at least one scan;
/// and nothing after EOI. It does not decode: a photo that passes can still hold bad
/// entropy-coded data, as a PNG that passes can hold a bad zlib stream.
public struct JPEGValidator: FormatCheck {
    private enum Phase: Sendable {
        /// The two bytes of SOI.
        case start
        /// Expecting 0xFF (a marker, or fill bytes before one).
        case marker
        /// After 0xFF: the marker code, or more fill.
        case markerCode
        /// The two length bytes of a segment.
        case length
        /// A segment's parameters: kept in `field` (frame and scan headers) or skipped.
        case parameters(remaining: Int64, keep: Bool)
        /// Entropy-coded data after a scan header.
        case scan
        /// 0xFF inside entropy-coded data.
        case scanFF
        case afterEOI
    }

    private var phase = Phase.start
    private var cursor: StreamCursor
    private var marker: UInt8 = 0
    private var segmentStart: Int64 = 0
    private var sawFrame = false
    private var scans = 0

    /// A check at the start of a file; `totalSize` (nil: unknown) bounds every segment.
    public init(totalSize: Int64? = nil) {
        cursor = StreamCursor(totalSize: totalSize, fieldCapacity: 16)
    }

    /// Feeds the next bytes of the file.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        var i = 0
        let n = bytes.count
        while i < n {
            switch phase {
            case .scan:
                // The bulk of a JPEG: look for the next 0xFF.
                var j = i
                while j < n && bytes[j] != 0xFF { j += 1 }
                cursor.skip(&i, to: j)
                if j < n {
                    phase = .scanFF
                    _ = cursor.next(bytes, &i)
                }
            case .parameters(let remaining, let keep):
                let left = cursor.pass(bytes, &i, remaining: remaining, keep: keep).left
                if left == 0 { try segmentComplete() } else { phase = .parameters(remaining: left, keep: keep) }
            default:
                try step(cursor.next(bytes, &i))
            }
        }
    }

    /// Ends the stream: the file must have ended right after EOI.
    public func finish() throws(FormatError) {
        switch phase {
        case .afterEOI: return
        case .start: throw FormatError("too short for a JPEG")
        case .scan, .scanFF: throw FormatError("truncated in the image data: no EOI marker at the end")
        default:
            throw FormatError(sawFrame ? "truncated: no EOI marker at the end" : "truncated before the frame header")
        }
    }

    private var offset: Int64 { cursor.position - 1 }

    private mutating func step(_ byte: UInt8) throws(FormatError) {
        switch phase {
        case .start:
            if cursor.position == 1 {
                guard byte == 0xFF else { throw FormatError("does not start with the JPEG SOI marker") }
            } else {
                guard byte == 0xD8 else { throw FormatError("does not start with the JPEG SOI marker") }
                phase = .marker
            }
        case .marker:
            guard byte == 0xFF else {
                throw FormatError("expected a marker at offset \(offset), found 0x\(hex(byte))")
            }
            phase = .markerCode
        case .markerCode:
            try markerCode(byte, inScan: false)
        case .scanFF:
            switch byte {
            case 0x00, 0xD0...0xD7: phase = .scan  // a stuffed 0xFF, or a restart marker
            case 0xFF: break  // fill
            default: try markerCode(byte, inScan: true)
            }
        case .length:
            cursor.keep(byte)
            if cursor.field.count == 2 {
                let length = Int64(cursor.field[0]) << 8 | Int64(cursor.field[1])
                guard length >= 2 else {
                    throw FormatError("\(name(marker)) segment at offset \(segmentStart) has length \(length), under 2")
                }
                guard cursor.fits(from: segmentStart, count: 2 + length) else {
                    throw FormatError(
                        "\(name(marker)) segment of \(length) bytes at offset \(segmentStart) runs past the end of the file"
                    )
                }
                let keep = isFrameHeader(marker) || marker == 0xDA
                cursor.clearField()
                if length == 2 { try segmentComplete() } else { phase = .parameters(remaining: length - 2, keep: keep) }
            }
        case .afterEOI:
            throw FormatError("bytes after the EOI marker at offset \(offset)")
        case .scan, .parameters:
            break
        }
    }

    private mutating func markerCode(_ code: UInt8, inScan: Bool) throws(FormatError) {
        marker = code
        segmentStart = cursor.position - 2
        switch code {
        case 0xFF where !inScan:
            break  // fill bytes before a marker
        case 0xD9:
            guard scans > 0 else { throw FormatError("EOI marker at offset \(segmentStart) before any scan") }
            phase = .afterEOI
        case 0xD8:
            throw FormatError("a second SOI marker at offset \(segmentStart)")
        case 0xD0...0xD7:
            throw FormatError("restart marker \(name(code)) at offset \(segmentStart) outside image data")
        case 0x01:
            phase = .marker  // TEM: no parameters
        case 0x00, 0x02...0xBF:
            throw FormatError("invalid marker 0xFF\(hex(code)) at offset \(segmentStart)")
        default:
            cursor.clearField()
            phase = .length
        }
    }

    /// A segment's parameters have all been read (`field` holds them for SOFn and SOS).
    private mutating func segmentComplete() throws(FormatError) {
        if isFrameHeader(marker) {
            guard !sawFrame else {
                throw FormatError("a second frame header (\(name(marker))) at offset \(segmentStart)")
            }
            guard cursor.field.count >= 6 else {
                throw FormatError("\(name(marker)) frame header at offset \(segmentStart) is too short")
            }
            let width = Int(cursor.field[3]) << 8 | Int(cursor.field[4])
            let components = Int(cursor.field[5])
            guard width > 0 else { throw FormatError("frame header says the width is 0") }
            guard (1...4).contains(components) else {
                throw FormatError("frame header says \(components) components (1 to 4 allowed)")
            }
            guard cursor.field.count == 6 + 3 * components else {
                throw FormatError(
                    "\(name(marker)) frame header has \(cursor.field.count + 2) bytes; \(components) components need \(8 + 3 * components)"
                )
            }
            sawFrame = true
        }
        if marker == 0xDA {
            guard sawFrame else { throw FormatError("scan at offset \(segmentStart) before the frame header") }
            let components = cursor.field.first.map(Int.init) ?? 0
            guard (1...4).contains(components), cursor.field.count == 4 + 2 * components else {
                throw FormatError("SOS scan header at offset \(segmentStart) is malformed")
            }
            scans += 1
            cursor.clearField()
            phase = .scan
            return
        }
        cursor.clearField()
        phase = .marker
    }

    /// SOF0-SOF3, SOF5-SOF7, SOF9-SOF11, SOF13-SOF15 (0xC4 DHT, 0xC8 JPG and 0xCC DAC are not).
    private func isFrameHeader(_ code: UInt8) -> Bool {
        (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }

    private func name(_ code: UInt8) -> String {
        switch code {
        case 0xC4: return "DHT"
        case 0xDB: return "DQT"
        case 0xDA: return "SOS"
        case 0xDD: return "DRI"
        case 0xFE: return "COM"
        case 0xD0...0xD7: return "RST\(code - 0xD0)"
        case 0xE0...0xEF: return "APP\(code - 0xE0)"
        case _ where isFrameHeader(code): return "SOF\(code - 0xC0)"
        default: return "0xFF\(hex(code))"
        }
    }

    private func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }
}
