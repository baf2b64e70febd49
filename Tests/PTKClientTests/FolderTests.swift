import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKClient

/// `bytes` written at `dir`/`path`, its folders made.
private func put(_ dir: String, _ path: String, _ bytes: [UInt8]) { writeFile(in: dir, path, bytes) }

@Suite("Photo types and folders on the sending side", .tags(.unit))
struct FolderTests {
    let heic = readFile(fixturePath("heif/picture.heic")) ?? []

    @Test("a photo's type is sniffed from its first bytes, and its offered name made to fit it")
    func typesAndNames() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        put(dir, "IMG_1.png", makeJPEG(width: 16, height: 16))
        put(dir, "IMG_2.HEIC", heic)
        put(dir, "scan", makePNG(size: 2000))
        put(dir, "notes.png", Array("just text, not a photo".utf8))
        let jpeg = try LocalFile.check(dir + "/IMG_1.png")
        #expect(jpeg.type == .jpeg && jpeg.name == "IMG_1.jpg")
        let h = try LocalFile.check(dir + "/IMG_2.HEIC")
        #expect(h.type == .heic && h.name == "IMG_2.HEIC")
        let png = try LocalFile.check(dir + "/scan")
        #expect(png.type == .png && png.name == "scan.png")
        do {
            _ = try LocalFile.check(dir + "/notes.png")
            Issue.record("a text file passed")
        } catch {
            #expect(error.reason.contains("not a photo"), "\(error.reason)")
        }
        for (name, type, fitted) in [
            ("a.png", PhotoType.jpeg, "a.jpg"), ("a.JPEG", .jpeg, "a.JPEG"), ("a.heif", .heic, "a.heif"),
            ("a.jpg", .heic, "a.heic"), ("a", .heif, "a.heif"), ("a.tar", .png, "a.tar.png"),
        ] {
            #expect(type.fittedName(name) == fitted, "\(name) as \(type)")
        }
    }

    @Test(
        "a folder: photos in name order, recursively; hidden names, symbolic links and non-photos left out (listed); a package inside sent as its photo"
    )
    func walk() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        let root = dir + "/Pictures"
        put(root, "b.png", makePNG(size: 1000, seed: 1))
        put(root, "a.jpg", makeJPEG(width: 8, height: 8, seed: 2))
        put(root, "2024/summer/IMG_1.HEIC", heic)
        put(root, "2024/notes.txt", Array("text".utf8))
        put(root, ".hidden.png", makePNG(size: 1000, seed: 3))
        put(root, ".thumbnails/x.png", makePNG(size: 1000, seed: 4))
        put(root, "export.ptk/photo.data", makePNG(size: 1000, seed: 5))
        put(root, "export.ptk/photo.metadata", Array(#"{"Version": 1}"#.utf8))
        #expect(symlink(root + "/b.png", root + "/link.png") == 0)
        #expect(mkfifo(root + "/pipe", 0o600) == 0)
        let flat = try SendList.collect([root], keepFolders: false, follow: false)
        #expect(
            flat.files.map(\.path) == [
                root + "/2024/summer/IMG_1.HEIC", root + "/a.jpg", root + "/b.png", root + "/export.ptk/photo.data",
            ])
        #expect(flat.files.map(\.name) == ["IMG_1.HEIC", "a.jpg", "b.png", "export.png"])
        #expect(flat.files.map(\.type) == [.heic, .jpeg, .png, .png])
        #expect(flat.leftOut.map(\.path) == [root + "/2024/notes.txt", root + "/link.png", root + "/pipe"])
        #expect(
            flat.leftOut.map(\.reason) == [
                "not a photo", "a symbolic link (--follow sends what it points to)", "not a regular file",
            ])
        // --keep-folders: the path below the folder given; --follow: the link's target too.
        let kept = try SendList.collect([root + "/"], keepFolders: true, follow: true)
        #expect(kept.files.map(\.name) == ["2024/summer/IMG_1.HEIC", "a.jpg", "b.png", "export.png", "link.png"])
        // Files given beside the folder come in the order given.
        let mixed = try SendList.collect([root + "/b.png", root + "/2024"], keepFolders: true, follow: false)
        #expect(mixed.files.map(\.name) == ["b.png", "summer/IMG_1.HEIC"])
    }

    @Test(
        "--follow: a folder reached twice (a link to a parent) is walked once; a dangling link is left out with the reason"
    )
    func followLoops() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        put(dir, "top/a.png", makePNG(size: 1000, seed: 1))
        #expect(symlink(dir + "/top", dir + "/top/loop") == 0)
        #expect(symlink(dir + "/nowhere", dir + "/top/dangling") == 0)
        let c = try SendList.collect([dir + "/top"], keepFolders: true, follow: true)
        #expect(c.files.map(\.name) == ["a.png"])
        #expect(
            c.leftOut.count == 1 && c.leftOut[0].path.hasSuffix("/dangling")
                && c.leftOut[0].reason.contains("a symbolic link to nothing readable"))
    }

    @Test("a file given that is no photo stops the run before anything is sent; a folder of none gives nothing to send")
    func givenFiles() throws {
        let dir = makeTemporaryDirectory()
        defer { removeTree(dir) }
        put(dir, "notes.txt", Array("text".utf8))
        put(dir, "empty/readme.txt", Array("text".utf8))
        #expect(throws: LocalFileError.self) {
            try SendList.collect([dir + "/notes.txt"], keepFolders: false, follow: false)
        }
        let c = try SendList.collect([dir + "/empty"], keepFolders: false, follow: false)
        #expect(c.files.isEmpty && c.leftOut.count == 1)
    }
}
