/// A response's status code, with the reason phrase its status line carries.
public struct HTTPStatus: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    public let code: Int

    /// `code` must be a three-digit status (100 to 599).
    public init(_ code: Int) {
        precondition((100...599).contains(code), "HTTP status \(code)")
        self.code = code
    }

    public init(integerLiteral code: Int) { self.init(code) }

    public var description: String { "\(code)" }

    public static let ok: HTTPStatus = 200
    public static let created: HTTPStatus = 201
    public static let noContent: HTTPStatus = 204
    public static let partialContent: HTTPStatus = 206
    public static let multiStatus: HTTPStatus = 207
    public static let seeOther: HTTPStatus = 303
    public static let badRequest: HTTPStatus = 400
    public static let unauthorized: HTTPStatus = 401
    public static let forbidden: HTTPStatus = 403
    public static let notFound: HTTPStatus = 404
    public static let methodNotAllowed: HTTPStatus = 405
    public static let requestTimeout: HTTPStatus = 408
    public static let conflict: HTTPStatus = 409
    public static let lengthRequired: HTTPStatus = 411
    public static let preconditionFailed: HTTPStatus = 412
    public static let contentTooLarge: HTTPStatus = 413
    public static let unsupportedMediaType: HTTPStatus = 415
    public static let rangeNotSatisfiable: HTTPStatus = 416
    public static let unprocessableContent: HTTPStatus = 422
    public static let locked: HTTPStatus = 423
    public static let tooManyRequests: HTTPStatus = 429
    public static let internalServerError: HTTPStatus = 500
    public static let serviceUnavailable: HTTPStatus = 503
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
