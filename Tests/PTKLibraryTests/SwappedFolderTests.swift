import Foundation
import Glibc
import PTKDigest
import PTKPhotoPages
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLibrary

/// Issue 54, second audit: writers that opened a library folder beneath the directory to check
/// it, closed it, then wrote by its path: the service user swapped `.ptk/gallery` for a link
/// right after the check (inotify's IN_OPEN told it when), and the page went through the link
/// into a folder of root's. Here the swap happens at exactly that open (`OpenGate` holds it
/// while the folder is exchanged with a link to a sentinel folder), run as root without taking
/// on anyone (defence in depth): nothing may reach the sentinel folder.
@Suite("Library folders swapped for links after they were opened", .serialized, .tags(.unit))
struct SwappedFolderTests {
    /// A folder (0700) with one file, and what it holds now.
    final class SentinelFolder {
        let path = makeTemporaryDirectory("ptk-sentinel")
        init() {
            chmod(path, 0o700)
            writeFile(path + "/keep", Array("root only\n".utf8))
        }
        var listing: [String] { listDirectory(path).sorted() }
        deinit { removeTree(path) }
    }

    /// Exchanges `folder` with a link to `target` (made beside it) at the first open of `folder`.
    func swapOnFirstOpen(_ folder: String, to target: String) throws -> (OpenGate, @Sendable () -> Int) {
        #expect(symlink(target, folder + ".evil") == 0)
        let swaps = Counter()
        let gate = try OpenGate([folder], includingThisProcess: true) { _, _ in
            if swaps.next() == 1 { exchangeNames(folder, folder + ".evil") }
        }
        return (gate, { swaps.value })
    }

    @Test("ptk gallery writes its page into the .ptk/gallery it opened, not through a link swapped in after the open")
    func galleryPage() throws {
        try #require(geteuid() == 0, "fanotify needs root")
        let f = Fixture()
        try f.receive("a.png", photoBytes(1))
        let gallery = f.directory + "/.ptk/gallery"
        #expect(mkdir(gallery, 0o755) == 0)
        let s = SentinelFolder()
        let (gate, swaps) = try swapOnFirstOpen(gallery, to: s.path)
        var result: Result<(path: String, photos: Int), LibraryError>
        do { result = .success(try f.library.gallery()) } catch { result = .failure(error) }
        gate.stop()
        #expect(swaps() >= 1, "the gallery folder was never opened")
        #expect(s.listing == ["keep"], "written through the link: \(s.listing)")
        // The page went into the folder that was opened (now at the other name).
        if case .success = result {
            #expect(fileExists(gallery + ".evil/index.html"), "\(listDirectory(gallery + ".evil"))")
        }
    }

    @Test("indexing writes thumbnails into the .ptk/thumbnails it opened, not through a link swapped in after the open")
    func indexingThumbnails() throws {
        try #require(geteuid() == 0, "fanotify needs root")
        let f = Fixture()
        _ = f.library
        let bytes = photoBytes(2, width: 500, height: 400)
        writeFile(f.directory + "/b.png", bytes)
        try f.library.record([
            Arrival(
                name: "b.png", size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), received: .now,
                senderName: "x", senderAddress: "192.0.2.1:1", senderID: nil)
        ])
        let thumbnails = f.directory + "/.ptk/thumbnails"
        let s = SentinelFolder()
        let (gate, swaps) = try swapOnFirstOpen(thumbnails, to: s.path)
        while let id = try f.library.pending(limit: 1).first { try f.library.index(id: id) }
        gate.stop()
        #expect(swaps() >= 1, "the thumbnails folder was never opened")
        #expect(s.listing == ["keep"], "written through the link: \(s.listing)")
        #expect(
            listDirectory(thumbnails + ".evil").contains { $0.hasSuffix("-360.jpg") },
            "\(listDirectory(thumbnails + ".evil"))")
    }

    @Test("a thumbnail larger than the library makes, or sparse, is not read (gallery copies and ptk thumbnail)")
    func thumbnailBounds() throws {
        let f = Fixture()
        let photo = try f.receive("c.png", photoBytes(3))
        let name = try #require(photo.thumbnailFileName(side: 360))
        let path = f.directory + "/.ptk/thumbnails/" + name
        let real = try #require(try f.library.thumbnail(of: photo, side: 360)).bytes
        #expect(real.count < Thumbnailer.largestThumbnailBytes / 8)
        // 1 MiB and one byte of real data; then a sparse file of 200 kB (within the bound).
        writeFile(path, [UInt8](repeating: 0x5A, count: Thumbnailer.largestThumbnailBytes + 1))
        #expect(throws: LibraryError.self) { _ = try f.library.thumbnail(of: photo, side: 360) }
        let fd = open(path, O_WRONLY | O_TRUNC)
        #expect(fd >= 0 && ftruncate(fd, 200_000) == 0)
        close(fd)
        var error: LibraryError?
        do { _ = try f.library.thumbnail(of: photo, side: 360) } catch let e { error = e }
        #expect(error?.description.contains("sparse") == true, "\(String(describing: error))")
        // A gallery outside the library leaves it out, says why, and copies nothing of it.
        let out = makeTemporaryDirectory("ptk-gallery-out")
        defer { removeTree(out) }
        var leftOut: [String] = []
        _ = try f.library.gallery(to: out, leavingOut: { leftOut.append($0) })
        #expect(
            listDirectory(out + "/thumbnails").isEmpty && leftOut.count == 1 && leftOut[0].contains("sparse"),
            "\(leftOut)")
        // Put back, it is copied.
        writeFile(path, real)
        _ = try f.library.gallery(to: out)
        #expect(readFile(out + "/thumbnails/" + name) == real)
    }

    @Test(
        "export copies nothing larger than max-file-size, nor anything that is not a photo of its type, even with an index row that agrees"
    )
    func exportBounds() throws {
        let f = Fixture()
        let bytes = photoBytes(4)
        try f.receive("d.png", bytes)
        let out = makeTemporaryDirectory("ptk-export-out")
        defer { removeTree(out) }
        // Larger than max-file-size: refused before any copy.
        f.library.maxFileSize = Int64(bytes.count - 1)
        var error: LibraryError?
        do { _ = try f.library.export("d", to: out) } catch let e { error = e }
        #expect(
            error?.kind == .badInput && error?.description.contains("max-file-size") == true,
            "\(String(describing: error))")
        #expect(listDirectory(out).isEmpty)
        f.library.maxFileSize = nil
        // Zeros of the same size, with the row's hash made to agree (the service user can).
        let zeros = [UInt8](repeating: 0, count: bytes.count)
        writeFile(f.directory + "/d.png", zeros)
        try f.library.database.execute("UPDATE photos SET sha256 = '\(SHA256.hex(of: zeros))'")
        error = nil
        do { _ = try f.library.export("d", to: out) } catch let e { error = e }
        #expect(
            error?.kind == .badInput && error?.description.contains("not a well-formed PNG") == true,
            "\(String(describing: error))")
        #expect(listDirectory(out).isEmpty, "\(listDirectory(out))")
    }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
    // `count` is read and written under `lock`.
    private let lock = NSLock()
    private var count = 0
    /// Adds one; returns the new count.
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
