import PTKConfiguration
import PTKDAV
import PTKHTTP
import PTKSystem
import PTKUpload
import PTKVocabulary

/// Chunked upload v2 (docs/OPERATIONS.md "Chunked uploads"), what the Nextcloud and ownCloud
/// clients send a large file with, below `/remote.php/dav/uploads/NAME` (NAME: the password's
/// own): MKCOL of an upload folder, PUT of its chunks (named by any 1 to 16 digits: an index or
/// a byte offset, as the client counts), PROPFIND Depth 1 of the folder to resume, and MOVE of
/// `ID/.file` to the photo's place, which assembles the chunks in numeric order as one body and
/// writes it exactly as a PUT of it there is (`put(_:_:_:size:reading:)`); DELETE aborts. The
/// folders are `DAVUploads`'.
extension DAVEndpoint {
    /// What a request names below the password's upload folders.
    enum UploadTarget: Equatable {
        case root
        case folder(String)
        case chunk(String, name: String, number: UInt64)
        /// `ID/.file`, the assembled photo a MOVE makes.
        case file(String)
    }

    /// The bounds of `DAVUploads` for these settings: a password may hold four photos of the
    /// largest size in upload folders.
    static func uploadLimits(_ settings: WebSettings) -> DAVUploads.Limits {
        DAVUploads.Limits(
            maxHeld: 4 * settings.maxFileSize, maxFileSize: settings.maxFileSize, minFree: settings.minFree)
    }

    /// The request's upload target: 400 for path tricks, an upload id or chunk name that is not
    /// one (`DAVUploads.validID`, `chunkNumber`), 404 below a chunk.
    func uploadTarget(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> UploadTarget {
        let parts: [String]
        switch DAVPath.parse(target: r.head.target, prefix: c.prefix) {
        case .success(let path): parts = path.components
        case .failure(let why): throw refusal(r, .badRequest, "the path is not one this door takes (\(why))")
        }
        guard let id = parts.first else { return .root }
        guard DAVUploads.validID(id) else {
            throw refusal(
                r, .badRequest,
                "an upload folder's name is 1 to 128 letters, digits, '.', '_' or '-', not starting with '.'")
        }
        if parts.count == 1 { return .folder(id) }
        guard parts.count == 2 else { throw refusal(r, .notFound, "an upload folder holds only chunks") }
        if parts[1] == ".file" { return .file(id) }
        guard let number = DAVUploads.chunkNumber(parts[1]) else {
            throw refusal(r, .badRequest, "a chunk's name is 1 to 16 digits")
        }
        return .chunk(id, name: parts[1], number: number)
    }

    /// A length header (`OC-Total-Length`): nil when absent, 400 when not a number of bytes.
    private func lengthHeader(_ r: Request, _ name: String) throws(HTTPError) -> Int64? {
        guard let text = r.head.header(name) else { return nil }
        guard let value = Int64(text), value >= 0 else {
            throw refusal(r, .badRequest, "\(name) must be a number of bytes")
        }
        return value
    }

    private func uploadRefusal(_ r: Request, _ why: DAVUploadRefusal) -> HTTPError {
        why.status == 401 ? removedRefusal(r) : refusal(r, HTTPStatus(why.status), why.reason)
    }

    func uploadMkcol(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let body = try body(r, limit: Self.xmlLimit)
        uploads.sweep(now: Self.now)
        guard case .folder(let id) = try uploadTarget(r, c) else {
            throw refusal(r, .methodNotAllowed, "an upload folder is made as \(DAVMount.uploadsRoot)/NAME/ID")
        }
        guard body.isEmpty else { throw refusal(r, .unsupportedMediaType, "MKCOL takes no body") }
        // The Destination some clients send here is only told again with the MOVE, which is what counts.
        let total = try lengthHeader(r, "oc-total-length")
        if let total, total > configuration.maxFileSize {
            throw refusal(
                r, .contentTooLarge,
                "it is \(formatBytes(Double(total))), over this receiver's limit of \(formatBytes(Double(configuration.maxFileSize)))"
            )
        }
        guard isCurrent(c.account.id) else { throw removedRefusal(r) }
        if let why = uploads.make(c.account.id, id, total: total, now: Self.now) { throw uploadRefusal(r, why) }
        return answer(.created)
    }

    /// A chunk: written to its own file and flushed before the answer; the same number again
    /// replaces it (204).
    func uploadPut(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        uploads.sweep(now: Self.now)
        guard case .chunk(let id, let name, let number) = try uploadTarget(r, c) else {
            throw refusal(r, .methodNotAllowed, "a chunk is PUT as \(DAVMount.uploadsRoot)/NAME/ID/NUMBER")
        }
        guard let size = StoreUpload.announcedSize(r.head) else {
            throw refusal(r, .lengthRequired, "a chunk must give its Content-Length")
        }
        let limit = min(uploads.limits.maxChunkSize, configuration.maxFileSize)
        guard size <= limit else {
            throw refusal(r, .contentTooLarge, "a chunk may have at most \(formatBytes(Double(limit)))")
        }
        let ticket: DAVUploads.Ticket
        switch uploads.beginChunk(c.account.id, id, number: number, name: name, size: size) {
        case .success(let t): ticket = t
        case .failure(let why): throw uploadRefusal(r, why)
        }
        let file = ticket.file
        let account = c.account.id
        var count: Int64 = 0
        var failure: (Int, String)? = nil
        var lastCheck = WallTime.now.milliseconds
        let read = Result { () throws(HTTPError) in
            try r.body.stream(
                sink: { piece in
                    count += Int64(piece.count)
                    if count > size {
                        failure = (400, "the body is longer than the \(size) bytes announced")
                        return false
                    }
                    do throws(SystemError) { try file.writeAll(piece) } catch {
                        failure =
                            error.isNoSpace
                            ? (507, "the receiver's disk is too full to hold the chunk")
                            : (500, "the receiver cannot hold the chunk")
                        return false
                    }
                    if WallTime.now.milliseconds - lastCheck > 200 {
                        lastCheck = WallTime.now.milliseconds
                        if self.shutdown.isRequested {
                            failure = (503, "the receiver is shutting down")
                            return false
                        }
                        if !self.isCurrent(account) {
                            failure = (401, Self.removedReason)
                            return false
                        }
                    }
                    return true
                }, refusal: { failure ?? (400, "body refused") })
        }
        var written = false
        if case .success = read, count == size {
            do throws(SystemError) {
                try file.sync()
                written = true
            } catch {
                failure = error.isNoSpace ? (507, "the receiver's disk is too full") : (500, "cannot flush the chunk")
            }
        }
        if written && !isCurrent(account) { written = false }
        let kept = uploads.finishChunk(ticket, written: written, now: Self.now)
        if case .failure(let error) = read {
            if case .refused(let status, let why) = error {
                throw status == 401 ? removedRefusal(r) : refusal(r, HTTPStatus(status), why)
            }
            throw error
        }
        if let failure { throw refusal(r, HTTPStatus(failure.0), failure.1) }
        switch kept {
        case .success(let replaced): return answer(replaced ? .noContent : .created)
        case .failure(let why): throw uploadRefusal(r, why.status == 0 ? .init(401, Self.removedReason) : why)
        }
    }

    /// MOVE of `ID/.file`: the chunks, whole and in order, put to the Destination as one PUT of
    /// them there; the folder removed once the photo is kept (2xx), left as it was otherwise.
    func uploadMove(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        uploads.sweep(now: Self.now)
        guard case .file(let id) = try uploadTarget(r, c) else {
            throw refusal(r, .forbidden, "only \(DAVMount.uploadsRoot)/NAME/ID/.file is moved: it makes the photo")
        }
        guard let header = r.head.header("destination") else {
            throw refusal(r, .badRequest, "MOVE needs a Destination header")
        }
        var found: (mount: DAVMount, path: DAVPath)? = nil
        for mount in [DAVMount.files(c.account.name), .webdav] where found == nil {
            switch DAVPath.destination(header, prefix: mount.prefix, host: r.head.header("host")) {
            case .success(let path): found = (mount, path)
            case .failure(.outside): continue
            case .failure(let why):
                throw refusal(r, .badRequest, "the Destination is not a path this door takes (\(why))")
            }
        }
        guard let (mount, path) = found else {
            throw refusal(
                r, .forbidden,
                "the Destination must be below \(DAVMount.files(c.account.name).prefix)/ or \(DAVMount.webdav.prefix)/ on this receiver"
            )
        }
        if path.isRoot || path.components.dropLast().contains(where: { DAVName.kind($0) != .ordinary })
            || path.components.last.map({ DAVName.kind($0) == .hidden }) == true
        {
            throw refusal(r, .forbidden, "the Destination is not a name a photo may have here")
        }
        let folder: DAVUploads.Folder
        switch uploads.startAssembly(c.account.id, id) {
        case .success(let f): folder = f
        case .failure(let why): throw uploadRefusal(r, why)
        }
        var done = false
        // Whether the chunks were read: a MOVE refused before that costs nothing and counts for nothing.
        var read = false
        defer { uploads.endAssembly(c.account.id, id, done: done, read: read) }
        let ordered = folder.ordered
        if let why = DAVUploads.gap(ordered.map { ($0.number, $0.chunk.size) }) {
            throw refusal(r, .badRequest, "\(why); nothing was stored")
        }
        let size = folder.held
        var announced: [(String, Int64)] = []
        for name in ["OC-Total-Length", "OC-Total-File-Length"] {
            if let value = try lengthHeader(r, name.lowercased()) { announced.append((name, value)) }
        }
        if let total = folder.total { announced.append(("the MKCOL's OC-Total-Length", total)) }
        for (what, value) in announced where value != size {
            throw refusal(
                r, .badRequest,
                "the chunks add up to \(size) bytes, not the \(value) \(what) says: chunks are missing or extra; nothing was stored"
            )
        }
        let caller = DAVCaller(door: self, connection: c.connection, account: c.account, mount: mount)
        let chunks = uploads.reader(c.account.id, id, ordered.map(\.chunk)).reading
        let response = try put(
            r, caller, path, size: size,
            reading: { sink, refusal throws(HTTPError) in
                read = true
                try chunks(sink, refusal)
            })
        done = (200..<300).contains(response.status.code)
        if done {
            r.log(
                "assembled the \(ordered.count) chunk(s) of the upload folder \(quotedForLog(id)) (\(formatBytes(Double(size)))) as \(quotedForLog(path.string)); answered \(response.status.code)"
            )
        }
        return response
    }

    func uploadDelete(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let gone: Bool?
        switch try uploadTarget(r, c) {
        case .root: throw refusal(r, .forbidden, "delete the upload folders one by one")
        case .file: throw refusal(r, .notFound, "no such WebDAV resource")
        case .folder(let id): gone = uploads.remove(c.account.id, id)
        case .chunk(let id, _, let number): gone = uploads.removeChunk(c.account.id, id, number: number, now: Self.now)
        }
        guard let gone else { throw refusal(r, .locked, "the upload folder is being assembled") }
        guard gone else { throw refusal(r, .notFound, "no such WebDAV resource") }
        return answer(.noContent)
    }

    /// PROPFIND of the upload folders (Depth 0 or 1; infinity is 1, nothing is deeper): a folder
    /// and its chunks with their sizes, times and tags, the names as the client sent them.
    func uploadPropfind(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let body = try xmlBody(r)
        uploads.sweep(now: Self.now)
        let target = try uploadTarget(r, c)
        guard let depth = DAVDepth.parse(r.head.header("depth"), default: .infinity) else {
            throw refusal(r, .badRequest, "Depth must be 0, 1 or infinity")
        }
        var request: PropfindRequest
        switch PropfindRequest.parse(body) {
        case .success(let parsed): request = parsed
        case .failure(let error): throw refusal(r, .badRequest, error.description)
        }
        if case .properties(let names) = request {
            request = .properties(Self.distinct(names))
            if let why = Self.tooManyProperties(Self.distinct(names), "PROPFIND") { throw refusal(r, .badRequest, why) }
        }
        let id = c.account.id
        var entries: [UploadEntry] = []
        switch target {
        case .root:
            let all = uploads.folders(of: id)
            entries.append(
                UploadEntry(
                    href: c.prefix + "/", folder: true, size: 0, modified: c.account.created, tag: "r\(all.count)"))
            if depth != .zero {
                for (upload, f) in all.sorted(by: { $0.key < $1.key }) { entries.append(.folder(c.prefix, upload, f)) }
            }
        case .folder(let upload):
            guard let f = uploads.folder(id, upload) else { throw refusal(r, .notFound, "no such upload folder") }
            entries.append(.folder(c.prefix, upload, f))
            if depth != .zero {
                for (_, chunk) in f.ordered { entries.append(.chunk(c.prefix, upload, chunk)) }
            }
        case .chunk(let upload, _, let number):
            guard let chunk = uploads.folder(id, upload)?.chunks[number] else {
                throw refusal(r, .notFound, "no such chunk")
            }
            entries.append(.chunk(c.prefix, upload, chunk))
        case .file: throw refusal(r, .notFound, "no such WebDAV resource")
        }
        var out = Multistatus.head
        for entry in entries { out += entry.response(request) }
        return answer(.multiStatus, out + Multistatus.tail, type: "application/xml; charset=utf-8")
    }
}

/// One resource of a PROPFIND of upload folders.
struct UploadEntry {
    var href: String
    var folder: Bool
    var size: Int64
    var modified: Int64
    var tag: String

    static func folder(_ prefix: String, _ upload: String, _ f: DAVUploads.Folder) -> UploadEntry {
        UploadEntry(
            href: prefix + "/" + upload + "/", folder: true, size: f.held, modified: f.touched,
            tag: "u\(f.generation)-\(f.chunks.count)-\(f.held)-\(f.touched)")
    }

    static func chunk(_ prefix: String, _ upload: String, _ chunk: DAVUploads.Chunk) -> UploadEntry {
        UploadEntry(
            href: prefix + "/" + upload + "/" + chunk.name, folder: false, size: chunk.size, modified: chunk.modified,
            tag: "c\(chunk.size)-\(chunk.modified)")
    }

    static let properties = [
        "resourcetype", "getcontentlength", "getlastmodified", "getcontenttype", "getetag", "creationdate",
        "displayname",
    ].map(XMLName.dav)

    /// A property's value (inner XML); nil when it has none.
    func value(_ name: XMLName) -> String? {
        if name == XMLName(DAVEndpoint.ocNamespace, "size") { return "\(size)" }
        guard name.namespace == XMLName.dav else { return nil }
        switch name.local {
        case "resourcetype": return folder ? "<D:collection/>" : ""
        case "getcontentlength": return "\(size)"
        case "getlastmodified": return DAVDates.httpDate(modified)
        case "getcontenttype": return folder ? nil : "application/octet-stream"
        case "getetag": return Multistatus.escape("\"" + tag + "\"")
        case "creationdate": return DAVDates.iso8601(modified)
        case "displayname":
            return Multistatus.escape(String(href.split(separator: "/").last ?? ""))
        default: return nil
        }
    }

    func response(_ request: PropfindRequest) -> String {
        switch request {
        case .propertyNames:
            return Multistatus.response(href: href, propstats: [(200, Self.properties.map { ($0, "") })])
        case .allProperties:
            return Multistatus.response(
                href: href, propstats: [(200, Self.properties.compactMap { n in value(n).map { (n, $0) } })])
        case .properties(let names):
            let found = names.compactMap { n in value(n).map { (n, $0) } }
            let missing = names.filter { value($0) == nil }.map { ($0, "") }
            return Multistatus.response(href: href, propstats: [(200, found), (404, missing)])
        }
    }
}
