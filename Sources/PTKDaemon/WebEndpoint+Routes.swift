import PTKConfiguration
import PTKLibrary
import PTKLocalSend
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// The web interface's routes: who may ask (`WebRoute.isPublic`, the session cookie, the CSRF
/// token of a change), and each page, file, change and upload.
extension WebEndpoint {
    /// What a route handler has at hand.
    struct Request {
        let head: HTTPHead
        let http: HTTPConnection
        let connection: WebConnection
        let session: WebSession?
        var headOnly: Bool { head.method == "HEAD" }
        var viewer: WebPages.Viewer? { session.map { WebPages.Viewer(name: $0.name, csrf: $0.csrf) } }
        func log(_ line: String) {
            Log.info("web \(connection.id) from \(connection.peer)\(session.map { " (\(quotedForTerminal($0.name)), session \($0.id))" } ?? ""): \(line)")
        }
    }

    /// Answers one request; returns false when the connection must close after it.
    func handle(_ head: HTTPHead, _ http: HTTPConnection, _ connection: WebConnection) throws(HTTPFailure) -> Bool {
        let route = WebRoute(method: head.method, target: head.target)
        let secret = cookies(head.header("cookie"))[Self.cookieName]
        let session = secret.flatMap { access.session(secret: $0) }
        let r = Request(head: head, http: http, connection: connection, session: session)
        if session != nil { http.proven() }
        if !route.isPublic && session == nil {
            // Everything but the login page needs a session: the login page answers (401).
            if route == .upload {
                // The body is not read: the connection closes after the answer.
                try json(r, 401, UploadAnswer(message: "log in first"), close: true)
                return false
            }
            try skipBody(r)
            try html(r, 401, pages.login(hasPassword: access.hasPassword, message: secret == nil ? nil : "Your session has ended: log in again."))
            return true
        }
        if route.isChange {
            // A page of this origin (the Origin a browser sends with every POST), with the session's token.
            if let other = otherSite(head) {
                r.log("refused \(head.method) \(quotedForTerminal(head.path)): \(other); answered 403")
                // The body is not read: the connection closes after the answer.
                try refuseChange(r, route, "this change came from another site", close: true)
                return false
            }
            if route == .upload, head.header("x-csrf-token") != session!.csrf {
                r.log("refused an upload without its CSRF token; answered 403")
                try json(r, 403, UploadAnswer(message: "the page's token is missing or out of date: reload the page"), close: true)
                return false
            }
        }
        // Only logging in, changes and uploads have a body to read; any other is dropped.
        if !route.isChange && route != .login { try skipBody(r) }
        switch route {
        case .asset(let asset):
            try respond(r, 200, asset.bytes, type: asset.contentType, headers: [("Cache-Control", "no-cache")])
        case .loginPage:
            if session != nil { try redirect(r, "/") } else { try html(r, 200, pages.login(hasPassword: access.hasPassword)) }
        case .login:
            try passwordLogin(r)
        case .loginLink(let linkSecret):
            try linkLogin(r, linkSecret)
        case .logout:
            let form = try readForm(r)
            guard try checkToken(r, form, route) else { return true }
            // A session file that cannot be written leaves the session listed; the cookie goes anyway.
            do { try access.revoke(session!.id) } catch { r.log("cannot end the session in \(access.sessionsFile): \(error)") }
            r.log("logged out")
            try redirect(r, "/login", cookie: "\(Self.cookieName)=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Strict")
        case .gallery:
            try gallery(r)
        case .photo(let id):
            guard let photo = try photo(r, id) else { return true }
            try photoPage(r, photo)
        case .confirmDelete(let id):
            guard let photo = try photo(r, id) else { return true }
            try html(r, 200, pages.confirmDelete(WebPhoto(photo), viewer: r.viewer!))
        case .original(let id):
            guard let photo = try photo(r, id) else { return true }
            try sendFile(r, path: r.connection.directory + "/" + photo.name, type: photo.type.mediaType,
                         download: r.head.query["download"] != nil ? photo.name.split(separator: "/").last.map(String.init) : nil)
        case .thumbnail(let id):
            guard let photo = try photo(r, id) else { return true }
            try thumbnail(r, photo)
        case .package(let id):
            guard let photo = try photo(r, id) else { return true }
            try package(r, photo)
        case .change(let id, let change):
            let form = try readForm(r)
            guard try checkToken(r, form, route) else { return true }
            guard let photo = try photo(r, id) else { return true }
            try self.change(r, photo, change, form)
        case .uploadPage:
            try html(r, 200, pages.upload(types: configuration.photoTypes, maxFileSize: configuration.maxFileSize, viewer: r.viewer!))
        case .upload:
            return try upload(r)
        case .notFound:
            try html(r, 404, pages.error("No such page", viewer: r.viewer))
        case .methodNotAllowed(let allowed):
            try respond(r, 405, Array(pages.error("\(head.method) is not allowed here", viewer: r.viewer).utf8),
                        type: "text/html; charset=utf-8", headers: [("Allow", allowed)])
        }
        return true
    }

    // MARK: Answers

    func respond(_ r: Request, _ status: Int, _ body: [UInt8], type: String, headers: [(String, String)] = [], close: Bool = false) throws(HTTPFailure) {
        try r.http.respond(status, body, contentType: type, headers: headers, close: close, headOnly: r.headOnly,
                           deadline: .now + configuration.idleTimeout)
    }

    func html(_ r: Request, _ status: Int, _ page: String, close: Bool = false) throws(HTTPFailure) {
        try respond(r, status, Array(page.utf8), type: "text/html; charset=utf-8", headers: [("Cache-Control", "no-store")], close: close)
    }

    func json(_ r: Request, _ status: Int, _ answer: UploadAnswer, close: Bool = false) throws(HTTPFailure) {
        try respond(r, status, LocalSendJSON.encode(answer), type: "application/json", headers: [("Cache-Control", "no-store")], close: close)
    }

    /// What an upload is answered (and a refused one's reason).
    struct UploadAnswer: Encodable {
        var name: String?
        var duplicate: Bool?
        var message: String?
        init(name: String? = nil, duplicate: Bool? = nil, message: String? = nil) {
            self.name = name
            self.duplicate = duplicate
            self.message = message
        }
    }

    /// 303 to `location` (after a form: the browser then GETs it), setting `cookie` if given.
    func redirect(_ r: Request, _ location: String, cookie: String? = nil) throws(HTTPFailure) {
        var headers = [("Location", location), ("Cache-Control", "no-store")]
        if let cookie { headers.append(("Set-Cookie", cookie)) }
        try respond(r, 303, [], type: "text/plain", headers: headers)
    }

    /// Reads and drops a request's body (up to a limit).
    func skipBody(_ r: Request) throws(HTTPFailure) {
        _ = try r.http.readBody(limit: LocalSendEndpoint.ignoredBodyLimit, deadline: { .now + self.configuration.idleTimeout })
    }

    /// A form's fields (`application/x-www-form-urlencoded`, at most `formLimit` bytes).
    func readForm(_ r: Request, limit: Int = formLimit) throws(HTTPFailure) -> [String: String] {
        if let length = r.head.contentLength, length > Int64(limit) {
            // Not read: the connection closes after the answer.
            throw .refused(413, "the form is over \(limit) bytes")
        }
        let body = try r.http.readBody(limit: limit, deadline: { .now + self.configuration.idleTimeout })
        return urlEncodedFields(String(decoding: body, as: UTF8.self))
    }

    /// Why a request comes from a page of another site, nil when it does not (or the browser
    /// does not say): its Origin is another (`null`, which pages with `Referrer-Policy:
    /// no-referrer` send for their own forms, says nothing), or its Sec-Fetch-Site is neither
    /// same-origin nor none (typed or bookmarked).
    func otherSite(_ head: HTTPHead) -> String? {
        if let origin = head.header("origin"), origin != "null", origin != "https://" + (head.header("host") ?? "") {
            return "Origin \(quotedForTerminal(origin)) is not this site"
        }
        if let site = head.header("sec-fetch-site"), site != "same-origin", site != "none" {
            return "Sec-Fetch-Site is \(quotedForTerminal(site))"
        }
        return nil
    }

    /// Whether a form carries the session's CSRF token; answers 403 when not.
    func checkToken(_ r: Request, _ form: [String: String], _ route: WebRoute) throws(HTTPFailure) -> Bool {
        if form["csrf"] == r.session!.csrf { return true }
        r.log("refused \(r.head.method) \(quotedForTerminal(r.head.path)) without its CSRF token; answered 403")
        try refuseChange(r, route, "the page's token is missing or out of date: go back, reload the page and try again")
        return false
    }

    private func refuseChange(_ r: Request, _ route: WebRoute, _ why: String, close: Bool = false) throws(HTTPFailure) {
        if route == .upload {
            try json(r, 403, UploadAnswer(message: why), close: true)
        } else {
            try html(r, 403, pages.error(why, viewer: r.viewer), close: close)
        }
    }

    /// The photo with `id`, or nil after answering 404 (or 500 when the library cannot be read).
    func photo(_ r: Request, _ id: Int64) throws(HTTPFailure) -> Photo? {
        let found: Photo?
        do { found = try r.connection.library().photo(id: id) } catch {
            try libraryFailed(r, error)
            return nil
        }
        if found == nil { try html(r, 404, pages.error("No such photo", viewer: r.viewer)) }
        return found
    }

    func libraryFailed(_ r: Request, _ error: LibraryError) throws(HTTPFailure) {
        r.log("library: \(error)")
        let status: Int
        switch error.kind {
        case .notFound: status = 404
        case .refused, .badInput: status = 409
        case .io: status = 500
        }
        try html(r, status, pages.error(error.description, viewer: r.viewer))
    }

    // MARK: Logging in

    func sessionCookie(_ secret: String) -> String {
        "\(Self.cookieName)=\(secret); Path=/; Max-Age=\(WebAccess.sessionLifetime); Secure; HttpOnly; SameSite=Strict"
    }

    func linkLogin(_ r: Request, _ secret: String) throws(HTTPFailure) {
        let result: (WebSession, String)?
        do { result = try access.redeemLink(secret, address: r.connection.address) } catch {
            r.log("cannot use the web login files in \(access.directory): \(error); answered 500")
            try html(r, 500, pages.error("The receiver cannot read its login files; see its log.", viewer: nil))
            return
        }
        guard let (session, cookie) = result else {
            r.log("a login link that was used already, has expired or was never made; answered 401")
            try html(r, 401, pages.login(hasPassword: access.hasPassword, message: "This link was used already or has expired: make a new one with sudo ptk web-link."))
            return
        }
        Log.info("web \(r.connection.id) from \(r.connection.peer): logged in with a one-time link as \(quotedForTerminal(session.name)), session \(session.id)")
        try redirect(r, "/", cookie: sessionCookie(cookie))
    }

    func passwordLogin(_ r: Request) throws(HTTPFailure) {
        // Anyone may post here: the form is read only up to `loginFormLimit`.
        let form = try readForm(r, limit: Self.loginFormLimit)
        let address = r.connection.address
        if let other = otherSite(r.head) {
            r.log("refused a login: \(other); answered 403")
            try html(r, 403, pages.error("This login came from another site", viewer: nil))
            return
        }
        enum Outcome { case lockedOut, everyoneWaits, noPassword, wrong(lockedNow: Bool), right }
        let outcome: Outcome = passwordLock.withLock {
            limiter.expire(now: .now)
            if limiter.isLockedOut(address, now: .now) { return .lockedOut }
            // Too many wrong guesses at this receiver from anywhere: none is checked for a while.
            if guesses.isSpent { return .everyoneWaits }
            guard access.hasPassword else { return .noPassword }
            if access.checkPassword(form["password"] ?? "") {
                limiter.succeeded(address)
                return .right
            }
            guesses.failed("password", from: address)
            return .wrong(lockedNow: limiter.failed(address, now: .now))
        }
        switch outcome {
        case .lockedOut:
            try html(r, 429, pages.login(hasPassword: true, message: "Too many wrong passwords from \(address): try again in 5 minutes."))
        case .everyoneWaits:
            r.log("a login while too many wrong passwords or PINs were given this minute; answered 429")
            try html(r, 429, pages.login(hasPassword: true, message: "Too many wrong passwords were given to this receiver: try again in a minute."))
        case .noPassword:
            try html(r, 401, pages.login(hasPassword: false, message: "No password is set: use a one-time link."))
        case .wrong(let locked):
            r.log("wrong password" + (locked ? "; \(address) must wait 5 minutes" : ""))
            try html(r, locked ? 429 : 401, pages.login(hasPassword: true, message: locked ? "Too many wrong passwords from \(address): try again in 5 minutes." : "Wrong password."))
        case .right:
            let made: (WebSession, String)
            do { made = try access.login(name: form["name"] ?? "", address: address) } catch {
                r.log("cannot write \(access.sessionsFile): \(error); answered 500")
                try html(r, 500, pages.error("The receiver cannot write its sessions file; see its log.", viewer: nil))
                return
            }
            Log.info("web \(r.connection.id) from \(r.connection.peer): logged in with the password as \(quotedForTerminal(made.0.name)), session \(made.0.id)")
            try redirect(r, "/", cookie: sessionCookie(made.1))
        }
    }

    // MARK: Pages and files

    func gallery(_ r: Request) throws(HTTPFailure) {
        let all: [Photo]
        do { all = try r.connection.library().all(sort: .time) } catch { return try libraryFailed(r, error) }
        let sender = r.head.query["sender"].flatMap { $0.isEmpty ? nil : $0 }
        let minRating = r.head.query["rating"].flatMap { Int($0) }.flatMap { (1...5).contains($0) ? $0 : nil }
        let shown = all.reversed().filter { p in
            (sender == nil || p.senderName == sender) && (minRating == nil || (p.rating ?? 0) >= minRating!)
        }
        let senders = Set(all.compactMap(\.senderName)).sorted()
        let page = r.head.query["page"].flatMap { Int($0) }.flatMap { (1...1_000_000).contains($0) ? $0 : nil } ?? 1
        try html(r, 200, pages.gallery(WebPhoto.grouped(shown.map(WebPhoto.init)), total: all.count, senders: senders, sender: sender,
                                       minRating: minRating, page: page, viewer: r.viewer!))
    }

    func photoPage(_ r: Request, _ photo: Photo, message: String? = nil, status: Int = 200) throws(HTTPFailure) {
        let folder: String
        do { folder = try r.connection.library().thumbnailFolder } catch { return try libraryFailed(r, error) }
        try html(r, status, pages.photo(WebPhoto(photo), details: photo.details(thumbnailFolder: folder), viewer: r.viewer!, message: message))
    }

    func thumbnail(_ r: Request, _ photo: Photo) throws(HTTPFailure) {
        let bytes: [UInt8]?
        do { bytes = try r.connection.library().thumbnail(of: photo) } catch { return try libraryFailed(r, error) }
        guard let bytes else {
            try html(r, 404, pages.error("\(photo.name) has no thumbnail: \(photo.problem ?? "not indexed yet")", viewer: r.viewer))
            return
        }
        // The gallery's URL names the photo's content (?v=), so a browser may keep it.
        try respond(r, 200, bytes, type: "image/png", headers: [("Cache-Control", r.head.query["v"] != nil ? "private, max-age=86400" : "no-cache")])
    }

    /// Sends a file, or the part a `Range` header asks for; `download` names it as an attachment.
    func sendFile(_ r: Request, path: String, type: String, download: String?, cache: String = "private, no-cache") throws(HTTPFailure) {
        let fd: FileDescriptor
        let size: Int64
        do {
            fd = try FileDescriptor.open(path, flags: [.readOnly, .noFollow])
            let status = try fd.status()
            size = status.isRegularFile ? status.size : -1
        } catch {
            r.log("cannot open \(path): \(error); answered 404")
            try html(r, 404, pages.error("The photo's file cannot be read: \(error.reason)", viewer: r.viewer))
            return
        }
        defer { fd.close() }
        guard size >= 0 else {
            r.log("\(path) is not a regular file; answered 404")
            try html(r, 404, pages.error("The photo's file is not a regular file", viewer: r.viewer))
            return
        }
        var headers = [("Accept-Ranges", "bytes"), ("Cache-Control", cache)]
        if let download { headers.append(("Content-Disposition", attachment(download))) }
        var start: Int64 = 0, end = size - 1, status = 200
        switch ByteRange(header: r.head.header("range"), size: size) {
        case .whole: break
        case .part(let s, let e):
            (start, end, status) = (s, e, 206)
            headers.append(("Content-Range", "bytes \(s)-\(e)/\(size)"))
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(size)"))
            try respond(r, 416, [], type: type, headers: headers)
            return
        }
        let length = end - start + 1
        try r.http.write(r.http.responseHead(status, contentLength: length, contentType: type, headers: headers, close: false),
                         deadline: .now + configuration.idleTimeout)
        if r.headOnly { return }
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var offset = start
        while offset <= end {
            let want = Int(min(Int64(buffer.count), end - offset + 1))
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
                    try fd.read(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            } catch {
                // The head promised bytes that cannot come: closing is the only honest answer.
                r.log("cannot read \(path) at byte \(offset): \(error); connection closed")
                throw .gone
            }
            if n == 0 {
                r.log("\(path) became shorter while being sent; connection closed")
                throw .gone
            }
            try r.http.write(Array(buffer[..<n]), deadline: .now + configuration.idleTimeout)
            offset += Int64(n)
        }
    }

    /// The photo's `.ptk` package as a zip archive (NAME.ptk/photo.data and photo.metadata):
    /// exported into a folder of its own below the state directory, archived, sent, removed.
    func package(_ r: Request, _ photo: Photo) throws(HTTPFailure) {
        let work = access.directory + "/export-\(randomToken())"
        let folder = work + "/" + Package.folderName(for: photo.name)
        defer {
            // Each export has a folder of its own: whatever of it exists goes now (a file already
            // gone, or a folder not made, is nothing to remove).
            for file in [folder + "/" + Package.dataName, folder + "/" + Package.metadataName, work + "/package.zip"] {
                try? removeFile(file)  // see above
            }
            try? removeDirectory(folder)  // see above
            try? removeDirectory(work)  // see above
        }
        let archive: String
        do {
            try makeDirectories(work, mode: 0o700)
            let library = try r.connection.library()
            _ = try library.export(photo.name, to: work)
            archive = try library.archive(package: folder, to: work + "/package.zip")
        } catch let error as LibraryError {
            return try libraryFailed(r, error)
        } catch {
            return try libraryFailed(r, LibraryError(.io, "cannot make the package: \(error)"))
        }
        try sendFile(r, path: archive, type: "application/zip", download: Package.folderName(for: photo.name) + ".zip", cache: "no-store")
    }

    // MARK: Changes

    func change(_ r: Request, _ photo: Photo, _ change: WebRoute.PhotoChange, _ form: [String: String]) throws(HTTPFailure) {
        let library: PhotoLibrary
        do { library = try r.connection.library() } catch { return try libraryFailed(r, error) }
        // The library's answer first (a name taken, a photo gone), then the page.
        let done = Result { () throws(LibraryError) -> String? in
            switch change {
            case .rename:
                let new = (form["name"] ?? "").trimmingSpaces
                guard !new.isEmpty else { throw LibraryError(.refused, "a name cannot be empty") }
                let renamed = try library.rename(photo.name, to: new)
                r.log("renamed \(quotedForTerminal(photo.name)) to \(quotedForTerminal(renamed.name))")
            case .note:
                let note = form["note"] ?? ""
                _ = try library.setNote(photo.name, note)
                r.log(note.isEmpty ? "cleared the note of \(quotedForTerminal(photo.name))" : "noted \(quotedForTerminal(photo.name))")
            case .rate:
                let text = form["rating"] ?? ""
                var rating: Int? = nil
                if text != "none" && !text.isEmpty {
                    guard let value = Int(text), (0...5).contains(value) else { throw LibraryError(.refused, "a rating is 0 to 5, or none") }
                    rating = value
                }
                _ = try library.setRating(photo.name, rating)
                r.log(rating.map { "rated \(quotedForTerminal(photo.name)) \($0)/5" } ?? "cleared the rating of \(quotedForTerminal(photo.name))")
            case .delete:
                _ = try library.remove(photo.name)
                r.log("deleted \(quotedForTerminal(photo.name))")
                return "/"
            }
            return "/photo/\(photo.id)"
        }
        switch done {
        case .success(let location):
            try redirect(r, location ?? "/")
        case .failure(let error):
            r.log("\(change.rawValue) of \(quotedForTerminal(photo.name)) refused: \(error)")
            if case .refused = error.kind { return try photoPage(r, photo, message: error.description, status: 409) }
            try libraryFailed(r, error)
        }
    }

    // MARK: Uploads

    /// POST /upload?name=NAME with the photo as the body: the store's checks, names and
    /// durability as for every other path; answered `{"name", "duplicate"}` or `{"message"}`.
    func upload(_ r: Request) throws(HTTPFailure) -> Bool {
        let session = r.session!
        let name = r.head.query["name"] ?? ""
        func refuse(_ status: Int, _ why: String) throws(HTTPFailure) -> Bool {
            r.log("refused the upload of \"\(clean(name))\": \(why); answered \(status)")
            // The body is not read: the connection closes after the answer.
            try json(r, status, UploadAnswer(message: why), close: true)
            return false
        }
        guard !name.isEmpty else { return try refuse(400, "the upload has no name (?name=)") }
        guard let size = r.head.contentLength, !r.head.chunked else { return try refuse(411, "the upload must give its Content-Length") }
        guard size <= configuration.maxFileSize else {
            return try refuse(413, "it is \(formatBytes(Double(size))), over this receiver's limit of \(formatBytes(Double(configuration.maxFileSize)))")
        }
        let kept = configuration.photoTypes
        // The type the page read from the file's first bytes (X-Photo-Type), else the name's
        // ending. A claim the bytes belie is refused by the store's check of that type.
        let claimed = r.head.header("x-photo-type").flatMap { PhotoType(mediaType: $0) }
        guard let type = claimed ?? PhotoType(fileName: name), kept.contains(type) else {
            return try refuse(415, "not a type this receiver keeps (it keeps \(kept.map(\.displayName).joined(separator: ", ")))")
        }
        let sender = Sender(announcedName: "web: \(session.name)", id: nil, address: r.connection.peer.description)
        let modified = r.head.header("x-last-modified").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        // Named as ptk-send names what it sends: "holiday.png" holding a JPEG is "holiday.jpg".
        let request = StoreRequest(name: type.fittedName(name), size: size, sha256: "", type: type, sender: sender.announcedName,
                                   modified: modified, folder: arrivals.folder(for: sender))
        let incoming: IncomingFile
        switch store.begin(request) {
        case .success(let f): incoming = f
        case .failure(let failure):
            let (status, why) = LocalSendEndpoint.status(for: failure)
            return try refuse(status, why)
        }
        var received: Int64 = 0
        let started = Instant.now
        let result = Result { () throws(HTTPFailure) in
            try r.http.readBody(into: incoming, size: size, idle: configuration.idleTimeout, received: &received,
                                statusFor: LocalSendEndpoint.status(for:)) {
                shutdown.isRequested ? (503, "the receiver is shutting down") : nil
            }
        }
        if case .failure(let error) = result {
            incoming.abandon(keepForResume: false)
            switch error {
            case .refused(let status, let why): return try refuse(status, why)
            case .timedOut: return try refuse(408, "no bytes within the idle timeout")
            case .interrupted: return try refuse(503, "the receiver is shutting down")
            case .gone, .bodyRefused:
                r.log("the upload of \"\(clean(name))\" ended after \(received) of \(size) bytes: the browser went away")
                return false
            }
        }
        switch incoming.finish() {
        case .success(let saved):
            let seconds = max((Instant.now - started).seconds, 1e-6)
            r.log(saved.isDuplicate ? "\"\(clean(name))\" is already kept as \(quotedForTerminal(saved.name))"
                                    : "saved \(quotedForTerminal(saved.name)), \(formatBytes(Double(saved.size))) in \(formatDecimal(seconds)) s")
            arrivals.saved(saved, type: type, from: sender, deviceID: "web session \(session.id)")
            try json(r, 200, UploadAnswer(name: saved.name, duplicate: saved.isDuplicate))
            return true
        case .failure(let failure):
            let (status, why) = LocalSendEndpoint.status(for: failure)
            r.log("refused \"\(clean(name))\": \(Problem(failure)); answered \(status)")
            try json(r, status, UploadAnswer(message: why))
            return true
        }
    }
}
