import CZlib

/// CRC-32 (the PNG/zlib polynomial) through zlib.
public struct CRC32: Sendable {
    /// The CRC of what was added so far.
    public private(set) var value: UInt32 = 0

    public init() {}

    /// Adds bytes. The corresponding C function is `crc32`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var remaining = bytes.count
        var p = base.assumingMemoryBound(to: UInt8.self)
        var crc = UInt(value)
        while remaining > 0 {
            let n = min(remaining, Int(UInt32.max))
            crc = CZlib.crc32(crc, p, uInt(n))
            p += n
            remaining -= n
        }
        value = UInt32(truncatingIfNeeded: crc)
    }

    /// Adds bytes.
    public mutating func update<C: ContiguousBytes>(_ bytes: C) {
        bytes.withUnsafeBytes { update($0) }
    }
}
