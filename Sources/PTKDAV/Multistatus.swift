import PTKVocabulary

/// The XML the door answers with: 207 Multi-Status bodies (RFC 4918 section 13), written a
/// response at a time so the door can stream a large PROPFIND, and precondition error bodies
/// (section 16).
public enum Multistatus {
    /// The start of a 207 body: the XML declaration and `<D:multistatus>` declaring `D`.
    public static let head = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus xmlns:D=\"DAV:\">"
    /// The end of a 207 body.
    public static let tail = "</D:multistatus>\n"

    /// One `<D:response>` (section 14.24): the href, then a `<D:propstat>` per status, each with
    /// its properties. A value is already-serialized inner XML ("" writes an empty element); a
    /// property in DAV: is written `<D:local>`, one in another namespace `<P:local
    /// xmlns:P="namespace">` (the declaration on the property itself, so values may use any
    /// prefix of their own but `P` for another namespace only if they declare it), one in no
    /// namespace `<local xmlns="">`. `href` is written escaped, so pass it as it goes on the wire
    /// (`DAVPath.href`). Statuses with no properties are left out.
    public static func response(href: String, propstats: [(status: Int, properties: [(XMLName, String)])]) -> String {
        var out = "<D:response><D:href>" + escape(href) + "</D:href>"
        for propstat in propstats where !propstat.properties.isEmpty {
            out += "<D:propstat><D:prop>"
            for (name, value) in propstat.properties { out += element(name, value) }
            out += "</D:prop><D:status>" + statusLine(propstat.status) + "</D:status></D:propstat>"
        }
        return out + "</D:response>"
    }

    /// One `<D:response>` with a status of its own (a member a DELETE, COPY or MOVE failed on),
    /// and optionally the precondition that failed, inner XML of `<D:error>` such as
    /// `<D:lock-token-submitted/>` (section 16).
    public static func response(href: String, status: Int, error: String? = nil) -> String {
        var out = "<D:response><D:href>" + escape(href) + "</D:href><D:status>" + statusLine(status) + "</D:status>"
        if let error { out += "<D:error>" + error + "</D:error>" }
        return out + "</D:response>"
    }

    /// A property element with inner XML `value` (see `response(href:propstats:)`).
    public static func element(_ name: XMLName, _ value: String) -> String {
        let open: String
        let close: String
        switch name.namespace {
        case XMLName.dav:
            open = "D:" + name.local
            close = open
        case "":
            open = name.local + " xmlns=\"\""
            close = name.local
        default:
            open = "P:" + name.local + " xmlns:P=\"" + escape(name.namespace) + "\""
            close = "P:" + name.local
        }
        return value.isEmpty ? "<" + open + "/>" : "<" + open + ">" + value + "</" + close + ">"
    }

    /// Text made safe for XML character data and attribute values (`escapeXML`).
    public static func escape(_ text: String) -> String { escapeXML(text) }

    /// `HTTP/1.1 207 Multi-Status` and the like, for `<D:status>` (section 14.28).
    public static func statusLine(_ status: Int) -> String {
        "HTTP/1.1 \(status) " + reason(status)
    }

    /// The reason phrase of a status WebDAV uses (RFC 9110, RFC 4918 section 11), "Unknown"
    /// for any other.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 207: "Multi-Status"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 507: "Insufficient Storage"
        default: "Unknown"
        }
    }
}

/// Bodies of 4xx responses that name the precondition or postcondition that failed (RFC 4918
/// section 16), such as `propfind-finite-depth` or `lock-token-submitted`.
public enum DAVError {
    /// `<?xml ...?><D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`. `condition`
    /// is either a DAV: element's local name ("propfind-finite-depth") or inner XML starting
    /// with "<" (`<D:lock-token-submitted><D:href>/dav/a</D:href></D:lock-token-submitted>`),
    /// written as it is.
    public static func body(_ condition: String) -> String {
        let inner = condition.hasPrefix("<") ? condition : "<D:" + condition + "/>"
        return prologue + "\n<D:error xmlns:D=\"DAV:\">" + inner + "</D:error>\n"
    }

    /// How every `body` starts: the XML declaration (a door tells its error bodies from its
    /// plain-text refusals by it).
    public static let prologue = "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
}
