import PTKDAV
import PTKHTTP
import PTKSystem
import PTKTrust
import PTKVocabulary

/// What the Nextcloud-compatible mounts (`DAVMount.cloud`) answer beyond WebDAV: the `oc:` and
/// `nc:` properties the sync clients and phone apps read, folder ETags, stable file ids, the
/// `X-OC-Mtime` a client sends with a PUT and the `OC-FileId`/`OC-ETag` it reads back. Every
/// value is for compatibility: ptk keeps no shares, favourites, comments or previews of this kind.
extension DAVEndpoint {
    /// The ownCloud and Nextcloud property namespaces.
    static let ocNamespace = "http://owncloud.org/ns"
    static let ncNamespace = "http://nextcloud.org/ns"
    /// The instance id a file id ends with in `oc:id` (Nextcloud's are "oc" and ten characters).
    static let instanceID = "ocptkreceive"

    /// An `oc:` or `nc:` property's value (inner XML), nil when the resource has none (404).
    func cloudProperty(_ name: XMLName, of path: DAVPath, _ resource: DAVResource, view: DAVView, quota: DAVQuota?)
        -> String?
    {
        guard resource.exists else { return nil }
        switch (name.namespace, name.local) {
        case (Self.ocNamespace, "fileid"): return "\(Self.fileID(path, full: view.full, account: view.account.id))"
        case (Self.ocNamespace, "id"): return Self.ocID(Self.fileID(path, full: view.full, account: view.account.id))
        case (Self.ocNamespace, "permissions"): return Self.permissions(resource, full: view.full)
        case (Self.ocNamespace, "size"):
            if case .photo(_, let size, _, _, _) = resource { return "\(size)" }
            if case .remembered(let size, _, _) = resource { return "\(size)" }
            return "0"
        case (Self.ocNamespace, "checksums"):
            guard let sha = Self.sha256(of: resource) else { return nil }
            return "<oc:checksum xmlns:oc=\"\(Self.ocNamespace)\">SHA256:\(sha)</oc:checksum>"
        case (Self.ocNamespace, "owner-id"), (Self.ocNamespace, "owner-display-name"):
            return Multistatus.escape(view.account.name)
        case (Self.ocNamespace, "favorite"): return "0"
        // No `oc:data-fingerprint`: a sync client that sees one change (or go) takes the
        // server for one restored from a backup.
        case (Self.ocNamespace, "share-types"), (Self.ocNamespace, "downloadURL"), (Self.ocNamespace, "dDC"):
            return ""
        case (Self.ncNamespace, "has-preview"): return "false"
        case (Self.ncNamespace, "is-encrypted"): return "0"
        case (Self.ncNamespace, "mount-type"): return ""
        case (Self.ncNamespace, "creation_time"), (Self.ncNamespace, "upload_time"):
            switch resource {
            case .photo(_, _, let m, _, _), .remembered(_, let m, _): return "\(m)"
            default: return "0"
            }
        default: return nil
        }
    }

    /// The SHA-256 a resource is known by, if any.
    static func sha256(of resource: DAVResource) -> String? {
        switch resource {
        case .photo(_, _, _, let sha, _): sha
        case .remembered(_, _, let sha): sha
        default: nil
        }
    }

    /// `oc:permissions`: a `full` password may read, delete, rename, move and write (`RGDNVW`;
    /// folders `RGDNVCK`); an `upload` password may add files and folders to its folders (`GCK`)
    /// and only read what it sent (`G`): no D, N, V or W, so a sync client never deletes,
    /// renames or replaces what it sent, and shows its own copy as the one to keep.
    static func permissions(_ resource: DAVResource, full: Bool) -> String {
        let folder = resource.isCollection
        if full { return folder ? "RGDNVCK" : "RGDNVW" }
        return folder ? "GCK" : "G"
    }

    /// A number that names one resource of one view for as long as it is at its path: a hash
    /// of the view's scope (the password's id for an `upload` password's names, the directory
    /// for `full`) and the path, below 2^48 (what JSON numbers carry exactly) and never 0.
    static func fileID(_ path: DAVPath, full: Bool, account: String) -> UInt64 {
        fileID(scope: full ? "full" : account, path: path.string)
    }

    /// As `fileID(_:full:account:)`, from its parts (FNV-1a, 64 bits, cut to 48).
    static func fileID(scope: String, path: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array(scope.utf8) + [0] + Array(path.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return (hash >> 16) | 1
    }

    /// `oc:id` and the `OC-FileId` header: the file id, eight digits at least, and the instance id.
    static func ocID(_ id: UInt64) -> String {
        let digits = String(id)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits + instanceID
    }

    /// A folder's ETag for the compatible mounts, which read it to know whether to list the
    /// folder again. An `upload` password's folders hold only its names: the tag is a digest
    /// of every name below (so it changes exactly when one is added). A `full` password's
    /// folders are the directory, which every door and `ptk` change: the tag is new at each
    /// request, and such a client lists every folder it syncs each time.
    func folderTag(_ path: DAVPath, view: DAVView) -> String {
        guard !view.full else { return "\"d\(WallTime.now.milliseconds)\"" }
        return "\"f" + String(uploadFolder(path, view: view).digest, radix: 16) + "\""
    }

    /// What an `upload` password's folder holds below it: the digest of its names (`folderTag`)
    /// and the newest time among them (its time, where it has no time of its own: the sync
    /// clients refuse a folder of 1970), or the password's creation when it holds none.
    /// Worked out for every folder at once, and kept while the password's names stay as they
    /// were (`DAVNames.Account.generation`): a PROPFIND of a folder of many folders, or many
    /// PROPFINDs in a row, walk the password's names once, not once each.
    func uploadFolder(_ path: DAVPath, view: DAVView) -> (digest: UInt64, newest: Int64) {
        let table = names.with(view.account.id) { a -> [DAVPath: (UInt64, Int64)] in
            if let kept = folderFactsCache.get(view.account.id, generation: a.generation) { return kept }
            var out: [DAVPath: (UInt64, Int64)] = [:]
            func add(_ p: DAVPath, _ x: UInt64, _ time: Int64) {
                var up = p.parent
                while let folder = up {
                    let old = out[folder] ?? (0, view.account.created)
                    out[folder] = (old.0 ^ x, max(old.1, time))
                    up = folder.parent
                }
            }
            for (p, named) in a.files { add(p, Self.fileID(scope: named.sha256, path: p.string), named.modified) }
            for p in a.folders { add(p, Self.fileID(scope: "folder", path: p.string), 0) }
            folderFactsCache.put(view.account.id, generation: a.generation, out)
            return out
        }
        return table[path] ?? (0, view.account.created)
    }

    /// The `Date` header (RFC 9110 6.6.1), which the sync clients read on every answer.
    package static func dateHeader() -> (String, String) { ("Date", DAVDates.httpDate(now)) }

    /// The modification time a compatible client sent (`X-OC-Mtime`, seconds since the epoch,
    /// perhaps with a fraction), when it is one a photo may carry: from 1970 to a day ahead.
    static func clientMtime(_ r: Request, _ c: DAVCaller) -> Int64? {
        guard c.mount.cloud, let text = r.head.header("x-oc-mtime") else { return nil }
        let whole = text.split(separator: ".", maxSplits: 1).first.map(String.init) ?? text
        guard let seconds = Int64(whole), seconds >= 0, seconds <= WallTime.now.seconds + 86_400 else { return nil }
        return seconds
    }

    /// A PUT's answer with what compatible clients read back: `OC-ETag` beside `ETag`,
    /// `OC-FileId`, and `X-OC-MTime: accepted` when the time it sent was kept.
    func cloudAnswer(_ response: Response, _ c: DAVCaller, _ path: DAVPath, sha256: String?, mtime: Int64?)
        -> Response
    {
        guard c.mount.cloud else { return response }
        var out = response
        if let sha256 { out.headers.append("OC-ETag", "\"\(sha256)\"") }
        out.headers.append(
            "OC-FileId", Self.ocID(Self.fileID(path, full: c.full, account: c.account.id)))
        if mtime != nil { out.headers.append("X-OC-MTime", "accepted") }
        return out
    }
}

extension DAVEndpoint {
    /// The room the receiver has for photos beyond `min-free` (nil: unknown) and the bytes
    /// the password `account` sees as its own: what an `upload` password sent; for `full`,
    /// what the file system holds in use.
    package func usage(of account: AppPassword) -> (free: Int64?, used: Int64) {
        // unknown: said as unknown
        let free = (try? photos.availableSpace()).map { max(0, $0 - store.settings.minFree) }
        if account.access == .full { return (free, (try? photos.usedSpace()) ?? 0) }  // as above
        return (free, names.with(account.id) { $0.files.values.reduce(Int64(0)) { $0 + $1.size } })
    }
}

extension DAVEndpoint {
    /// A refusal as the compatible clients show it: the error body of SabreDAV (the server
    /// library Nextcloud is built on), whose `s:message` the apps and sync clients put in
    /// front of the person, and whose `s:exception` names the kind of failure.
    static func cloudError(_ status: HTTPStatus, _ message: String) -> String {
        let kind: String
        switch status.code {
        case 400: kind = "BadRequest"
        case 401: kind = "NotAuthenticated"
        case 403: kind = "Forbidden"
        case 404: kind = "NotFound"
        case 405: kind = "MethodNotAllowed"
        case 409: kind = "Conflict"
        case 412: kind = "PreconditionFailed"
        case 415: kind = "UnsupportedMediaType"
        case 423: kind = "Locked"
        case 507: kind = "InsufficientStorage"
        default: kind = ""
        }
        return DAVError.prologue
            + "\n<d:error xmlns:d=\"DAV:\" xmlns:s=\"http://sabredav.org/ns\"><s:exception>Sabre\\DAV\\Exception"
            + (kind.isEmpty ? "" : "\\" + kind) + "</s:exception><s:message>" + Multistatus.escape(message)
            + "</s:message></d:error>\n"
    }
}

/// The upload passwords' folder facts as last worked out, each with the generation of the
/// names it was worked out from; at most `limit` passwords' (all dropped past it), and a
/// removed password's dropped with its names (`DAVEndpoint.forget`).
final class DAVFolderFactsCache: @unchecked Sendable {
    private let lock = Lock()
    // Guarded by `lock`.
    private var tables: [String: (generation: Int, table: [DAVPath: (UInt64, Int64)])] = [:]
    static let limit = 64

    /// The table of password `id` if it was worked out at `generation`.
    func get(_ id: String, generation: Int) -> [DAVPath: (UInt64, Int64)]? {
        lock.withLock { tables[id].flatMap { $0.generation == generation ? $0.table : nil } }
    }

    /// Keeps the table of password `id` worked out at `generation`.
    func put(_ id: String, generation: Int, _ table: [DAVPath: (UInt64, Int64)]) {
        lock.withLock {
            if tables.count >= Self.limit && tables[id] == nil { tables.removeAll() }
            tables[id] = (generation, table)
        }
    }

    /// Forgets password `id`'s table.
    func drop(_ id: String) { _ = lock.withLock { tables.removeValue(forKey: id) } }
}
