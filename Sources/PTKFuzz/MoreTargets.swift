import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKLocalSend
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

extension FuzzTargets {
    /// Every target by the name fuzz/run.sh and the corpus folders use.
    public static let names = [
        "frames", "png", "jpeg", "heif", "thumbnail", "http", "localsend-json", "package", "trust", "config", "escape",
        "webdav", "video",
    ]

    /// The target called `name`, if there is one.
    public static func target(named name: String) -> ((UnsafeRawBufferPointer) -> Void)? {
        switch name {
        case "frames": return frames
        case "png": return png
        case "jpeg": return jpeg
        case "heif": return heif
        case "thumbnail": return thumbnail
        case "http": return http
        case "localsend-json": return localSendJSON
        case "package": return package
        case "trust": return trust
        case "config": return config
        case "escape": return escape
        case "webdav": return webdav
        case "video": return video
        default: return nil
        }
    }

    /// The streaming JPEG check over arbitrary bytes, fed in pieces whose sizes come from the
    /// input; it must agree with a whole-buffer run.
    public static func jpeg(_ data: UnsafeRawBufferPointer) {
        agreesHoweverSplit(data, "JPEG") { JPEGValidator(totalSize: $0) }
    }

    /// The streaming HEIF box check over arbitrary bytes, fed in pieces whose sizes come from
    /// the input; it must agree with a whole-buffer run.
    public static func heif(_ data: UnsafeRawBufferPointer) {
        agreesHoweverSplit(data, "HEIF") { HEIFValidator(totalSize: $0) }
    }

    /// The thumbnailers (libpng, libjpeg-turbo, libheif and FFmpeg through CPNGThumb, Little
    /// CMS for colour profiles) on arbitrary bytes, with the limits as ptkd sets them: the first
    /// byte picks PNG, JPEG, HEIF (bit 2) or a video (bit 3) and a pixel limit.
    public static func thumbnail(_ data: UnsafeRawBufferPointer) {
        guard data.count > 0 else { return }
        let type: PhotoType =
            data[0] & 8 != 0 ? .mp4 : data[0] & 4 != 0 ? .heic : data[0] & 1 == 0 ? .png : .jpeg
        let pixelLimit: UInt64 = data[0] & 2 == 0 ? Thumbnailer.defaultPixelLimit : 4096
        let bytes = UnsafeRawBufferPointer(rebasing: data[1...])
        guard let fd = scratchFile() else { return }
        // The scratch file holds this input alone; if it cannot be written there is nothing to test.
        guard (try? fd.truncate(to: 0)) != nil, (try? fd.seek(to: 0)) != nil, (try? fd.writeAll(bytes)) != nil,
            (try? fd.seek(to: 0)) != nil
        else { return }  // (the same: nothing to test)
        let t = Thumbnailer.make(from: fd, type: type, pixelLimit: pixelLimit)
        if t.outcome == .made {
            precondition(t.thumbnailWidth >= 1 && t.thumbnailHeight >= 1, "an empty thumbnail was made")
            precondition(
                max(t.thumbnailWidth, t.thumbnailHeight) <= Thumbnailer.maxSide, "a thumbnail beyond the largest side")
            precondition(
                UInt64(t.width) * UInt64(t.height) <= pixelLimit, "a thumbnail of a photo over the pixel limit")
            precondition(t.png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "the thumbnail is not a PNG")
        }
    }

    /// The route table the `http` target matches each head against: an id capture and a choice of words.
    static let photoRoutes: RouteTable<Void> = {
        var routes = RouteTable<Void>()
        routes.add(
            [.get, .head], "/photo/{id}/{part}", captures: ["id": .id, "part": .oneOf(["original", "thumbnail"])]
        ) { _, _ throws(HTTPError) in
            Response(.ok)
        }
        return routes
    }()

    /// LocalSend's HTTP request parsing (http-parser through HTTPParser) over arbitrary bytes,
    /// fed in pieces whose sizes come from the input, bodies included, message after message.
    public static func http(_ data: UnsafeRawBufferPointer) {
        guard data.count > 0 else { return }
        let step = Int(data[0]) + 1
        let bytes = UnsafeRawBufferPointer(rebasing: data[1...])
        let parser = HTTPParser(.request)
        var i = 0
        var bodyBytes = 0
        feeding: while i < bytes.count {
            let end = min(i + step, bytes.count)
            var piece = UnsafeRawBufferPointer(rebasing: bytes[i..<end])
            i = end
            while !piece.isEmpty {
                let result: (used: Int, stop: HTTPParser.Stop?)
                do {
                    result = try parser.parse(piece) { body in
                        bodyBytes += body.count
                        return true
                    }
                } catch { break feeding }
                precondition(result.used <= piece.count, "the parser used more than it was given")
                if case .head(let head)? = result.stop {
                    precondition(head.target.utf8.count <= HTTPParser.maxTargetBytes, "a target over the limit")
                    _ = (head.path, head.query)
                    // The HTTP layer's readings of the same head: a route with an id capture, a
                    // Range over a file of any size, the cookies.
                    if case .found(_, let parameters) = photoRoutes.match(method: head.method, target: head.target) {
                        precondition((parameters.int64("id") ?? 0) > 0, "a photo id that is not positive")
                    }
                    for size: Int64 in [0, 1, 1000, Int64(bodyBytes) + 7] {
                        if case .part(let start, let end) = ByteRange(header: head.header("range"), size: size) {
                            precondition(0 <= start && start <= end && end < size, "a range outside the file")
                        }
                    }
                    _ = cookies(head.header("cookie"))
                }
                if result.used == 0 && result.stop == nil { break }
                piece = UnsafeRawBufferPointer(rebasing: piece[result.used...])
            }
        }
        // A finish on a cut message is an error, never a crash.
        _ = try? parser.finish()  // the fuzz input may end anywhere
        precondition(bodyBytes <= bytes.count)
    }

    /// LocalSend's JSON bodies (register and announcements, prepare-upload): the first byte
    /// picks the message. What decodes must encode and decode to the same value.
    public static func localSendJSON(_ data: UnsafeRawBufferPointer) {
        guard data.count > 0 else { return }
        let bytes = Array(data[1...])
        func roundTrip<T: Codable & Equatable>(_ type: T.Type) {
            // Most inputs are not this message: only those that are go further.
            guard let value = try? LocalSendJSON.decode(type, from: bytes) else { return }
            let again = try? LocalSendJSON.decode(type, from: LocalSendJSON.encode(value))  // nil is the finding
            precondition(again == value, "\(type) does not survive encoding")
        }
        switch data[0] % 4 {
        case 0: roundTrip(DeviceInfo.self)
        case 1: roundTrip(PrepareUploadRequest.self)
        case 2: roundTrip(FileInfo.self)
        default: roundTrip(PrepareUploadResponse.self)
        }
    }

    /// A `.ptk` package's photo.metadata, read as `ptk import` reads it.
    public static func package(_ data: UnsafeRawBufferPointer) {
        guard let dir = scratchDirectory() else { return }
        let fd: FileDescriptor
        // No scratch package: nothing to test.
        do {
            fd = try FileDescriptor.open(
                dir + "/fuzz.ptk/" + Package.metadataName, flags: [.writeOnly, .create, .truncate], mode: 0o600)
        } catch { return }
        // The metadata could not be written: nothing to test.
        guard (try? fd.writeAll(data)) != nil else {
            fd.close()
            return
        }
        fd.close()
        // Refused or read, never a crash.
        _ = try? PhotoMetadata.read(package: dir + "/fuzz.ptk")  // refusing is the answer to most inputs
    }

    /// The trust list and the pending senders as ptkd and ptk read them; a trust list written
    /// back as `ptk trust` writes it reads the same.
    public static func trust(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)
        let list = TrustStore.parseTrustList(text)
        let written = list.map { "\($0.id) \($0.name)\n" }.joined()
        precondition(TrustStore.parseTrustList(written) == list, "the trust list does not read back as written")
        _ = TrustStore.parsePending(text)
    }

    /// ptkd.conf as ptkd and ptk read it.
    public static func config(_ data: UnsafeRawBufferPointer) {
        var configuration = DaemonConfiguration()
        // A bad line is a usage error naming it, never a crash.
        _ = try? DaemonOptions.apply(
            // most lines are bad
            configFile: String(decoding: data, as: UTF8.self), path: "fuzz.conf", to: &configuration)
    }
}

/// A directory of this process's own, made once (with a package folder in it).
nonisolated(unsafe) private var scratch: String?
nonisolated(unsafe) private var scratchFD: FileDescriptor?

private func scratchDirectory() -> String? {
    if let scratch { return scratch }
    let dir = "/tmp/ptk-fuzz-\(processID())"
    // Without a scratch directory the targets that need files test nothing.
    guard (try? makeDirectories(dir + "/fuzz.ptk")) != nil else { return nil }
    scratch = dir
    return dir
}

private func scratchFile() -> FileDescriptor? {
    if let scratchFD { return scratchFD }
    guard let dir = scratchDirectory() else { return nil }
    // Without a scratch file the thumbnail target tests nothing.
    scratchFD = try? FileDescriptor.open(dir + "/photo", flags: [.readWrite, .create, .truncate], mode: 0o600)
    return scratchFD
}
