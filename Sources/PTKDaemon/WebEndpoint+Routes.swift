import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKPhotoPages
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// What a web request carries besides its head: the browser connection (and its library
/// handle) and, once `CookieSession` found it, the session.
struct WebContext {
    let connection: WebConnection
    var session: WebSession?
}

typealias WebRequest = HTTPRequest<WebContext>

extension HTTPRequest where Context == WebContext {
    /// Who the pages are for (nil without a session: the login page, errors).
    var viewer: WebPages.Viewer? { context.session.map { WebPages.Viewer(name: $0.name, csrf: $0.csrf) } }
    /// POST /upload, by the target as sent (as the router matched it): its refusals are JSON,
    /// for the upload page's script.
    var isUpload: Bool { head.method == "POST" && head.target.parts(separatedBy: "?", maxSplits: 1).first == "/upload" }
}

/// The web interface's route table and the middleware in front of it. Photos are named by
/// their library id (`/photo/42`), never by a path: no request can name a file, so `..`,
/// encoded slashes and the like reach nothing (404). Only the login page, logging in and the
/// files they need are `.open`; anything else, even a path that does not exist, needs a
/// session and otherwise gets the login page (which tells nothing). Changes (`.change`) must
/// come from this site with the session's CSRF token (`CSRFCheck`).
extension WebEndpoint {
    static let getOrHead = ["GET", "HEAD"]

    func router() -> Router<WebContext> {
        var router = Router<WebContext>()
        let id = ["id": PathCapture.id]
        router.add(Self.getOrHead, "/") { r throws(HTTPError) in try self.gallery(r); return true }
        router.add(Self.getOrHead, "/login", traits: .open) { r throws(HTTPError) in try self.loginPage(r); return true }
        router.add(["POST"], "/login", traits: [.open, .body]) { r throws(HTTPError) in try self.passwordLogin(r); return true }
        // Only GET spends a one-time link: a HEAD (a chat app's link preview, a checker) gets
        // what the login page would answer, and the link stays good for the person it was for.
        router.add(["GET"], "/login/{secret}", captures: ["secret": .lowerHex(32)], traits: .open) { r throws(HTTPError) in
            try self.linkLogin(r, r.parameters["secret"]!); return true
        }
        router.add(["HEAD"], "/login/{secret}", captures: ["secret": .lowerHex(32)], traits: .open) { r throws(HTTPError) in
            try self.loginPage(r); return true
        }
        router.add(["POST"], "/logout", traits: [.change, .form]) { r throws(HTTPError) in try self.logout(r); return true }
        router.add(Self.getOrHead, "/static/{asset}", captures: ["asset": .oneOf(WebAsset.allCases.map(\.rawValue))], traits: .open) {
            r throws(HTTPError) in
            let asset = WebAsset(rawValue: r.parameters["asset"]!)!
            try self.respond(r, 200, asset.bytes, type: asset.contentType, headers: [("Cache-Control", "no-cache")])
            return true
        }
        router.add(Self.getOrHead, "/upload") { r throws(HTTPError) in
            try self.html(r, 200, self.pages.upload(types: self.configuration.types, maxFileSize: self.configuration.maxFileSize, viewer: r.viewer!))
            return true
        }
        router.add(["POST"], "/upload", traits: [.change, .body]) { r throws(HTTPError) in try self.upload(r) }
        router.add(Self.getOrHead, "/photo/{id}", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.photoPage(r, photo) }
            return true
        }
        router.add(Self.getOrHead, "/photo/{id}/original", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) {
                try self.sendFile(r, path: r.context.connection.directory + "/" + photo.name, type: photo.type.mediaType,
                                  download: r.head.query["download"] != nil ? lastPathComponent(photo.name) : nil)
            }
            return true
        }
        // The gallery's thumbnails by side; without one, the larger (old addresses, the delete page).
        router.add(Self.getOrHead, "/photo/{id}/thumbnail/{side}",
                   captures: ["id": .id, "side": .oneOf(Thumbnailer.gallerySides.map(String.init))]) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.thumbnail(r, photo, side: Int(r.parameters["side"]!)!) }
            return true
        }
        router.add(Self.getOrHead, "/photo/{id}/thumbnail", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.thumbnail(r, photo, side: Thumbnailer.gallerySides.last!) }
            return true
        }
        router.add(Self.getOrHead, "/photo/{id}/preview", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.preview(r, photo) }
            return true
        }
        router.add(Self.getOrHead, "/view/{id}", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.viewerPage(r, photo) }
            return true
        }
        router.add(Self.getOrHead, "/photo/{id}/package", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.package(r, photo) }
            return true
        }
        router.add(Self.getOrHead, "/photo/{id}/delete", captures: id) { r throws(HTTPError) in
            if let photo = try self.photo(r) { try self.html(r, 200, self.pages.confirmDelete(WebPhoto(photo), viewer: r.viewer!)) }
            return true
        }
        for change in PhotoChange.allCases {
            router.add(["POST"], "/photo/{id}/\(change.rawValue)", captures: id, traits: [.change, .form]) { r throws(HTTPError) in
                if let photo = try self.photo(r) { try self.change(r, photo, change, r.form) }
                return true
            }
        }
        return router
    }

    func service() -> HTTPService<WebContext> {
        let session = CookieSession<WebContext, WebSession>(
            cookieName: Self.cookieName, lookup: { self.access.session(secret: $0) },
            keep: { r, session in
                r.context.session = session
                r.logSubject = "(\(quotedForTerminal(session.name)), session \(session.id))"
            },
            refuse: { (r: WebRequest, hadCookie: Bool) throws(HTTPError) -> Bool in
                if r.isUpload {
                    // The body is not read: the connection closes after the answer.
                    try self.json(r, 401, UploadAnswer(message: "log in first"), close: true)
                    return false
                }
                try self.skipBody(r)
                try self.html(r, 401, self.pages.login(hasPassword: self.access.hasPassword,
                                                      message: hadCookie ? "Your session has ended: log in again." : nil))
                return true
            })
        let csrf = CSRFCheck<WebContext>(formLimit: Self.formLimit, idle: configuration.idleTimeout, expectedToken: { $0.context.session?.csrf },
                                         refuse: { (r: WebRequest, refusal: CSRFCheck<WebContext>.Refusal, close: Bool) throws(HTTPError) -> Bool in
            try self.refuseChange(r, refusal, close: close)
        })
        let middleware: [any HTTPMiddleware<WebContext>] = [SecurityHeaders(Self.securityHeaders), RequestLog(budget: requestLogBudget), session, csrf]
        return HTTPService(kind: "web", router: router(), middleware: middleware, idle: configuration.idleTimeout, logBudget: requestLogBudget,
                           log: { Log.info($0) }) {
            (r: WebRequest, status: Int, allow: String?) throws(HTTPError) in
            if let allow {
                try self.respond(r, status, Array(self.pages.error("\(r.head.method) is not allowed here", viewer: r.viewer).utf8),
                                 type: "text/html; charset=utf-8", headers: [("Allow", allow)])
            } else {
                try self.html(r, status, self.pages.error("No such page", viewer: r.viewer))
            }
        }
    }

    /// A change refused by `CSRFCheck`: the upload page's script reads JSON, a form's page HTML.
    private func refuseChange(_ r: WebRequest, _ refusal: CSRFCheck<WebContext>.Refusal, close: Bool) throws(HTTPError) -> Bool {
        let upload = r.isUpload
        let why: String
        switch refusal {
        case .otherSite(let other):
            r.log("refused \(r.head.method) \(quotedForLog(r.head.path)): \(other); answered 403")
            why = "this change came from another site"
        case .missingToken where upload:
            r.log("refused an upload without its CSRF token; answered 403")
            why = "the page's token is missing or out of date: reload the page"
        case .missingToken:
            r.log("refused \(r.head.method) \(quotedForLog(r.head.path)) without its CSRF token; answered 403")
            why = "the page's token is missing or out of date: go back, reload the page and try again"
        }
        if upload {
            try json(r, 403, UploadAnswer(message: why), close: true)
            return false
        }
        try html(r, 403, pages.error(why, viewer: r.viewer), close: close)
        return !close
    }
}
