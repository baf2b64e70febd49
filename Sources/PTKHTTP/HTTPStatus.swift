/// A response's status code, with the reason phrase its status line carries.
public struct HTTPStatus: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The status code as it goes on the status line (100 to 599).
    public let code: Int

    /// `code` must be a three-digit status (100 to 599).
    public init(_ code: Int) {
        precondition((100...599).contains(code), "HTTP status \(code)")
        self.code = code
    }

    /// A literal status (`200`); a code outside 100 to 599 stops, as `init(_:)` does.
    public init(integerLiteral code: Int) { self.init(code) }

    /// The bare code, for log lines.
    public var description: String { "\(code)" }

    /// 200: the request succeeded and the body is the answer.
    public static let ok: HTTPStatus = 200
    /// 201: a new resource was made (a photo saved, a collection made).
    public static let created: HTTPStatus = 201
    /// 204: done, with no body to send.
    public static let noContent: HTTPStatus = 204
    /// 206: the one byte range a `Range` header asked for (RFC 9110 §15.3.7).
    public static let partialContent: HTTPStatus = 206
    /// 207: WebDAV's answer of one status per resource, in XML (RFC 4918 §13).
    public static let multiStatus: HTTPStatus = 207
    /// 303: go to `Location` with a GET (after a form is posted).
    public static let seeOther: HTTPStatus = 303
    /// 400: the request is malformed.
    public static let badRequest: HTTPStatus = 400
    /// 401: credentials are missing or wrong; sent with a `WWW-Authenticate` challenge.
    public static let unauthorized: HTTPStatus = 401
    /// 403: the sender is known but may not do this (or a CSRF check failed).
    public static let forbidden: HTTPStatus = 403
    /// 404: no route has this path, or the resource is not there.
    public static let notFound: HTTPStatus = 404
    /// 405: the path exists but not with this method; sent with `Allow`.
    public static let methodNotAllowed: HTTPStatus = 405
    /// 408: the request did not arrive in time.
    public static let requestTimeout: HTTPStatus = 408
    /// 409: the request conflicts with what is there (a WebDAV resource whose folder does not exist).
    public static let conflict: HTTPStatus = 409
    /// 411: the body's length must be known before its first byte and the request does not give it.
    public static let lengthRequired: HTTPStatus = 411
    /// 412: a condition of the request does not hold (WebDAV's `If` header, `Overwrite: F`).
    public static let preconditionFailed: HTTPStatus = 412
    /// 413: the body is over the door's size limit.
    public static let contentTooLarge: HTTPStatus = 413
    /// 415: the body's type is not one kept here (a photo type the configuration leaves out).
    public static let unsupportedMediaType: HTTPStatus = 415
    /// 416: the `Range` starts at or past the end of the file; sent with `Content-Range: bytes */size`.
    public static let rangeNotSatisfiable: HTTPStatus = 416
    /// 422: well-formed but wrong content, such as a SHA-256 that does not match the bytes (RFC 9110 §15.5.21).
    public static let unprocessableContent: HTTPStatus = 422
    /// 423: the WebDAV resource is locked by another lock token (RFC 4918 §11.3).
    public static let locked: HTTPStatus = 423
    /// 429: the sender is over a rate or failure limit; try again later.
    public static let tooManyRequests: HTTPStatus = 429
    /// 500: the daemon failed at something that was not the request's fault.
    public static let internalServerError: HTTPStatus = 500
    /// 503: not now (shutting down, or too busy); may carry `Retry-After`.
    public static let serviceUnavailable: HTTPStatus = 503
    /// 507: the disk would go below min-free (RFC 4918 §11.5).
    public static let insufficientStorage: HTTPStatus = 507

    /// Whether the status says something went wrong (4xx, 5xx): the request log's test.
    public var isError: Bool { code >= 400 }

    /// The reason phrase of the status line.
    public var reason: String {
        switch code {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 207: return "Multi-Status"
        case 303: return "See Other"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 412: return "Precondition Failed"
        case 416: return "Range Not Satisfiable"
        case 422: return "Unprocessable Content"
        case 423: return "Locked"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        case 507: return "Insufficient Storage"
        default: return code < 500 ? "Client Error" : "Internal Server Error"
        }
    }
}
