import PTKSystem
import PTKVocabulary

/// A body of undeclared length held while it comes (`curl -T -`, `rclone rcat`), so that the
/// store is then given a photo of known size: a file of `.incoming/` that has no name
/// (O_TMPFILE, else unlinked as soon as it is made), so nothing is left of it under any name
/// whatever happens, gone when it is closed. Its bytes are promised against min-free in steps
/// of `reserveStep` before they are written (`Reservation`), so spools and uploads at once
/// cannot together go under min-free. Used by one session at a time.
public final class SpoolFile {
    /// Bytes held so far.
    public private(set) var size: Int64 = 0
    private let fd: FileDescriptor
    private let reservation: Reservation
    private var open = true

    /// How many bytes a spool promises itself at a time.
    public static let reserveStep: Int64 = 4 << 20

    init(fd: FileDescriptor, reservation: Reservation) {
        self.fd = fd
        self.reservation = reservation
    }

    deinit { close() }

    /// Appends `bytes`, promising the next `reserveStep` first when they would pass what is
    /// promised: `.noSpace` when that would go under min-free (nothing written), `.io` when
    /// the write fails.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(StoreFailure) {
        let count = Int64(bytes.count)
        if count > reservation.held {
            let step = max(Self.reserveStep, count - reservation.held)
            try reservation.grow(by: step, what: "holding \(size + count) bytes of a body of undeclared length")
        }
        do { try fd.writeAll(bytes) } catch {
            throw StoreFailure(error.isNoSpace ? .noSpace : .io, "writing the spool: \(error.reason)")
        }
        size += count
        reservation.used(count)
    }

    /// The body is whole: gives back what is promised and not written, so that the store's
    /// check of the photo's own room does not count the spool's unused step as well.
    public func finishWriting() { reservation.release() }

    /// Reads up to `buffer.count` of the bytes held from `offset`; 0 at their end.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try fd.read(fromAbsoluteOffset: offset, into: buffer)
    }

    /// Closes the file (its bytes are gone with it) and gives back what is promised.
    public func close() {
        reservation.release()
        guard open else { return }
        open = false
        fd.close()
    }
}

extension PhotoStore {
    /// A new, empty `SpoolFile` in `.incoming/`.
    public func openSpool() -> Result<SpoolFile, StoreFailure> {
        do throws(SystemError) {
            let fd: FileDescriptor
            do {
                fd = try FileDescriptor.open(
                    ".", relativeTo: incoming, flags: [.readWrite, .temporaryFile], mode: 0o600)
            } catch {
                // A file system without O_TMPFILE: a unique name, unlinked at once.
                let name = "spool.\(processID()).\(Self.spoolCounter.next()).tmp"
                fd = try FileDescriptor.open(
                    name, relativeTo: incoming, flags: [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
                do throws(SystemError) { try incoming.unlink(name) } catch {
                    fd.close()
                    throw error
                }
            }
            return .success(SpoolFile(fd: fd, reservation: Reservation(store: self)))
        } catch {
            return .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, "cannot hold the body: \(error)"))
        }
    }

    private static let spoolCounter = Counter()
}
