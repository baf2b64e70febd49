import PTKCloud
import PTKHTTP
import PTKLog
import PTKTrust
import PTKVocabulary

/// What a request of the Nextcloud-compatible door starts from: the door, and once
/// `CloudEndpoint.authenticated` checked it, the app password.
package struct CloudContext {
    let door: CloudEndpoint
}

/// The Nextcloud-compatible door's own answers on the web port (docs/OPERATIONS.md "Phones
/// backing up on their own"): `status.php`, the connectivity check (`/index.php/204`) and the
/// OCS API the apps read at start (`/ocs/v1.php`, `/ocs/v2.php`: capabilities, the user,
/// config, and empty answers for what ptk does not do). The files themselves are the WebDAV
/// door's (`/remote.php/dav/files/NAME`, `/remote.php/dav/uploads/NAME`, `/remote.php/webdav`),
/// and logging in is the web door's (`/index.php/login/v2`). What clients need to accept the
/// server is pure (`CloudDocuments`); this module only routes and checks passwords.
package final class CloudEndpoint: @unchecked Sendable {
    /// Checks a request's app password (the WebDAV door's check: Basic auth, throttled, 401
    /// with the challenge, 429 past the password's share of connections).
    let authenticate: (Request) throws(HTTPError) -> AppPassword
    /// The room the receiver has for a password's photos beyond `min-free` (nil: unknown), and
    /// the bytes that password sent.
    let usage: (AppPassword) -> (free: Int64?, used: Int64)
    /// The `Date` header every answer carries (the sync clients read it on each).
    let date: () -> (String, String)
    let requestLogBudget = LogBudget(perMinute: 30)

    package init(
        authenticate: @escaping (Request) throws(HTTPError) -> AppPassword,
        usage: @escaping (AppPassword) -> (free: Int64?, used: Int64), date: @escaping () -> (String, String)
    ) {
        self.authenticate = authenticate
        self.usage = usage
        self.date = date
    }

    /// The paths the door answers (as sent, query aside): `/status.php`, `/index.php/204`,
    /// and everything under `/ocs/`.
    package static func isCloudTarget(_ target: String) -> Bool {
        let path = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        return path == "/status.php" || path == "/index.php/204" || path.hasPrefix("/ocs/")
    }

    /// The door's HTTP side for one web connection.
    package func responder() -> HTTPResponder<CloudContext> {
        HTTPResponder(
            routes: Self.routes, middleware: [Self.dated], kind: "nextcloud-compatible", logBudget: requestLogBudget,
            requestLog: requestLogBudget, log: { Log.info($0) }, context: { _ in CloudContext(door: self) },
            renderError: { r, status, message, headers in Self.errorResponse(r, status, message, headers) })
    }

    /// Adds the `Date` header to every answer, refusals included.
    static let dated: RouteMiddleware<CloudContext> = { r, c, next throws(HTTPError) in
        var response: Response
        do throws(HTTPError) { response = try next(r, c) } catch {
            guard case .status(let status, let message, let headers) = error else { throw error }
            response = errorResponse(r, status, message, headers)
        }
        let (name, value) = c.door.date()
        response.headers.append(name, value)
        return response
    }

    /// A refusal: OCS's envelope under `/ocs/` (so an app reads it as an OCS failure), plain
    /// text elsewhere. A 429 closes the connection, as the WebDAV door's does.
    static func errorResponse(_ r: Request, _ status: HTTPStatus, _ message: String, _ headers: HTTPFields)
        -> Response
    {
        let text =
            status == .notFound && message == HTTPError.noSuchRoute ? "no such resource on this receiver" : message
        let response: Response
        if let version = ocsVersion(r) {
            let answer = OCSAnswer(version, format(r), status: status.code, message: text, data: .array([]))
            response = .bytes(
                HTTPStatus(answer.httpStatus), Array(answer.body.utf8), type: answer.contentType, headers: headers)
        } else {
            response = .bytes(status, Array((text + "\n").utf8), type: "text/plain; charset=utf-8", headers: headers)
        }
        return status == .tooManyRequests ? response.closing() : response
    }

    /// The OCS version a target is under, nil when it is not under `/ocs/v1.php` or `/ocs/v2.php`.
    static func ocsVersion(_ r: Request) -> OCSVersion? {
        let path = r.head.target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        return OCSVersion.allCases.first { path == $0.path || path.hasPrefix($0.path + "/") }
    }

    /// The format a request asks its OCS answer in.
    static func format(_ r: Request) -> OCSFormat {
        OCSFormat.asked(format: r.query["format"], accept: r.head.header("accept"))
    }

    /// An OCS answer of `data`.
    static func ocs(_ r: Request, _ version: OCSVersion, _ data: OCSValue) -> Response {
        let answer = OCSAnswer(version, format(r), data: data)
        return .bytes(HTTPStatus(answer.httpStatus), Array(answer.body.utf8), type: answer.contentType)
    }
}
