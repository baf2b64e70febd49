/// Byte arrays kept for reuse: each received CHUNK is read into one, written to its file and
/// checked, then given back. Allocating a fresh 100 KiB array per chunk let the C library return
/// the memory to the kernel and fault it in again (a tenth of the receiver's CPU). It keeps at
/// most `limit` arrays, so it never holds more than a few MB.
public final class ByteArrayPool: @unchecked Sendable {
    /// The pool the receiving connections and the photo checks share.
    public static let chunks = ByteArrayPool(limit: 48, maxCapacity: 1 << 20)

    // Guarded by `lock`.
    private let lock = Lock()
    private var arrays: [[UInt8]] = []
    private let limit: Int
    private let maxCapacity: Int

    /// Keeps at most `limit` arrays; one given back with a capacity above `maxCapacity` bytes is dropped instead.
    public init(limit: Int, maxCapacity: Int) {
        self.limit = limit
        self.maxCapacity = maxCapacity
    }

    /// An array of `count` bytes whose contents are unspecified, to be overwritten.
    public func take(count: Int) -> [UInt8] {
        guard var array = lock.withLock({ arrays.popLast() }) else {
            return [UInt8](repeating: 0, count: count)
        }
        if array.count > count {
            array.removeLast(array.count - count)
        } else if array.count < count {
            array.append(contentsOf: repeatElement(0, count: count - array.count))
        }
        return array
    }

    /// Gives `array` back once nothing else uses it. An array still shared elsewhere is safe to
    /// give (the next user's write makes it a copy of its own), only slower.
    public func give(_ array: consuming [UInt8]) {
        guard array.capacity <= maxCapacity else { return }
        let kept = array
        lock.withLock {
            if arrays.count < limit { arrays.append(kept) }
        }
    }

    /// Arrays held now.
    public var count: Int { lock.withLock { arrays.count } }
}
