import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKClient

/// Makes `path` (bytes) a folder, or a file of `bytes`; returns it for `unmake`.
@discardableResult
private func make(_ path: BytePath, _ bytes: [UInt8]? = nil) -> BytePath {
    let c = (path.bytes + [0]).map { CChar(bitPattern: $0) }
    if let bytes {
        let fd = open(c, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    } else {
        mkdir(c, 0o755)
    }
    return path
}

/// Removes what `make` made, deepest first (removeTree cannot name these).
private func unmake(_ paths: [BytePath]) {
    for p in paths.reversed() {
        let c = (p.bytes + [0]).map { CChar(bitPattern: $0) }
        if unlink(c) != 0 { rmdir(c) }
    }
}

/// Files and folders whose names are not UTF-8 (issue 41, finding 4): opened by their bytes,
/// offered with U+FFFD, named in messages with \xE9.
@Suite("Local files whose names are not UTF-8", .tags(.unit))
struct ByteNameTests {
    @Test("a file, a folder's entries and a package whose names are not UTF-8 are read by their bytes")
    func byteNames() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        let png = makePNG(size: 20_000, seed: 6)
        let base = BytePath(dir)
        let e9 = BytePath(bytes: [0x63, 0x61, 0x66, 0xE9])  // "caf\xE9"
        var made: [BytePath] = []
        defer { unmake(made) }

        let file = make(base.appending(BytePath(bytes: e9.bytes + Array(".png".utf8))), png)
        made.append(file)
        let f = try LocalFile.check(file)
        #expect(f.name == "caf\u{FFFD}.png" && f.nameReplaced && f.path == dir + "/caf\\xE9.png" && f.location == file)
        #expect(try f.sha256() == SHA256.hex(of: png))
        // Its name as Swift decodes it (the command line's) names no file.
        #expect(throws: LocalFileError.self) { try LocalFile.check(dir + "/caf\u{FFFD}.png") }
        do {
            _ = try LocalFile.check(base.appending(BytePath(bytes: e9.bytes + [0xFF])))
            Issue.record("a missing file was taken")
        } catch {
            #expect(error.path == dir + "/caf\\xE9\\xFF", "\(error)")
        }

        // A folder of such names, flat and with --keep-folders.
        let folder = make(base.appending(BytePath(bytes: Array("d".utf8) + [0xE8])))
        let inner = make(folder.appending(BytePath(bytes: Array("b".utf8) + [0xE8] + Array(".png".utf8))), png)
        let text = make(
            folder.appending(BytePath(bytes: Array("n".utf8) + [0xE8] + Array(".txt".utf8))), Array("x".utf8))
        made += [folder, inner, text]
        let flat = try SendList.collect([folder], keepFolders: false, follow: false)
        #expect(flat.files.map(\.name) == ["b\u{FFFD}.png"] && flat.files[0].nameReplaced)
        #expect(flat.leftOut.map(\.path) == [dir + "/d\\xE8/n\\xE8.txt"])
        let kept = try SendList.collect([base], keepFolders: true, follow: false)
        #expect(kept.files.map(\.name) == ["caf\u{FFFD}.png", "d\u{FFFD}/b\u{FFFD}.png"], "\(kept.files.map(\.name))")
        #expect(kept.files.allSatisfy { $0.nameReplaced })
        #expect(try kept.files[1].sha256() == SHA256.hex(of: png))

        // A package: its metadata read through the folder's bytes; errors name it with \xE9.
        let package = make(base.appending(BytePath(bytes: e9.bytes + Array(".ptk".utf8))))
        let data = make(package.appending("photo.data"), png)
        let metadata = make(package.appending("photo.metadata"), Array("{\"Version\": 1}".utf8))
        made += [package, data, metadata]
        let p = try LocalFile.check(package)
        #expect(p.name == "caf\u{FFFD}.png" && p.nameReplaced && p.size == Int64(png.count))
        make(package.appending("photo.metadata"), Array("{\"Version\": 9}".utf8))
        do {
            _ = try LocalFile.check(package)
            Issue.record("a Version 9 package was taken")
        } catch {
            #expect(
                error.reason.contains(dir + "/caf\\xE9.ptk is a Version 9 package") && !error.reason.contains("/proc/"),
                "\(error)")
        }
    }
}
