import PTKConfiguration
import PTKDAV
import PTKDoor
import PTKHTTP
import PTKLog
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary

/// What each WebDAV request starts from: the door, the browser-side connection (and its
/// library handle) and, once the password middleware accepted it, the app password.
package struct DAVContext {
    let door: DAVEndpoint
    let connection: WebConnection
    /// Set by `DAVEndpoint.authenticate` for the request it hands on; the routes' group turns
    /// it into a `DAVCaller`.
    var account: AppPassword? = nil
    /// Set with `account`: where the request was sent (`DAVMount.of`).
    var mount = DAVMount.plain
}

/// What a WebDAV route's handler works with: a request whose app password was accepted.
struct DAVCaller {
    let door: DAVEndpoint
    let connection: WebConnection
    /// The app password `BasicAuth` accepted.
    let account: AppPassword
    /// Where the request was sent: ptk's `/dav` or a Nextcloud-compatible path.
    let mount: DAVMount

    /// Whether the password sees the whole directory (`full`), not only what it sent.
    var full: Bool { account.access == .full }
    /// The prefix this request's hrefs and Destination are under.
    var prefix: String { mount.prefix }
}

/// ptkd's WebDAV door (RFC 4918 class 1 and 2, docs/OPERATIONS.md "WebDAV: file managers and
/// backup apps"): `/dav/` on the web interface's port and certificate, for app passwords over
/// HTTP Basic. A `full` password sees the received-photos directory as folders; an `upload`
/// password sees only what it sent, and its photos land in its own folder as the layout says.
/// A PUT is a photo arriving like any other (the store's checks, flushed before the answer, the
/// library, hooks). The names each client used are remembered (`DAVNames`), what operating
/// systems write beside photos is kept apart (`DAVSidecars`), and locks live in memory.
package final class DAVEndpoint: @unchecked Sendable {
    let configuration: WebSettings
    let store: PhotoStore
    let arrivals: Arrivals
    let shutdown: ShutdownSignal
    package let passwords: AppPasswords
    /// Set at init; tests replace it (smaller limits) before any request.
    var names: DAVNames
    let sidecars: DAVSidecars
    /// The upload passwords' folder ETags and times, kept while their names stay as they were.
    let folderFactsCache = DAVFolderFactsCache()
    /// The upload folders of chunked upload v2 (`DAVEndpoint+Chunks`); tests replace it
    /// (smaller limits) before any request.
    var uploads: DAVUploads
    /// Wrong app passwords, counted per address with the web login's.
    let throttle: PasswordThrottle
    let guesses: Guesses
    let requestLogBudget = LogBudget(perMinute: 30)
    /// The received-photos directory, for reads and listings (writes go through the store and library).
    let photos: FileDescriptor
    // Guarded by `lockTableLock`: the lock tables by space (`DAVView.lockSpace`), and the ids of
    // the passwords removed while ptkd runs (`forget`), which take no lock any more.
    private var lockTables: [String: LockTable] = [:]
    private var removedAccounts: Set<String> = []
    private let lockTableLock = Lock()
    // Guarded by `writingLock`: the names a request is writing now (a PUT storing a photo, a
    // MKCOL), per password: the bytes of "ID PATH" (names are told apart by their bytes).
    // A MKCOL waits (`claim(_:_:waiting:)`) on it for the name, and `release` wakes it.
    private var writing: Set<[UInt8]> = []
    private let writingLock = ConditionLock()
    // Guarded by `passwordsLock`: the ids of the passwords the file held when last looked at.
    private var knownPasswords: Set<String> = []
    private let passwordsLock = Lock()

    /// The path the door is mounted at.
    static let prefix = "/dav"
    static let maxLocksPerPassword = 100
    /// The most bytes of one lock's `<D:owner>`, and of all a password's locks' owners.
    static let maxOwnerBytes = 1 << 10
    static let maxOwnerBytesPerPassword = 8 << 10
    /// PROPFIND, PROPPATCH and LOCK bodies are read up to this size (and parsed with `XMLLimits.default`).
    static let xmlLimit = 64 << 10
    static let realm = "ptk"

    package init(
        configuration: WebSettings, store: PhotoStore, arrivals: Arrivals, throttle: PasswordThrottle, guesses: Guesses,
        shutdown: ShutdownSignal
    ) throws(DaemonError) {
        self.configuration = configuration
        self.store = store
        self.arrivals = arrivals
        self.throttle = throttle
        self.guesses = guesses
        self.shutdown = shutdown
        let passwords = AppPasswords(directory: configuration.webDirectory)
        self.passwords = passwords
        uploads = DAVUploads(
            directory: configuration.webDirectory + "/uploads",
            limits: Self.uploadLimits(configuration), keep: passwords.currentIDs(), now: Self.now)
        names = DAVNames(directory: configuration.webDirectory + "/dav", minFree: configuration.minFree)
        sidecars = DAVSidecars(directory: configuration.webDirectory + "/dav")
        do {
            photos = try .open(configuration.effectiveDirectory, flags: [.readOnly, .directory])
        } catch {
            throw DaemonError(
                description: "webdav: cannot open \(configuration.effectiveDirectory): \(error)",
                exitCode: .directoryUnusable)
        }
        knownPasswords = passwords.currentIDs() ?? []
        removeForgotten()
    }

    /// Drops the state of the passwords removed from the file since the last look (`ptk
    /// app-password remove`, which ptkd learns of by reading the file, as it does at every
    /// request): their locks, so that none stands in anyone's way, their names and their
    /// sidecars. Called before each request of the door is answered. A file that cannot be
    /// read now changes nothing (not the same as no passwords).
    func forgetRemovedPasswords() {
        guard let now = passwords.currentIDs() else { return }
        forgetRemoved(now: now)
    }

    private func forgetRemoved(now: Set<String>) {
        let gone = passwordsLock.withLock { () -> Set<String> in
            let gone = knownPasswords.subtracting(now)
            knownPasswords = now
            return gone
        }
        for id in gone.sorted() { forget(password: id) }
    }

    /// Whether the password `id` is in the file now (read again if it changed), after dropping
    /// what removed passwords left. Asked by a request authorised at its head right before it
    /// keeps anything for its password (a lock, a name, a folder, a sidecar, a photo), once
    /// its body is in: a password removed while its body was on its way keeps nothing. What
    /// `forget` dropped cannot come back either way (`removedAccounts`, `DAVNames.drop`,
    /// `DAVSidecars.drop`): a request that passed this just before the removal adds state that
    /// the next request's `forgetRemovedPasswords` drops. A file that cannot be read now says
    /// nothing new: yes (as `forgetRemovedPasswords` drops nothing then).
    func isCurrent(_ id: String) -> Bool {
        let now = passwords.currentIDs()
        if let now { forgetRemoved(now: now) }
        return now?.contains(id) ?? true
    }

    /// Drops everything kept for the password `id`; nothing can be kept for it after.
    func forget(password id: String) {
        let dropped = lockTableLock.withLock { () -> Int in
            removedAccounts.insert(id)
            var n = lockTables.removeValue(forKey: "upload " + id)?.locks.count ?? 0
            for space in Array(lockTables.keys) {
                n += lockTables[space]!.count(account: id)
                lockTables[space]!.removeAll(account: id)
            }
            return n
        }
        names.drop(id)
        sidecars.drop(id)
        folderFactsCache.drop(id)
        uploads.drop(id)
        Log.info(
            "webdav: app password \(id) was removed: its \(dropped) lock(s), its names, its upload folders and the files its clients wrote beside photos are gone"
        )
    }

    /// Removes the names and sidecars kept for app passwords that no longer exist (`ptk
    /// app-password remove` leaves them to ptkd, which owns them).
    private func removeForgotten() {
        let folder = configuration.webDirectory + "/dav"
        // No passwords file or no folder yet: nothing to clean now.
        guard let ids = try? Set(passwords.list().map(\.id)),
            let names = try? FileDescriptor.open(folder, flags: [.readOnly, .directory, .noFollow]).entriesAndClose()
        else { return }  // as above
        for name in names {
            let id = String(name.split(separator: ".").first ?? "")
            guard !ids.contains(id) else { continue }
            if name.hasSuffix(".names") {
                try? removeFile(folder + "/" + name)  // left for the next start
            } else if name.hasSuffix(".sidecars") {
                DAVSidecars.removeFolder(folder + "/" + name)
            }
        }
    }

    deinit { photos.close() }

    /// Whether a request's target is the door's, as sent: `/dav`, `/dav/...`, and the
    /// Nextcloud-compatible `/remote.php/webdav/...` and `/remote.php/dav/files/...` (`DAVMount`).
    package static func isDAVTarget(_ target: String) -> Bool { DAVMount.isTarget(target) }

    /// Runs `body` on the lock table of `space` (`DAVView.lockSpace`), alone.
    func withLocks<T>(_ space: String, _ body: (inout LockTable) -> T) -> T {
        lockTableLock.withLock {
            body(
                &lockTables[
                    space,
                    default: LockTable(
                        maxPerAccount: Self.maxLocksPerPassword, maxOwnerBytesPerAccount: Self.maxOwnerBytesPerPassword)
                ])
        }
    }

    /// As `withLocks`, for a request of the password `account` that adds a lock: nil, and
    /// `body` not run, once the password was removed (`forget`).
    func withLocks<T>(_ space: String, for account: String, _ body: (inout LockTable) -> T) -> T? {
        lockTableLock.withLock {
            if removedAccounts.contains(account) { return nil }
            return body(
                &lockTables[
                    space,
                    default: LockTable(
                        maxPerAccount: Self.maxLocksPerPassword, maxOwnerBytesPerAccount: Self.maxOwnerBytesPerPassword)
                ])
        }
    }

    /// Claims the name `path` of password `id` for one request that writes it (a PUT storing a
    /// photo, a MKCOL); false when another request of that password is writing it now (two PUTs
    /// of one new name would store two photos for one name, and the password would see one).
    /// With `waiting`, a request that finds the name taken waits up to that long for it (a MKCOL
    /// behind another making the same folder: rclone makes a file's folder once per file, at
    /// once, and is answered "exists" rather than 423 Locked).
    func claim(_ id: String, _ path: DAVPath, waiting: Duration? = nil) -> Bool {
        let key = Array((id + " " + path.string).utf8)
        let deadline = waiting.map { Instant.now + $0 }
        return writingLock.withLock {
            while !writing.insert(key).inserted {
                guard let deadline, writingLock.wait(until: deadline) || Instant.now < deadline else { return false }
            }
            return true
        }
    }

    /// Lets go of a name `claim` gave, and wakes the requests waiting for a name.
    func release(_ id: String, _ path: DAVPath) {
        writingLock.withLock {
            writing.remove(Array((id + " " + path.string).utf8))
            writingLock.broadcast()
        }
    }

    /// How long a MKCOL waits for its name while another request writes it.
    static let mkcolWait = Duration.seconds(5)

    /// The seconds clock locks expire by.
    package static var now: Int64 { WallTime.now.seconds }

    /// The door's HTTP side for one web connection: the routes (built once, `routes`), each
    /// request's context naming the connection, refusals in plain text or DAV XML.
    package func responder(connection: WebConnection) -> HTTPResponder<DAVContext> {
        HTTPResponder(
            routes: Self.routes, middleware: Self.middleware, kind: "webdav", logBudget: requestLogBudget,
            requestLog: requestLogBudget,
            log: { Log.info($0) }, context: { _ in DAVContext(door: self, connection: connection) },
            renderError: { r, status, message, headers in Self.errorResponse(r, status, message, headers) })
    }
}
