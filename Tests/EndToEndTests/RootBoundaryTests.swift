import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

// Issue 42: root's `ptk` must never be a way up for the service user. Each test below builds a
// library with the real ptkd (one photo, indexed, with its thumbnail; the identity and the web
// certificate in the state directory), gives the photos and state directories to an
// unprivileged uid with no passwd entry (4242:4242), plants what a compromised ptkd could plant
// there, and runs the real `ptk` as root against a sentinel in a root-only folder: the sentinel
// must never be read, written, chowned or deleted, and ptk must say what it refused.

/// The service user of these tests: a uid and gid with no passwd entry.
let serviceUID: uid_t = 4242
let serviceGID: gid_t = 4242

/// The lstat of `path`, nil when there is nothing there.
func linkStatus(_ path: String) -> stat? {
    var st = stat()
    return lstat(path, &st) == 0 ? st : nil
}

func isDirectory(_ st: stat?) -> Bool { st.map { ($0.st_mode & S_IFMT) == S_IFDIR } ?? false }
func isSymlink(_ st: stat?) -> Bool { st.map { ($0.st_mode & S_IFMT) == S_IFLNK } ?? false }
func isRegular(_ st: stat?) -> Bool { st.map { ($0.st_mode & S_IFMT) == S_IFREG } ?? false }

/// Calls `body` for `path` and everything below it, following no symlink.
func walkTree(_ path: String, _ body: (String, stat) -> Void) {
    guard let st = linkStatus(path) else { return }
    body(path, st)
    if isDirectory(st) { for name in listDirectory(path) { walkTree(path + "/" + name, body) } }
}

/// `chown -R` without following links.
func chownTree(_ path: String, _ uid: uid_t, _ gid: gid_t) {
    walkTree(path) { p, _ in _ = lchown(p, uid, gid) }
}

/// Sets `path`'s access time to `seconds`, leaving its modification time.
func setAccessTime(_ path: String, _ seconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2 /* UTIME_OMIT */)]
    _ = utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
}

/// Whether this file system records a read in the access time (relatime does for an access
/// time older than the modification time): then "never read" is checked by it as well.
let accessTimesRecorded: Bool = {
    let dir = makeTemporaryDirectory("ptk-atime")
    defer { removeTree(dir) }
    let probe = dir + "/probe"
    writeFile(probe, [1, 2, 3])
    let old = time(nil) - 3 * 86_400
    setAccessTime(probe, old)
    _ = readFile(probe)
    return linkStatus(probe).map { $0.st_atim.tv_sec != old } ?? false
}()

/// Text no file of the test holds by chance.
func sentinelText(_ what: String = "secret") -> [UInt8] {
    Array(
        "ptk-sentinel \(what) \(String(UInt64.random(in: 0...UInt64.max), radix: 16)) root only, never to be read\n"
            .utf8)
}

/// The pid the next process will likely get (the kernel hands them out in order).
func nextPIDGuess() -> Int {
    let text = String(decoding: readFile("/proc/sys/kernel/ns_last_pid") ?? [], as: UTF8.self)
    return (Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) + 1
}

/// Runs `script` (sh, with `args` as $1...) as the service user, as a compromised ptkd would.
func asServiceUser(_ script: String, _ args: [String] = []) throws {
    let setpriv = findProgram("setpriv") ?? "/usr/bin/setpriv"
    let r = try run(
        setpriv,
        [
            "--reuid=\(serviceUID)", "--regid=\(serviceGID)", "--clear-groups", "--", "/bin/sh", "-c",
            "cd / && " + script, "sh",
        ] + args,
        absolute: true)
    guard r.status == 0 else { throw HarnessError("as \(serviceUID): \(script) \(args): \(r.status) \(r.stderr)") }
}

/// Root-only files outside the library that root's ptk must never read, write, chown or
/// delete: a folder (0700, root) holding files (0600, root) of known bytes. Their access time
/// is set in the past, so that a read shows (where the file system records it).
final class Sentinel {
    let dir: String
    let contents: [String: [UInt8]]
    private let folderStatus: stat
    private let listing: [String]
    private let identities: Set<[UInt64]>
    private let oldAccess = time(nil) - 3 * 86_400

    init(_ dir: String, _ contents: [String: [UInt8]]) {
        self.dir = dir
        self.contents = contents
        mkdir(dir, 0o700)
        chmod(dir, 0o700)
        for (name, bytes) in contents {
            writeFile(dir + "/" + name, bytes)
            chmod(dir + "/" + name, 0o600)
        }
        for name in contents.keys { setAccessTime(dir + "/" + name, oldAccess) }
        folderStatus = linkStatus(dir)!
        listing = listDirectory(dir)
        identities = Set(
            contents.keys.compactMap { linkStatus(dir + "/" + $0).map { [UInt64($0.st_dev), UInt64($0.st_ino)] } })
    }

    func path(_ name: String) -> String { dir + "/" + name }

    /// Everything that shows the sentinel was touched: read (access time), written (bytes,
    /// mode, new names in its folder, the folder's modification time), chowned or deleted;
    /// or its bytes (or their base64) in `outputs` or in a regular file below `roots` (other
    /// than the sentinel itself and its planted hard links).
    func problems(_ outputs: [String] = [], scanning roots: [String] = []) -> [String] {
        var found: [String] = []
        // First, before anything here reads them.
        if accessTimesRecorded {
            for name in contents.keys.sorted() {
                if let st = linkStatus(path(name)), st.st_atim.tv_sec != oldAccess {
                    found.append("\(path(name)) was read (its access time moved)")
                }
            }
        }
        if let st = linkStatus(dir) {
            if st.st_uid != folderStatus.st_uid || st.st_gid != folderStatus.st_gid
                || st.st_mode != folderStatus.st_mode
            {
                found.append("\(dir) is now \(st.st_uid):\(st.st_gid) mode \(String(st.st_mode & 0o7777, radix: 8))")
            }
            if st.st_mtim.tv_sec != folderStatus.st_mtim.tv_sec || st.st_mtim.tv_nsec != folderStatus.st_mtim.tv_nsec {
                found.append("something was created or deleted in \(dir) (its modification time moved)")
            }
        } else {
            found.append("\(dir) is gone")
        }
        let now = listDirectory(dir)
        if now != listing { found.append("\(dir) holds \(now), not \(listing)") }
        for (name, bytes) in contents.sorted(by: { $0.key < $1.key }) {
            let st = linkStatus(path(name))
            guard let st, isRegular(st) else {
                found.append("\(path(name)) is gone or no longer a regular file")
                continue
            }
            if st.st_uid != 0 || st.st_gid != 0 {
                found.append("\(path(name)) was chowned to \(st.st_uid):\(st.st_gid)")
            }
            if st.st_mode & 0o7777 != 0o600 {
                found.append("\(path(name)) has mode \(String(st.st_mode & 0o7777, radix: 8))")
            }
            if readFile(path(name)) != bytes {
                found.append("\(path(name)) was written (\(readFile(path(name))?.count ?? -1) bytes now)")
            }
        }
        // Reading them here moved their access times: back to the past, for the next check.
        for name in contents.keys { setAccessTime(path(name), oldAccess) }
        let needles = contents.map { ($0.key, $0.value, Array(Data($0.value).base64EncodedString().utf8)) }
        for (i, text) in outputs.enumerated() {
            let haystack = Array(text.utf8)
            for (name, raw, base64) in needles
            where haystack.firstRange(of: raw) != nil || haystack.firstRange(of: base64) != nil {
                found.append("output \(i) holds the bytes of \(name)")
            }
        }
        for root in roots {
            walkTree(root) { file, st in
                guard isRegular(st), !file.hasPrefix(dir + "/"),
                    !identities.contains([UInt64(st.st_dev), UInt64(st.st_ino)]),
                    let haystack = readFile(file)
                else { return }
                for (name, raw, base64) in needles
                where haystack.firstRange(of: raw) != nil || haystack.firstRange(of: base64) != nil {
                    found.append("\(file) holds the bytes of \(name)")
                }
            }
        }
        return found
    }
}

/// A library made by the real ptkd in a fresh folder: `top` (0755, root) holds `top/lib`, with
/// `photos/` (one photo, pic.png, indexed, with its thumbnail) and `state/` (identity, web
/// certificate), which `giveToServiceUser` hands to 4242:4242.
final class ServiceLibrary {
    let top: String
    var base: String { top + "/lib" }
    var photos: String { base + "/photos" }
    var state: String { base + "/state" }
    var ptkFolder: String { photos + "/.ptk" }
    var index: String { ptkFolder + "/index.sqlite" }
    var thumbnails: String { ptkFolder + "/thumbnails" }
    var web: String { state + "/web" }
    let photoBytes: [UInt8]
    let photoID: Int

    /// Its largest gallery thumbnail ("<id>-360.jpg", or ".png" from a thumbnailer that makes only PNGs).
    var thumbnail: String { thumbnails + "/" + thumbnailName }
    var thumbnailName: String {
        listDirectory(thumbnails).first { $0.hasPrefix("\(photoID)-360.") && !$0.contains(".tmp.") }
            ?? "\(photoID)-360.jpg"
    }

    init() throws {
        top = makeTemporaryDirectory("ptk-rootb")
        chmod(top, 0o755)
        mkdir(top + "/lib", 0o755)
        let source = imageFile(top, "pic.png", width: 64, height: 48, seed: 5)
        photoBytes = readFile(source) ?? []
        // A configuration file of root's, empty (the later --config replaces the harness's /dev/null).
        writeFile(top + "/ptkd.conf", [])
        let d = try DaemonProcess(
            ["--web", "on", "--web-port", "0", "--config", top + "/ptkd.conf"], root: top + "/lib")
        let sent = try send(d, [source])
        // Indexed once its thumbnail is there (read from the folder, whatever ptk prints).
        let thumbnailFolder = top + "/lib/photos/.ptk/thumbnails"
        let id = eventuallyValue(60) {
            listDirectory(thumbnailFolder).compactMap { $0.split(separator: "-").first.flatMap { Int($0) } }.first
        }
        // The web certificate too (made at start, but on a loaded machine after the first thumbnail at times).
        let certificate = top + "/lib/state/web/tls/cert.pem"
        _ = eventuallyValue(60) { fileExists(certificate) ? true : nil }
        guard sent.status == 0, let id else {
            throw HarnessError("ptk-send or indexing failed: \(sent.stderr) \(d.log)")
        }
        _ = eventuallyValue(60) {
            listDirectory(thumbnailFolder).contains { $0.hasPrefix("\(id)-360.") && !$0.contains(".tmp.") } ? true : nil
        }
        photoID = id
        _ = d.stop()
        unlink(source)
        guard fileExists(top + "/lib/state/web/tls"), fileExists(thumbnail) else {
            throw HarnessError(
                "ptkd made no web certificate or thumbnail: \(listDirectory(top + "/lib/state")) \(d.log)")
        }
    }

    /// The library and state directories given to the service user.
    func giveToServiceUser() { chownTree(base, serviceUID, serviceGID) }

    /// A library already given to the service user.
    static func owned() throws -> ServiceLibrary {
        let lib = try ServiceLibrary()
        lib.giveToServiceUser()
        return lib
    }

    /// A folder only root may enter (0700).
    func rootOnlyFolder(_ name: String) -> String {
        let path = top + "/" + name
        mkdir(path, 0o700)
        chmod(path, 0o700)
        return path
    }

    var ptkArguments: [String] { ["--config", top + "/ptkd.conf", "--dir", photos, "--state-dir", state] }

    /// Runs the real ptk, as root, on this library.
    func ptk(_ args: [String], timeout: Double = 30) throws -> Finished {
        try run("ptk", ptkArguments + args, timeout: timeout)
    }

    /// Runs ptk with `input` as a line on standard input.
    func ptk(_ args: [String], input: String) throws -> Finished {
        try run(
            "/bin/sh",
            ["-c", "input=$1; shift; printf '%s\\n' \"$input\" | \"$@\"", "sh", input, binDirectory + "/ptk"]
                + ptkArguments + args,
            absolute: true)
    }

    deinit { removeTree(top) }
}

/// A loop on a thread of its own until stopped: the service user's side of a race.
final class Racer: @unchecked Sendable {
    // `stopping` and `rounds` are read and written under `lock`.
    private let lock = NSLock()
    private var stopping = false
    private var rounds = 0
    private let finished = DispatchSemaphore(value: 0)

    init(_ step: @escaping @Sendable () -> Void) {
        Thread.detachNewThread { [self] in
            while true {
                lock.lock()
                let stop = stopping
                rounds += 1
                lock.unlock()
                if stop { break }
                step()
            }
            finished.signal()
        }
    }

    /// Stops the loop; returns how many rounds it ran.
    func stop() -> Int {
        lock.lock()
        stopping = true
        lock.unlock()
        finished.wait()
        return rounds
    }
}

/// A random name beside `path`, to move what is there out of the way.
func asideName(_ path: String) -> String { path + ".aside-" + String(UInt64.random(in: 0...UInt64.max), radix: 16) }

/// The service user's side of the chown race: `path` flips between nothing and a symlink to
/// `target` (what root made there in between is moved aside), so that a check that finds
/// nothing is followed by a chown through the link.
func flipSymlink(_ path: String, to target: String) -> @Sendable () -> Void {
    return {
        if isDirectory(linkStatus(path)) { _ = rename(path, asideName(path)) }
        if symlink(target, path) == 0 {
            _ = lchown(path, serviceUID, serviceGID)
            _ = sched_yield()
            _ = unlink(path)
        }
    }
}

/// A big-endian 32-bit number.
func bigEndian32(_ n: Int) -> [UInt8] {
    [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
}

@Suite("Root's ptk on the service user's directories (issue 42)", .serialized, .tags(.endToEnd))
struct RootBoundaryTests {
    // MARK: 1. A hot journal

    @Test("1: a planted hot journal naming a super-journal does not make root's ptk delete that file")
    func finding1HotJournal() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        // A rollback journal SQLite takes as hot (first byte not 0) whose trailer names a
        // super-journal: after the (empty) playback SQLite deletes the super-journal when no
        // child journal it lists points back at it.
        let name = Array(s.path("secret").utf8)
        let sum = name.reduce(0) { $0 + Int($1) }
        let journal =
            [UInt8](repeating: 0x01, count: 512) + name + bigEndian32(name.count) + bigEndian32(sum)
            + [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]
        writeFile(lib.top + "/journal", journal)
        try asServiceUser("cp \"$1\" \"$2\"", [lib.top + "/journal", lib.index + "-journal"])
        for command in [["list"], ["show", "pic"], ["note", "pic", "hello"]] {
            let r = try lib.ptk(command)
            let problems = s.problems([r.stdout, r.stderr])
            #expect(problems.isEmpty, "ptk \(command): \(problems)")
            // Root's ptk works as 4242, for whom the journal is its own: SQLite may replay it,
            // with 4242's rights only (the sentinel stays). Run as root on 4242's index, the
            // library refuses a journal of another user (HostileLibraryFilesTests).
            #expect(r.status == 0 || !r.stderr.isEmpty, "ptk \(command) failed without a word: \(r.status)")
            if !problems.isEmpty { break }
        }
    }

    // MARK: 2. A thumbnail that is a symlink

    @Test("2: a thumbnail symlinked to a root-only file is not printed, copied or exported")
    func finding2ThumbnailSymlink() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        try asServiceUser("rm -f \"$1\" && ln -s \"$2\" \"$1\"", [lib.thumbnail, s.path("secret")])
        let out = lib.rootOnlyFolder("out")
        var outputs: [String] = []
        for (label, command) in [
            ("thumbnail -o -", ["thumbnail", "pic", "-o", "-"]),
            ("thumbnail -o FILE", ["thumbnail", "pic", "-o", out + "/t.png"]),
        ] {
            let r = try lib.ptk(command)
            outputs += [r.stdout, r.stderr]
            #expect(r.status != 0 && !r.stderr.isEmpty, "\(label): \(r.status) \(r.stderr)")
            #expect(
                r.stderr.contains("symbolic link"),
                "\(label) does not say the thumbnail is a symbolic link: \(r.stderr)")
        }
        // An export makes its package's thumbnail afresh from the photo: it reads nothing
        // through the link (the sentinel is checked for below, in what it wrote too).
        let e = try lib.ptk(["export", "pic", "-o", out + "/exported"])
        outputs += [e.stdout, e.stderr]
        #expect(e.status == 0, "export: \(e.status) \(e.stderr)")
        // A gallery outside the library leaves out a thumbnail it cannot read (its page says so).
        let g = try lib.ptk(["gallery", "-o", out + "/gallery"])
        outputs += [g.stdout, g.stderr]
        let problems = s.problems(outputs, scanning: [out, lib.base])
        #expect(problems.isEmpty, "\(problems)")
    }

    // MARK: 3. The chown race

    /// Runs `command` 100 times while `path` flips between nothing and a symlink to the
    /// sentinel: the sentinel's owner, mode and bytes never change.
    func chownRace(_ lib: ServiceLibrary, _ path: String, _ command: [String]) throws {
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        let racer = Racer(flipSymlink(path, to: s.path("secret")))
        var problems: [String] = []
        var statuses: [Int32: Int] = [:]
        for _ in 0..<100 {
            let r = try lib.ptk(command)
            statuses[r.status, default: 0] += 1
            problems = s.problems([r.stdout, r.stderr])
            if !problems.isEmpty { break }
        }
        let rounds = racer.stop()
        print("chown race on \(path): \(rounds) flips, ptk \(command) statuses \(statuses)")
        #expect(rounds > 40, "the race hardly ran")
        #expect(problems.isEmpty, "ptk \(command) with \(path) flipping to a symlink: \(problems)")
        // Planted for good, the link is refused and said to be.
        try asServiceUser("rm -rf \"$1\" && ln -s \"$2\" \"$1\"", [path, s.path("secret")])
        let r = try lib.ptk(command)
        #expect(r.status != 0 && !r.stderr.isEmpty, "ptk \(command) with \(path) a symlink: \(r.status) \(r.stderr)")
        #expect(s.problems([r.stdout, r.stderr]).isEmpty)
    }

    @Test("3a: swapping STATE/web for a symlink while ptk makes it never chowns the target")
    func finding3WebChownRace() throws {
        let lib = try ServiceLibrary.owned()
        try asServiceUser("mv \"$1\" \"$1.real\"", [lib.web])
        try chownRace(lib, lib.web, ["web-password", "--remove"])
    }

    @Test("3b: swapping .ptk/gallery for a symlink while ptk makes it never chowns the target")
    func finding3GalleryChownRace() throws {
        let lib = try ServiceLibrary.owned()
        try chownRace(lib, lib.ptkFolder + "/gallery", ["gallery"])
    }

    // MARK: 4. The write race

    @Test("4: swapping STATE/web for a symlink to a root-only folder while ptk rewrites sessions writes nothing there")
    func finding4SessionsWriteRace() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        // A session line the service user wrote (the name could be a cron line).
        let now = Int(time(nil))
        let line = [
            "abcdef01", String(repeating: "0", count: 64), "csrf", "\(now)", "\(now)", "\(now + 86_400)", "127.0.0.1:1",
            "* * * * * root touch /tmp/pwned",
        ]
        .joined(separator: "\t")
        writeFile(lib.top + "/sessions", Array((line + "\n").utf8))
        try asServiceUser("cp \"$1\" \"$2/sessions\"", [lib.top + "/sessions", lib.web])
        let racer = Racer(flipSymlink(lib.web, to: s.dir))
        var problems: [String] = []
        var statuses: [Int32: Int] = [:]
        for _ in 0..<40 {
            let r = try lib.ptk(["web-sessions", "revoke", "all"])
            statuses[r.status, default: 0] += 1
            problems = s.problems([r.stdout, r.stderr])
            if !problems.isEmpty { break }
        }
        let rounds = racer.stop()
        print("sessions write race: \(rounds) flips, statuses \(statuses)")
        #expect(rounds > 40, "the race hardly ran")
        #expect(problems.isEmpty, "\(problems)")
        // Planted for good, the link is refused and said to be.
        try asServiceUser("rm -rf \"$1\" && ln -s \"$2\" \"$1\"", [lib.web, s.dir])
        let r = try lib.ptk(["web-sessions", "revoke", "all"])
        #expect(r.status != 0 && !r.stderr.isEmpty, "\(r.status) \(r.stderr)")
        #expect(s.problems([r.stdout, r.stderr]).isEmpty)
    }

    // MARK: 5. Planted symlinks, no race

    @Test(
        "5a: STATE/web as a symlink to a root-only folder: web-password, web-sessions and app-password write and delete nothing there"
    )
    func finding5WebSymlink() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(
            lib.top + "/sentinel",
            [
                "password": sentinelText("password"), "sessions": sentinelText("sessions"),
                "app-passwords": sentinelText("app-passwords"),
            ])
        try asServiceUser("mv \"$1\" \"$1.real\" && ln -s \"$2\" \"$1\"", [lib.web, s.dir])
        let runs: [(String, () throws -> Finished)] = [
            ("web-password --remove", { try lib.ptk(["web-password", "--remove"]) }),
            ("web-password", { try lib.ptk(["web-password"], input: "a new password of root's") }),
            ("web-sessions revoke all", { try lib.ptk(["web-sessions", "revoke", "all"]) }),
            ("app-password add", { try lib.ptk(["app-password", "add", "phone"]) }),
            ("app-password list", { try lib.ptk(["app-password", "list"]) }),
            ("app-password remove", { try lib.ptk(["app-password", "remove", "phone"]) }),
        ]
        for (label, body) in runs {
            let r = try body()
            let problems = s.problems([r.stdout, r.stderr])
            #expect(problems.isEmpty, "\(label): \(problems)")
            #expect(r.status != 0 && !r.stderr.isEmpty, "\(label): \(r.status) \(r.stderr)")
            #expect(
                r.stderr.contains("symbolic link"), "\(label) does not say STATE/web is a symbolic link: \(r.stderr)")
        }
    }

    @Test("5b: .ptk/gallery as a symlink to a root-only folder: ptk gallery writes nothing there")
    func finding5GallerySymlink() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["index.html": sentinelText("index.html")])
        try asServiceUser("ln -s \"$2\" \"$1\"", [lib.ptkFolder + "/gallery", s.dir])
        let r = try lib.ptk(["gallery"])
        let problems = s.problems([r.stdout, r.stderr])
        #expect(problems.isEmpty, "\(problems)")
        #expect(r.status != 0 && !r.stderr.isEmpty, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("symbolic link"), "\(r.stderr)")
    }

    @Test(
        "5c: .ptk/thumbnails as a symlink to a root-only folder: export reads nothing there, rm deletes nothing there")
    func finding5ThumbnailsSymlink() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", [lib.thumbnailName: sentinelText("thumbnail")])
        try asServiceUser("mv \"$1\" \"$1.real\" && ln -s \"$2\" \"$1\"", [lib.thumbnails, s.dir])
        let out = lib.rootOnlyFolder("out")
        for command in [["export", "pic", "-o", out], ["rm", "pic"]] {
            let r = try lib.ptk(command)
            let problems = s.problems([r.stdout, r.stderr], scanning: [out])
            #expect(problems.isEmpty, "ptk \(command): \(problems)")
            #expect(r.status != 0 && !r.stderr.isEmpty, "ptk \(command): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("symbolic link"), "ptk \(command): \(r.stderr)")
        }
    }

    @Test("5d: the photos directory as a symlink to a root-only folder: ptk import creates nothing there")
    func finding5PhotosDirectorySymlink() throws {
        let lib = try ServiceLibrary()
        // root's own package, exported (by root) before the directories were the service user's.
        let packages = lib.rootOnlyFolder("packages")
        let e = try lib.ptk(["export", "pic", "-o", packages])
        #expect(e.status == 0, "\(e.stderr)")
        lib.giveToServiceUser()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        try asServiceUser("mv \"$1\" \"$1.real\" && ln -s \"$2\" \"$1\"", [lib.photos, s.dir])
        let r = try lib.ptk(["import", packages + "/pic.ptk"])
        let problems = s.problems([r.stdout, r.stderr])
        #expect(problems.isEmpty, "\(problems)")
        #expect(r.status != 0 && !r.stderr.isEmpty, "\(r.status) \(r.stderr)")
    }

    @Test("5e: .ptk/index.sqlite as a symlink to root's own database: ptk neither writes it nor makes files beside it")
    func finding5IndexSymlink() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["root.sqlite": readFile(lib.index) ?? []])
        try asServiceUser("mv \"$1\" \"$1.real\" && ln -s \"$2\" \"$1\"", [lib.index, s.path("root.sqlite")])
        for command in [["note", "pic", "written into root's database"], ["list"]] {
            let r = try lib.ptk(command)
            let problems = s.problems()
            #expect(problems.isEmpty, "ptk \(command): \(problems)")
            #expect(r.status != 0 && !r.stderr.isEmpty, "ptk \(command): \(r.status) \(r.stderr)")
            #expect(r.stderr.contains("symbolic link"), "ptk \(command): \(r.stderr)")
        }
    }

    // MARK: 6. Hard links

    // fs.protected_hardlinks keeps the service user from linking root's files here; the links
    // are made by root, as on a system where it is 0 (or for files the user may read and write).

    @Test("6a: -shm and -wal hard-linked to root-only files are neither truncated, rewritten nor chowned")
    func finding6SQLiteHardLinks() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["shm": sentinelText("shm"), "wal": sentinelText("wal")])
        for (suffix, command) in [("-shm", ["list"]), ("-wal", ["note", "pic", "through the WAL"])] {
            let planted = lib.index + suffix
            _ = unlink(planted)
            #expect(link(s.path(String(suffix.dropFirst())), planted) == 0)
            let r = try lib.ptk(command)
            let problems = s.problems([r.stdout, r.stderr], scanning: [lib.photos])
            #expect(problems.isEmpty, "index.sqlite\(suffix), ptk \(command): \(problems)")
            #expect(
                r.status != 0 && !r.stderr.isEmpty, "index.sqlite\(suffix), ptk \(command): \(r.status) \(r.stderr)")
            _ = unlink(planted)
        }
    }

    @Test("6b: lock files hard-linked to root-only files are not chowned or written")
    func finding6LockHardLinks() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(
            lib.top + "/sentinel", ["web-lock": sentinelText("web lock"), "trust-lock": sentinelText("trust lock")])
        for (planted, target, command) in [
            (lib.web + "/.lock", "web-lock", ["web-password", "--remove"]),
            (lib.state + "/.trust.lock", "trust-lock", ["trust", "deny", "ABCD"]),
        ] {
            _ = unlink(planted)
            #expect(link(s.path(target), planted) == 0)
            let r = try lib.ptk(command)
            let problems = s.problems([r.stdout, r.stderr])
            #expect(problems.isEmpty, "\(planted), ptk \(command): \(problems)")
            #expect(r.status != 0 && !r.stderr.isEmpty, "\(planted), ptk \(command): \(r.status) \(r.stderr)")
        }
    }

    @Test(
        "6c: temporary names hard-linked to a root-only file (for the next pids) are not truncated, written or renamed into place"
    )
    func finding6TemporaryNameHardLinks() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        let first = nextPIDGuess()
        for pid in first..<(first + 400) {
            _ = link(s.path("secret"), lib.web + "/password.tmp.\(pid)")
        }
        let r = try lib.ptk(["web-password"], input: "a new password of root's")
        let problems = s.problems([r.stdout, r.stderr])
        #expect(problems.isEmpty, "\(problems)")
        // The password file, wherever it was written, is not root's sentinel.
        if let st = linkStatus(lib.web + "/password") {
            #expect(
                st.st_uid != 0 || readFile(lib.web + "/password") != s.contents["secret"],
                "the sentinel became the password file")
        }
        print("6c: ptk web-password \(r.status) \(r.stderr)")
    }

    // MARK: 7. Crafted packages

    /// A package `name.ptk` in a folder of the service user's: photo.metadata says Version 1;
    /// `data` makes photo.data (run as the service user, $1 the package, $2 the sentinel).
    func craftPackage(
        _ lib: ServiceLibrary, _ name: String, data: String,
        metadata: String = "printf '{\"Version\": 1}' > \"$1/photo.metadata\"",
        sentinel: String
    ) throws -> String {
        let package = lib.base + "/drop/" + name + ".ptk"
        try asServiceUser("mkdir -p \"$1\" && " + data + " && " + metadata, [package, sentinel])
        return package
    }

    @Test("7a: a package whose photo.data is a symlink to a root-only photo is refused")
    func finding7SymlinkedPhoto() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(
            lib.top + "/sentinel", ["secret.png": makePNG(size: 3000, seed: UInt64.random(in: 1...UInt64.max / 4))])
        let package = try craftPackage(
            lib, "evil", data: "ln -s \"$2\" \"$1/photo.data\"", sentinel: s.path("secret.png"))
        let r = try lib.ptk(["import", package])
        let problems = s.problems([r.stdout, r.stderr], scanning: [lib.photos])
        #expect(problems.isEmpty, "\(problems)")
        #expect(r.status != 0 && !r.stderr.isEmpty, "\(r.status) \(r.stdout) \(r.stderr)")
        #expect(!fileExists(lib.photos + "/evil.png"))
    }

    @Test("7b: a package whose photo.data is a hard link to a root-only photo is refused")
    func finding7HardLinkedPhoto() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(
            lib.top + "/sentinel", ["secret.png": makePNG(size: 3000, seed: UInt64.random(in: 1...UInt64.max / 4))])
        let package = try craftPackage(lib, "evil", data: "true", sentinel: s.path("secret.png"))
        // By root: fs.protected_hardlinks would stop the service user.
        #expect(link(s.path("secret.png"), package + "/photo.data") == 0)
        let r = try lib.ptk(["import", package])
        let problems = s.problems([r.stdout, r.stderr], scanning: [lib.photos])
        #expect(problems.isEmpty, "\(problems)")
        #expect(r.status != 0 && !r.stderr.isEmpty, "\(r.status) \(r.stdout) \(r.stderr)")
        #expect(!fileExists(lib.photos + "/evil.png"))
    }

    @Test("7c: a package whose photo.metadata is a FIFO is refused at once, not waited on")
    func finding7FIFOMetadata() throws {
        let lib = try ServiceLibrary.owned()
        writeFile(lib.top + "/ok.png", makePNG(size: 2000, seed: 11))
        let package = try craftPackage(
            lib, "fifo", data: "cp \"$2\" \"$1/photo.data\"", metadata: "mkfifo \"$1/photo.metadata\"",
            sentinel: lib.top + "/ok.png")
        let started = Date()
        let r = try lib.ptk(["import", package], timeout: 15)
        let took = Date().timeIntervalSince(started)
        #expect(took < 8, "ptk import waited \(took) s on a FIFO (status \(r.status))")
        #expect(r.status != 0 && r.status != 137 && !r.stderr.isEmpty, "\(r.status) \(r.stderr)")
        #expect(!fileExists(lib.photos + "/fifo.png"))
    }

    // MARK: 8. export into a folder the service user may write

    @Test(
        "8: export into the service user's folder with planted staging symlinks (and staging folders swapped for them) writes nothing in a root-only folder"
    )
    func finding8ExportStaging() throws {
        let lib = try ServiceLibrary.owned()
        let s = Sentinel(lib.top + "/sentinel", ["secret": sentinelText()])
        let exports = lib.base + "/exports"
        // Planted for the next pids, at the names ptk export staged in before (.NAME.ptk.tmp-PID).
        let first = nextPIDGuess()
        try asServiceUser(
            "mkdir -m 0755 \"$1\" && for p in $(seq \"$3\" \"$4\"); do ln -s \"$2\" \"$1/.pic.ptk.tmp-$p\"; done",
            [exports, s.dir, "\(first)", "\(first + 300)"])
        let planted = try lib.ptk(["export", "pic", "-o", exports])
        #expect(planted.status == 0, "export beside planted links: \(planted.stderr)")
        #expect(readFile(exports + "/pic.ptk/photo.data") == lib.photoBytes)
        var problems = s.problems([planted.stdout, planted.stderr], scanning: [exports])
        #expect(problems.isEmpty, "\(problems)")

        // The race: each staging folder ptk makes is moved aside and a symlink to the root-only
        // folder put in its place.
        for name in listDirectory(exports) { removeTree(exports + "/" + name) }
        let sentinelFolder = s.dir
        let racer = Racer {
            for name in listDirectory(exports) where name.hasPrefix(".pic.ptk.tmp-") {
                let path = exports + "/" + name
                if isDirectory(linkStatus(path)), rename(path, asideName(exports + "/staging")) == 0,
                    symlink(sentinelFolder, path) == 0
                {
                    _ = lchown(path, serviceUID, serviceGID)
                }
            }
        }
        var statuses: [Int32: Int] = [:]
        for _ in 0..<30 {
            let r = try lib.ptk(["export", "pic", "-o", exports])
            statuses[r.status, default: 0] += 1
            if r.status == 0 {
                #expect(readFile(exports + "/pic.ptk/photo.data") == lib.photoBytes, "an export said done: \(r.stdout)")
            } else {
                #expect(!r.stderr.isEmpty)
            }
            problems = s.problems([r.stdout, r.stderr])
            if !problems.isEmpty { break }
            for name in listDirectory(exports) { removeTree(exports + "/" + name) }
        }
        let rounds = racer.stop()
        print("export staging race: \(rounds) scans, statuses \(statuses)")
        #expect(problems.isEmpty, "\(problems)")
    }

    // MARK: 9. Terminal escapes

    @Test("9: ESC in a sender name, a note and a camera never reaches standard output raw from list, show and watch")
    func finding9TerminalEscapes() throws {
        let lib = try ServiceLibrary()
        do {
            let library = try PhotoLibrary(directory: lib.photos, create: false)
            try library.database.execute(
                """
                UPDATE photos SET sender_name = 'Kitchen ' || char(27) || ']0;pwned' || char(7) || char(27) || '[31mred',
                    note = 'see ' || char(27) || '[2J' || char(27) || ']0;owned' || char(7) || 'this',
                    camera_model = 'cam' || char(27) || '[5mblink'
                """)
        }
        lib.giveToServiceUser()
        let list = try lib.ptk(["list"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(!list.stdout.utf8.contains(0x1B), "list printed ESC: \(list.stdout.debugDescription)")
        #expect(
            list.stdout.contains("pic.png") && list.stdout.contains("pwned") && list.stdout.contains("[31mred"),
            "\(list.stdout.debugDescription)")
        let show = try lib.ptk(["show", "pic"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(!show.stdout.utf8.contains(0x1B), "show printed ESC: \(show.stdout.debugDescription)")
        for text in ["pwned", "[31mred", "[2J", "owned", "this", "[5mblink"] {
            #expect(show.stdout.contains(text), "show left out \(text): \(show.stdout.debugDescription)")
        }
        // watch runs until interrupted: what it printed in 3 s.
        let watch = try lib.ptk(["watch", "--since", "all"], timeout: 3)
        #expect(watch.stdout.contains("pic.png"), "\(watch.stdout.debugDescription) \(watch.stderr)")
        #expect(!watch.stdout.utf8.contains(0x1B), "watch printed ESC: \(watch.stdout.debugDescription)")
        #expect(watch.stdout.contains("[31mred"), "\(watch.stdout.debugDescription)")
    }

    // MARK: What still works

    /// list, note, show, rename, gallery, export and thumbnail into root-only places, import of
    /// a root-only package from a root-only folder, web-password, web-sessions and id, run by
    /// root: each works, and what it wrote outside the library is there with the right bytes.
    func everyCommandWorks(_ lib: ServiceLibrary, package: String) throws {
        func ok(_ args: [String], input: String? = nil) throws -> Finished {
            let r = try input.map { try lib.ptk(args, input: $0) } ?? lib.ptk(args)
            #expect(r.status == 0, "ptk \(args): \(r.status) \(r.stderr)")
            return r
        }
        #expect(try ok(["list"]).stdout.hasPrefix("pic.png"))
        _ = try ok(["note", "pic", "root was here"])
        #expect(try ok(["show", "pic"]).stdout.contains("root was here"))
        _ = try ok(["rename", "pic", "holiday"])
        #expect(readFile(lib.photos + "/holiday.png") == lib.photoBytes)
        _ = try ok(["gallery"])
        #expect(
            String(decoding: readFile(lib.ptkFolder + "/gallery/index.html") ?? [], as: UTF8.self).contains(
                "holiday.png"))
        let exports = lib.rootOnlyFolder("exports")
        _ = try ok(["export", "holiday", "-o", exports])
        #expect(readFile(exports + "/holiday.ptk/photo.data") == lib.photoBytes)
        let metadata = String(decoding: readFile(exports + "/holiday.ptk/photo.metadata") ?? [], as: UTF8.self)
        #expect(metadata.contains("root was here"), "\(metadata)")
        let thumbnails = lib.rootOnlyFolder("thumbnail-out")
        _ = try ok(["thumbnail", "holiday", "-o", thumbnails + "/t.png"])
        let thumbnail = readFile(thumbnails + "/t.png")
        #expect(thumbnail != nil && thumbnail == readFile(lib.thumbnail))
        let imported = try ok(["import", package])
        #expect(
            imported.stdout.hasPrefix("imported ") && imported.stdout.contains("pic.ptk")
                && imported.stdout.contains(" as '"), "\(imported.stdout)")
        let names = listDirectory(lib.photos).filter { $0.hasSuffix(".png") }
        #expect(names.count == 2 && names.allSatisfy { readFile(lib.photos + "/" + $0) == lib.photoBytes }, "\(names)")
        _ = try ok(["web-password"], input: "a new password of root's")
        #expect(fileExists(lib.web + "/password"))
        _ = try ok(["web-sessions"])
        #expect(try ok(["app-password", "add", "phone"]).stdout.contains("user: phone\n"))
        #expect(try ok(["app-password", "list"]).stdout.contains("phone"))
        #expect(fileExists(lib.web + "/app-passwords"))
        #expect(try ok(["id"]).stdout.count > 8)
        // The root-only places are as they were.
        for folder in [exports, thumbnails, lib.top + "/packages"] {
            let st = linkStatus(folder)
            #expect(st?.st_uid == 0 && st?.st_gid == 0 && st.map { $0.st_mode & 0o7777 } == 0o700, "\(folder)")
        }
    }

    /// Everything below `lib.base` that is not `uid:gid`.
    func ownedOtherwise(_ lib: ServiceLibrary, _ uid: uid_t, _ gid: gid_t) -> [String] {
        var found: [String] = []
        for root in [lib.photos, lib.state] {
            walkTree(root) { path, st in
                if st.st_uid != uid || st.st_gid != gid { found.append("\(path) \(st.st_uid):\(st.st_gid)") }
            }
        }
        return found
    }

    /// A root-only copy of the photo's package in a root-only folder (top/packages).
    func rootOnlyPackage(_ lib: ServiceLibrary) throws -> String {
        let packages = lib.rootOnlyFolder("packages")
        let e = try lib.ptk(["export", "pic", "-o", packages])
        #expect(e.status == 0, "\(e.stderr)")
        let package = packages + "/pic.ptk"
        chmod(package, 0o700)
        for name in listDirectory(package) { chmod(package + "/" + name, 0o600) }
        chownTree(package, 0, 0)
        return package
    }

    @Test(
        "root's ptk on the service user's library: every command works, and what it makes there is the service user's")
    func rootOnServiceUsersLibraryWorks() throws {
        let lib = try ServiceLibrary()
        let package = try rootOnlyPackage(lib)
        lib.giveToServiceUser()
        try everyCommandWorks(lib, package: package)
        let notTheirs = ownedOtherwise(lib, serviceUID, serviceGID)
        #expect(notTheirs.isEmpty, "made by root in the service user's directories: \(notTheirs)")
    }

    @Test("root's ptk on root's own library works as before, and what it makes stays root's")
    func rootOnRootsLibraryWorks() throws {
        let lib = try ServiceLibrary()
        let package = try rootOnlyPackage(lib)
        try everyCommandWorks(lib, package: package)
        let notRoots = ownedOtherwise(lib, 0, 0)
        #expect(notRoots.isEmpty, "not root's: \(notRoots)")
    }
}
