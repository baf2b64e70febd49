/// The OCS API's two versions: v1 answers HTTP 200 with the outcome in its body's status code
/// (100 for done), v2 answers the outcome as the HTTP status and repeats it in the body.
public enum OCSVersion: String, Sendable, CaseIterable {
    case v1, v2

    /// `/ocs/v1.php` or `/ocs/v2.php`.
    public var path: String { "/ocs/\(rawValue).php" }
}

/// How an OCS answer is written: XML unless the client asks for JSON (`?format=json`, or an
/// Accept header naming `application/json` with no `format` in the query).
public enum OCSFormat: Sendable, Equatable {
    case json, xml

    /// The format a request asks for.
    public static func asked(format: String?, accept: String?) -> OCSFormat {
        if let format { return format.lowercased() == "json" ? .json : .xml }
        return accept?.lowercased().contains("application/json") == true ? .json : .xml
    }

    /// The answer's media type.
    public var contentType: String {
        self == .json ? "application/json; charset=utf-8" : "text/xml; charset=UTF-8"
    }
}

/// One OCS answer: `data` in the envelope (`ocs.meta`, `ocs.data`) as the clients parse it.
public struct OCSAnswer: Sendable, Equatable {
    /// The HTTP status the answer goes out with.
    public let httpStatus: Int
    /// The body, in the format asked for.
    public let body: String
    /// Its media type.
    public let contentType: String

    /// An answer of `status` (an HTTP status: 200 done, 401, 404) carrying `data` (v2's status
    /// is HTTP's; v1's is 100 for done, 997 for 401, 998 for 404, and HTTP says 200 but for 401).
    public init(_ version: OCSVersion, _ format: OCSFormat, status: Int = 200, message: String = "OK", data: OCSValue) {
        let done = status < 300
        let code: Int64
        switch version {
        case .v2: code = Int64(status)
        case .v1: code = done ? 100 : status == 401 ? 997 : status == 404 ? 998 : 996
        }
        let meta: OCSValue = .object([
            ("status", .string(done ? "ok" : "failure")), ("statuscode", .int(code)), ("message", .string(message)),
            ("totalitems", .string("")), ("itemsperpage", .string("")),
        ])
        switch format {
        case .json:
            body = OCSValue.object([("ocs", .object([("meta", meta), ("data", data)]))]).json
        case .xml:
            body =
                "<?xml version=\"1.0\"?>\n<ocs><meta>" + meta.xml + "</meta><data>" + data.xml + "</data></ocs>\n"
        }
        httpStatus = version == .v2 || status == 401 ? status : 200
        contentType = format.contentType
    }
}
