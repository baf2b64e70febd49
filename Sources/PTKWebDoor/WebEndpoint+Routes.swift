import PTKConfiguration
import PTKDAVDoor
import PTKHTTP
import PTKLibrary
import PTKLog
import PTKPhotoPages
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// What a web request carries besides its head: the door, the browser connection (and its
/// library handle), the session its cookie names (`WebDoor.signIn`) and a `.form` change's
/// form (`WebDoor.csrf`).
struct WebContext {
    let door: WebDoor
    let connection: WebConnection
    /// Nil without a session: only `.open` routes get that far.
    var session: WebSession?
    /// The form of a `.form` change, read (and its token checked) before the handler runs.
    var form: [String: String] = [:]

    /// Who the pages are for (nil without a session: the login page, errors).
    var viewer: WebPages.Viewer? { session.map { WebPages.Viewer(name: $0.name, csrf: $0.csrf) } }

    /// The context of a route behind the session; a request without one is refused 401 (the
    /// `signIn` step refuses it first, with the login page).
    func signedIn() throws(HTTPError) -> SignedIn {
        guard let session else { throw .status(.unauthorized, "log in first") }
        return SignedIn(door: door, connection: connection, session: session, form: form)
    }
}

/// The context of every route but the login's and the static files': the session is there.
struct SignedIn {
    let door: WebDoor
    let connection: WebConnection
    let session: WebSession
    /// The form of a `.form` change (its token already checked); empty for other routes.
    let form: [String: String]

    /// Who the pages are for.
    var viewer: WebPages.Viewer { WebPages.Viewer(name: session.name, csrf: session.csrf) }
}

extension Request {
    /// POST /upload, by the target as sent (as the router matched it): its refusals are JSON,
    /// for the upload page's script.
    var isUpload: Bool { head.method == "POST" && head.target.parts(separatedBy: "?", maxSplits: 1).first == "/upload" }
}

/// The web interface's route table and the steps in front of it. Photos are named by their
/// library id (`/photo/42`), never by a path: no request can name a file, so `..`, encoded
/// slashes and the like reach nothing (404). Only the login page, logging in and the files
/// they need are `.open`, and a phone app's login flow's start and poll (`addLoginFlowRoutes`;
/// its page is behind the session); anything else, even a path that does not exist, needs a
/// session and otherwise gets the login page (which tells nothing). Changes (`.change`) must
/// come from this site with the session's CSRF token (`csrf`). Built once; every handler
/// reaches the door through its context.
extension WebDoor {
    static let routes: RouteTable<WebContext> = {
        var routes = RouteTable<WebContext>()
        let id: [String: PathCapture] = ["id": .id]
        let secret: [String: PathCapture] = ["secret": .lowerHex(32)]
        routes.add([.get, .head], "/login", traits: .open) { _, c throws(HTTPError) in c.door.loginPage(c) }
        routes.add([.post], "/login", traits: [.open, .body]) { r, c throws(HTTPError) in try c.door.passwordLogin(r) }
        // Only GET spends a one-time link: a HEAD (a chat app's link preview, a checker) gets
        // what the login page would answer, and the link stays good for the person it was for.
        routes.add([.get], "/login/{secret}", captures: secret, traits: .open) { r, c throws(HTTPError) in
            c.door.linkLogin(r, try r.parameters.require("secret", as: String.self))
        }
        routes.add([.head], "/login/{secret}", captures: secret, traits: .open) { _, c throws(HTTPError) in
            c.door.loginPage(c)
        }
        routes.add(
            [.get, .head], "/static/{asset}", captures: ["asset": .oneOf(WebAsset.allCases.map(\.rawValue))],
            traits: .open
        ) {
            r, _ throws(HTTPError) in
            guard let asset = WebAsset(rawValue: try r.parameters.require("asset", as: String.self)) else {
                throw .status(.notFound, HTTPError.noSuchRoute)
            }
            return .bytes(.ok, asset.bytes, type: asset.contentType, headers: ["Cache-Control": "no-cache"])
        }
        addLoginFlowRoutes(&routes)
        routes.group({ _, c throws(HTTPError) in try c.signedIn() }) { routes in
            addLoginFlowPages(&routes)
            routes.add([.get, .head], "/") { r, c throws(HTTPError) in try c.door.gallery(r, c) }
            routes.add([.post], "/logout", traits: [.change, .form]) { r, c throws(HTTPError) in c.door.logout(r, c) }
            routes.add([.get, .head], "/upload") { _, c throws(HTTPError) in
                let settings = c.door.configuration
                return c.door.html(
                    .ok, c.door.pages.upload(types: settings.types, maxFileSize: settings.maxFileSize, viewer: c.viewer)
                )
            }
            routes.add([.post], "/upload", traits: [.change, .body]) { r, c throws(HTTPError) in
                try c.door.upload(r, c)
            }
            routes.add([.get, .head], "/photo/{id}", captures: id) { r, c throws(HTTPError) in
                try c.door.photoPage(c, try c.door.photo(r, c))
            }
            routes.add([.get, .head], "/photo/{id}/original", captures: id) { r, c throws(HTTPError) in
                let photo = try c.door.photo(r, c)
                return try c.door.sendFile(
                    r, path: c.connection.directory + "/" + photo.name, type: photo.type.mediaType,
                    download: r.query["download"] != nil ? lastPathComponent(photo.name) : nil)
            }
            // The gallery's thumbnails by side; without one, the larger (old addresses, the delete page).
            routes.add(
                [.get, .head], "/photo/{id}/thumbnail/{side}",
                captures: ["id": .id, "side": .oneOf(Thumbnailer.gallerySides.map(String.init))]
            ) { r, c throws(HTTPError) in
                try c.door.thumbnail(
                    r, c, try c.door.photo(r, c), side: Int(try r.parameters.require("side", as: Int64.self)))
            }
            routes.add([.get, .head], "/photo/{id}/thumbnail", captures: id) { r, c throws(HTTPError) in
                try c.door.thumbnail(r, c, try c.door.photo(r, c), side: Thumbnailer.gallerySides.last!)
            }
            routes.add([.get, .head], "/photo/{id}/preview", captures: id) { r, c throws(HTTPError) in
                try c.door.preview(r, c, try c.door.photo(r, c))
            }
            routes.add([.get, .head], "/view/{id}", captures: id) { r, c throws(HTTPError) in
                try c.door.viewerPage(r, c, try c.door.photo(r, c))
            }
            routes.add([.get, .head], "/photo/{id}/package", captures: id) { r, c throws(HTTPError) in
                try c.door.package(r, c, try c.door.photo(r, c))
            }
            routes.add([.get, .head], "/photo/{id}/delete", captures: id) { r, c throws(HTTPError) in
                c.door.html(.ok, c.door.pages.confirmDelete(WebPhoto(try c.door.photo(r, c)), viewer: c.viewer))
            }
            for change in PhotoChange.allCases {
                routes.add([.post], "/photo/{id}/\(change.rawValue)", captures: id, traits: [.change, .form]) {
                    r, c throws(HTTPError) in
                    try c.door.change(r, c, try c.door.photo(r, c), change)
                }
            }
        }
        return routes
    }()

    /// The door's HTTP side for one browser connection: the steps every request passes
    /// (`signIn`, `renderErrors`, `csrf`), refusals rendered by `errorResponse`, and a log line
    /// for each error no handler logged.
    func responder(connection: WebConnection) -> HTTPResponder<WebContext> {
        HTTPResponder(
            routes: Self.routes, middleware: [Self.signIn, Self.renderErrors, Self.csrf], kind: "web",
            logBudget: requestLogBudget, requestLog: requestLogBudget, log: { Log.info($0) },
            context: { _ in WebContext(door: self, connection: connection) },
            renderError: { r, status, message, headers in self.errorResponse(r, status, message, headers, viewer: nil) }
        )
    }

    /// Finds the session the cookie names (it then proves the connection and names the log's
    /// subject); a route that is not `.open` without one gets the login page (`signedOut`).
    static let signIn: RouteMiddleware<WebContext> = { r, c, next throws(HTTPError) in
        var c = c
        let secret = cookies(r.head.header("cookie"))[cookieName]
        if let session = secret.flatMap({ c.door.access.session(secret: $0) }) {
            c.session = session
            r.logSubject = "(\(quotedForTerminal(session.name)), session \(session.id))"
            r.proven()
        } else if !r.traits.contains(.open) {
            return try c.door.signedOut(r, hadCookie: secret != nil)
        }
        return try next(r, c)
    }

    /// A handler's (and the router's) refusal as the page, or the upload's JSON, for whoever
    /// is logged in (`errorResponse`).
    static let renderErrors: RouteMiddleware<WebContext> = { r, c, next throws(HTTPError) in
        do throws(HTTPError) { return try next(r, c) } catch {
            guard case .status(let status, let message, let headers) = error else { throw error }
            return c.door.errorResponse(r, status, message, headers, viewer: c.viewer)
        }
    }

    /// Changes only from this site's own pages, with the session's token: a change from
    /// another site (Origin, Sec-Fetch-Site) is refused before its body is read (the connection
    /// closes); a `.form` route's form is read (up to `formLimit`: 413 beyond, not read) into
    /// the context and must hold the token as `csrf`; any other change must send it as
    /// `X-CSRF-Token` (refused unread, closing).
    static let csrf: RouteMiddleware<WebContext> = { r, c, next throws(HTTPError) in
        guard r.traits.contains(.change) else { return try next(r, c) }
        if let other = otherSite(r.head) {
            r.log("refused \(r.head.method) \(quotedForLog(WebDoor.pathForLog(r))): \(other); answered 403")
            return c.door.errorResponse(r, .forbidden, "this change came from another site", [], viewer: c.viewer)
                .closing()
        }
        var c = c
        let expected = c.session?.csrf
        if r.traits.contains(.form) {
            c.form = try readForm(r, limit: formLimit)
            guard let expected, c.form["csrf"] == expected else { return c.door.refuseMissingToken(r, c) }
        } else {
            guard let expected, r.head.header("x-csrf-token") == expected else {
                return c.door.refuseMissingToken(r, c).closing()
            }
        }
        return try next(r, c)
    }

    /// A change without the session's token: the upload page's script reads JSON, a form's page HTML.
    private func refuseMissingToken(_ r: Request, _ c: WebContext) -> Response {
        if r.isUpload {
            r.log("refused an upload without its CSRF token; answered 403")
            return errorResponse(
                r, .forbidden, "the page's token is missing or out of date: reload the page", [], viewer: c.viewer)
        }
        r.log("refused \(r.head.method) \(quotedForLog(Self.pathForLog(r))) without its CSRF token; answered 403")
        return errorResponse(
            r, .forbidden, "the page's token is missing or out of date: go back, reload the page and try again", [],
            viewer: c.viewer)
    }

    /// A form's fields (`application/x-www-form-urlencoded`, at most `limit` bytes: a longer one
    /// announced by its Content-Length is refused 413 unread, and the connection closes).
    static func readForm(_ r: Request, limit: Int) throws(HTTPError) -> [String: String] {
        if let length = r.head.contentLength, length > Int64(limit) {
            throw .refused(413, "the form is over \(limit) bytes")
        }
        return urlEncodedFields(String(decoding: try r.body.collect(limit: limit), as: UTF8.self))
    }
}
