import PTKDigest
import PTKVocabulary

/// Checks PNG structure as bytes stream in, so no second pass over the file is needed:
/// the 8-byte signature, IHDR first, every chunk's length within the file and its CRC-32
/// correct, IEND last, nothing after IEND. It keeps a few bytes of state, never the file.
public struct PNGValidator: FormatCheck {
    private enum Phase: Sendable {
        case signature
        case length
        case type
        case data(remaining: Int64)
        case crc
        case afterIEND
    }

    private var phase = Phase.signature
    private var cursor: StreamCursor
    private var fieldNeeded = 8
    private var chunkLength: Int64 = 0
    private var chunkType: [UInt8] = []
    private var crc = CRC32()
    private var chunkCount = 0

    /// A check at the start of a file; `totalSize` (nil: unknown) bounds every chunk.
    public init(totalSize: Int64? = nil) {
        cursor = StreamCursor(totalSize: totalSize, fieldCapacity: 8)
    }

    /// True once the IEND chunk has been read completely.
    public var isComplete: Bool {
        if case .afterIEND = phase { return true }
        return false
    }

    /// Feeds the next bytes of the file.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        var i = 0
        let n = bytes.count
        while i < n {
            switch phase {
            case .afterIEND:
                throw FormatError("\(n - i) byte(s) after the IEND chunk")
            case .data(let remaining):
                let (passed, left) = cursor.pass(bytes, &i, remaining: remaining, keep: false)
                crc.update(passed)
                if left == 0 { startField(.crc, 4) } else { phase = .data(remaining: left) }
            default:
                if cursor.gather(bytes, &i, until: fieldNeeded) { try fieldComplete() }
            }
        }
    }

    /// Ends the stream: the file must have ended right after IEND.
    public func finish() throws(FormatError) {
        switch phase {
        case .afterIEND: return
        case .signature: throw FormatError("too short for a PNG signature")
        default:
            throw FormatError(
                chunkCount == 0 ? "truncated before the IHDR chunk" : "truncated: no IEND chunk at the end")
        }
    }

    private mutating func startField(_ next: Phase, _ count: Int) {
        phase = next
        cursor.clearField()
        fieldNeeded = count
    }

    private mutating func fieldComplete() throws(FormatError) {
        let position = cursor.position
        switch phase {
        case .signature:
            guard cursor.field == PhotoType.pngSignature else {
                throw FormatError("does not start with the PNG signature")
            }
            startField(.length, 4)
        case .length:
            chunkLength = Int64(bigEndian32(cursor.field))
            guard chunkLength <= 0x7FFF_FFFF else {
                throw FormatError("chunk length \(chunkLength) is over the PNG limit")
            }
            guard cursor.fits(from: position, count: 4 + chunkLength + 4) else {
                throw FormatError(
                    "chunk of \(chunkLength) bytes at offset \(position - 4) runs past the end of the file")
            }
            startField(.type, 4)
        case .type:
            chunkType = cursor.field
            guard chunkType.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw FormatError("chunk at offset \(position - 8) has an invalid type")
            }
            let name = String(decoding: chunkType, as: UTF8.self)
            if chunkCount == 0 && name != "IHDR" { throw FormatError("first chunk is \(name), not IHDR") }
            if chunkCount == 0 && chunkLength != 13 {
                throw FormatError("IHDR chunk has length \(chunkLength), not 13")
            }
            if name == "IEND" && chunkLength != 0 { throw FormatError("IEND chunk has length \(chunkLength), not 0") }
            crc = CRC32()
            crc.update(chunkType)
            if chunkLength == 0 {
                startField(.crc, 4)
            } else {
                phase = .data(remaining: chunkLength)
                cursor.clearField()
            }
        case .crc:
            let stored = bigEndian32(cursor.field)
            let name = String(decoding: chunkType, as: UTF8.self)
            guard stored == crc.value else { throw FormatError("CRC mismatch in \(name) chunk") }
            chunkCount += 1
            if name == "IEND" { startField(.afterIEND, 0) } else { startField(.length, 4) }
        case .data, .afterIEND:
            break
        }
    }

    private func bigEndian32(_ b: [UInt8]) -> UInt32 {
        UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }
}
