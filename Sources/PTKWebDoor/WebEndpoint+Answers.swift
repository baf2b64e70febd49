import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// How the web interface answers: pages, JSON, redirects, its one rendering of refusals, and
/// the library's failures.
extension WebDoor {
    // MARK: Answers

    func html(_ status: HTTPStatus, _ page: String) -> Response {
        .bytes(status, Array(page.utf8), type: "text/html; charset=utf-8", headers: ["Cache-Control": "no-store"])
    }

    func json(_ status: HTTPStatus, _ answer: UploadAnswer) -> Response {
        .bytes(status, jsonBody(answer), type: "application/json", headers: ["Cache-Control": "no-store"])
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
    func redirect(_ location: String, cookie: String? = nil) -> Response {
        var headers: HTTPFields = ["Location": location, "Cache-Control": "no-store"]
        if let cookie { headers.append("Set-Cookie", cookie) }
        return Response(.seeOther, headers: headers)
    }

    /// The door's one rendering of a refusal (a handler's or a step's `.status`, the router's
    /// 404 and 405), for `viewer`: the upload page's script reads `{"message"}`, and an upload
    /// refused closes the connection (its body, perhaps large, is not read); any other request
    /// gets the error page. The router's 405 goes with its Allow and, as always, no Cache-Control.
    func errorResponse(
        _ r: Request, _ status: HTTPStatus, _ message: String, _ headers: HTTPFields, viewer: WebPages.Viewer?
    ) -> Response {
        if r.isUpload { return json(status, UploadAnswer(message: message)).closing() }
        let page = pages.error(message == HTTPError.noSuchRoute ? "No such page" : message, viewer: viewer)
        return .bytes(
            status, Array(page.utf8), type: "text/html; charset=utf-8",
            headers: headers.isEmpty ? ["Cache-Control": "no-store"] : headers)
    }

    /// The answer to a route that needs a session, asked without one: the login page (401),
    /// saying the session ended when a cookie came, and going on to the page asked for once
    /// logged in with the password (a GET's path, when `returnPath` takes it: a device's login
    /// flow opens its page in a browser not logged in yet); an upload's script gets JSON, and
    /// its body is not read (the connection closes after the answer).
    func signedOut(_ r: Request, hadCookie: Bool) throws(HTTPError) -> Response {
        if r.isUpload { return json(.unauthorized, UploadAnswer(message: "log in first")).closing() }
        try r.body.discard(limit: RequestBody.ignoredBodyLimit)
        let asked = r.head.target.parts(separatedBy: "?", maxSplits: 1).first
        let next = r.head.method == "GET" && asked != "/" ? Self.returnPath(asked) : nil
        // A device's login flow: its page's path holds the flow's secret, which no log line shows.
        if asked?.hasPrefix(Self.loginFlowPath + "/flow/") == true {
            r.log("\(r.head.method) of a login flow's page without a session; answered the login page (401)")
        }
        return html(
            .unauthorized,
            pages.login(
                hasPassword: access.hasPassword, message: hadCookie ? "Your session has ended: log in again." : nil,
                next: next))
    }

    /// The photo the route's `{id}` names; 404 when there is none (500 when the library cannot be read).
    func photo(_ r: Request, _ c: SignedIn) throws(HTTPError) -> Photo {
        let id = try r.parameters.require("id", as: Int64.self)
        let found: Photo?
        do { found = try c.connection.library().photo(id: id) } catch { throw libraryFailed(r, error) }
        guard let found else { throw .status(.notFound, "No such photo") }
        return found
    }

    /// The refusal for a failure of the library, logged.
    func libraryFailed(_ r: Request, _ error: LibraryError) -> HTTPError {
        r.log("library: \(error)")
        let status: HTTPStatus
        switch error.kind {
        case .notFound: status = .notFound
        case .refused, .badInput: status = .conflict
        case .io: status = .internalServerError
        }
        return .status(status, error.description)
    }
}
