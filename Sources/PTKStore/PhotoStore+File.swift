import PTKSystem
import PTKVocabulary

extension PhotoStore {
    /// Takes the `request.size` bytes of `source` (an open file: a watched inbox's, `ptk
    /// import`'s) as the photo `request` describes, through the same path as every door's: a
    /// temporary file in `.incoming`, free space and min-free, the size, SHA-256 and structural
    /// checks for `request.type`, fsync, duplicates, and publishing without replacing. Reads
    /// with pread, so `source`'s offset is untouched; a source shorter than announced fails as
    /// a size mismatch, nothing published. `stop` is asked between reads of 1 MiB: true
    /// abandons the copy (nothing kept) with an I/O failure saying so. A source written while
    /// it was read (its size, modification or change time differ after the last read from
    /// before the first) is not published either: the bytes read may mix its old and new
    /// contents, and both may pass the format check (a JPEG's entropy-coded data has no
    /// checksum). That fails as a size mismatch, "changed while it was read".
    public func take(_ request: StoreRequest, from source: FileDescriptor, stop: () -> Bool = { false }) -> Result<
        StoredPhoto, StoreFailure
    > {
        startTaking(request, from: source, stop: stop, notify: nil).conclude()
    }

    /// `take` in two halves, for a caller that reads the next file while this one's flush round
    /// runs (the inbox door): reads and checks `source` as `take` does, then queues the photo for
    /// the next flush round and answers at once. `notify` is called on the flusher's thread once
    /// the round is over (it must only wake the caller), who then calls `conclude` on its own
    /// thread; `owner` shares rounds fairly with other owners (nil: this photo alone). `held`
    /// is asked, when duplicates are looked for and the store keeps no photo with these bytes,
    /// for a photo with them that the caller has in a round still (its name once saved, or nil):
    /// two sources with the same bytes in flight at once store them once.
    public func startTaking(
        _ request: StoreRequest, from source: FileDescriptor, stop: () -> Bool = { false },
        notify: (@Sendable () -> Void)?, owner: Int? = nil,
        held: (_ sha256: String, _ size: Int64) -> String? = { _, _ in nil }
    ) -> FinishingPhoto {
        finishing(read(request, from: source, stop: stop), notify: notify, owner: owner, held: held)
    }

    /// A file read and checked (or why it could not be) queued for the next flush round, as
    /// `startTaking` describes.
    func finishing(
        _ read: Result<IncomingFile, StoreFailure>, notify: (@Sendable () -> Void)?, owner: Int?,
        held: (_ sha256: String, _ size: Int64) -> String?
    ) -> FinishingPhoto {
        switch read {
        case .failure(let failure): return FinishingPhoto(.failure(failure))
        case .success(let file):
            let ticket = file.startFinishing(notify: notify, owner: owner, held: held)
            return FinishingPhoto(file: file, ticket: ticket, sha256: file.sha256)
        }
    }

    /// The first part of `take`: `source`'s bytes read into a temporary file, checked as they
    /// come, not yet flushed nor published.
    func read(_ request: StoreRequest, from source: FileDescriptor, stop: () -> Bool) -> Result<
        IncomingFile, StoreFailure
    > {
        let file: IncomingFile
        switch begin(request) {
        case .success(let f): file = f
        case .failure(let failure): return .failure(failure)
        }
        // The source as it was before any byte was read; fstat of an open descriptor fails
        // only on EIO, and then the read below fails too.
        let before = try? source.status()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var position = file.offset
        while position < request.size {
            if stop() {
                file.abandon(keepForResume: false)
                return .failure(StoreFailure(.io, "stopped before the whole file was read"))
            }
            let want = Int(min(Int64(buffer.count), request.size - position))
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
                    try source.read(
                        fromAbsoluteOffset: position, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            } catch {
                file.abandon(keepForResume: false)
                return .failure(StoreFailure(.io, "cannot read the photo: \(error)"))
            }
            if n == 0 { break }
            let appended = buffer.withUnsafeBytes { b in
                Result { () throws(StoreFailure) in try file.append(UnsafeRawBufferPointer(rebasing: b[..<n])) }
            }
            if case .failure(let error) = appended {
                file.abandon(keepForResume: false)
                return .failure(error)
            }
            position += Int64(n)
        }
        let after = try? source.status()  // as `before`: EIO only, and the check below is then not made
        if let before, let after,
            after.size != before.size || after.modified != before.modified
                || after.modifiedNanoseconds != before.modifiedNanoseconds || after.changedAt != before.changedAt
        {
            file.abandon(keepForResume: false)
            return .failure(StoreFailure(.sizeMismatch, "the file changed while it was read"))
        }
        return .success(file)
    }
}

/// A photo `PhotoStore.startTaking` has read and checked: in a flush round, or answered already
/// (it failed its checks, or its bytes were kept). `conclude` gives its result once the round is
/// over; a photo let go without it is concluded as it goes (nothing is left half-published).
public final class FinishingPhoto {
    private let file: IncomingFile?
    private let ticket: FlushTicket
    private var concluded: Result<StoredPhoto, StoreFailure>?
    /// The SHA-256 of its bytes, once they were read whole (nil when it failed before).
    public let sha256: String?

    init(file: IncomingFile, ticket: FlushTicket, sha256: String?) {
        self.file = file
        self.ticket = ticket
        self.sha256 = sha256
    }

    /// A photo answered already: `result`.
    public init(_ result: Result<StoredPhoto, StoreFailure>) {
        file = nil
        ticket = FlushTicket(result)
        sha256 = try? result.get().sha256  // a failure has no digest to give
    }

    /// True once its round is over: `conclude` does not wait.
    public var isOver: Bool { ticket.result != nil }

    /// Waits for its round, without concluding (any thread): its result.
    public func waitForRound() -> Result<StoredPhoto, StoreFailure> { ticket.wait() }

    /// Waits for its round if it is not over, then closes the temporary file (saved) or deletes
    /// it (failed), once: its result (the same at every call).
    public func conclude() -> Result<StoredPhoto, StoreFailure> {
        if let concluded { return concluded }
        let result = file?.conclude(ticket) ?? ticket.wait()
        concluded = result
        return result
    }
}
