import PTKSystem
import PTKVocabulary

/// Bytes the uploads in flight may still write, store-wide: each free-space check subtracts
/// them, so uploads that all pass their checks at once cannot together write the disk past
/// min-free (a check reads the free space, which counts only what was written already).
final class ReservationLedger: @unchecked Sendable {
    // `outstanding` is only read and changed with `lock` held.
    private let lock = Lock()
    private var outstanding: Int64 = 0

    /// Adds `bytes` when the free space (`free()`) less what is outstanding less `bytes`
    /// leaves `minFree`; else throws `.noSpace` (`what` names the bytes in its message).
    func take(_ bytes: Int64, minFree: Int64, what: String, free: () throws(SystemError) -> Int64) throws(StoreFailure)
    {
        let taken: Result<Void, StoreFailure> = lock.withLock {
            let available: Int64
            do throws(SystemError) { available = try free() } catch {
                return .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, error.description))
            }
            // Both at least 0, so `room` cannot overflow; `bytes` is compared before it is
            // subtracted, so a size near Int64.max (max-file-size set as large) cannot either,
            // even when more is promised than is free now (the disk filled from elsewhere).
            let room = available - outstanding
            if bytes > room || room - bytes < minFree {
                // Worded as a lone upload was told before uploads in flight were counted.
                let others = outstanding > 0 ? ", \(outstanding) of them promised to uploads in flight" : ""
                let why = "\(what) would leave less than the \(minFree)-byte reserve (\(available) bytes free\(others))"
                return .failure(StoreFailure(.noSpace, why))
            }
            outstanding += bytes
            return .success(())
        }
        try taken.get()
    }

    /// Gives back `bytes` taken (written since, or not needed).
    func give(_ bytes: Int64) {
        lock.withLock { outstanding -= bytes }
    }

    /// Bytes outstanding now (tests).
    var total: Int64 { lock.withLock { outstanding } }
}

/// The part of the ledger one upload holds: what it may still write beyond what the free space
/// shows. Used by one session at a time.
public final class Reservation {
    private let store: PhotoStore
    /// Bytes taken and not written yet.
    public private(set) var held: Int64 = 0

    init(store: PhotoStore) { self.store = store }

    deinit { release() }

    /// Takes `bytes` more, or throws `.noSpace` when the free space less every upload's
    /// outstanding bytes would go under min-free.
    public func grow(by bytes: Int64, what: String? = nil) throws(StoreFailure) {
        let store = self.store
        try store.ledger.take(
            bytes, minFree: store.settings.minFree, what: what ?? "\(bytes) more bytes",
            free: { () throws(SystemError) in try store.freeSpace() })
        held += bytes
    }

    /// `bytes` were written: the free space shows them now.
    public func used(_ bytes: Int64) {
        let n = min(bytes, held)
        guard n > 0 else { return }
        held -= n
        store.ledger.give(n)
    }

    /// Gives back all that is held (the upload ended, however).
    public func release() {
        guard held > 0 else { return }
        store.ledger.give(held)
        held = 0
    }
}
