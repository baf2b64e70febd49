import PTKDigest
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// A browser logged in to the web interface.
public struct WebSession: Sendable, Equatable {
    /// A short public name for it (`ptk web-sessions revoke ID`): 8 hex digits.
    public var id: String
    /// The SHA-256 of the cookie's secret (the secret itself is kept nowhere).
    public var tokenHash: String
    /// The token every change made through the pages must carry (CSRF).
    public var csrf: String
    /// Who it is: the name given at login; uploads are from "web: NAME".
    public var name: String
    /// The address it logged in from.
    public var address: String
    /// When it logged in.
    public var created: WallTime
    /// When it last made a request; written at most once an hour per session.
    public var lastUsed: WallTime
    /// When the cookie stops working: `sessionLifetime` after login.
    public var expires: WallTime

    /// The fields as stored; logging in (and making the secrets) is `WebAccess`'s work.
    public init(
        id: String, tokenHash: String, csrf: String, name: String, address: String, created: WallTime,
        lastUsed: WallTime, expires: WallTime
    ) {
        self.id = id
        self.tokenHash = tokenHash
        self.csrf = csrf
        self.name = name
        self.address = address
        self.created = created
        self.lastUsed = lastUsed
        self.expires = expires
    }
}

/// Who may use the web interface, as files in `STATE/web` (each mode 0600, replaced
/// atomically, read-modify-write under `.lock`; run as root, they keep the directory's owner):
///
/// - `password`: `scrypt$N$r$p$SALT$HASH` (hex), set by `ptk web-password`.
/// - `links`: the one-time login links `ptk web-link` made and no browser has used yet: the
///   SHA-256 of the link's secret, when it stops working (Unix time), the name; tab-separated.
/// - `sessions`: the logged-in browsers: id, SHA-256 of the cookie's secret, CSRF token,
///   created, last used, expires (Unix times), address, name; tab-separated.
///
/// Secrets (link and cookie) are 128 and 256 random bits; only their hashes are written, so
/// reading the files does not log anyone in.
///
/// The service user owns the state directory, so `web` is opened from it without following a
/// symlink, and every file in it is read, replaced, removed and locked relative to that
/// descriptor: a symlink planted at `web` or at a file's name is refused with an error naming
/// it (`RefusedFileError`), and so is a lock file with a second hard link (issue 42).
public final class WebAccess: @unchecked Sendable {
    /// The web state directory (`STATE/web`), as given at init.
    public let directory: String
    private let web: StateDirectory
    /// The sessions file, as ptkd checks cookies against it.
    private let sessionList: ReloadingFile<[WebSession]>

    /// A session lasts this long from login.
    public static let sessionLifetime: Int64 = 30 * 86_400
    /// A one-time link works for this long.
    public static let linkLifetime: Int64 = 600
    /// `lastUsed` is written at most this often per session.
    static let touchInterval: Int64 = 3600

    /// `lockPatience`: how long a change waits for another process holding `web/.lock`.
    public init(directory: String, lockPatience: LockPatience = .lockFile) {
        self.directory = directory
        var web = StateDirectory(below: directory)
        web.patience = lockPatience
        self.web = web
        sessionList = ReloadingFile("sessions", in: web, empty: [], parse: Self.parseSessions)
    }

    /// Where `ptk web-password` writes the scrypt hash, for messages.
    public var passwordFile: String { web.path(of: "password") }
    /// Where the unused one-time login links are kept, for messages.
    public var linksFile: String { web.path(of: "links") }
    /// Where the logged-in browsers are kept, for messages.
    public var sessionsFile: String { sessionList.path }
    var lockFile: String { web.path(of: ".lock") }

    /// Makes the directory (run as root: owned like the state directory, for the service user,
    /// given by descriptor). A symlink at its name is refused, not followed.
    public func prepare() throws(TrustError) {
        try files {
            try web.open(creating: 0o700).close()
        }
    }

    /// Runs `body` holding `.lock`, with the directory (made when missing) open.
    private func locked<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
        try web.locked(".lock", guarding: "the web logins and app passwords", creating: 0o700, body)
    }

    // MARK: Password

    /// Whether a password file is there (a regular file: a symlink sets no password).
    public var hasPassword: Bool {
        // No directory, or none that opens without following a link: no password.
        guard let dir = try? web.open() else { return false }
        defer { dir.close() }
        // No file: no password.
        return (try? dir.status(of: "password"))?.isRegularFile == true
    }

    /// Sets the password (its scrypt hash with a new salt).
    public func setPassword(_ password: String, cost: Scrypt = .standard) throws(TrustError) {
        try files {
            let salt = randomBytes(16)
            guard let hash = cost.derive(password: password, salt: salt) else {
                throw TrustError("scrypt failed (out of memory?)")
            }
            let line = "scrypt$\(cost.n)$\(cost.r)$\(cost.p)$\(hex(salt))$\(hex(hash))\n"
            try locked { dir in try web.replace("password", in: dir, with: Array(line.utf8), mode: 0o600) }
        }
    }

    /// Removes the password; returns whether there was one.
    @discardableResult
    public func removePassword() throws(TrustError) -> Bool {
        return try files {
            try locked { dir in try dir.removeFileRefusingLinks("password", path: passwordFile) }
        }
    }

    /// Whether `password` is the one set; false when none is set or the file is damaged.
    /// Costs one scrypt (about 0.1 s and 32 MiB): the caller limits and serializes tries.
    public func checkPassword(_ password: String) -> Bool {
        // No password file, or one that cannot be read (or a link in its place): no password logs in.
        guard let text = try? web.readText("password") else { return false }
        let line = TrustStore.lines(text).first ?? ""
        let parts = line.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0] == "scrypt",
            let n = UInt64(parts[1]), let r = UInt64(parts[2]), let p = UInt64(parts[3]),
            n >= 2, n <= 1 << 20, n & (n - 1) == 0, (1...32).contains(r), (1...16).contains(p),
            let salt = bytes(fromHex: parts[4]), let expected = bytes(fromHex: parts[5]), expected.count == 32,
            let actual = Scrypt(n: n, r: r, p: p).derive(password: password, salt: salt)
        else { return false }
        return constantTimeEqual(actual, expected)
    }

    // MARK: One-time links

    /// Makes a one-time login link's secret for a browser to be called `name`; it works once,
    /// for `linkLifetime` seconds.
    public func createLink(name: String, now: WallTime = .now) throws(TrustError) -> String {
        return try files {
            let secret = hex(randomBytes(16))
            try locked { dir in
                var links = try readLinks(in: dir).filter { $0.expires > now }
                links.append((SHA256.hex(of: Array(secret.utf8)), now + Self.linkLifetime, Self.cleanName(name)))
                try writeLinks(links, in: dir)
            }
            return secret
        }
    }

    /// Uses up the link with `secret`, if it is still good: a new session for `address`, and
    /// the cookie's secret. Nil for an unknown, used or expired link.
    public func redeemLink(_ secret: String, address: String, now: WallTime = .now) throws(TrustError) -> (
        WebSession, String
    )? {
        return try files {
            let hash = SHA256.hex(of: Array(secret.utf8))
            return try locked { dir throws -> (WebSession, String)? in
                var links = try readLinks(in: dir)
                let found = links.first { constantTimeEqual(Array($0.hash.utf8), Array(hash.utf8)) }
                links.removeAll { $0.expires <= now || $0.hash == hash }
                try writeLinks(links, in: dir)
                guard let found, found.expires > now else { return nil }
                return try addSession(name: found.name, address: address, now: now, in: dir)
            }
        }
    }

    /// The links not yet used nor expired: when each expires, and its name.
    public func openLinks(now: WallTime = .now) throws(TrustError) -> [(expires: WallTime, name: String)] {
        return try files {
            (try web.withExisting { dir in try readLinks(in: dir) } ?? []).filter { $0.expires > now }.map {
                ($0.expires, $0.name)
            }
        }
    }

    // MARK: Sessions

    /// A new session for a browser that logged in with the password.
    public func login(name: String, address: String, now: WallTime = .now) throws(TrustError) -> (WebSession, String) {
        return try files {
            try locked { dir in try addSession(name: name, address: address, now: now, in: dir) }
        }
    }

    /// Call holding the lock.
    private func addSession(name: String, address: String, now: WallTime, in dir: FileDescriptor) throws -> (
        WebSession, String
    ) {
        let secret = hex(randomBytes(32))
        var sessions = try readSessions(in: dir).filter { $0.expires > now }
        var id = hex(randomBytes(4))
        while sessions.contains(where: { $0.id == id }) { id = hex(randomBytes(4)) }
        let session = WebSession(
            id: id, tokenHash: SHA256.hex(of: Array(secret.utf8)), csrf: hex(randomBytes(16)),
            name: Self.cleanName(name), address: address, created: now, lastUsed: now,
            expires: now + Self.sessionLifetime)
        sessions.append(session)
        try writeSessions(sessions, in: dir)
        return (session, secret)
    }

    /// The session a cookie's secret belongs to, if it is known and not expired (the file is
    /// read again when it changed, so `ptk web-sessions revoke` takes effect at once). Notes
    /// the use (written at most hourly).
    public func session(secret: String, now: WallTime = .now) -> WebSession? {
        guard secret.utf8.count == 64 else { return nil }
        let hash = SHA256.hex(of: Array(secret.utf8))
        guard
            let session = sessionList.current.first(where: {
                constantTimeEqual(Array($0.tokenHash.utf8), Array(hash.utf8))
            }),
            session.expires > now
        else { return nil }
        if now.seconds - session.lastUsed.seconds >= Self.touchInterval {
            // Only `ptk web-sessions` shows it: a failed write loses nothing else.
            try? locked { dir in
                var sessions = try readSessions(in: dir)
                if let i = sessions.firstIndex(where: { $0.id == session.id }) {
                    sessions[i].lastUsed = now
                    try writeSessions(sessions, in: dir)
                }
            }
        }
        return session
    }

    /// The sessions not yet expired, oldest first.
    public func sessions(now: WallTime = .now) throws(TrustError) -> [WebSession] {
        return try files {
            (try web.withExisting { dir in try readSessions(in: dir) } ?? []).filter { $0.expires > now }
        }
    }

    /// Ends the sessions whose ID starts with `prefix` (one must match), or every one with
    /// "all"; returns those ended.
    @discardableResult
    public func revoke(_ prefix: String, now: WallTime = .now) throws(TrustError) -> [WebSession] {
        return try files {
            try locked { dir in
                var sessions = try readSessions(in: dir).filter { $0.expires > now }
                let ended: [WebSession]
                if prefix == "all" {
                    ended = sessions
                } else {
                    let p = prefix.lowercased()
                    let matches = sessions.filter { $0.id.hasPrefix(p) }
                    guard !p.isEmpty, matches.count == 1 else {
                        throw TrustError(
                            matches.isEmpty
                                ? "no web session's ID starts with '\(prefix)' (`ptk web-sessions` lists them)"
                                : "'\(prefix)' matches \(matches.count) sessions; give more of the ID")
                    }
                    ended = matches
                }
                sessions.removeAll { s in ended.contains { $0.id == s.id } }
                try writeSessions(sessions, in: dir)
                return ended
            }
        }
    }

    // MARK: Files

    private func readLinks(in dir: FileDescriptor) throws -> [(hash: String, expires: WallTime, name: String)] {
        let text = try web.readText("links", in: dir) ?? ""
        return TrustStore.lines(text).compactMap { line in
            let f = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard f.count == 3, f[0].utf8.count == 64, let t = Int64(f[1]).flatMap(WallTime.init(storedSeconds:)) else {
                return nil
            }
            return (f[0], t, f[2])
        }
    }

    private func writeLinks(_ links: [(hash: String, expires: WallTime, name: String)], in dir: FileDescriptor) throws {
        var text = "# One-time web login links (`ptk web-link`): SHA-256 of the secret, expires (Unix time), name.\n"
        for l in links { text += "\(l.hash)\t\(l.expires.seconds)\t\(l.name)\n" }
        try web.replace("links", in: dir, with: Array(text.utf8), mode: 0o600)
    }

    private func readSessions(in dir: FileDescriptor) throws -> [WebSession] {
        Self.parseSessions(try web.readText("sessions", in: dir) ?? "")
    }

    private func writeSessions(_ sessions: [WebSession], in dir: FileDescriptor) throws {
        var text =
            "# Web sessions (`ptk web-sessions`): id, SHA-256 of the cookie, CSRF token, created, last used, expires, address, name.\n"
        for s in sessions {
            text +=
                [
                    s.id, s.tokenHash, s.csrf, "\(s.created.seconds)", "\(s.lastUsed.seconds)", "\(s.expires.seconds)",
                    s.address, s.name,
                ]
                .joined(separator: "\t") + "\n"
        }
        try web.replace("sessions", in: dir, with: Array(text.utf8), mode: 0o600)
        sessionList.forget()
    }

    static func parseSessions(_ text: String) -> [WebSession] {
        TrustStore.lines(text).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let f = line.split(separator: "\t", maxSplits: 7, omittingEmptySubsequences: false).map(String.init)
            guard f.count == 8, f[1].utf8.count == 64, !f[2].isEmpty,
                // Times the service user could have planted: out of range, the line is no session.
                let created = Int64(f[3]).flatMap(WallTime.init(storedSeconds:)),
                let used = Int64(f[4]).flatMap(WallTime.init(storedSeconds:)),
                let expires = Int64(f[5]).flatMap(WallTime.init(storedSeconds:))
            else { return nil }
            return WebSession(
                id: f[0], tokenHash: f[1], csrf: f[2], name: f[7], address: f[6], created: created, lastUsed: used,
                expires: expires)
        }
    }

    /// A name for one line: no control characters, at most 64 characters, "browser" when empty.
    static func cleanName(_ name: String) -> String {
        let cleaned = String(name.unicodeScalars.map { isTerminalControl($0) ? " " : Character($0) }).trimmingSpaces
        return cleaned.isEmpty ? "browser" : String(cleaned.prefix(64))
    }
}

extension WallTime {
    /// `seconds` later, the farthest time there is rather than a trap past it.
    static func + (t: WallTime, seconds: Int64) -> WallTime {
        let (sum, overflow) = t.seconds.addingReportingOverflow(seconds)
        return WallTime(seconds: overflow ? (seconds < 0 ? .min : .max) : sum)
    }
}
