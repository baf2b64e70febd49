import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// The lines a `SourceWays` said.
final class SaidLines {
    var lines: [String] = []
    func ways(links: Bool) -> SourceWays { SourceWays(links: links) { [self] in lines.append($0) } }
}

/// A source file at `path` holding `bytes`, open for reading.
private func source(_ path: String, _ bytes: [UInt8]) throws -> FileDescriptor {
    writeFile(path, bytes)
    return try FileDescriptor.open(path, flags: [.readOnly])
}

private func request(_ bytes: [UInt8], _ name: String = "a.png") -> StoreRequest {
    StoreRequest(name: name, size: Int64(bytes.count), sha256: "", type: .png)
}

private func status(_ path: String) throws -> FileStatus { try fileStatus(path) }

/// `PhotoStore.take(_:from:ways:mayLink:stop:)`, an inbox's ways (issue 56), on this machine's
/// file system for the tests' temporary files (ext4 or tmpfs: no reflinks).
@Suite("The store: an inbox's ways, a hard link or a copy", .tags(.unit))
struct TakeBySourceTests {
    @Test("where the file system cannot clone, a copy: identical, its own file, and the way said once with why")
    func copyWhereNoClone() throws {
        let f = try StoreFixture()
        let said = SaidLines()
        let ways = said.ways(links: false)
        let a = makePNG(size: 300_000, seed: 1)
        let b = makePNG(size: 200_000, seed: 2)
        let sa = try source(f.root + "/a.png", a)
        defer { sa.close() }
        let sb = try source(f.root + "/b.png", b)
        defer { sb.close() }
        guard case .success(let first) = f.store.take(request(a), from: sa, ways: ways),
            case .success(let second) = f.store.take(request(b, "b.png"), from: sb, ways: ways)
        else {
            Issue.record("not taken")
            return
        }
        try #require(ways.last == .copy, "this test needs a file system without reflinks for its temporary files")
        #expect(readFile(f.dir + "/" + first.name) == a && readFile(f.dir + "/" + second.name) == b)
        #expect(try status(f.dir + "/" + first.name).inode != status(f.root + "/a.png").inode)
        #expect(said.lines.count == 1, "\(said.lines)")
        #expect(said.lines.first?.contains("cannot clone it into the photos directory") == true, "\(said.lines)")
        #expect(said.lines.first?.hasSuffix("takes photos by copy") == true, "\(said.lines)")
        #expect(f.store.ledger.total == 0)
        #expect(f.incoming.isEmpty)
    }

    @Test(
        "inbox-links = yes: the photo is the source itself (one inode, two names), its bytes checked, mode and time its own"
    )
    func linkIsTheSource() throws {
        let f = try StoreFixture()
        let said = SaidLines()
        let ways = said.ways(links: true)
        let bytes = makePNG(size: 2 << 20, seed: 3)
        let path = f.root + "/a.png"
        let fd = try source(path, bytes)
        defer { fd.close() }
        chmod(path, 0o640)
        let before = try status(path)
        guard case .success(let saved) = f.store.take(request(bytes), from: fd, ways: ways) else {
            Issue.record("not taken")
            return
        }
        #expect(ways.last == .link)
        let photo = try status(f.dir + "/" + saved.name)
        #expect(photo.inode == before.inode && photo.device == before.device)
        #expect(photo.linkCount == 2)
        #expect(photo.permissions == 0o640, "the source's mode, not file-mode")
        #expect(photo.modified == before.modified && photo.modifiedNanoseconds == before.modifiedNanoseconds)
        #expect(saved.sha256 == sha256Hex(bytes) && saved.size == Int64(bytes.count))
        #expect(f.incoming.isEmpty, "\(f.incoming)")
        #expect(said.lines == ["takes photos as hard links to their sources (inbox-links = yes): no byte copied"])
    }

    @Test("inbox-links = yes: a source someone has open for writing is not linked (nor taken): it waits")
    func linkRefusedWhileWritten() throws {
        let f = try StoreFixture()
        let ways = SaidLines().ways(links: true)
        let bytes = makePNG(size: 100_000, seed: 4)
        let path = f.root + "/a.png"
        let fd = try source(path, bytes)
        defer { fd.close() }
        let writer = try FileDescriptor.open(path, flags: [.writeOnly])
        defer { writer.close() }
        guard case .failure(let failure) = f.store.take(request(bytes), from: fd, ways: ways) else {
            Issue.record("taken while open for writing")
            return
        }
        #expect(failure.kind == .sizeMismatch && failure.message.contains("open for writing"), "\(failure)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty, "\(f.visible) \(f.incoming)")
        #expect(try status(path).linkCount == 1)
    }

    @Test("inbox-links = yes: a source that is not a well-formed photo leaves no link under any name")
    func notAPhotoNeverLinked() throws {
        let f = try StoreFixture()
        let ways = SaidLines().ways(links: true)
        var bytes = makePNG(size: 100_000, seed: 5)
        bytes[50_000] ^= 0xFF  // a CRC mismatch in IDAT
        let path = f.root + "/a.png"
        let fd = try source(path, bytes)
        defer { fd.close() }
        guard case .failure(let failure) = f.store.take(request(bytes), from: fd, ways: ways) else {
            Issue.record("a broken PNG was taken")
            return
        }
        #expect(failure.kind == .notAPhoto, "\(failure)")
        #expect(f.visible.isEmpty && f.incoming.isEmpty, "\(f.visible) \(f.incoming)")
        #expect(try status(path).linkCount == 1)
    }

    @Test(
        "inbox-links = yes: a source with another name already, or one found written in place (mayLink false), is copied, said once with why"
    )
    func notLinkedWhenNamedElsewhere() throws {
        let f = try StoreFixture()
        let said = SaidLines()
        let ways = said.ways(links: true)
        let a = makePNG(size: 100_000, seed: 6)
        let path = f.root + "/a.png"
        let fd = try source(path, a)
        defer { fd.close() }
        link(path, f.root + "/other-name.png")
        guard case .success(let saved) = f.store.take(request(a), from: fd, ways: ways) else {
            Issue.record("not taken")
            return
        }
        #expect(ways.last != .link)
        #expect(try status(f.dir + "/" + saved.name).linkCount == 1)
        #expect(said.lines.contains { $0.contains("a source with other hard links") }, "\(said.lines)")
        let b = makePNG(size: 100_000, seed: 7)
        let other = try source(f.root + "/b.png", b)
        defer { other.close() }
        guard case .success(let copied) = f.store.take(request(b, "b.png"), from: other, ways: ways, mayLink: false)
        else {
            Issue.record("not taken")
            return
        }
        #expect(ways.last != .link)
        #expect(try status(f.dir + "/" + copied.name).linkCount == 1)
    }

    @Test("inbox-links = yes with duplicates = skip: the same bytes again link nothing")
    func linkDuplicate() throws {
        let f = try StoreFixture()
        let ways = SaidLines().ways(links: true)
        let bytes = makePNG(size: 100_000, seed: 8)
        let fa = try source(f.root + "/a.png", bytes)
        defer { fa.close() }
        guard case .success(let first) = f.store.take(request(bytes), from: fa, ways: ways) else {
            Issue.record("not taken")
            return
        }
        let name = first.name
        f.store.findHeld = { sha, size in sha == first.sha256 && size == first.size ? name : nil }
        let fb = try source(f.root + "/b.png", bytes)
        defer { fb.close() }
        guard case .success(let second) = f.store.take(request(bytes, "b.png"), from: fb, ways: ways) else {
            Issue.record("not taken")
            return
        }
        #expect(second.isDuplicate && second.name == first.name)
        #expect(f.visible == [first.name] && f.incoming.isEmpty, "\(f.visible) \(f.incoming)")
        #expect(try status(f.root + "/b.png").linkCount == 1)
    }
}

/// The same on a file system with reflinks (an XFS image on a loop device: root).
@Suite(
    "The store: an inbox's ways on a file system with reflinks", .tags(.unit, .root),
    .enabled(if: geteuid() == 0, "needs root (a loop device)"))
struct TakeByReflinkTests {
    @Test(
        "a reflink: identical, shared extents, no space reserved after; a later write to the source in place leaves the photo as it was"
    )
    func cloneThenCheck() throws {
        let volume = try ReflinkVolume()
        defer { volume.remove() }
        let store = try PhotoStore(settings: StoreSettings(directory: volume.path + "/photos", minFree: 0))
        let said = SaidLines()
        let ways = said.ways(links: false)
        let bytes = makePNG(size: 4 << 20, seed: 9)
        let path = volume.path + "/a.png"
        let fd = try source(path, bytes)
        defer { fd.close() }
        try fd.sync()
        guard case .success(let saved) = store.take(request(bytes), from: fd, ways: ways) else {
            Issue.record("not taken")
            return
        }
        #expect(ways.last == .reflink, "\(said.lines)")
        #expect(said.lines == ["takes photos by reflink: no byte copied, and the source stays the writer's own"])
        let photoPath = volume.path + "/photos/" + saved.name
        #expect(readFile(photoPath) == bytes)
        #expect(try status(photoPath).inode != status(path).inode)
        #expect(store.ledger.total == 0)
        let extents = runTool(["filefrag", "-v", photoPath])
        #expect(extents.output.contains("shared"), "filefrag shows no shared extent: \(extents.output)")
        // The writer writes in place: only the source changes.
        let writer = try FileDescriptor.open(path, flags: [.writeOnly])
        try writer.writeAll([UInt8](repeating: 0x55, count: 1 << 20))
        writer.close()
        #expect(readFile(photoPath) == bytes)
    }

    @Test("an inbox on another file system than the photos directory: neither linked nor cloned but copied, said why")
    func otherFileSystem() throws {
        let volume = try ReflinkVolume()
        defer { volume.remove() }
        let f = try StoreFixture()
        let said = SaidLines()
        let ways = said.ways(links: true)
        let bytes = makePNG(size: 100_000, seed: 10)
        let fd = try source(volume.path + "/a.png", bytes)
        defer { fd.close() }
        guard case .success(let saved) = f.store.take(request(bytes), from: fd, ways: ways) else {
            Issue.record("not taken")
            return
        }
        #expect(ways.last == .copy)
        #expect(readFile(f.dir + "/" + saved.name) == bytes)
        #expect(said.lines.count == 1, "\(said.lines)")
        #expect(said.lines.first?.contains("not on the photos directory's file system") == true, "\(said.lines)")
        #expect(said.lines.first?.contains("cannot clone") == true, "\(said.lines)")
    }
}
