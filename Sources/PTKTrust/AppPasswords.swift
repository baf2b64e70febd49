import PTKDigest
import PTKSystem

/// The app passwords: one random password per device or app, for the WebDAV door's Basic auth
/// (`ptk app-password add|list|remove`). Kept in `STATE/web/app-passwords` (`AppPasswordFile`:
/// mode 0600, replaced atomically, owned like the directory), beside WebAccess's files and
/// under the same rules: opened relative to the web directory's descriptor, never through a
/// symlink the service user planted (`RefusedFileError`).
///
/// Only the SHA-256 of each password is written: a password is about 141 random bits, so no
/// slow hash is needed (and Basic auth sends it with every request).
///
/// Every write, root's `ptk` adding or removing and ptkd noting a use, reads the file again
/// and replaces it holding `web/.lock` (WebAccess's lock), so neither loses the other's change:
/// a use noted just after a removal finds no line to update and writes nothing. ptkd's checks
/// take no lock: they read the file whenever its inode, size or time changed (a removal works
/// on the next request), and a replaced file is never seen half-written.
public final class AppPasswords: @unchecked Sendable {
    // `written` and `pending` are guarded by `lock`; `file` guards itself; the rest is immutable.
    /// The web state directory (`STATE/web`) holding the `app-passwords` file, as given at init.
    public let directory: String
    private let web: StateDirectory
    private let file: ReloadingFile<[AppPasswordFile.Entry]>
    private let lock = Lock()
    /// Per password id: when its use was last written (or found written).
    private var written: [String: Int64] = [:]
    /// Per password id: its latest use not written yet, and from where.
    private var pending: [String: (time: Int64, address: String)] = [:]

    /// A use is written at most this often per password (seconds), whatever its address.
    public static let noteInterval: Int64 = 60
    /// A generated password: this many groups of `groupLength` lower-case letters, joined by "-".
    public static let groups = 6
    /// Letters in each group of a generated password.
    public static let groupLength = 5

    /// `directory` is the web state directory (`STATE/web`, as WebAccess's).
    /// `lockPatience`: how long a change waits for another process holding `web/.lock`.
    public init(directory: String, lockPatience: LockPatience = .lockFile) {
        self.directory = directory
        var web = StateDirectory(below: directory)
        web.patience = lockPatience
        self.web = web
        file = ReloadingFile("app-passwords", in: web, empty: [], parse: AppPasswordFile.parse)
    }

    /// The file, for messages.
    public var path: String { file.path }

    /// 1 to 64 bytes of `A-Z a-z 0-9 . _ -`, not starting with "." or "-" (no ":", where Basic
    /// auth splits the user name from the password; nothing a shell or a terminal treats specially).
    public static func validName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes[0] != UInt8(ascii: "."), bytes[0] != UInt8(ascii: "-") else {
            return false
        }
        return bytes.allSatisfy { c in
            (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c)
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
        }
    }

    /// A new password for `name`, which must be a valid name no other password has: the stored
    /// entry and the password itself (shown once; kept nowhere). Throws `TrustError` for a name
    /// that is not valid or is taken, else the file's error.
    public func add(name: String, access: AppAccess, now: Int64) throws(TrustError) -> (AppPassword, password: String) {
        return try files {
            guard Self.validName(name) else {
                throw TrustError(
                    "'\(name)' is not a valid app password name: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -"
                )
            }
            let password = Self.generatePassword()
            return try locked { dir in
                var entries = try read(in: dir)
                guard !entries.contains(where: { Self.sameName($0.password.name, name) }) else {
                    throw TrustError(
                        "an app password named '\(name)' exists already: choose another name, or remove it first (ptk app-password remove \(name))"
                    )
                }
                var id = hex(randomBytes(8))
                while entries.contains(where: { $0.password.id == id }) { id = hex(randomBytes(8)) }
                let entry = AppPasswordFile.Entry(
                    password: AppPassword(id: id, name: name, access: access, created: now),
                    hash: Self.hash(password))
                entries.append(entry)
                try write(entries, in: dir)
                return (entry.password, password)
            }
        }
    }

    /// The passwords, oldest first (none when the directory or file does not exist).
    public func list() throws(TrustError) -> [AppPassword] {
        return try files {
            (try web.withExisting { dir in try read(in: dir) } ?? []).map(\.password)
        }
    }

    /// Removes the password named `name`; false when there is none.
    @discardableResult
    public func remove(name: String) throws(TrustError) -> Bool {
        return try files {
            try locked { dir in
                var entries = try read(in: dir)
                guard let i = entries.firstIndex(where: { Self.sameName($0.password.name, name) }) else { return false }
                entries.remove(at: i)
                try write(entries, in: dir)
                return true
            }
        }
    }

    /// ptkd, on every request: the password these credentials are, nil when wrong, removed or
    /// unknown. The file is read again when it changed; hashes are compared in constant time.
    /// A-Z in `password` count as a-z (a phone's keyboard may capitalise the first letter;
    /// generated passwords have none, so no strength is lost).
    public func verify(name: String, password: String) -> AppPassword? {
        guard password.utf8.count <= 1024 else { return nil }
        let given = Array(Self.hash(password).utf8)
        let entry = file.current.first { Self.sameName($0.password.name, name) }
        // Compared even for an unknown name, so the time taken does not tell which names exist.
        let expected = Array((entry?.hash ?? String(repeating: "-", count: 64)).utf8)
        guard constantTimeEqual(given, expected), let entry else { return nil }
        return entry.password
    }

    /// ptkd: the ids of the passwords as the file says now (read again when it changed); nil
    /// when there is no file that can be read now (not the same as none: a passing error must
    /// not end every password's state).
    public func currentIDs() -> Set<String>? {
        file.readable.map { Set($0.map(\.password.id)) }
    }

    /// ptkd: records a use of password `id` from `address` at `now`. The file is written
    /// (holding the lock, re-reading it) at most once per `noteInterval` per password, whatever
    /// the address (one password used from two addresses in turn, as a phone between Wi-Fi and
    /// a VPN, would otherwise rewrite it at every request): a use within the interval is
    /// remembered and written, the latest one, with the next write that is due (this
    /// password's next use after the interval, any other password's due write, or
    /// `flushNotes` as ptkd stops). So `ptk app-password list` may show a use up to a minute
    /// late. A removed password is not written back.
    public func noteUse(id: String, address: String, now: Int64) {
        let address = AppPasswordFile.cleanAddress(address)
        guard let stored = file.current.first(where: { $0.password.id == id })?.password else { return }
        let due: [String: (time: Int64, address: String)] = lock.withLock {
            if written[id] == nil, let last = stored.lastUsed { written[id] = last }
            pending[id] = (now, address)
            if let last = written[id], now >= last, now - last < Self.noteInterval { return [:] }
            return takePending(now: now, all: false)
        }
        writeUses(due)
    }

    /// ptkd, as it stops: writes every use remembered and not written yet.
    public func flushNotes(now: Int64) {
        writeUses(lock.withLock { takePending(now: now, all: true) })
    }

    /// The uses to write now (all, or those of passwords last written `noteInterval` ago or
    /// more), marked written at `now`. Call under `lock`.
    private func takePending(now: Int64, all: Bool) -> [String: (time: Int64, address: String)] {
        var due: [String: (time: Int64, address: String)] = [:]
        for (id, use) in pending {
            if !all, let last = written[id], now >= last, now - last < Self.noteInterval { continue }
            due[id] = use
            written[id] = now
        }
        for id in due.keys { pending[id] = nil }
        return due
    }

    /// Writes `uses` into the file (lines of passwords removed meanwhile are not written back).
    private func writeUses(_ uses: [String: (time: Int64, address: String)]) {
        guard !uses.isEmpty else { return }
        // Only `ptk app-password list` shows it: a failed write loses nothing else, and the next
        // use after `noteInterval` writes that password's again.
        try? locked { dir in
            var entries = try read(in: dir)
            var changed = false
            for (i, entry) in entries.enumerated() {
                guard let use = uses[entry.password.id] else { continue }
                entries[i].password.lastUsed = use.time
                entries[i].password.lastAddress = use.address == "-" ? nil : use.address
                changed = true
            }
            if changed { try write(entries, in: dir) }
        }
    }

    /// A new password: `groups` groups of `groupLength` lower-case letters joined by "-"
    /// (6 × 5: 30 × log2(26) ≈ 141 bits), each letter from the kernel's random bytes, unbiased
    /// (bytes of 234 and above, past the last whole multiple of 26, are drawn again).
    public static func generatePassword() -> String {
        let count = groups * groupLength
        var letters: [UInt8] = []
        while letters.count < count {
            for b in randomBytes(count) where b < 234 && letters.count < count {
                letters.append(UInt8(ascii: "a") + b % 26)
            }
        }
        var out: [UInt8] = []
        for (i, letter) in letters.enumerated() {
            if i > 0 && i % groupLength == 0 { out.append(UInt8(ascii: "-")) }
            out.append(letter)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The link a phone app logs in with (Nextcloud's, which its QR scanner and `nc://` links
    /// read): `nc://login/user:USER&password:PASSWORD&server:SERVER`. The app splits it at "&"
    /// and URL-decodes each value (`%XX`, and "+" as a space), so every byte of a value but
    /// `A-Z a-z 0-9 - . _ ~` (and ":", "/", "[", "]" in the server, where a reader that does not
    /// decode still finds them) is written as `%XX`.
    public static func loginLink(user: String, password: String, server: String) -> String {
        func encode(_ text: String, keeping kept: String) -> String {
            var out = ""
            for byte in text.utf8 {
                let c = Character(Unicode.Scalar(byte))
                if byte < 0x80 && (c.isLetter || c.isNumber || "-._~".contains(c) || kept.contains(c)) {
                    out.append(c)
                } else {
                    let digits = Array("0123456789ABCDEF")
                    out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
                }
            }
            return out
        }
        return "nc://login/user:\(encode(user, keeping: ""))&password:\(encode(password, keeping: ""))"
            + "&server:\(encode(server, keeping: ":/[]"))"
    }

    // MARK: Helpers

    /// Names compared as bytes: Swift's `==` would take the Kelvin sign for "K".
    static func sameName(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// The SHA-256 (hex) of `password`, A-Z taken as a-z.
    static func hash(_ password: String) -> String {
        SHA256.hex(of: password.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 })
    }

    /// Runs `body` holding `web/.lock`, with the directory (made when missing) open.
    private func locked<R>(_ body: (FileDescriptor) throws -> R) throws -> R {
        try web.locked(".lock", guarding: "the web logins and app passwords", creating: 0o700, body)
    }

    private func read(in dir: FileDescriptor) throws -> [AppPasswordFile.Entry] {
        AppPasswordFile.parse(try web.readText("app-passwords", in: dir) ?? "")
    }

    private func write(_ entries: [AppPasswordFile.Entry], in dir: FileDescriptor) throws {
        try web.replace("app-passwords", in: dir, with: Array(AppPasswordFile.format(entries).utf8), mode: 0o600)
        file.forget()
    }
}
