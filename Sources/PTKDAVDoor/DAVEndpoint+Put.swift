import PTKDAV
import PTKDigest
import PTKDoor
import PTKHTTP
import PTKProtocol
import PTKStore
import PTKSystem
import PTKUpload
import PTKVocabulary

/// PUT: a photo arriving like any other (the store's checks, `.incoming/`, flushed before the
/// 201, the library, hooks, `ptk watch`), its type read from its bytes. The client finds it
/// under the name it PUT (`DAVNames`), even when the store keeps it under another or already
/// kept these bytes. A PUT onto a photo with other bytes never replaces it (409); the same
/// bytes again are 204 and stored once. A 0-byte PUT (Finder's create before it writes) holds
/// the name as a placeholder; the files operating systems write beside photos go to `DAVSidecars`.
extension DAVEndpoint {
    func put(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        // Until the body is read, a refusal closes the connection (the body is left unread).
        let path = try target(r, c)
        return try checkedWrite(r, c, path) { name, existing throws(HTTPError) in
            guard let size = StoreUpload.announcedSize(r.head) else {
                guard r.head.chunked else {
                    throw refusal(r, .lengthRequired, "a PUT must give its Content-Length, or send its body chunked")
                }
                return try putUndeclared(r, c, path, name: name, existing: existing)
            }
            // The compatible clients say the whole file's size again: a body of another size is not the file they mean.
            if c.mount.cloud, let total = r.head.header("oc-total-length"), Int64(total) != size {
                throw refusal(
                    r, .badRequest, "OC-Total-Length says \(quotedForLog(total)) bytes, but the body is \(size) bytes")
            }
            let reading: StoreUpload.BodyReader = { sink, refusal throws(HTTPError) in
                try r.body.stream(sink: sink, refusal: refusal)
            }
            return try put(r, c, path, name: name, existing: existing, size: size, reading: reading)
        }
    }

    /// A body of `size` bytes that `reading` reads, written to `path` exactly as a PUT of it
    /// there is (chunked upload v2's MOVE of `.file`, whose request is `r`): the same checks,
    /// store, names and answers.
    func put(_ r: Request, _ c: DAVCaller, _ path: DAVPath, size: Int64, reading: @escaping StoreUpload.BodyReader)
        throws(HTTPError) -> Response
    {
        try checkedWrite(r, c, path) { name, existing throws(HTTPError) in
            try put(r, c, path, name: name, existing: existing, size: size, reading: reading)
        }
    }

    /// What every write of a file checks before its body is read (the name, one request per
    /// name, the folder, locks and the If header, If-Match), then `write` with the name claimed.
    private func checkedWrite(
        _ r: Request, _ c: DAVCaller, _ path: DAVPath,
        _ write: (_ name: String, _ existing: DAVResource) throws(HTTPError) -> Response
    ) throws(HTTPError) -> Response {
        guard let name = path.name else { throw refusal(r, .methodNotAllowed, "the top folder cannot be written") }
        // One request writes a name at a time: two PUTs of one new name at once would store two
        // photos, and the name would name one (the other stored unseen).
        guard claim(c.account.id, path) else { throw refusal(r, .locked, Self.writingReason) }
        defer { release(c.account.id, path) }
        let view = view(c)
        guard let parent = path.parent, view.resolve(parent).isCollection else {
            throw refusal(r, .conflict, "the folder \(path.parent?.string ?? "") does not exist: make it first (MKCOL)")
        }
        let existing = view.resolve(path)
        if existing.isCollection { throw refusal(r, .methodNotAllowed, "\(path.string) is a folder") }
        try checkLocks(r, view, path, includingBelow: false)
        if let header = r.head.header("if-match") {
            // RFC 9110 13.1.1: "*" holds when there is a file; otherwise one of the tags must be its ETag.
            let tag = property(.dav("getetag"), of: path, existing, view: view)?.replacing("&quot;", with: "\"")
            let wanted = header.split(separator: ",").map { String($0.filter { $0 != " " && $0 != "\t" }) }
            let holds = existing.exists && (wanted.contains("*") || tag.map { wanted.contains($0) } ?? false)
            guard holds else { throw refusal(r, .preconditionFailed, "If-Match does not hold for \(path.string)") }
        }
        return try write(name, existing)
    }

    /// A chunked body that does not say its length (`curl -T -`, `rclone rcat`): spooled
    /// (`StoreUpload.spool`: a file with no name, at most max-file-size, 413 past it, room
    /// promised against min-free as it grows, 507), then put as a body of that size.
    private func putUndeclared(_ r: Request, _ c: DAVCaller, _ path: DAVPath, name: String, existing: DAVResource)
        throws(HTTPError) -> Response
    {
        let limit = DAVName.kind(name) == .sidecar ? Int64(DAVSidecars.maxSize) : configuration.maxFileSize
        let spool: SpoolFile
        switch store.openSpool() {
        case .success(let file): spool = file
        case .failure(let failure):
            // As the web upload answers it: no room for a spool is 507, not the server's fault.
            let (status, reason) = StoreUpload.status(for: failure)
            throw refusal(r, HTTPStatus(status), reason)
        }
        defer { spool.close() }
        let shutdown = self.shutdown
        let account = c.account.id
        // Asked as the declared PUT asks: a password removed while its body comes is spooled no further.
        switch StoreUpload.spool(
            r.body, into: spool, limit: limit,
            stop: {
                if shutdown.isRequested { return (503, "the receiver is shutting down") }
                return self.isCurrent(account) ? nil : (401, Self.removedReason)
            })
        {
        case .success(let size):
            return try put(r, c, path, name: name, existing: existing, size: size, reading: StoreUpload.replay(spool))
        case .failure(.failed(let failure)):
            r.log(
                "refused \(quotedForLog(path.string)): \(failure.detail) (after \(failure.received) bytes of a body of undeclared length); answered \(failure.status)"
            )
            return Self.errorResponse(
                r, HTTPStatus(failure.status), failure.reason, failure.status == 401 ? [Self.challenge] : []
            ).closing()
        case .failure(.gone(let received)):
            r.log("the PUT of \(quotedForLog(path.string)) ended after \(received) bytes: the client went away")
            throw .gone
        }
    }

    /// A PUT of `size` bytes that `reading` reads.
    private func put(
        _ r: Request, _ c: DAVCaller, _ path: DAVPath, name: String, existing: DAVResource, size: Int64,
        reading: @escaping StoreUpload.BodyReader
    ) throws(HTTPError) -> Response {
        if DAVName.kind(name) == .sidecar {
            return try putSidecar(r, c, path, size: size, existed: existing.exists, reading: reading)
        }
        if size == 0 {
            // A chunked body that says 0 bytes must be empty.
            do { try reading({ _ in false }, { (400, "") }) } catch {
                if case .refused = error {
                    throw refusal(r, .badRequest, "the body is longer than the 0 bytes announced")
                }
                throw error
            }
            guard isCurrent(c.account.id) else { throw removedRefusal(r) }
            if case .photo = existing {
                throw refusal(r, .conflict, "\(path.string) is a photo kept with other bytes; it is never replaced")
            }
            guard names.setPlaceholder(c.account.id, path, at: Self.now) else {
                throw refusal(
                    r, .insufficientStorage, "this app password holds \(DAVNames.maxPlaceholders) empty names already")
            }
            return answer(existing.exists ? .noContent : .created)
        }
        guard size <= configuration.maxFileSize else {
            throw refusal(
                r, .contentTooLarge,
                "it is \(formatBytes(Double(size))), over this receiver's limit of \(formatBytes(Double(configuration.maxFileSize)))"
            )
        }
        if case .photo(let kept, let keptSize, _, let sha, _) = existing {
            let same = try putOnto(r, path, kept: kept, keptSize: keptSize, sha256: sha, size: size, reading: reading)
            return cloudAnswer(same, c, path, sha256: sha ?? hashOfKept(kept), mtime: nil)
        }
        if case .remembered(let keptSize, _, let sha) = existing {
            // Its bytes are known by their hash: nothing of the directory is read.
            let same = try putOnto(r, path, kept: "", keptSize: keptSize, sha256: sha, size: size, reading: reading)
            return cloudAnswer(same, c, path, sha256: sha, mtime: nil)
        }
        return try putNew(r, c, path, size: size, reading: reading)
    }

    /// What a request is told when another of its password's requests writes that name now.
    static let writingReason =
        "another request of this app password is writing this name now; try again when it is done"

    /// A new photo (or one onto a placeholder: 201 too, the photo is new).
    private func putNew(
        _ r: Request, _ c: DAVCaller, _ path: DAVPath, size: Int64, reading: @escaping StoreUpload.BodyReader
    ) throws(HTTPError) -> Response {
        let account = c.account
        let sender = Sender(announcedName: "dav: \(account.name)", id: nil, address: r.peer.description)
        let kept = configuration.types
        let mtime = Self.clientMtime(r, c)
        // Full access files it where the client put it; upload access in its own folder as the
        // layout says, with the client's folders below.
        let folder =
            c.full
            ? (path.parent?.string ?? "") : StoreRequest.folder(arrivals.folder(for: sender), adding: path.string)
        // Every photo of an upload password is known by its name: one that could not be
        // recorded is refused before its body is read, so nothing is stored unseen.
        if !c.full, let why = names.room(account.id, bytes: DAVNames.lineBound(path, kept: folder + "/" + path.name!)) {
            throw refusal(r, .insufficientStorage, why)
        }
        var chosen: PhotoType? = nil
        let outcome = StoreUpload.receive(
            size: size, reading: reading, into: store,
            decide: { type in
                guard let type, kept.contains(type) else {
                    return .refuse(
                        415,
                        "not a photo this receiver keeps (it keeps \(kept.map(\.displayName).joined(separator: ", ")))")
                }
                chosen = type
                return .store(
                    StoreRequest(
                        name: type.fittedName(path.name!), size: size, sha256: "", type: type,
                        sender: sender.announcedName,
                        modified: mtime.map { $0 * 1000 } ?? WallTime.now.milliseconds, folder: folder))
            },
            stop: {
                if self.shutdown.isRequested { return (503, "the receiver is shutting down") }
                return self.isCurrent(account.id) ? nil : (401, Self.removedReason)
            },
            beforePublishing: {
                // A password removed while the body was on its way stores nothing: asked once the
                // whole body is in, before the photo gets its name among the others.
                self.isCurrent(account.id) ? nil : (401, Self.removedReason)
            })
        switch outcome {
        case .saved(let saved, let seconds):
            // Removed while the photo was being published: a new photo is kept like any arrival
            // (ptk never drops a photo it published) and answered 201, but no name is kept for
            // the gone password; for bytes kept already nothing was stored: 401.
            let current = isCurrent(account.id)
            if !current && saved.isDuplicate { throw removedRefusal(r) }
            if !current {
                r.log(
                    "saved \(quotedForLog(saved.name)) as \(quotedForLog(path.string)); its app password was removed meanwhile, so no name is kept for it",
                    always: true)
            } else if !c.full || saved.name != path.string || saved.isDuplicate {
                // The name is for these bytes (`DAVView.check`). An upload password's had its
                // room checked before the body, so whether these bytes were kept already
                // changes nothing it is answered; a full password's name for bytes kept
                // already may be refused, and then nothing was stored for this PUT.
                let named = DAVNamed(
                    kept: saved.name, size: saved.size, sha256: saved.sha256, modified: mtime ?? Self.now, mark: nil,
                    shared: saved.isDuplicate, sticky: c.mount.cloud && !c.full)
                if let why = names.setFile(account.id, path, named, checked: !c.full) {
                    throw refusal(
                        r, .insufficientStorage,
                        "\(why): these bytes are kept already, and nothing new was stored (PUT the photo under a name this password used before, or remove some)"
                    )
                }
            } else {
                names.removePlaceholder(account.id, path)
            }
            if current {
                r.log(
                    saved.isDuplicate
                        ? "\(quotedForLog(path.string)) is already kept as \(quotedForLog(saved.name))"
                        : "saved \(quotedForLog(saved.name)) as \(quotedForLog(path.string)), \(formatBytes(Double(saved.size))) in \(formatDecimal(seconds)) s",
                    always: !saved.isDuplicate)
            }
            arrivals.saved(saved, type: chosen ?? .png, from: sender, deviceID: "app password \(account.name)")
            return cloudAnswer(
                answer(.created, headers: ["ETag": "\"\(saved.sha256)\""]), c, path, sha256: saved.sha256, mtime: mtime)
        case .failed(let failure):
            r.log("refused \(quotedForLog(path.string)): \(failure.detail); answered \(failure.status)")
            let refused = Self.errorResponse(
                r, HTTPStatus(failure.status), failure.reason, failure.status == 401 ? [Self.challenge] : [])
            // A failure of the store after the body was read (its checks, its flush) keeps the
            // connection; one before or while it came does not.
            return failure.keepsConnection ? refused : refused.closing()
        case .gone(let received):
            r.log(
                "the PUT of \(quotedForLog(path.string)) ended after \(received) of \(size) bytes: the client went away"
            )
            throw .gone
        }
    }

    /// A PUT onto a kept photo: the same bytes are 204 (nothing stored), other bytes 409. The
    /// body is hashed, never stored; a different size is refused before it is read. A kept
    /// photo the library has no hash for is hashed only once the whole body is in (a head
    /// alone costs no read of the photo: the work follows what the client sent).
    private func putOnto(
        _ r: Request, _ path: DAVPath, kept: String, keptSize: Int64, sha256: String?, size: Int64,
        reading: @escaping StoreUpload.BodyReader
    ) throws(HTTPError) -> Response {
        let why =
            "\(path.string) is a photo kept with other bytes; it is never replaced (PUT it under another name to keep both)"
        guard size == keptSize else { throw refusal(r, .conflict, why) }
        var hash = SHA256()
        var count: Int64 = 0
        do {
            try reading(
                { piece in
                    count += Int64(piece.count)
                    // More than announced: the sink says no (400).
                    if count <= size { hash.update(piece) }
                    return count <= size
                }, { (400, "the body is longer than the \(size) bytes announced") })
        } catch {
            if case .refused(let status, let reason) = error { throw refusal(r, HTTPStatus(status), reason) }
            throw error
        }
        guard count == size, let known = sha256 ?? hashOfKept(kept), hash.finalizeHex() == known else {
            throw refusal(r, .conflict, why)
        }
        return answer(.noContent, headers: ["ETag": "\"\(known)\""])
    }

    /// The SHA-256 of a kept photo the library does not know (read from its file).
    func hashOfKept(_ kept: String) -> String? {
        // unreadable: no hash, so the PUT is refused as other bytes
        guard let fd = try? photos.openBeneath(kept, flags: [.readOnly, .nonBlocking]) else { return nil }
        defer { fd.close() }
        return try? SHA256.hex(ofFile: fd).get()  // as above
    }

    /// A file an operating system writes beside photos: kept apart, up to `DAVSidecars.maxSize`.
    private func putSidecar(
        _ r: Request, _ c: DAVCaller, _ path: DAVPath, size: Int64, existed: Bool,
        reading: @escaping StoreUpload.BodyReader
    ) throws(HTTPError) -> Response {
        guard size <= Int64(DAVSidecars.maxSize) else {
            throw refusal(r, .contentTooLarge, "files like \(path.name!) are kept up to \(DAVSidecars.maxSize) bytes")
        }
        var bytes: [UInt8] = []
        do {
            try reading(
                { piece in
                    bytes.append(contentsOf: piece)
                    return bytes.count <= DAVSidecars.maxSize
                }, { (413, "files like \(path.name!) are kept up to \(DAVSidecars.maxSize) bytes") })
        } catch {
            if case .refused(let status, let why) = error { throw refusal(r, HTTPStatus(status), why) }
            throw error
        }
        // The body may have taken its time: a password removed meanwhile keeps nothing.
        guard isCurrent(c.account.id) else { throw removedRefusal(r) }
        if let why = sidecars.write(c.account.id, path.string, bytes, minFree: configuration.minFree) {
            throw refusal(r, .insufficientStorage, why)
        }
        names.removePlaceholder(c.account.id, path)
        return answer(existed ? .noContent : .created)
    }
}
