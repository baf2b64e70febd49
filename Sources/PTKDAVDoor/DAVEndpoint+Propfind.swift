import PTKDAV
import PTKHTTP
import PTKLibrary
import PTKSystem
import PTKVocabulary

/// PROPFIND and PROPPATCH: the live properties clients read (RFC 4918 15, RFC 4331 quota),
/// streamed one response at a time, so a folder of 10,000 photos is never one answer in memory.
extension DAVEndpoint {
    /// The live properties `allprop` returns (quota only when asked, RFC 4331 3).
    static let liveProperties = [
        "resourcetype", "getcontentlength", "getlastmodified", "getcontenttype", "getetag", "creationdate",
        "displayname", "supportedlock", "lockdiscovery",
    ].map(XMLName.dav)
    static let quotaProperties = ["quota-available-bytes", "quota-used-bytes"].map(XMLName.dav)

    /// The request's view; placeholders no lock holds any more are let go first.
    func view(_ c: DAVCaller) -> DAVView {
        // library off or unreadable: listings go without its hashes
        let view = DAVView(endpoint: self, account: c.account, library: try? c.connection.library(), mount: c.mount)
        let now = Self.now
        names.expirePlaceholders(c.account.id, now: now) { path in
            !self.withLocks(view.lockSpace) { $0.covering(path, now: now) }.isEmpty
        }
        return view
    }

    /// Reads a request's XML body, at most `xmlLimit` bytes (413 beyond, before any is read
    /// when the length says so).
    func xmlBody(_ r: Request) throws(HTTPError) -> [UInt8] {
        if let length = r.head.contentLength, length > Int64(Self.xmlLimit) {
            throw refusal(r, .contentTooLarge, "the XML body is over \(Self.xmlLimit) bytes")
        }
        return try body(r, limit: Self.xmlLimit)
    }

    func propfind(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let body = try xmlBody(r)
        let path = try target(r, c)
        guard let depth = DAVDepth.parse(r.head.header("depth"), default: .infinity) else {
            throw refusal(r, .badRequest, "Depth must be 0, 1 or infinity")
        }
        if depth == .infinity {
            throw conditionRefusal(
                r, .forbidden, "<D:propfind-finite-depth/>",
                "PROPFIND with Depth infinity (ask with Depth 1, folder by folder)")
        }
        var request: PropfindRequest
        switch PropfindRequest.parse(body) {
        case .success(let parsed): request = parsed
        case .failure(let error): throw refusal(r, .badRequest, error.description)
        }
        // Each response repeats every property asked for: a name asked twice is answered once,
        // and a request may name at most `maxProperties`, `maxPropertyBytes` of names in all.
        switch request {
        case .properties(let names): request = .properties(Self.distinct(names))
        case .allProperties(let include): request = .allProperties(include: Self.distinct(include))
        case .propertyNames: break
        }
        if case .properties(let names) = request, let why = Self.tooManyProperties(names, "PROPFIND") {
            throw refusal(r, .badRequest, why)
        }
        if case .allProperties(let names) = request, let why = Self.tooManyProperties(names, "PROPFIND") {
            throw refusal(r, .badRequest, why)
        }
        let view = view(c)
        let resource = view.resolve(path)
        guard resource.exists else { throw refusal(r, .notFound, "no such WebDAV resource") }
        // An answer that fits in `bufferedLimit` goes out whole with its Content-Length (a client
        // that stops reading at </D:multistatus>, as Go's rclone does, can then reuse the
        // connection); a larger one (a folder of thousands) is streamed in chunks as it is made.
        var entries = [(path, resource)][...]
        if depth == .one, resource.isCollection {
            entries += view.children(path).map { (path.appending($0.name), $0.resource) }
        }
        let quota = DAVQuota(self, view)
        let asked = request
        var pending = Multistatus.head
        while let entry = entries.popFirst() {
            pending += response(entry.0, entry.1, asked, view: view, quota: quota)
            if pending.utf8.count >= Self.bufferedLimit { break }
        }
        guard pending.utf8.count >= Self.bufferedLimit else {
            return answer(.multiStatus, pending + Multistatus.tail, type: "application/xml; charset=utf-8")
        }
        let first = pending
        return Response(
            .multiStatus,
            body: .stream(contentType: "application/xml; charset=utf-8") { out throws(HTTPError) in
                try out.write(Array(first.utf8))
                var pending = ""
                for (p, res) in entries {
                    pending += self.response(p, res, asked, view: view, quota: quota)
                    guard pending.utf8.count >= Self.bufferedLimit else { continue }
                    try out.write(Array(pending.utf8))
                    pending = ""
                }
                try out.write(Array((pending + Multistatus.tail).utf8))
            })
    }

    /// A PROPFIND answer up to this size is sent whole; a larger one in chunks, each sent when
    /// this much is made (so at most this and one response are held: each is bounded by the
    /// properties a request may name and the locks and owners a password may hold).
    static let bufferedLimit = 64 << 10
    /// The most properties one PROPFIND or PROPPATCH may name (each answered once), and the
    /// most bytes of their names, namespaces counted for each name (a response writes each
    /// property's namespace on it).
    static let maxProperties = 100
    static let maxPropertyBytes = 8 << 10

    /// `names` without repeats, in the order first named.
    static func distinct(_ names: [XMLName]) -> [XMLName] {
        var seen = Set<XMLName>()
        return names.filter { seen.insert($0).inserted }
    }

    /// Why a `method` naming `names` (distinct) is refused, nil when it is not.
    static func tooManyProperties(_ names: [XMLName], _ method: String) -> String? {
        if names.count > maxProperties {
            return "the \(method) names \(names.count) properties; at most \(maxProperties) are answered"
        }
        let bytes = names.reduce(0) { $0 + $1.local.utf8.count + $1.namespace.utf8.count }
        if bytes > maxPropertyBytes {
            return "the \(method)'s property names take \(bytes) bytes; at most \(maxPropertyBytes) are answered"
        }
        return nil
    }

    /// One `<D:response>` for `resource` as `request` asks.
    func response(
        _ path: DAVPath, _ resource: DAVResource, _ request: PropfindRequest, view: DAVView, quota: DAVQuota? = nil
    ) -> String {
        let href = path.href(prefix: view.mount.prefix, collection: resource.isCollection)
        switch request {
        case .propertyNames:
            return Multistatus.response(
                href: href, propstats: [(200, (Self.liveProperties + Self.quotaProperties).map { ($0, "") })])
        case .allProperties(let include):
            let wanted = Self.liveProperties + include.filter { !Self.liveProperties.contains($0) }
            return answer(path, resource, wanted, href: href, omitMissing: true, view: view, quota: quota)
        case .properties(let names):
            return answer(path, resource, names, href: href, omitMissing: false, view: view, quota: quota)
        }
    }

    private func answer(
        _ path: DAVPath, _ resource: DAVResource, _ names: [XMLName], href: String, omitMissing: Bool, view: DAVView,
        quota: DAVQuota?
    ) -> String {
        var found: [(XMLName, String)] = []
        var missing: [(XMLName, String)] = []
        for name in names {
            if let value = property(name, of: path, resource, view: view, quota: quota) {
                found.append((name, value))
            } else {
                missing.append((name, ""))
            }
        }
        var propstats: [(status: Int, properties: [(XMLName, String)])] = [(200, found)]
        if !missing.isEmpty && !omitMissing { propstats.append((404, missing)) }
        return Multistatus.response(href: href, propstats: propstats)
    }

    /// A live property's value (inner XML), nil when the resource has none. `quota`: the
    /// request's, read once for all its responses (nil: the quota properties are not answered).
    func property(_ name: XMLName, of path: DAVPath, _ resource: DAVResource, view: DAVView, quota: DAVQuota? = nil)
        -> String?
    {
        guard name.namespace == XMLName.dav else {
            return view.mount.cloud ? cloudProperty(name, of: path, resource, view: view, quota: quota) : nil
        }
        var modified: Int64
        var size: Int64? = nil
        var type = "application/octet-stream"
        var etag: String? = nil
        switch resource {
        case .collection(_, let m):
            // A folder the password made has no time of its own; the compatible clients refuse 1970.
            modified = m == 0 && view.mount.cloud && !view.full ? uploadFolder(path, view: view).newest : m
        case .photo(let kept, let s, let m, let sha, _):
            (modified, size) = (m, s)
            type = PhotoType(fileName: kept)?.mediaType ?? type
            etag = "\"" + (sha ?? "\(s)-\(m)") + "\""
        case .remembered(let s, let m, let sha):
            (modified, size, etag) = (m, s, "\"" + sha + "\"")
            type = PhotoType(fileName: path.name ?? "")?.mediaType ?? type
        case .sidecar(let s, let m): (modified, size, etag) = (m, s, "\"\(s)-\(m)\"")
        case .placeholder(let m): (modified, size) = (m, 0)
        case .missing: return nil
        }
        switch name.local {
        case "resourcetype": return resource.isCollection ? "<D:collection/>" : ""
        // The compatible clients read both of folders too (a number, and a tag that tells them to list it again).
        case "getcontentlength": return size.map { "\($0)" } ?? (view.mount.cloud ? "0" : nil)
        case "getcontenttype": return resource.isCollection ? nil : type
        case "getetag":
            if etag == nil, view.mount.cloud, resource.isCollection { etag = folderTag(path, view: view) }
            return etag.map(Multistatus.escape)
        case "getlastmodified": return DAVDates.httpDate(modified)
        case "creationdate": return DAVDates.iso8601(modified)
        case "displayname": return Multistatus.escape(path.name ?? "")
        case "supportedlock":
            return
                "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
                + "<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
        case "lockdiscovery":
            let now = Self.now
            return withLocks(view.lockSpace) { $0.covering(path, now: now) }.map {
                $0.discoveryXML(prefix: view.mount.prefix, now: now, collection: $0.depth == .infinity)
            }.joined()
        case "quota-available-bytes":
            return quota?.available
        case "quota-used-bytes":
            return quota?.used
        default: return nil
        }
    }

    /// PROPPATCH: answered property by property so that clients setting them (Finder, Windows'
    /// Win32 times) go on; nothing is kept (a photo's time is the one it arrived with). The
    /// answer names each property once, and a request may name what a PROPFIND may (400
    /// beyond): the answer is one response of at most `maxPropertyBytes` of names and a few
    /// bytes per property, sent whole.
    func proppatch(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let body = try xmlBody(r)
        let path = try target(r, c)
        let request: ProppatchRequest
        switch ProppatchRequest.parse(body) {
        case .success(let parsed): request = parsed
        case .failure(let error): throw refusal(r, .badRequest, error.description)
        }
        let distinct = Self.distinct(
            request.operations.map { op in
                switch op {
                case .set(let name, _): return name
                case .remove(let name): return name
                }
            })
        if let why = Self.tooManyProperties(distinct, "PROPPATCH") { throw refusal(r, .badRequest, why) }
        let view = view(c)
        let resource = view.resolve(path)
        guard resource.exists else { throw refusal(r, .notFound, "no such WebDAV resource") }
        try checkLocks(r, view, path, includingBelow: false)
        let names: [(XMLName, String)] = distinct.map { ($0, "") }
        let protected = names.filter { $0.0.namespace == XMLName.dav && Self.liveProperties.contains($0.0) }
        let accepted = names.filter { n in !protected.contains { $0.0 == n.0 } }
        var propstats: [(status: Int, properties: [(XMLName, String)])] = []
        if protected.isEmpty {
            propstats.append((200, accepted))
        } else {
            // RFC 4918 9.2: all or nothing; a protected property fails the others with 424.
            propstats.append((403, protected))
            if !accepted.isEmpty { propstats.append((424, accepted)) }
        }
        let href = path.href(prefix: c.prefix, collection: resource.isCollection)
        return answer(
            .multiStatus, Multistatus.head + Multistatus.response(href: href, propstats: propstats) + Multistatus.tail,
            type: "application/xml; charset=utf-8")
    }
}

/// The quota properties (RFC 4331) of one PROPFIND: the file system is asked once per request,
/// however many responses or properties name them.
final class DAVQuota {
    private let endpoint: DAVEndpoint
    private let view: DAVView

    init(_ endpoint: DAVEndpoint, _ view: DAVView) {
        self.endpoint = endpoint
        self.view = view
    }

    /// Bytes a PUT may still use (what the file system has free beyond `min-free`); nil: unknown, answered 404.
    lazy var available: String? = {
        // unknown: the property is answered 404
        guard let free = try? endpoint.photos.availableSpace() else { return nil }
        return "\(max(0, free - endpoint.store.settings.minFree))"
    }()

    /// Bytes in use: on the file system for a `full` password (which sees it all); for an
    /// `upload` password, the bytes of the photos its names name, whether its PUT stored them or
    /// found them kept already (so it learns neither what others send nor which of its
    /// photos the receiver had). Nil: unknown, answered 404.
    lazy var used: String? =
        view.full
        ? (try? endpoint.photos.usedSpace()).map { "\($0)" }  // as above
        : "\(endpoint.names.with(view.account.id) { $0.files.values.reduce(Int64(0)) { $0 + $1.size } })"
}
