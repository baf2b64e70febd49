/// What the streaming format checks (`PNGValidator`, `JPEGValidator`, `HEIFValidator`) share:
/// the offset reached in the file, the file's announced size that every chunk, segment or box
/// must stay within, and the few bytes of the field being read (a length, a header), gathered
/// across `feed` calls however the file is split. Each check keeps its own phases; this keeps
/// the counting, so that no check can forget to advance its offset.
struct StreamCursor: Sendable {
    /// The file's announced size, when known.
    let totalSize: Int64?
    /// The offset of the next byte.
    private(set) var position: Int64 = 0
    /// The field read so far (or a body the check keeps).
    private(set) var field: [UInt8] = []

    init(totalSize: Int64?, fieldCapacity: Int) {
        self.totalSize = totalSize
        field.reserveCapacity(fieldCapacity)
    }

    /// Starts a new field.
    mutating func clearField() {
        field.removeAll(keepingCapacity: true)
    }

    /// Takes the byte at `i` (advancing `i`) without keeping it.
    mutating func next(_ bytes: UnsafeRawBufferPointer, _ i: inout Int) -> UInt8 {
        let byte = bytes[i]
        i += 1
        position += 1
        return byte
    }

    /// Takes the byte at `i` (advancing `i`) into the field.
    mutating func gatherByte(_ bytes: UnsafeRawBufferPointer, _ i: inout Int) {
        field.append(next(bytes, &i))
    }

    /// Keeps in the field a byte already taken by `next`.
    mutating func keep(_ byte: UInt8) {
        field.append(byte)
    }

    /// Takes bytes from `i` into the field until it holds `count` or the bytes end; true once
    /// it holds `count`.
    mutating func gather(_ bytes: UnsafeRawBufferPointer, _ i: inout Int, until count: Int) -> Bool {
        let take = min(bytes.count - i, count - field.count)
        field.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<i + take]))
        i += take
        position += Int64(take)
        return field.count == count
    }

    /// Passes over at most `remaining` bytes from `i` (a body), kept in the field with `keep`;
    /// returns the bytes passed (for a checksum) and how many of `remaining` are left.
    mutating func pass(_ bytes: UnsafeRawBufferPointer, _ i: inout Int, remaining: Int64, keep: Bool)
        -> (passed: UnsafeRawBufferPointer, left: Int64)
    {
        let take = Int(min(Int64(bytes.count - i), remaining))
        let passed = UnsafeRawBufferPointer(rebasing: bytes[i..<i + take])
        if keep { field.append(contentsOf: passed) }
        i += take
        position += Int64(take)
        return (passed, remaining - Int64(take))
    }

    /// Passes over the bytes from `i` to `end` (data the check only walks past).
    mutating func skip(_ i: inout Int, to end: Int) {
        position += Int64(end - i)
        i = end
    }

    /// True when `count` bytes from offset `start` stay within the announced size (always,
    /// when it is unknown). Subtracts rather than adds: a size a file declares may be near
    /// `Int64.max`, and `start + count` would overflow (a trap, the receiver down).
    func fits(from start: Int64, count: Int64) -> Bool {
        guard let totalSize else { return true }
        return start <= totalSize && count <= totalSize - start
    }
}
