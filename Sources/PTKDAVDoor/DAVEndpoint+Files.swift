import PTKDAV
import PTKHTTP
import PTKLibrary
import PTKStore
import PTKSystem
import PTKVocabulary

/// GET and HEAD (Range through `Response.file`) and MKCOL.
extension DAVEndpoint {
    func get(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let path = try target(r, c)
        switch view(c).resolve(path) {
        case .missing: throw refusal(r, .notFound, "no such WebDAV resource")
        case .collection:
            return answer(
                .ok,
                "This is a WebDAV folder of \(configuration.name): connect to it with a file manager or a WebDAV client.\n"
            )
        case .remembered:
            throw refusal(
                r, .notFound,
                "the receiver has moved or removed this photo since it was sent; it stays listed as it was sent")
        case .placeholder(let modified):
            return answer(
                .ok, type: "application/octet-stream", headers: ["Last-Modified": DAVDates.httpDate(modified)])
        case .sidecar:
            return .bytes(.ok, sidecars.read(c.account.id, path.string) ?? [], type: "application/octet-stream")
        case .photo(let kept, _, let modified, let sha, let mark):
            let fd: FileDescriptor
            do { fd = try photos.openBeneath(kept, flags: [.readOnly, .nonBlocking]) } catch {
                throw refusal(r, .notFound, "no such WebDAV resource")
            }
            // A name's file is the one it was just checked to be, not one put at its path since.
            // unreadable: answered as not there
            guard let st = try? fd.status(), st.isRegularFile, mark.map({ $0 == DAVFileMark(st) }) ?? true else {
                fd.close()
                throw refusal(r, .notFound, "no such WebDAV resource")
            }
            var headers: HTTPFields = ["Last-Modified": DAVDates.httpDate(modified)]
            if let sha { headers.append("ETag", "\"\(sha)\"") }
            // The response owns the file: it is closed when the response is done with (sent, or not).
            let file = OpenFile(fd)
            return Response.file(
                fd, size: st.size, type: PhotoType(fileName: kept)?.mediaType ?? "application/octet-stream",
                headers: headers,
                range: r.head.header("range")
            ) { offset, error in
                withExtendedLifetime(file) {}
                r.log(
                    "reading \(quotedForLog(kept)) failed at byte \(offset)\(error.map { ": \($0)" } ?? ": it ended early")"
                )
            }
        }
    }

    func mkcol(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        // RFC 4918 9.3: a body MKCOL does not understand is 415.
        let body = try body(r, limit: Self.xmlLimit)
        let path = try target(r, c)
        guard body.isEmpty else { throw refusal(r, .unsupportedMediaType, "MKCOL takes no body") }
        guard let name = path.name, let parent = path.parent else {
            throw refusal(r, .methodNotAllowed, "the top folder exists")
        }
        guard DAVName.kind(name) == .ordinary else {
            throw refusal(r, .forbidden, "\(name) is not a folder name the receiver keeps")
        }
        // One request writes a name at a time (a PUT storing a photo under it, this); a MKCOL
        // waits a little for another, as it ends quickly, and then finds the folder made.
        guard claim(c.account.id, path, waiting: Self.mkcolWait) else {
            throw refusal(r, .locked, Self.writingReason)
        }
        defer { release(c.account.id, path) }
        // The body may have taken its time: a password removed meanwhile makes nothing.
        guard isCurrent(c.account.id) else { throw removedRefusal(r) }
        let view = view(c)
        let existing = view.resolve(path)
        if existing.exists, !existing.isPlaceholder {
            throw refusal(r, .methodNotAllowed, "\(path.string) exists")
        }
        guard view.resolve(parent).isCollection else {
            throw refusal(r, .conflict, "the folder \(parent.string) does not exist")
        }
        try checkLocks(r, view, path, includingBelow: false)
        if c.full {
            // The naming rules' own name, byte for byte (no control, bidi or zero-width characters).
            guard StoreRequest.isValidFolder(path.string), Array(PhotoStore.folderName(name).utf8) == Array(name.utf8)
            else {
                throw refusal(
                    r, .forbidden,
                    "\(path.string) is not a folder the receiver keeps (at most \(StoreRequest.maxFolderDepth) names, none starting with a dot or with control characters)"
                )
            }
            do throws(SystemError) {
                let place = try photos.parentBeneath(path.string)
                defer { place.close() }
                try place.folder.makeDirectory(place.name, mode: 0o755)
                // the folder is made; its owner is a nicety for root-run ptkd
                if let made = try? place.folder.openSubdirectory(place.name) {
                    // as above: run as the service user it owns the folder already
                    try? made.takeOwner(of: configuration.effectiveDirectory)
                    made.close()
                }
                try place.folder.sync()
            } catch {
                throw refusal(
                    r, error.code == .exists ? .methodNotAllowed : .internalServerError,
                    "cannot make \(path.string): \(error)")
            }
        } else {
            guard path.components.count <= StoreRequest.maxFolderDepth else {
                throw refusal(r, .forbidden, "folders go at most \(StoreRequest.maxFolderDepth) deep")
            }
            guard names.addFolder(c.account.id, path) else {
                throw refusal(
                    r, .insufficientStorage, "this app password has made \(DAVNames.maxFolders) folders already")
            }
        }
        names.removePlaceholder(c.account.id, path)
        r.log("made the folder \(quotedForLog(path.string))", always: true)
        return cloudAnswer(answer(.created), c, path, sha256: nil, mtime: nil)
    }
}

/// An open file a response owns: closed when the last reference goes (the response sent, or
/// dropped unsent), as `Response.file` leaves the descriptor to its caller.
final class OpenFile {
    let fd: FileDescriptor
    init(_ fd: FileDescriptor) { self.fd = fd }
    deinit { fd.close() }
}
