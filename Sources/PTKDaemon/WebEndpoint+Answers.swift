import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// How the web interface answers: pages, JSON, redirects, and the library's failures.
extension WebEndpoint {
    // MARK: Answers

    func respond(_ r: WebRequest, _ status: Int, _ body: [UInt8], type: String, headers: [(String, String)] = [], close: Bool = false) throws(HTTPError) {
        try r.http.respond(status, body, contentType: type, headers: headers, close: close, headOnly: r.headOnly,
                           deadline: .now + configuration.idleTimeout)
    }

    func html(_ r: WebRequest, _ status: Int, _ page: String, close: Bool = false) throws(HTTPError) {
        try respond(r, status, Array(page.utf8), type: "text/html; charset=utf-8", headers: [("Cache-Control", "no-store")], close: close)
    }

    func json(_ r: WebRequest, _ status: Int, _ answer: UploadAnswer, close: Bool = false) throws(HTTPError) {
        try respond(r, status, jsonBody(answer), type: "application/json", headers: [("Cache-Control", "no-store")], close: close)
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
    func redirect(_ r: WebRequest, _ location: String, cookie: String? = nil) throws(HTTPError) {
        var headers = [("Location", location), ("Cache-Control", "no-store")]
        if let cookie { headers.append(("Set-Cookie", cookie)) }
        try respond(r, 303, [], type: "text/plain", headers: headers)
    }

    /// Reads and drops a request's body (up to a limit).
    func skipBody(_ r: WebRequest) throws(HTTPError) {
        _ = try r.http.readBody(limit: HTTPService<WebContext>.ignoredBodyLimit, deadline: { .now + self.configuration.idleTimeout })
    }

    /// The photo the route's `{id}` names, or nil after answering 404 (or 500 when the library cannot be read).
    func photo(_ r: WebRequest) throws(HTTPError) -> Photo? {
        let found: Photo?
        do { found = try r.context.connection.library().photo(id: r.parameters.int64("id") ?? 0) } catch {
            try libraryFailed(r, error)
            return nil
        }
        if found == nil { try html(r, 404, pages.error("No such photo", viewer: r.viewer)) }
        return found
    }

    func libraryFailed(_ r: WebRequest, _ error: LibraryError) throws(HTTPError) {
        r.log("library: \(error)")
        let status: Int
        switch error.kind {
        case .notFound: status = 404
        case .refused, .badInput: status = 409
        case .io: status = 500
        }
        try html(r, status, pages.error(error.description, viewer: r.viewer))
    }
}
