import Foundation
import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// Runs `ptk` on `daemon`'s received-photos directory.
func library(_ daemon: DaemonProcess, _ args: [String], environment: [String: String] = [:]) throws -> Finished {
    try run(
        "ptk", ["--config", "/dev/null", "--dir", daemon.dir, "--state-dir", daemon.stateDir] + args,
        environment: environment)
}

/// `ptk list --json` of `daemon`, parsed.
func listed(_ daemon: DaemonProcess) throws -> [[String: Any]] {
    let r = try library(daemon, ["list", "--json"])
    guard r.status == 0, let list = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
    else {
        throw HarnessError("ptk list --json: \(r.status) \(r.stderr)")
    }
    return list
}

/// Waits until the library lists exactly `names` (in any order), all indexed.
func waitForIndex(_ daemon: DaemonProcess, _ names: Set<String>, timeout: Double = 60) -> Bool {
    eventually(timeout) {
        guard let list = try? listed(daemon) else { return false }
        return Set(list.compactMap { $0["Name"] as? String }) == names
            && list.allSatisfy { $0["Indexed"] as? Bool == true }
    }
}

/// A photo of width x height in `dir`, with smooth content (quick to make, compresses well).
func imageFile(_ dir: String, _ name: String, width: Int, height: Int, seed: Int = 1) -> String {
    let path = dir + "/" + name
    writeFile(
        path,
        makeImagePNG(width: width, height: height) { x, y in
            [
                UInt8(truncatingIfNeeded: x + seed), UInt8(truncatingIfNeeded: y * seed),
                UInt8(truncatingIfNeeded: x ^ y),
            ]
        })
    return path
}

/// (width, height) from a PNG's IHDR.
func pngSize(_ bytes: [UInt8]) -> [Int] {
    guard bytes.count > 24 else { return [] }
    let w = Int(bytes[16]) << 24 | Int(bytes[17]) << 16 | Int(bytes[18]) << 8 | Int(bytes[19])
    let h = Int(bytes[20]) << 24 | Int(bytes[21]) << 16 | Int(bytes[22]) << 8 | Int(bytes[23])
    return [w, h]
}

/// Every row of the library matches a file (size and SHA-256) and has its thumbnail, every
/// PNG file has a row, and no thumbnail is left without one. Returns the problems found.
func consistencyProblems(_ dir: String) throws -> [String] {
    let lib = try PhotoLibrary(directory: dir, create: false)
    var problems: [String] = []
    let rows = try lib.all()
    let files = Set(listDirectory(dir).filter { PhotoLibrary.isPhotoName($0) })
    if Set(rows.map(\.name)) != files {
        problems.append("rows \(rows.map(\.name).sorted()) != files \(files.sorted())")
    }
    if rows.count != Set(rows.map(\.name)).count { problems.append("duplicate rows") }
    for row in rows {
        guard let bytes = readFile(dir + "/" + row.name) else { continue }
        if row.sha256 != SHA256.hex(of: bytes) || row.size != Int64(bytes.count) {
            problems.append("\(row.name): size or hash differs from the file")
        }
        if !row.indexed { problems.append("\(row.name): not indexed") }
        for side in Thumbnailer.gallerySides where row.hasThumbnail {
            let magic: [UInt8] = row.thumbnailType == .png ? [0x89, 0x50, 0x4E, 0x47] : [0xFF, 0xD8, 0xFF]
            if !(readFile(lib.thumbnailFolder + "/" + row.thumbnailFileName(side: side)!) ?? []).starts(with: magic) {
                problems.append("\(row.name): thumbnail \(side) missing")
            }
        }
    }
    // A thumbnail being written now ("<id>-360.jpg.tmp.<pid>" of a running ptkd) is not a leftover:
    // the sweep removes only those of processes that are gone.
    let thumbnails = Set(
        listDirectory(lib.thumbnailFolder).filter { name in
            let parts = name.split(separator: ".")
            return !(parts.count == 4 && parts[2] == "tmp" && Int32(parts[3]).map(processExists) == true)
        })
    let expected = Set(rows.flatMap { row in Thumbnailer.gallerySides.compactMap { row.thumbnailFileName(side: $0) } })
    if thumbnails != expected {
        problems.append(
            "thumbnails \(thumbnails.subtracting(expected).sorted()) have no row; \(expected.subtracting(thumbnails).sorted()) are missing"
        )
    }
    if try lib.database.firstText("PRAGMA integrity_check") != "ok" { problems.append("integrity_check failed") }
    return problems
}

@Suite(.serialized, .tags(.endToEnd)) struct LibraryEndToEndTests {
    @Test func sentPhotosAreListedShownAndThumbnailedWithTheirSender() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory()
        defer { removeTree(src) }
        let wide = imageFile(src, "wide.png", width: 600, height: 400)
        let suite = pngSuiteDirectory() + "/basn6a08.png"
        // One after the other, so that the received times order them.
        let sent = try send(d, [wide], ["--name", "Kitchen laptop"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try send(d, [suite], ["--name", "Kitchen laptop"]).status == 0)
        #expect(waitForIndex(d, ["wide.png", "basn6a08.png"]))
        let sender = try senderID(config: d.senderConfig)

        let list = try library(d, ["list"])
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let wideLine = try #require(lines.first { $0.hasPrefix("wide.png") })
        #expect(
            wideLine.contains("600x400") && wideLine.contains("Kitchen laptop") && wideLine.hasSuffix("-"),
            "\(wideLine)")
        #expect(list.stderr.contains("2 photos in \(d.dir)"), "\(list.stderr)")

        let json = try listed(d)
        let entry = try #require(json.first { $0["Name"] as? String == "wide.png" })
        #expect(entry["SenderName"] as? String == "Kitchen laptop")
        #expect(entry["SenderID"] as? String == sender.description)
        #expect(entry["SHA256"] as? String == SHA256.hex(of: readFile(wide)!))
        #expect((entry["SenderAddress"] as? String)?.hasPrefix("127.0.0.1:") == true)
        #expect(entry["Width"] as? Int == 600 && entry["Height"] as? Int == 400 && entry["ColorType"] as? Int == 2)
        // The thumbnail named as soon as it is made; no preview for a small PNG (the page shows the photo).
        let listedThumbnail = try #require(entry["Thumbnail"] as? String)
        #expect(
            listedThumbnail.hasPrefix(".ptk/thumbnails/") && listedThumbnail.contains("-360.")
                && fileExists(d.dir + "/" + listedThumbnail), "\(listedThumbnail)")
        #expect(entry["Preview"] == nil)

        let show = try library(d, ["show", "wide"])
        #expect(show.status == 0)
        #expect(show.stdout.contains("image:     PNG, 600x400, 8-bit truecolour"), "\(show.stdout)")
        #expect(
            show.stdout.contains("\"Kitchen laptop\" from 127.0.0.1:") && show.stdout.contains("device \(sender)"),
            "\(show.stdout)")
        #expect(show.stdout.contains("thumbnail: \(d.dir)/.ptk/thumbnails/"), "\(show.stdout)")
        #expect(show.stdout.contains("preview:   none needed"), "\(show.stdout)")

        // The thumbnail: to a file, and to a pipe.
        let out = src + "/t.png"
        let t = try library(d, ["thumbnail", "wide.png", "-o", out])
        #expect(t.status == 0, "\(t.stderr)")
        let thumb = try #require(readFile(out))
        // The largest gallery thumbnail: a JPEG (a PNG from a thumbnailer that makes only PNGs).
        #expect(thumb.starts(with: [0xFF, 0xD8, 0xFF]) || pngSize(thumb) == [360, 240], "\(thumb.prefix(8))")
        #expect(
            thumb
                == readFile(
                    d.dir + "/.ptk/thumbnails/"
                        + (try #require(
                            try PhotoLibrary(directory: d.dir, create: false).find("wide").thumbnailFileName(side: 360)))
                ))
        // (The harness reads standard output as text: the ending of a JPEG or the PNG's ASCII chunk names survive that.)
        let piped = try library(d, ["thumbnail", "wide"])
        #expect(
            piped.status == 0 && piped.stdout.utf8.count > 100,
            "\(piped.stdout.suffix(8).unicodeScalars.map { $0.value })")
        // A photo with transparency: a PNG.
        #expect(try library(d, ["thumbnail", "basn6a08", "-o", "-"]).stdout.contains("IHDR"))

        // Sorting, filtering, misses and usage errors.
        #expect(try library(d, ["list", "--sort", "size"]).stdout.hasPrefix("basn6a08.png"))
        #expect(try library(d, ["list", "--sort", "name"]).stdout.hasPrefix("basn6a08.png"))
        #expect(
            try library(d, ["list", "--from", sender.compact.prefix(8).lowercased()]).stdout.split(separator: "\n")
                .count == 2)
        #expect(try library(d, ["list", "--from", "someone else"]).stdout.isEmpty)
        let miss = try library(d, ["show", "wdie"])
        #expect(miss.status == 1)
        #expect(
            miss.stderr.contains("no photo named 'wdie'") && miss.stderr.contains("did you mean 'wide.png'?"),
            "\(miss.stderr)")
        #expect(try library(d, ["list", "--sort", "colour"]).status == 64)
        let misplaced = try library(d, ["rename", "wide", "--json", "x"])
        #expect(misplaced.status == 64)
        #expect(
            misplaced.stderr.hasPrefix(
                "ptk: option '--json' does not apply to 'rename'; it goes with 'list', 'show', 'watch', 'app-password add' and 'app-password list'\n"
            ), "\(misplaced.stderr)")
        let bare = try library(d, ["show"])
        #expect(bare.status == 64)
        #expect(bare.stderr.hasPrefix("ptk: missing NAME: ptk show NAME [--json]\n"), "\(bare.stderr)")
        #expect(readFile(d.dir + "/wide.png") != nil, "a usage error changed nothing")

        // The gallery: newest first, linking to the photos.
        let g = try library(d, ["gallery"])
        #expect(g.status == 0, "\(g.stderr)")
        let html = String(decoding: try #require(readFile(d.dir + "/.ptk/gallery/index.html")), as: UTF8.self)
        #expect(html.contains("href=\"../../wide.png\"") && html.contains("href=\"../../basn6a08.png\""))
        #expect(
            try #require(html.range(of: "basn6a08.png<")).lowerBound
                < (try #require(html.range(of: "wide.png<"))).lowerBound, "newest first")
    }

    @Test func editsAndPackagesWorkThroughTheRealCommands() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory()
        defer { removeTree(src) }
        let a = imageFile(src, "a.png", width: 50, height: 40, seed: 1)
        let b = imageFile(src, "b.png", width: 50, height: 40, seed: 2)
        #expect(try send(d, [a, b]).status == 0)
        #expect(waitForIndex(d, ["a.png", "b.png"]))
        #expect(try library(d, ["rename", "a", "holiday"]).stdout == "renamed 'a' to 'holiday.png'\n")
        let taken = try library(d, ["rename", "holiday", "b.png"])
        #expect(taken.status == 1 && taken.stderr.contains("never replaces"), "\(taken.stderr)")
        #expect(try library(d, ["note", "holiday", "at", "the", "lake"]).status == 0)
        #expect(try library(d, ["rate", "holiday.png", "5"]).status == 0)
        #expect(try library(d, ["rate", "holiday", "9"]).status == 64)
        #expect(readFile(d.dir + "/holiday.png") == readFile(a))

        // Export, then send the package: the receiver keeps these bytes already (duplicates =
        // skip), so nothing new is stored and the photo already there is named.
        let e = try library(d, ["export", "holiday", "b", "-o", src])
        #expect(e.status == 0, "\(e.stderr)")
        #expect(readFile(src + "/holiday.ptk/photo.data") == readFile(a))
        let meta = try #require(
            try JSONSerialization.jsonObject(with: Data(readFile(src + "/holiday.ptk/photo.metadata")!))
                as? [String: Any])
        #expect(meta["Version"] as? Int == 1 && meta["Note"] as? String == "at the lake" && meta["Rating"] as? Int == 5)
        #expect(
            (meta["Thumbnail"] as? String).flatMap { Data(base64Encoded: $0) }.map { pngSize(Array($0)) } == [50, 40])
        #expect(meta["Preview"] == nil)
        #expect(try library(d, ["export", "holiday", "-o", src]).status == 1, "never replaces a package")
        let viaSend = try send(d, [src + "/holiday.ptk"])
        #expect(viaSend.status == 0, "\(viaSend.stderr)")
        #expect(
            viaSend.stdout == src + "/holiday.ptk/photo.data: already there as \"holiday.png\"\n", "\(viaSend.stdout)")
        #expect(!fileExists(d.dir + "/holiday (2).png"))

        // Import keeps the metadata; a newer Version is refused by both.
        #expect(try library(d, ["rm", "holiday.png", "b"]).status == 0)
        #expect(!fileExists(d.dir + "/holiday.png") && !fileExists(d.dir + "/b.png"))
        let i = try library(d, ["import", src + "/holiday.ptk", src + "/b.ptk"])
        #expect(i.status == 0, "\(i.stderr)")
        #expect(i.stdout.contains("as 'holiday.png'") && i.stdout.contains("as 'b.png'"), "\(i.stdout)")
        #expect(readFile(d.dir + "/holiday.png") == readFile(a))
        let shown = try library(d, ["show", "holiday", "--json"])
        let imported = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        #expect(imported["Note"] as? String == "at the lake" && imported["Rating"] as? Int == 5)
        #expect(imported["Received"] as? String == meta["Received"] as? String)
        let text = String(decoding: readFile(src + "/b.ptk/photo.metadata")!, as: UTF8.self)
        writeFile(
            src + "/b.ptk/photo.metadata",
            Array(text.replacingOccurrences(of: "\"Version\" : 1", with: "\"Version\" : 2").utf8))
        let newer = try library(d, ["import", src + "/b.ptk"])
        #expect(newer.status == 65 && newer.stderr.contains("Version 2 package"), "\(newer.stderr)")
        let newerSend = try send(d, [src + "/b.ptk"])
        #expect(newerSend.status == 66 && newerSend.stderr.contains("Version 2 package"), "\(newerSend.stderr)")
        #expect(waitForIndex(d, ["holiday.png", "b.png"]))
        let problems = try consistencyProblems(d.dir)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func hostilePhotosAreIndexedWithoutThumbnailAndPtkdKeepsServing() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory()
        defer { removeTree(src) }
        let header = ihdr(width: 64, height: 64, bitDepth: 8, colorType: 2)
        let rows = [UInt8](repeating: 0, count: (64 * 3 + 1) * 64)
        var badFilter = rows
        badFilter[(64 * 3 + 1) * 3] = 9
        let bombRows = [UInt8](repeating: 0, count: (6000 + 1) * 6000)
        let hostile: [(String, [UInt8], String)] = [
            (
                "zlib.png", assemblePNG(ihdr: header, idat: [0x78, 0x9C] + Array(repeating: 0xFF, count: 500)),
                "not decodable"
            ),
            ("filter.png", assemblePNG(ihdr: header, idat: zlibCompress(badFilter)), "not decodable"),
            ("short.png", assemblePNG(ihdr: header, idat: zlibCompress(Array(rows.prefix(1000)))), "not decodable"),
            ("long.png", assemblePNG(ihdr: header, idat: zlibCompress(rows + rows + rows)), ""),
            (
                "bomb.png",
                assemblePNG(
                    ihdr: ihdr(width: 6000, height: 6000, bitDepth: 8, colorType: 0),
                    idat: zlibCompress(bombRows, level: 9)), ""
            ),
            (
                "claim.png",
                assemblePNG(
                    ihdr: ihdr(width: 65535, height: 65535, bitDepth: 16, colorType: 6), idat: zlibCompress([0, 0, 0])),
                "over the 200.0-megapixel limit"
            ),
        ]
        var paths: [String] = []
        for (name, bytes, _) in hostile {
            writeFile(src + "/" + name, bytes)
            paths.append(src + "/" + name)
        }
        let r = try send(d, paths)
        #expect(r.status == 0, "chunks are well formed, so they are saved: \(r.stderr)")
        let good = imageFile(src, "good.png", width: 20, height: 20)
        #expect(try send(d, [good]).status == 0)
        #expect(waitForIndex(d, Set(hostile.map(\.0) + ["good.png"])))
        for (name, _, problem) in hostile {
            let show = try library(d, ["show", name])
            if problem.isEmpty {
                #expect(show.stdout.contains("thumbnail: \(d.dir)/.ptk/thumbnails/"), "\(name): \(show.stdout)")
            } else {
                #expect(
                    show.stdout.contains("thumbnail: none: ") && show.stdout.contains(problem),
                    "\(name): \(show.stdout)")
            }
        }
        #expect(
            try library(d, ["show", "claim"]).stdout.contains(
                "image:     PNG, 65535x65535, 16-bit truecolour with alpha"))
        #expect(d.process.isRunning)
        #expect(d.log.contains("library: no thumbnail for \"zlib.png\""), "\(d.log)")
        // And it keeps serving.
        let after = imageFile(src, "after.png", width: 10, height: 10)
        #expect(try send(d, [after]).status == 0)
        #expect(waitForIndex(d, Set(hostile.map(\.0) + ["good.png", "after.png"])))
        let problems = try consistencyProblems(d.dir)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func theIndexSurvivesKill9DuringIndexing() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        let dir = root + "/photos"
        mkdir(dir, 0o755)
        let variants = (0..<4).map { seed in
            makeImagePNG(width: 900, height: 700) { x, y in
                [UInt8(truncatingIfNeeded: x + seed), UInt8(truncatingIfNeeded: y), 7]
            }
        }
        for i in 0..<120 { writeFile(dir + "/p\(i).png", variants[i % 4]) }
        var d: DaemonProcess? = try DaemonProcess(root: root)
        let lib = try #require(eventuallyValue { try? PhotoLibrary(directory: dir, create: false) })
        // Kill it while some photos are indexed and some are not.
        #expect(
            eventually(60) {
                (1...100).contains((try? lib.pendingCount()) ?? 0) && ((try? lib.all().count) ?? 0) == 120
            })
        #expect(d?.stop(signal: SIGKILL) != 0)
        d = nil
        let left = try lib.pendingCount()
        #expect(left > 0)
        d = try DaemonProcess(root: root)
        #expect(eventually(120) { (try? lib.pendingCount()) == 0 })
        #expect(try lib.all().count == 120)
        let problems = try consistencyProblems(dir)
        #expect(problems.isEmpty, "\(problems)")
        #expect(d?.log.contains("\(left) photo(s) to index") == true, "\(d?.log ?? "")")
    }

    @Test func ptkEditsWhilePtkdSavesUnderLoadLoseNothing() throws {
        let d = try DaemonProcess()
        let src = makeTemporaryDirectory()
        defer { removeTree(src) }
        let first = (0..<24).map { imageFile(src, "p\($0).png", width: 64, height: 48, seed: $0) }
        let sent = try send(d, first)
        #expect(sent.status == 0, "ptk-send: \(sent.stderr)\nptkd: \(d.log)")
        #expect(waitForIndex(d, Set((0..<24).map { "p\($0).png" })))
        let later = (0..<48).map { imageFile(src, "n\($0).png", width: 300, height: 200, seed: 100 + $0) }
        let senders = DispatchGroup()
        let failures = LockedCount()
        for part in 0..<4 {
            DispatchQueue.global().async(group: senders) {
                let files = Array(later[(part * 12)..<(part * 12 + 12)])
                if (try? send(d, files, ["--name", "sender \(part)"]).status) != 0 { failures.add() }
            }
        }
        var expected: Set<String> = Set(later.map { ($0 as NSString).lastPathComponent })
        var notes: [String: String] = [:]
        var ratings: [String: Int] = [:]
        for i in 0..<24 {
            switch i % 4 {
            case 0:
                #expect(try library(d, ["rename", "p\(i)", "renamed \(i)"]).status == 0)
                expected.insert("renamed \(i).png")
            case 1:
                #expect(try library(d, ["note", "p\(i)", "note \(i)"]).status == 0)
                notes["p\(i).png"] = "note \(i)"
                expected.insert("p\(i).png")
            case 2:
                #expect(try library(d, ["rate", "p\(i)", "\(i % 6)"]).status == 0)
                ratings["p\(i).png"] = i % 6
                expected.insert("p\(i).png")
            default:
                #expect(try library(d, ["rm", "p\(i)"]).status == 0)
            }
        }
        senders.wait()
        #expect(failures.value == 0)
        #expect(waitForIndex(d, expected))
        let problems = try consistencyProblems(d.dir)
        #expect(problems.isEmpty, "\(problems)")
        let lib = try PhotoLibrary(directory: d.dir, create: false)
        for (name, note) in notes { #expect(try lib.find(name).note == note) }
        for (name, rating) in ratings { #expect(try lib.find(name).rating == rating) }
        for i in stride(from: 0, to: 24, by: 4) { #expect(readFile(d.dir + "/renamed \(i).png") == readFile(first[i])) }
        for (i, path) in later.enumerated() {
            let p = try lib.find((path as NSString).lastPathComponent)
            #expect(p.senderName == "sender \(i / 12)")
            #expect(p.hasThumbnail)
        }
    }

    @Test(
        .enabled(
            if: geteuid() == 0, "needs root: root's ptk working in another user's directory (CI runs the tests as root)"
        ), .tags(.root))
    func filesRootCreatesBelongToTheDirectorysOwner() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        // Root's ptk does the work as 4242 (the directory's owner), who must reach it.
        #expect(chmod(root, 0o755) == 0)
        let dir = root + "/photos"
        mkdir(dir, 0o755)
        #expect(chown(dir, 4242, 4243) == 0)
        let d = try DaemonProcess(root: root)
        let src = makeTemporaryDirectory()
        defer { removeTree(src) }
        #expect(try send(d, [imageFile(src, "x.png", width: 30, height: 30)]).status == 0)
        #expect(waitForIndex(d, ["x.png"]))
        #expect(try library(d, ["export", "x", "-o", src]).status == 0)
        #expect(try library(d, ["import", src + "/x.ptk"]).status == 0)
        #expect(try library(d, ["note", "x", "root was here"]).status == 0)
        #expect(try library(d, ["rename", "x (2)", "y"]).status == 0)
        #expect(try library(d, ["gallery"]).status == 0)
        var notOwned: [String] = []
        func walk(_ path: String) {
            var st = stat()
            guard lstat(path, &st) == 0 else { return }
            if st.st_uid != 4242 || st.st_gid != 4243 { notOwned.append("\(path) \(st.st_uid):\(st.st_gid)") }
            if (st.st_mode & S_IFMT) == S_IFDIR { for name in listDirectory(path) { walk(path + "/" + name) } }
        }
        walk(dir)
        #expect(fileExists(dir + "/.ptk/index.sqlite-wal"))
        #expect(notOwned == [])
    }

    @Test func aThumbnailOfA200MBPhotoKeepsMemoryFlat() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        let dir = root + "/photos"
        mkdir(dir, 0o755)
        let size = writeLargePNG(dir + "/large.png", width: 8192, height: 8192)
        #expect(size > 200_000_000)
        let d = try DaemonProcess(root: root)
        let lib = try #require(eventuallyValue { try? PhotoLibrary(directory: dir, create: false) })
        #expect(eventually(300) { (try? lib.pendingCount()) == 0 && (try? lib.all().count) == 1 })
        let photo = try lib.find("large.png")
        #expect(photo.hasThumbnail && photo.width == 8192)
        let peak = try #require(peakResidentBytes(of: d.process.processIdentifier))
        // A few rows (8192 x 4 bytes each), the thumbnail's sums and a 1 MiB hash buffer: the
        // photo itself (200 MB) is never held.
        #expect(peak < 64 << 20, "peak RSS \(peak >> 20) MB")
        print("200 MB photo: ptkd peak RSS \(peak >> 20) MB")
    }

    @Test(
        "a JPEG of 1,600 APP1 segments of 64 KB (105 MB) and 2 MB of ICC chunks is thumbnailed with ptkd's memory flat: only the first Exif APP1 is kept (issue 54)"
    )
    func aJPEGsSegmentsAreNotAllKept() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        let dir = root + "/photos"
        mkdir(dir, 0o755)
        let jpeg = makeJPEG(width: 64, height: 48, seed: 7)
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let exif = segment(0xE1, Array("Exif\0\0".utf8) + exifTIFF(EXIFFields(orientation: 6)))
        let filler = segment(0xE1, Array("Exif\0\0".utf8) + [UInt8](repeating: 0x41, count: 65_000))
        let icc = (1...35).flatMap {
            segment(0xE2, Array("ICC_PROFILE".utf8) + [0, UInt8($0), 35] + [UInt8](repeating: 7, count: 60_000))
        }
        let fd = try FileDescriptor.open(dir + "/segments.jpg", flags: [.writeOnly, .create, .exclusive], mode: 0o644)
        try fd.writeAll(Array(jpeg[..<2]) + exif + icc)
        for _ in 0..<1_600 { try fd.writeAll(filler) }
        try fd.writeAll(Array(jpeg[2...]))
        fd.close()
        let d = try DaemonProcess(root: root)
        let lib = try #require(eventuallyValue { try? PhotoLibrary(directory: dir, create: false) })
        #expect(eventually(120) { (try? lib.pendingCount()) == 0 && (try? lib.all().count) == 1 })
        let photo = try lib.find("segments.jpg")
        #expect(photo.hasThumbnail && photo.orientation == 6, "\(photo)")
        let peak = try #require(peakResidentBytes(of: d.process.processIdentifier))
        #expect(peak < 64 << 20, "peak RSS \(peak >> 20) MB")
        print("105 MB of APP1 segments: ptkd peak RSS \(peak >> 20) MB")
    }

    @Test func tenThousandPhotosList() throws {
        let root = makeTemporaryDirectory("ptk-e2e")
        defer { removeTree(root) }
        let dir = root + "/photos"
        mkdir(dir, 0o755)
        let lib = try PhotoLibrary(directory: dir, create: true)
        try lib.record(
            (0..<10_000).map { i in
                Arrival(
                    name: String(format: "IMG_%05d.png", i), size: Int64(10_000 + (i * 7919) % 5000),
                    sha256: String(repeating: "a", count: 64),
                    received: WallTime(milliseconds: 1_700_000_000_000 + Int64(i) * 1000), senderName: "phone \(i % 3)",
                    senderAddress: "192.0.2.1:1", senderID: nil)
            })
        let r = try run("ptk", ["--config", "/dev/null", "--dir", dir, "list"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 10_000)
        #expect(lines.first?.hasPrefix("IMG_00000.png") == true && lines.last?.hasPrefix("IMG_09999.png") == true)
        #expect(r.stderr.contains("10000 photos in \(dir), 10000 still being indexed"), "\(r.stderr)")
        let bySize = try run(
            "ptk", ["--config", "/dev/null", "--dir", dir, "list", "--sort", "size", "--from", "phone 1"]
        ).stdout.split(separator: "\n")
        #expect(bySize.count == 3_333)
    }
}

/// Polls until `make` gives a value (up to `timeout` seconds).
func eventuallyValue<T>(_ timeout: Double = 30, _ make: () -> T?) -> T? {
    let deadline = Date() + timeout
    while Date() < deadline {
        if let v = make() { return v }
        usleep(20_000)
    }
    return make()
}

final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

@Suite("ptk's output", .tags(.endToEnd))
struct AdminOutputTests {
    @Test("ptk list into a full disk is an error (74), not a short list")
    func listToFullDisk() throws {
        let dir = makeTemporaryDirectory("ptk-full")
        defer { removeTree(dir) }
        _ = photo(dir, "a.png", size: 5_000, seed: 3)
        _ = try PhotoLibrary(directory: dir, create: true).reconcile()
        let r = try run(
            "/bin/sh", ["-c", "\"$0\" --config /dev/null --dir \"$1\" list > /dev/full", binDirectory + "/ptk", dir],
            absolute: true)
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("ptk: cannot write to standard output: "), "\(r.stderr)")
    }
}
