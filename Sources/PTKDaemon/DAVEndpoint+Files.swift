import PTKDAV
import PTKHTTP
import PTKLibrary
import PTKStore
import PTKSystem
import PTKVocabulary

/// GET and HEAD (Range as the web interface does) and MKCOL.
extension DAVEndpoint {
    func get(_ r: DAVRequest) throws(HTTPError) -> Bool {
        guard let path = try target(r) else { return true }
        let idle = configuration.idleTimeout
        switch view(r).resolve(path) {
        case .missing: return try refuse(r, 404, "no such WebDAV resource")
        case .collection:
            return try answer(r, 200, "This is a WebDAV folder of \(configuration.name): connect to it with a file manager or a WebDAV client.\n")
        case .placeholder(let modified):
            return try answer(r, 200, type: "application/octet-stream", headers: [("Last-Modified", DAVDates.httpDate(modified))])
        case .sidecar:
            try r.http.respond(200, sidecars.read(r.account.id, path.string) ?? [], contentType: "application/octet-stream",
                               headOnly: r.headOnly, deadline: .now + idle)
            return true
        case .photo(let kept, _, let modified, let sha, let mark):
            let fd: FileDescriptor
            do { fd = try photos.openBeneath(kept, flags: [.readOnly, .nonBlocking]) } catch {
                return try refuse(r, 404, "no such WebDAV resource")
            }
            defer { fd.close() }
            // A name's file is the one it was just checked to be, not one put at its path since.
            guard let st = try? fd.status(), st.isRegularFile, mark.map({ $0 == DAVFileMark(st) }) ?? true else {  // unreadable: answered as not there
                return try refuse(r, 404, "no such WebDAV resource")
            }
            var headers = [("Last-Modified", DAVDates.httpDate(modified))]
            if let sha { headers.append(("ETag", "\"\(sha)\"")) }
            try r.http.sendFile(fd, size: st.size, type: PhotoType(fileName: kept)?.mediaType ?? "application/octet-stream", headers: headers,
                                range: r.head.header("range"), headOnly: r.headOnly, idle: idle) { offset, error in
                r.log("reading \(quotedForLog(kept)) failed at byte \(offset)\(error.map { ": \($0)" } ?? ": it ended early")")
            }
            return true
        }
    }

    func mkcol(_ r: DAVRequest) throws(HTTPError) -> Bool {
        // RFC 4918 9.3: a body MKCOL does not understand is 415.
        let body: [UInt8]
        do { body = try r.http.readBody(limit: Self.xmlLimit, deadline: { .now + self.configuration.idleTimeout }) } catch {
            if case .refused(let status, let why) = error { return try refuse(r, status, why, close: true) }
            throw error
        }
        guard let path = try target(r) else { return true }
        guard body.isEmpty else { return try refuse(r, 415, "MKCOL takes no body") }
        guard let name = path.name, let parent = path.parent else { return try refuse(r, 405, "the top folder exists") }
        guard DAVName.kind(name) == .ordinary else { return try refuse(r, 403, "\(name) is not a folder name the receiver keeps") }
        // One request writes a name at a time (a PUT storing a photo under it, this).
        guard claim(r.account.id, path) else { return try refuse(r, 423, Self.writingReason) }
        defer { release(r.account.id, path) }
        // The body may have taken its time: a password removed meanwhile makes nothing.
        guard isCurrent(r.account.id) else { return try refuseRemoved(r) }
        let view = view(r)
        let existing = view.resolve(path)
        if existing.exists, !existing.isPlaceholder {
            return try refuse(r, 405, "\(path.string) exists")
        }
        guard view.resolve(parent).isCollection else { return try refuse(r, 409, "the folder \(parent.string) does not exist") }
        guard try lockAllows(r, view, path, includingBelow: false) else { return true }
        if r.full {
            // The naming rules' own name, byte for byte (no control, bidi or zero-width characters).
            guard StoreRequest.isValidFolder(path.string), Array(PhotoStore.folderName(name).utf8) == Array(name.utf8) else {
                return try refuse(r, 403, "\(path.string) is not a folder the receiver keeps (at most \(StoreRequest.maxFolderDepth) names, none starting with a dot or with control characters)")
            }
            do throws(SystemError) {
                let place = try photos.parentBeneath(path.string)
                defer { place.close() }
                try place.folder.makeDirectory(place.name, mode: 0o755)
                if let made = try? place.folder.openSubdirectory(place.name) {  // the folder is made; its owner is a nicety for root-run ptkd
                    try? made.takeOwner(of: configuration.effectiveDirectory)  // as above: run as the service user it owns the folder already
                    made.close()
                }
                try place.folder.sync()
            } catch {
                return try refuse(r, error.code == .exists ? 405 : 500, "cannot make \(path.string): \(error)")
            }
        } else {
            guard path.components.count <= StoreRequest.maxFolderDepth else {
                return try refuse(r, 403, "folders go at most \(StoreRequest.maxFolderDepth) deep")
            }
            guard names.addFolder(r.account.id, path) else {
                return try refuse(r, 507, "this app password has made \(DAVNames.maxFolders) folders already")
            }
        }
        names.removePlaceholder(r.account.id, path)
        r.log("made the folder \(quotedForLog(path.string))", always: true)
        return try answer(r, 201)
    }
}
