import Glibc
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// A store in a fresh temporary directory.
final class StoreFixture: @unchecked Sendable {
    // Immutable after init; the store is thread-safe.
    let root = makeTemporaryDirectory()
    var dir: String { root + "/photos" }
    let store: PhotoStore

    /// One checking thread by default, whatever this machine's CPUs, so big photos take the
    /// same path everywhere.
    init(minFree: Int64 = 0, partialMaxAge: Duration = .seconds(86_400), checkingThreads: Int = 1) throws {
        store = try PhotoStore(
            settings: StoreSettings(
                directory: root + "/photos", minFree: minFree, partialMaxAge: partialMaxAge,
                checkingThreads: checkingThreads))
    }
    deinit { removeTree(root) }

    var visible: [String] { listDirectory(dir).filter { $0 != ".incoming" } }
    var incoming: [String] { listDirectory(dir + "/.incoming") }
}

func offer(for bytes: [UInt8], name: String = "IMG_0001.png", folder: String = "") -> StoreRequest {
    StoreRequest(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), type: .png, folder: folder)
}

/// Sends `bytes` through the store in protocol-sized chunks.
func store(_ bytes: [UInt8], in s: PhotoStore, name: String = "IMG_0001.png", folder: String = "") -> Result<
    StoredPhoto, StoreFailure
> {
    switch s.begin(offer(for: bytes, name: name, folder: folder)) {
    case .failure(let f): return .failure(f)
    case .success(let file):
        var i = Int(file.offset)
        while i < bytes.count {
            let end = min(i + ProtocolLimits.chunkSize, bytes.count)
            do { try file.append(Array(bytes[i..<end])) } catch {
                file.abandon(keepForResume: false)
                return .failure(error)
            }
            i = end
        }
        return file.finish()
    }
}

@Suite("Received-photos store", .tags(.unit))
struct PhotoStoreTests {
    @Test(
        "a partial upload is taken up at protocol v1's chunk boundaries: the store's own step is the protocol's CHUNK size"
    )
    func resumeStepIsTheChunkSize() {
        #expect(PhotoStore.resumeStep == ProtocolLimits.chunkSize)
    }

    @Test("a photo is saved byte-identical under its name, 0644, and .incoming is empty after")
    func saves() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 350_000)
        let saved = try store(png, in: f.store).get()
        #expect(saved == StoredPhoto(name: "IMG_0001.png", size: 350_000, sha256: SHA256.hex(of: png)))
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
        #expect(f.incoming.isEmpty)
        var st = stat()
        stat(f.dir + "/IMG_0001.png", &st)
        #expect(st.st_mode & 0o777 == 0o644)
        stat(f.dir + "/.incoming", &st)
        #expect(st.st_mode & 0o777 == 0o700)
    }

    @Test("the configured file mode is set on the photo before it is published")
    func fileMode() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        let s = try PhotoStore(settings: StoreSettings(directory: root + "/photos", minFree: 0, fileMode: 0o600))
        _ = try store(makePNG(size: 5_000), in: s).get()
        var st = stat()
        stat(root + "/photos/IMG_0001.png", &st)
        #expect(st.st_mode & 0o777 == 0o600)
    }

    @Test("a failed fchmod is an error naming the call, not silently dropped")
    func setPermissionsFails() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        writeFile(root + "/f", [1])
        // An O_PATH descriptor refuses fchmod with EBADF: the failure the wrapper must report.
        let fd = try FileDescriptor.open(root + "/f", flags: .pathOnly)
        defer { fd.close() }
        #expect(throws: SystemError(call: "fchmod", errno: EBADF)) { try fd.setPermissions(0o600) }
    }

    @Test("an existing name is never replaced: (2), (3) are used")
    func collisions() throws {
        let f = try StoreFixture()
        let a = makePNG(size: 1000, seed: 1)
        let b = makePNG(size: 1000, seed: 2)
        let c = makePNG(size: 1000, seed: 3)
        #expect(try store(a, in: f.store, name: "x.png").get().name == "x.png")
        #expect(try store(b, in: f.store, name: "x.png").get().name == "x (2).png")
        #expect(try store(c, in: f.store, name: "../x.png").get().name == "x (3).png")
        #expect(readFile(f.dir + "/x.png") == a)
        #expect(readFile(f.dir + "/x (2).png") == b)
        #expect(readFile(f.dir + "/x (3).png") == c)
    }

    @Test("twenty sessions saving the same name at once all succeed under different names")
    func concurrentPublish() throws {
        let f = try StoreFixture()
        let photos = (0..<20).map { makePNG(size: 150_000, seed: UInt64($0 + 1)) }
        let results = Results()
        let done = Semaphore()
        for (i, png) in photos.enumerated() {
            try startThread(name: "test") {
                results.set(i, store(png, in: f.store, name: "same.png"))
                done.signal()
            }
        }
        for _ in photos { done.wait() }
        let names = try (0..<20).map { try results.get($0).get().name }
        #expect(Set(names).count == 20)
        for (i, name) in names.enumerated() { #expect(readFile(f.dir + "/" + name) == photos[i]) }
        #expect(f.visible.count == 20)
        #expect(f.incoming.isEmpty)
    }

    @Test("the same content offered by two sessions at once is saved twice")
    func sameContentConcurrently() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 250_000)
        let first = try f.store.begin(offer(for: png)).get()
        let second = try f.store.begin(offer(for: png)).get()
        try first.append(png)
        try second.append(png)
        let a = try first.finish().get()
        let b = try second.finish().get()
        #expect(Set([a.name, b.name]) == ["IMG_0001.png", "IMG_0001 (2).png"])
        #expect(f.incoming.isEmpty)
    }

    @Test("a wrong hash, a wrong size or a broken PNG leaves nothing visible and nothing in .incoming")
    func failuresLeaveNothing() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 200_000)
        var o = offer(for: png)
        o.sha256 = String(repeating: "0", count: 64)
        let file = try f.store.begin(o).get()
        try file.append(png)
        guard case .failure(let fail) = file.finish() else {
            Issue.record("saved with a wrong hash")
            return
        }
        #expect(fail.kind == .hashMismatch)

        var corrupt = png
        corrupt[corrupt.count - 1] ^= 1  // IEND's CRC
        guard case .failure(let fail2) = store(corrupt, in: f.store) else {
            Issue.record("saved a corrupt PNG")
            return
        }
        #expect(fail2.kind == .notAPhoto)

        let short = try f.store.begin(offer(for: png)).get()
        try short.append(Array(png[..<102_400]))
        guard case .failure(let fail3) = short.finish() else {
            Issue.record("saved a short file")
            return
        }
        #expect(fail3.kind == .sizeMismatch)

        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
    }

    @Test("bytes that do not start like a PNG fail on the first chunk")
    func notPNGEarly() throws {
        let f = try StoreFixture()
        let junk = [UInt8](repeating: 0x42, count: 300_000)
        let file = try f.store.begin(
            StoreRequest(name: "x.png", size: 300_000, sha256: SHA256.hex(of: junk), type: .png)
        ).get()
        #expect(throws: StoreFailure.self) { try file.append(Array(junk[..<102_400])) }
        file.abandon(keepForResume: false)
        #expect(f.incoming.isEmpty)
    }

    @Test("an abandoned upload resumes from its last whole chunk")
    func resume() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 520_000)
        let first = try f.store.begin(offer(for: png)).get()
        #expect(first.offset == 0)
        try first.append(Array(png[0..<102_400]))
        try first.append(Array(png[102_400..<204_800]))
        try first.append(Array(png[204_800..<250_000]))  // a torn write: half a chunk
        first.abandon(keepForResume: true)
        #expect(f.visible.isEmpty)
        #expect(f.incoming.count == 1)

        let second = try f.store.begin(offer(for: png)).get()
        #expect(second.offset == 204_800)
        try second.append(Array(png[204_800...]))
        #expect(try second.finish().get().name == "IMG_0001.png")
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
        #expect(f.incoming.isEmpty)
    }

    @Test("a partial upload whose bytes are corrupt is started over")
    func corruptPartial() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 300_000)
        let first = try f.store.begin(offer(for: png)).get()
        try first.append(Array(png[0..<102_400]))
        first.abandon(keepForResume: true)
        let part = f.dir + "/.incoming/" + f.incoming[0]
        writeFile(part, [UInt8](repeating: 0, count: 102_400))
        let second = try f.store.begin(offer(for: png)).get()
        #expect(second.offset == 0)
        second.abandon(keepForResume: false)
    }

    @Test(
        "a partial holding the whole file but other bytes than offered (planted under the victim's SHA-256) is started over, for a sender that takes \"held\" too; the true whole one is taken at its end (issue 54)"
    )
    func plantedWholePartial() throws {
        let f = try StoreFixture()
        let victim = makePNG(size: 250_001, seed: 3)
        let other = makePNG(size: 250_001, seed: 4)
        var request = offer(for: victim)
        request.wholeResumable = true
        for whole in [true, false] {
            let planted = try f.store.begin(request).get()
            let bytes = whole ? victim : other
            for start in stride(from: 0, to: bytes.count, by: ProtocolLimits.chunkSize) {
                try planted.append(Array(bytes[start..<min(start + ProtocolLimits.chunkSize, bytes.count)]))
            }
            planted.abandon(keepForResume: true)
            let resumed = try f.store.begin(request).get()
            #expect(resumed.offset == (whole ? Int64(victim.count) : 0), "whole \(whole)")
            if !whole { try resumed.append(victim) }
            #expect(
                try resumed.finish().get()
                    == StoredPhoto(
                        name: whole ? "IMG_0001.png" : "IMG_0001 (2).png", size: Int64(victim.count),
                        sha256: SHA256.hex(of: victim)))
        }
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "a planted whole partial of other bytes is started over also when its state was remembered, its planter idle or not before it closed (the remembered hash is checked against the offer as a read one is; issue 54, third audit)"
    )
    func plantedWholePartialRemembered() throws {
        let f = try StoreFixture()
        let victim = makePNG(size: 250_001, seed: 3)
        let other = makePNG(size: 250_001, seed: 4)
        var request = offer(for: victim)
        request.wholeResumable = true
        for pause in [0, 150_000] as [UInt32] {
            let planted = try f.store.begin(request).get()
            try planted.append(other)
            usleep(pause)  // the planting session idles before it closes
            planted.abandon(keepForResume: true)
            let resumed = try f.store.begin(request).get()
            #expect(resumed.offset == 0, "idle \(pause) µs")
            resumed.abandon(keepForResume: false)
        }
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "a partial nobody changed is not read and hashed again at any offer of its content, even one right after its last write; the state kept finishes the photo right (issue 54, second image audit F4; third audit)"
    )
    func unchangedPartialIsNotHashedAgain() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 520_000)
        let planted = try f.store.begin(offer(for: png)).get()
        for start in stride(from: 0, to: 409_600, by: ProtocolLimits.chunkSize) {
            try planted.append(Array(png[start..<(start + ProtocolLimits.chunkSize)]))
        }
        #expect(!planted.checksOnThread)
        planted.abandon(keepForResume: true)
        // Offered again at once: the state ptkd took after its own last write holds.
        for _ in 0..<6 {
            let again = try f.store.begin(offer(for: png)).get()
            #expect(again.offset == 409_600)
            again.abandon(keepForResume: true)
        }
        #expect(f.store.resumeStates.partialBytesRead == 0, "six offers read nothing")
        let last = try f.store.begin(offer(for: png)).get()
        try last.append(Array(png[409_600...]))
        #expect(
            try last.finish().get()
                == StoredPhoto(name: "IMG_0001.png", size: Int64(png.count), sha256: SHA256.hex(of: png)))
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
    }

    @Test("a remembered partial changed since (same size, same inode), even at once, is read again and started over")
    func changedPartialIsReadAgain() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 300_000)
        let planted = try f.store.begin(offer(for: png)).get()
        try planted.append(Array(png[0..<102_400]))
        planted.abandon(keepForResume: true)
        let first = try f.store.begin(offer(for: png)).get()
        #expect(first.offset == 102_400)
        first.abandon(keepForResume: true)
        let read = f.store.resumeStates.partialBytesRead
        let part = f.dir + "/.incoming/" + f.incoming[0]
        let inode = try fileStatus(part).inode
        writeFile(part, [UInt8](repeating: 0, count: 102_400))
        #expect(try fileStatus(part).inode == inode && fileStatus(part).size == 102_400)
        let second = try f.store.begin(offer(for: png)).get()
        #expect(second.offset == 0)
        #expect(f.store.resumeStates.partialBytesRead == read + 102_400)
        second.abandon(keepForResume: false)
    }

    @Test(
        "a partial whose checks ran on a checking thread is not read and hashed again at the next offer: offer, one chunk, close, repeated, costs no reading (issue 54, third audit)"
    )
    func threadCheckedPartialIsNotHashedAgain() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 3_000_000)
        let chunk = ProtocolLimits.chunkSize
        var held = 0
        for round in 0..<4 {
            let file = try f.store.begin(offer(for: png)).get()
            #expect(file.offset == Int64(held), "round \(round)")
            try file.append(Array(png[held..<(held + chunk)]))
            #expect(file.checksOnThread, "round \(round): the rest (over 1 MiB) is checked on the thread")
            held += chunk
            file.abandon(keepForResume: true)
        }
        #expect(f.store.resumeStates.partialBytesRead == 0, "four offers read nothing back")
        let last = try f.store.begin(offer(for: png)).get()
        #expect(last.offset == Int64(held))
        for start in stride(from: held, to: png.count, by: chunk) {
            try last.append(Array(png[start..<min(start + chunk, png.count)]))
        }
        #expect(
            try last.finish().get()
                == StoredPhoto(name: "IMG_0001.png", size: Int64(png.count), sha256: SHA256.hex(of: png)))
        #expect(readFile(f.dir + "/IMG_0001.png") == png)
        #expect(f.store.resumeStates.partialBytesRead == 0)
    }

    @Test(
        "a partial read back more than twice its length (its short last chunk cut off at each offer) is started over, so the reading is paid for by sending it again (issue 54, third audit)"
    )
    func partialReadBackTooOftenIsStartedOver() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 250_001)
        let whole = 204_800
        let planted = try f.store.begin(offer(for: png)).get()
        try planted.append(Array(png[..<whole]))
        var offsets: [Int64] = []
        var file = planted
        for _ in 0..<3 {
            try file.append(Array(png[Int(file.written)...]))
            file.abandon(keepForResume: true)
            file = try f.store.begin(offer(for: png)).get()
            offsets.append(file.offset)
        }
        #expect(offsets == [Int64(whole), Int64(whole), 0])
        #expect(f.store.resumeStates.partialBytesRead == 2 * Int64(whole))
        try file.append(png)
        #expect(
            try file.finish().get()
                == StoredPhoto(name: "IMG_0001.png", size: Int64(png.count), sha256: SHA256.hex(of: png)))
    }

    @Test("an offer that would eat into the free-space reserve is refused no-space")
    func noSpace() throws {
        let f = try StoreFixture(minFree: Int64.max / 2)
        guard case .failure(let fail) = f.store.begin(offer(for: makePNG(size: 1000))) else {
            Issue.record("accepted past the reserve")
            return
        }
        #expect(fail.kind == .noSpace)
        #expect(f.incoming.isEmpty)
    }

    @Test("stale partial uploads are deleted, fresh ones and ones in use are kept")
    func stalePartials() throws {
        let f = try StoreFixture(partialMaxAge: .seconds(3600))
        writeFile(f.dir + "/.incoming/old.part", [1, 2, 3])
        writeFile(f.dir + "/.incoming/new.part", [1, 2, 3])
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        utimensat(AT_FDCWD, f.dir + "/.incoming/old.part", &times, 0)
        let png = makePNG(size: 300_000)
        let busy = try f.store.begin(offer(for: png)).get()
        try busy.append(Array(png[..<102_400]))
        let busyName = f.incoming.first { $0.hasSuffix(".part") && $0 != "old.part" && $0 != "new.part" }!
        utimensat(AT_FDCWD, f.dir + "/.incoming/" + busyName, &times, 0)
        #expect(f.store.removeStalePartials() == 1)
        #expect(f.incoming.sorted() == [busyName, "new.part"].sorted())
        busy.abandon(keepForResume: false)
    }

    @Test("a symlink planted at .incoming is refused at start")
    func symlinkedIncoming() throws {
        let root = makeTemporaryDirectory()
        defer { removeTree(root) }
        mkdir(root + "/photos", 0o755)
        mkdir(root + "/elsewhere", 0o755)
        symlink(root + "/elsewhere", root + "/photos/.incoming")
        #expect(throws: StoreError.self) { try PhotoStore(settings: StoreSettings(directory: root + "/photos")) }
    }

    @Test("a symlink planted at the final name is never followed or replaced")
    func symlinkedFinalName() throws {
        let f = try StoreFixture()
        let target = f.root + "/target"
        writeFile(target, [9, 9, 9])
        symlink(target, f.dir + "/IMG_0001.png")
        let png = makePNG(size: 2000)
        #expect(try store(png, in: f.store).get().name == "IMG_0001 (2).png")
        #expect(readFile(target) == [9, 9, 9])
    }
}

/// Results collected from threads.
final class Results: @unchecked Sendable {
    // Guarded by `lock`.
    private var values: [Int: Result<StoredPhoto, StoreFailure>] = [:]
    private let lock = Lock()
    func set(_ i: Int, _ r: Result<StoredPhoto, StoreFailure>) { lock.withLock { values[i] = r } }
    func get(_ i: Int) -> Result<StoredPhoto, StoreFailure> { lock.withLock { values[i]! } }
}

@Suite("Received-photos store: JPEG", .tags(.unit))
struct PhotoStoreJPEGTests {
    func jpegOffer(_ bytes: [UInt8], name: String) -> StoreRequest {
        StoreRequest(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), type: .jpeg)
    }

    func save(_ bytes: [UInt8], name: String, in s: PhotoStore) -> Result<StoredPhoto, StoreFailure> {
        switch s.begin(jpegOffer(bytes, name: name)) {
        case .failure(let f): return .failure(f)
        case .success(let file):
            var i = 0
            while i < bytes.count {
                let end = min(i + 16_384, bytes.count)
                do { try file.append(Array(bytes[i..<end])) } catch {
                    file.abandon(keepForResume: false)
                    return .failure(error)
                }
                i = end
            }
            return file.finish()
        }
    }

    @Test("a JPEG is saved byte-identical under a .jpg name, with the same suffixes as a PNG")
    func saves() throws {
        let f = try StoreFixture()
        let jpeg = makeJPEG(width: 160, height: 120, seed: 2)
        #expect(try save(jpeg, name: "DCIM/IMG_1.jpg", in: f.store).get().name == "IMG_1.jpg")
        #expect(try save(jpeg, name: "IMG_1.jpg", in: f.store).get().name == "IMG_1 (2).jpg")
        #expect(try save(jpeg, name: "scan.JPEG", in: f.store).get().name == "scan.JPEG")
        #expect(try save(jpeg, name: "noext", in: f.store).get().name == "noext.jpg")
        #expect(readFile(f.dir + "/IMG_1 (2).jpg") == jpeg)
        #expect(f.incoming.isEmpty)
    }

    @Test("a big JPEG is checked on the checking thread, and a bad marker in its middle is found")
    func bigJPEG() throws {
        let f = try StoreFixture()
        let jpeg = makeJPEG(width: 1600, height: 1200, quality: 100, seed: 8)
        #expect(jpeg.count > Int(IncomingFile.threadedCheckMinimum) + 16_384)
        let saved = try save(jpeg, name: "big.jpg", in: f.store).get()
        #expect(saved.sha256 == SHA256.hex(of: jpeg))
        var broken = jpeg
        broken[jpeg.count / 2] = 0xFF
        broken[jpeg.count / 2 + 1] = 0x03
        guard case .failure(let failure) = save(broken, name: "broken.jpg", in: f.store) else {
            Issue.record("saved a JPEG with an invalid marker")
            return
        }
        #expect(failure.kind == .notAPhoto)
        #expect(failure.message.hasPrefix("not a well-formed JPEG: invalid marker 0xFF03"))
        #expect(f.visible == ["big.jpg"])
        #expect(f.incoming.isEmpty)
    }

    @Test("a PNG offered as a JPEG, a truncated JPEG and an unknown type are refused and leave nothing")
    func refusals() throws {
        let f = try StoreFixture()
        guard case .failure(let asJPEG) = save(makePNG(size: 50_000), name: "x.jpg", in: f.store) else {
            Issue.record("saved a PNG as a JPEG")
            return
        }
        #expect(asJPEG.message == "not a well-formed JPEG: does not start with the JPEG SOI marker")
        let jpeg = makeJPEG(width: 64, height: 64)
        guard case .failure(let cut) = save(Array(jpeg.dropLast(2)), name: "cut.jpg", in: f.store) else {
            Issue.record("saved a truncated JPEG")
            return
        }
        #expect(cut.message.contains("no EOI marker"))
        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
    }

    @Test("the store's own add path takes a JPEG when told the type")
    func add() throws {
        let f = try StoreFixture()
        let jpeg = makeJPEG(width: 40, height: 30, greyscale: true)
        let path = f.root + "/in.jpg"
        writeFile(path, jpeg)
        let fd = try FileDescriptor.open(path, flags: [.readOnly])
        defer { fd.close() }
        let name = try f.store.add(
            from: fd, size: Int64(jpeg.count), sha256: SHA256.hex(of: jpeg), name: "in.jpg", type: .jpeg)
        #expect(name == "in.jpg")
        #expect(throws: StoreError.self) {
            _ = try f.store.add(
                from: fd, size: Int64(jpeg.count), sha256: SHA256.hex(of: jpeg), name: "in.png", type: .png)
        }
    }
}

@Suite("Received-photos store: folders", .tags(.unit))
struct PhotoStoreFolderTests {
    @Test("a photo goes into its folder, made as needed (0755), and Saved names it with the folder")
    func intoFolders() throws {
        let f = try StoreFixture()
        let png = makePNG(size: 2_000, seed: 1)
        #expect(try store(png, in: f.store, name: "a.png", folder: "Anna/2024-06").get().name == "Anna/2024-06/a.png")
        #expect(
            try store(png, in: f.store, name: "a.png", folder: "Anna/2024-06").get().name == "Anna/2024-06/a (2).png")
        #expect(try store(png, in: f.store, name: "a.png", folder: "Anna").get().name == "Anna/a.png")
        #expect(readFile(f.dir + "/Anna/2024-06/a.png") == png)
        #expect(try fileStatus(f.dir + "/Anna").permissions == 0o755)
        #expect(try fileStatus(f.dir + "/Anna/2024-06").permissions == 0o755)
        #expect(f.visible == ["Anna"])
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "a symlink or a file planted as a folder is never followed: the photo lands in \"name (2)\" beside it, nothing where it points",
        arguments: ["out", "Anna/out"])
    func symlinkSidestepped(folder: String) throws {
        let f = try StoreFixture()
        let outside = makeTemporaryDirectory("ptk-outside")
        defer { removeTree(outside) }
        try makeDirectories(f.dir + "/Anna")
        #expect(symlink(outside, f.dir + "/" + folder) == 0)
        writeFile(f.dir + "/" + folder + " (2)", [1, 2, 3])  // a file at the next name too
        let png = makePNG(size: 2_000, seed: 2)
        guard case .success(let saved) = store(png, in: f.store, name: "a.png", folder: folder + "/x") else {
            Issue.record("not saved beside the symlink")
            return
        }
        #expect(saved.name == folder + " (3)/x/a.png")
        #expect(readFile(f.dir + "/" + saved.name) == png)
        #expect(listDirectory(outside).isEmpty, "something was written outside the directory")
        #expect(readFile(f.dir + "/" + folder + " (2)") == [1, 2, 3])
    }

    @Test(
        "folders that are not valid names are refused before anything is written",
        arguments: ["..", "a/../b", ".hidden", "a//b", "a/b/c/d/e", "x\u{1}y"])
    func invalidFolders(folder: String) throws {
        let f = try StoreFixture()
        let png = makePNG(size: 2_000, seed: 3)
        guard case .failure = f.store.begin(offer(for: png, name: "a.png", folder: folder)) else {
            Issue.record("began a photo in '\(folder)'")
            return
        }
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }
}

@Suite("Received-photos store: HEIC and HEIF", .tags(.unit))
struct PhotoStoreHEIFTests {
    func save(_ bytes: [UInt8], name: String, type: PhotoType = .heic, in s: PhotoStore) -> Result<
        StoredPhoto, StoreFailure
    > {
        switch s.begin(StoreRequest(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), type: type)) {
        case .failure(let f): return .failure(f)
        case .success(let file):
            do { try file.append(bytes) } catch {
                file.abandon(keepForResume: false)
                return .failure(error)
            }
            return file.finish()
        }
    }

    @Test("heif-enc's HEIC is saved byte-identical, with the same names and suffixes as the other types")
    func saves() throws {
        let f = try StoreFixture()
        let heic = try #require(readFile(fixturePath("heif/picture.heic")))
        #expect(try save(heic, name: "IMG_0001.HEIC", in: f.store).get().name == "IMG_0001.HEIC")
        #expect(try save(heic, name: "IMG_0001.HEIC", in: f.store).get().name == "IMG_0001 (2).HEIC")
        #expect(try save(heic, name: "../noext", in: f.store).get().name == "noext.heic")
        #expect(try save(heic, name: "still.heif", type: .heif, in: f.store).get().name == "still.heif")
        #expect(readFile(f.dir + "/IMG_0001 (2).HEIC") == heic)
        #expect(f.incoming.isEmpty)
    }

    /// `bytes` with the first `old` (four characters) replaced by `new`.
    func replacing(_ bytes: [UInt8], _ old: String, with new: String) -> [UInt8] {
        var out = bytes
        guard let at = (0..<out.count - 4).first(where: { out[$0..<$0 + 4].elementsEqual(old.utf8) }) else {
            return out
        }
        out[at..<at + 4] = ArraySlice(new.utf8)
        return out
    }

    @Test(
        "a HEIF whose boxes pass but whose items HEIFCheck or libheif refuse is refused before it is kept, and leaves nothing"
    )
    func libheifMustOpenIt() throws {
        let f = try StoreFixture()
        let heic = try #require(readFile(fixturePath("heif/picture.heic")))
        let cases: [([UInt8], String)] = [
            (heifGrid(rows: 256, columns: 256, width: 4096), "not a well-formed HEIC: over 4096 item references"),
            (heifHugeItemLocations(), "not a well-formed HEIC: iloc places 65535 items, over the 2048-item limit"),
            // Within HEIFCheck's bounds, refused by libheif: a picture whose handler is not 'pict'.
            (
                replacing(heic, "pict", with: "vide"),
                "not a well-formed HEIC: libheif cannot read it: Invalid input: Not a 'pict' handler"
            ),
            // The structure check refuses these on its own, as the bytes arrive.
            (Array(heic[..<3000]), "not a well-formed HEIC: "),
            (makePNG(size: 3000), "not a well-formed HEIC: box 1 at byte 0 has no box type"),
        ]
        for (bytes, words) in cases {
            guard case .failure(let failure) = save(bytes, name: "bad.heic", in: f.store) else {
                Issue.record("saved: \(words)")
                continue
            }
            #expect(failure.kind == .notAPhoto)
            #expect(failure.message.hasPrefix(words), "\(failure.message)")
        }
        #expect(f.visible.isEmpty)
        #expect(f.incoming.isEmpty)
    }
}
