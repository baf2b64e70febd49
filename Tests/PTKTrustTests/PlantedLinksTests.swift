import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKTrust

/// A file outside the state directory that a planted link leads to (issue 42): its bytes,
/// mode, owner, inode and time must be as they were after every refused operation.
struct Sentinel {
    let path: String
    let bytes: [UInt8]
    let status: FileStatus

    init(_ path: String, _ text: String) {
        writeFile(path, Array(text.utf8))
        chmod(path, 0o640)
        self.path = path
        bytes = Array(text.utf8)
        status = try! fileStatus(path)
    }

    /// Still there, with the same bytes, mode, owner and inode.
    var unchanged: Bool {
        // Gone or unreadable is not unchanged.
        guard let now = try? fileStatus(path) else { return false }
        return readFile(path) == bytes && now == status
    }
}

/// A state directory as ptkd's service user would have it, and a directory outside it; run as
/// root, both belong to another user (nobody), so that root's `ptk` would give new files away
/// (fchown) as it does for the service user, and a chown through a link shows.
func plantedState() -> (state: String, outside: String) {
    let state = makeTemporaryDirectory("ptk-planted-state")
    let outside = makeTemporaryDirectory("ptk-planted-outside")
    if geteuid() == 0 { chown(state, 65534, 65534) }
    return (state, outside)
}

func isSymlink(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
}

/// A session line for `secret`, as WebAccess writes it, last used long ago (so a check writes it back).
func sessionLine(secret: String, id: String = "0badc0de") -> String {
    let now = WallTime.now.seconds
    return
        "\(id)\t\(SHA256.hex(of: Array(secret.utf8)))\tcsrf\t\(now - 86_400)\t\(now - 86_400)\t\(now + 86_400)\t10.0.0.9\tplanted\n"
}

/// What a refusal says: the path and that it is a symbolic link that is not followed.
func refusesLink(_ path: String, _ body: () throws -> Void) -> Bool {
    do {
        try body()
        return false
    } catch {
        // A file's failure, never a refusal of the request (ptk exits 74 on it, not 1).
        guard let error = error as? TrustError else { return false }
        let text = error.description
        return error.kind == .files && text.contains(path) && text.contains("symbolic link")
            && text.contains("not followed")
    }
}

@Suite("Planted links in the state directory (issue 42): refused, never followed", .tags(.unit))
struct PlantedLinksTests {
    static let cheap = Scrypt(n: 1 << 10, r: 8, p: 1)

    @Test(
        "STATE/web as a symlink: web-password, web-link, web-sessions [revoke] and the daemon's checks refuse it; nothing there is read, written or deleted"
    )
    func webDirectoryLink() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let secret = String(repeating: "ab", count: 32)
        let password = Sentinel(outside + "/password", "not a password file\n")
        let sessions = Sentinel(outside + "/sessions", sessionLine(secret: secret))
        let links = Sentinel(outside + "/links", "# links\n")
        let before = listDirectory(outside).sorted()
        symlink(outside, state + "/web")
        let access = WebAccess(directory: state + "/web")
        let web = state + "/web"

        #expect(refusesLink(web) { try access.prepare() })
        #expect(refusesLink(web) { try access.setPassword("secret", cost: Self.cheap) })
        #expect(refusesLink(web) { _ = try access.removePassword() })
        #expect(refusesLink(web) { _ = try access.createLink(name: "phone") })
        #expect(refusesLink(web) { _ = try access.sessions() })
        #expect(refusesLink(web) { _ = try access.revoke("all") })
        #expect(refusesLink(web) { _ = try access.login(name: "x", address: "10.0.0.1") })
        #expect(refusesLink(web) { _ = try access.openLinks() })
        #expect(access.session(secret: secret) == nil)
        #expect(!access.hasPassword)
        #expect(!access.checkPassword("anything"))

        #expect(password.unchanged && sessions.unchanged && links.unchanged)
        #expect(listDirectory(outside).sorted() == before)
        #expect(isSymlink(web))
    }

    @Test(
        "STATE/web/sessions as a symlink: web-sessions and revoke refuse it, the daemon logs no one in through it; the target is untouched"
    )
    func sessionsFileLink() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let access = WebAccess(directory: state + "/web")
        try access.setPassword("right", cost: Self.cheap)
        let secret = String(repeating: "cd", count: 32)
        let target = Sentinel(outside + "/x", sessionLine(secret: secret))
        symlink(target.path, access.sessionsFile)

        #expect(refusesLink(access.sessionsFile) { _ = try access.sessions() })
        #expect(refusesLink(access.sessionsFile) { _ = try access.revoke("all") })
        #expect(refusesLink(access.sessionsFile) { _ = try access.revoke("0bad") })
        #expect(refusesLink(access.sessionsFile) { _ = try access.login(name: "x", address: "10.0.0.1") })
        #expect(access.session(secret: secret) == nil)

        #expect(target.unchanged)
        #expect(isSymlink(access.sessionsFile))
        #expect(listDirectory(outside) == ["x"])
    }

    @Test(
        "STATE/trusted-senders as a symlink: nobody is trusted through it, trust allow and remove refuse it; the target is untouched"
    )
    func trustListLink() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let a = device(7)
        let target = Sentinel(outside + "/list", "\(a) planted\n")
        let store = TrustStore(directory: state)
        symlink(target.path, store.trustFile)

        #expect(!store.isTrusted(a))
        #expect(store.trusted().isEmpty)
        #expect(refusesLink(store.trustFile) { _ = try store.allow(device(8).compact, name: "new") })
        #expect(refusesLink(store.trustFile) { _ = try store.remove(a.compact) })

        #expect(target.unchanged)
        #expect(isSymlink(store.trustFile))
        #expect(listDirectory(outside) == ["list"])
    }

    @Test(
        "a lock file with a second hard link (st_nlink 2) is refused: not locked, chowned nor rewritten, and nothing is changed"
    )
    func hardLinkedLockFiles() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let access = WebAccess(directory: state + "/web")
        try access.setPassword("right", cost: Self.cheap)
        let (_, secret) = try access.login(name: "kept", address: "10.0.0.1")
        let sessionsBefore = readFile(access.sessionsFile)
        let webLock = Sentinel(outside + "/web-lock", "lock target\n")
        let trustLock = Sentinel(outside + "/trust-lock", "lock target\n")
        unlink(access.lockFile)
        #expect(link(webLock.path, access.lockFile) == 0)
        let store = TrustStore(directory: state)
        #expect(link(trustLock.path, store.lockFile) == 0)

        for attempt in [
            { _ = try access.revoke("all") }, { _ = try access.login(name: "x", address: "10.0.0.1") },
            { try access.setPassword("other", cost: Self.cheap) }, { _ = try access.removePassword() },
        ] {
            do {
                try attempt()
                Issue.record("an operation went ahead under a hard-linked lock file")
            } catch {
                #expect("\(error)".contains(access.lockFile) && "\(error)".contains("hard link"))
            }
        }
        #expect(throws: (any Error).self) { _ = try store.allow(device(3).compact, name: "x") }
        #expect(throws: (any Error).self) { try store.recordAttempt(id: device(4), name: "x", address: "10.0.0.2") }

        #expect(webLock.unchanged && trustLock.unchanged)
        #expect(readFile(access.sessionsFile) == sessionsBefore)
        #expect(access.session(secret: secret) != nil)
        #expect(access.checkPassword("right"))
        #expect(store.trusted().isEmpty)
    }

    @Test("nothing planted: a missing web directory or state directory still reads as empty lists, as before")
    func missingDirectories() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let access = WebAccess(directory: state + "/web")
        #expect(try access.sessions().isEmpty && access.openLinks().isEmpty && !access.hasPassword)
        #expect(try TrustStore(directory: state + "/missing").pending().isEmpty)
        #expect(TrustStore(directory: state + "/missing").trusted().isEmpty)
        _ = try access.createLink(name: "phone")
        #expect(try access.openLinks().count == 1)
        var st = stat()
        #expect(
            lstat(state + "/web", &st) == 0 && st.st_mode & 0o777 == 0o700
                && st.st_uid == (geteuid() == 0 ? 65534 : geteuid()))
        #expect(
            lstat(access.lockFile, &st) == 0 && st.st_nlink == 1 && st.st_uid == (geteuid() == 0 ? 65534 : geteuid()))
        #expect(
            lstat(access.linksFile, &st) == 0 && st.st_mode & 0o777 == 0o600
                && st.st_uid == (geteuid() == 0 ? 65534 : geteuid()))
        #expect(listDirectory(state + "/web").sorted() == [".lock", "links"])
    }

    @Test("temporary names are made new (O_EXCL): one planted as a link to a file outside is not written through")
    func plantedTemporaryName() throws {
        let (state, outside) = plantedState()
        defer {
            removeTree(state)
            removeTree(outside)
        }
        let store = TrustStore(directory: state)
        let target = Sentinel(outside + "/t", "target\n")
        // The name the old code used; the new one must not write through it whatever it is.
        symlink(target.path, store.trustFile + ".tmp.\(getpid())")
        #expect(link(target.path, store.pendingFile + ".tmp.\(getpid())") == 0)
        _ = try store.allow(device(5).compact, name: "five")
        #expect(store.isTrusted(device(5)))
        #expect(target.unchanged)
    }
}
