import PTKSystem

/// ptkd's answer to "does the directory keep these bytes already?" (`duplicates = skip`),
/// shared by every session: the photos saved since ptkd started (before the indexer has
/// recorded them), then the library's index, looked up by SHA-256 and size. A name is given
/// only while its file is there with that size. Lookups are serialised on one read-only
/// connection to the index (a query by an indexed hash takes microseconds).
public final class HeldPhotos: @unchecked Sendable {
    // `library`, `nextOpen`, `recent` and `recentOrder` are guarded by `lock`.
    private let lock = Lock()
    /// The received-photos directory whose photos are looked up.
    public let directory: String
    private var library: PhotoLibrary?
    private var nextOpen = Instant.now
    private var recent: [String: String] = [:]
    private var recentOrder: [String] = []
    private var closed = false
    private let directoryFD: FileDescriptor?
    /// Photos remembered before the index is asked.
    static let recentLimit = 4096

    /// Lookups in `directory`; the index is opened at the first lookup (retried every 10 s while it cannot be).
    public init(directory: String) {
        self.directory = directory
        // Without it, remembered photos are not checked and so not used: the index still is.
        directoryFD = try? FileDescriptor.open(directory, flags: [.readOnly, .directory])
    }

    deinit { directoryFD?.close() }

    private static func key(_ sha256: String, _ size: Int64) -> String { "\(sha256)-\(size)" }

    /// Notes a photo just saved as `name` (relative to the directory).
    public func remember(name: String, sha256: String, size: Int64) {
        lock.withLock {
            let key = Self.key(sha256, size)
            if recent.updateValue(name, forKey: key) == nil { recentOrder.append(key) }
            if recentOrder.count > Self.recentLimit { recent[recentOrder.removeFirst()] = nil }
        }
    }

    /// The name of a photo the directory keeps with these bytes, or nil.
    public func find(sha256: String, size: Int64) -> String? {
        lock.withLock {
            if closed { return nil }
            if let name = recent[Self.key(sha256, size)], let dir = directoryFD,
                // gone or changed: asked of the index
                let st = try? dir.statusBeneath(name), st.isRegularFile, st.size == size
            {
                return name
            }
            if library == nil && Instant.now >= nextOpen {
                // No index yet (ptkd makes it as it starts) or not readable now: tried again in a while.
                library = try? PhotoLibrary(directory: directory, create: false)
                if library == nil { nextOpen = .now + .seconds(10) }
            }
            guard let library else { return nil }
            do { return try library.held(sha256: sha256, size: size) } catch {
                // A failing index (locked past its wait, damaged) finds nothing: the photo is
                // stored as if new, which loses nothing. The connection is opened afresh later.
                self.library = nil
                nextOpen = .now + .seconds(10)
                return nil
            }
        }
    }
}

extension HeldPhotos: Service {
    /// "duplicate lookups", for the log.
    public var serviceName: String { "duplicate lookups" }
    /// Closes the index connection (once the sessions have stopped), so that the indexer's is the
    /// last one and SQLite folds the WAL into the database as it closes.
    public func stop(until deadline: Instant) -> Bool {
        lock.withLock {
            closed = true
            library = nil
        }
        return true
    }
}
