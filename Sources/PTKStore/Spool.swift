import PTKSystem
import PTKVocabulary

/// A photo whose length is not announced before its bytes (an HTTP body sent chunked with no
/// Content-Length: `curl -T -`, `rclone rcat`, a script's pipe), held until its end so the store
/// can then take it like any other: an unnamed file in `.incoming/` (made with a unique name and
/// unlinked at once, so nothing is left behind if the process dies), at most `limit` bytes, the
/// file system's free space checked against `min-free` as it grows, and the bytes checked for
/// the type's structure as they come (a file that is no photo fails at its first bytes, not at
/// `limit`). `take` then hands it to the store: `begin` with the length it has, the bytes copied
/// into the store's temporary file with every check a photo of announced length gets.
/// The cost is a second write of the bytes; an announced length avoids it.
public final class Spool {
    let store: PhotoStore
    let fd: FileDescriptor
    /// The most bytes it takes.
    public let limit: Int64
    /// Bytes held so far.
    public private(set) var written: Int64 = 0
    private var structure: StructureCheck
    private let type: PhotoType
    private var checkedSpaceAt: Int64 = 0
    private var closed = false

    /// Free space is asked of the file system again after this many bytes.
    static let spaceCheckStep: Int64 = 8 << 20

    init(store: PhotoStore, fd: FileDescriptor, type: PhotoType, limit: Int64) {
        self.store = store
        self.fd = fd
        self.type = type
        self.limit = limit
        structure = StructureCheck(type: type, totalSize: nil)
    }

    deinit { if !closed { fd.close() } }

    /// Holds the next bytes: refused (`.sizeMismatch`) past `limit`, (`.notAPhoto`) when they
    /// cannot be the type's, (`.noSpace`) when the file system would keep less than `min-free`.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(StoreFailure) {
        guard !closed else { throw StoreFailure(.io, "the spool was closed") }
        guard written + Int64(bytes.count) <= limit else {
            throw StoreFailure(.sizeMismatch, "the body is longer than the \(limit) bytes a photo may have")
        }
        do { try structure.feed(bytes) } catch {
            throw StoreFailure(.notAPhoto, type == .png ? error.message : "not a well-formed \(type.displayName): \(error.message)")
        }
        if written == 0 || written - checkedSpaceAt >= Self.spaceCheckStep {
            checkedSpaceAt = written
            let available: Int64
            do { available = try fd.availableSpace() } catch { throw StoreFailure(.io, "the free space of .incoming: \(error.reason)") }
            // What is still to come is not known: what is held and this piece must leave the reserve.
            if available - Int64(bytes.count) < store.settings.minFree {
                throw StoreFailure(.noSpace, "\(written + Int64(bytes.count)) bytes would leave less than the \(store.settings.minFree)-byte reserve (\(available) bytes free)")
            }
        }
        do { try fd.writeAll(bytes) } catch {
            throw StoreFailure(error.isNoSpace ? .noSpace : .io, "writing the spool: \(error.reason)")
        }
        written += Int64(bytes.count)
    }

    /// Gives what was held to the store as `request` (its `size` set to the length held):
    /// `begin`, the bytes, `finish`, as for any photo. The spool is closed after, whatever the outcome.
    public func take(_ request: StoreRequest) -> Result<StoredPhoto, StoreFailure> {
        defer { close() }
        guard !closed else { return .failure(StoreFailure(.io, "the spool was closed")) }
        do { try structure.finish() } catch {
            return .failure(StoreFailure(.notAPhoto, type == .png ? error.message : "not a well-formed \(type.displayName): \(error.message)"))
        }
        var sized = request
        sized.size = written
        return store.receive(sized, from: fd)
    }

    /// Drops what was held (the file has no name: closing it frees its blocks).
    public func close() {
        guard !closed else { return }
        closed = true
        fd.close()
    }
}

extension PhotoStore {
    /// A spool for a photo of `type` whose length is not announced, at most `limit` bytes
    /// (`Spool`). Refused (`.io`) when `.incoming/` cannot hold a file.
    public func spool(type: PhotoType, limit: Int64) -> Result<Spool, StoreFailure> {
        let name = "unsized.\(processID()).\(Self.spoolCounter.next()).tmp"
        do throws(SystemError) {
            let fd = try FileDescriptor.open(name, relativeTo: incoming, flags: [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
            // A name that cannot be removed stays until removeStalePartials finds it old.
            do { try incoming.unlink(name) } catch {
                fd.close()
                throw error
            }
            return .success(Spool(store: self, fd: fd, type: type, limit: limit))
        } catch {
            return .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, "a spool in .incoming: \(error.description)"))
        }
    }

    private static let spoolCounter = Counter()
}
