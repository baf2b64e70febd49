import CHTTPParser

/// A request's or response's line and headers, as the parser saw them.
public struct HTTPHead: Sendable, Equatable {
    /// `GET`, `POST`, ... (requests).
    public var method = ""
    /// The status code (responses).
    public var status = 0
    /// The request target as sent: path and query.
    public var target = ""
    /// Header names in lower case; repeated headers joined with ", ".
    public var headers: [String: String] = [:]
    /// The announced body length, nil when none was given.
    public var contentLength: Int64?
    public var chunked = false
    /// Whether the connection may carry another request after this one (HTTP/1.1 default,
    /// `Connection: close`, HTTP/1.0 without keep-alive).
    public var keepAlive = true

    public init() {}

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The target's path, percent-decoded.
    public var path: String {
        let raw = splitScalars(target, "?", maxSplits: 1).first ?? ""
        return percentDecoded(raw, plusIsSpace: false) ?? raw
    }

    /// The target's query parameters, percent-decoded (`+` is a space); the first of a repeated name wins.
    public var query: [String: String] {
        let parts = splitScalars(target, "?", maxSplits: 1)
        guard parts.count == 2 else { return [:] }
        return urlEncodedFields(parts[1])
    }
}

/// `name=value&...` (a query, or an `application/x-www-form-urlencoded` body) percent-decoded,
/// `+` as a space; the first of a repeated name wins, broken escapes give an empty value.
public func urlEncodedFields(_ text: String) -> [String: String] {
    var out: [String: String] = [:]
    for pair in splitScalars(text, "&", omittingEmpty: true) {
        let kv = splitScalars(pair, "=", maxSplits: 1)
        guard let name = percentDecoded(kv[0], plusIsSpace: true), !name.isEmpty else { continue }
        let value = kv.count > 1 ? percentDecoded(kv[1], plusIsSpace: true) ?? "" : ""
        if out[name] == nil { out[name] = value }
    }
    return out
}

/// `text` split at each `separator` scalar, never at Characters: "?" or "&" followed by a
/// combining mark is one Character, which `split(separator:)` would not cut at.
func splitScalars(_ text: String, _ separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmpty: Bool = false) -> [String] {
    text.unicodeScalars.split(separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmpty)
        .map { String(String.UnicodeScalarView($0)) }
}

/// `%XX` sequences decoded (and `+` as a space in queries); nil when a sequence is broken or
/// the result is not UTF-8.
func percentDecoded(_ text: String, plusIsSpace: Bool) -> String? {
    var out: [UInt8] = []
    var bytes = Array(text.utf8)[...]
    func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
    while let c = bytes.popFirst() {
        if c == UInt8(ascii: "%") {
            guard let h = bytes.popFirst().flatMap(hex), let l = bytes.popFirst().flatMap(hex) else { return nil }
            out.append(h << 4 | l)
        } else if plusIsSpace && c == UInt8(ascii: "+") {
            out.append(UInt8(ascii: " "))
        } else {
            out.append(c)
        }
    }
    return String(validating: out, as: UTF8.self)
}

/// Why bytes could not be parsed as HTTP.
public enum HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The request line and headers are longer than `HTTPParser.maxHeadBytes` (431).
    case headTooLarge
    /// The request target is longer than `HTTPParser.maxTargetBytes` (414).
    case targetTooLong
    /// The body callback refused the bytes.
    case bodyRefused
    /// Not HTTP/1.x as the parser knows it (400), with the parser's reason.
    case malformed(String)

    public var description: String {
        switch self {
        case .headTooLarge: return "request line and headers over \(HTTPParser.maxHeadBytes) bytes"
        case .targetTooLong: return "request target over \(HTTPParser.maxTargetBytes) bytes"
        case .bodyRefused: return "body refused"
        case .malformed(let why): return "malformed HTTP (\(why))"
        }
    }
}

/// RFC 9112's rules on a head's raw bytes that http-parser (built lenient) lets through: every
/// line ends in CRLF (§2.2: no bare LF, no CR alone), no whitespace between a field name and
/// its colon (§5.1: `Transfer-Encoding : chunked` was taken as chunked), no line folded onto
/// the previous one (obs-fold, §5.2). Fed each head's bytes in any pieces, up to the head's
/// end; body bytes never pass through it.
struct HeadCheck {
    private enum Place { case beforeStartLine, startLine, lineStart, name, value }
    private var place = Place.beforeStartLine
    private var afterCR = false
    /// The empty line ending the head has been seen: what follows is a body or the next message.
    private(set) var done = false

    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), colon = UInt8(ascii: ":")
    private static let sp = UInt8(ascii: " "), tab = UInt8(ascii: "\t")

    /// Checks `bytes` up to the head's end (the rest is left alone).
    mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) {
        for c in bytes {
            if afterCR {
                guard c == Self.lf else { throw .malformed("a CR not followed by LF in the head") }
                afterCR = false
                switch place {
                case .beforeStartLine: break  // an empty line before the request line: ignored (§2.2)
                case .lineStart: done = true; return
                default: place = .lineStart
                }
                continue
            }
            switch (place, c) {
            case (_, Self.cr): afterCR = true
            case (_, Self.lf): throw .malformed("a line of the head ends in a bare LF, not CRLF")
            case (.beforeStartLine, _): place = .startLine
            case (.lineStart, Self.sp), (.lineStart, Self.tab): throw .malformed("a header line folded onto the previous one (obs-fold)")
            case (.lineStart, _): place = c == Self.colon ? .value : .name
            case (.name, Self.sp), (.name, Self.tab): throw .malformed("whitespace between a header name and its colon")
            case (.name, Self.colon): place = .value
            default: break
            }
        }
    }
}

/// An incremental HTTP/1.x parser over Node's http-parser: bytes go in as they arrive, in any
/// pieces; it stops after each message's head (so the caller can decide where the body goes
/// before any of it is passed on) and after each message's end (so pipelined requests are
/// taken one at a time). Body bytes are handed to a callback without being copied.
public final class HTTPParser {
    public enum Kind: Sendable { case request, response }
    public enum Stop: Equatable, Sendable {
        case head(HTTPHead)
        case complete
    }

    /// Request line (or status line) and headers, together.
    public static let maxHeadBytes = 16 << 10
    public static let maxTargetBytes = 4 << 10

    private let parser: UnsafeMutablePointer<http_parser>
    private var settings = http_parser_settings()
    private let kind: Kind
    // The message being read, filled in by the callbacks.
    private var head = HTTPHead()
    private var field: [UInt8] = []
    private var value: [UInt8] = []
    private var target: [UInt8] = []
    private var inValue = false
    private var headBytes = 0
    private var check = HeadCheck()
    private var failure: HTTPParseError?
    private var stop: Stop?
    private var body: ((UnsafeRawBufferPointer) -> Bool)?

    public init(_ kind: Kind) {
        self.kind = kind
        parser = .allocate(capacity: 1)
        http_parser_init(parser, kind == .request ? HTTP_REQUEST : HTTP_RESPONSE)
        http_parser_settings_init(&settings)
        settings.on_message_begin = { p in HTTPParser.of(p).beginMessage(); return 0 }
        settings.on_url = { p, at, n in HTTPParser.of(p).add(.target, at, n) }
        settings.on_status = { p, _, n in HTTPParser.of(p).count(n) }
        settings.on_header_field = { p, at, n in
            let me = HTTPParser.of(p)
            if me.inValue { me.endHeader() }
            return me.add(.field, at, n)
        }
        settings.on_header_value = { p, at, n in
            let me = HTTPParser.of(p)
            me.inValue = true
            return me.add(.value, at, n)
        }
        settings.on_headers_complete = { p in HTTPParser.of(p).endHead() }
        settings.on_body = { p, at, n in
            let me = HTTPParser.of(p)
            guard let body = me.body, let at else { return 0 }
            if body(UnsafeRawBufferPointer(start: at, count: n)) { return 0 }
            me.failure = .bodyRefused
            return 1
        }
        settings.on_message_complete = { p in
            let me = HTTPParser.of(p!)
            me.stop = .complete
            http_parser_pause(p, 1)
            return 0
        }
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { parser.deallocate() }

    private static func of(_ p: UnsafeMutablePointer<http_parser>?) -> HTTPParser {
        Unmanaged<HTTPParser>.fromOpaque(p!.pointee.data).takeUnretainedValue()
    }

    private func beginMessage() {
        head = HTTPHead()
        field = []
        value = []
        target = []
        inValue = false
        headBytes = 0
    }

    private func count(_ n: Int) -> Int32 {
        headBytes += n
        if headBytes > Self.maxHeadBytes {
            failure = .headTooLarge
            return 1
        }
        return 0
    }

    private enum Part { case target, field, value }

    private func add(_ part: Part, _ at: UnsafePointer<CChar>?, _ n: Int) -> Int32 {
        if count(n) != 0 { return 1 }
        guard let at else { return 0 }
        let bytes = UnsafeRawBufferPointer(start: at, count: n)
        switch part {
        case .target:
            target.append(contentsOf: bytes)
            if target.count > Self.maxTargetBytes {
                failure = .targetTooLong
                return 1
            }
        case .field: field.append(contentsOf: bytes)
        case .value: value.append(contentsOf: bytes)
        }
        return 0
    }

    private func endHeader() {
        let name = String(decoding: field, as: UTF8.self).lowercased()
        let text = String(decoding: value, as: UTF8.self)
        if let old = head.headers[name] { head.headers[name] = old + ", " + text } else { head.headers[name] = text }
        field = []
        value = []
        inValue = false
    }

    private func endHead() -> Int32 {
        if inValue || !field.isEmpty { endHeader() }
        let p = parser.pointee
        guard p.http_major == 1 else {
            failure = .malformed("HTTP/\(p.http_major).\(p.http_minor) is not HTTP/1.x")
            return 3
        }
        if kind == .request {
            // A request target is printable ASCII (RFC 9112; LocalSend's are): http-parser lets
            // other bytes through, which as text would be replaced (U+FFFD, three bytes each)
            // and no longer be what was sent, nor within the limit on its length.
            guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                failure = .malformed("the request target holds bytes that are not printable ASCII")
                return 3
            }
            head.method = String(cString: http_method_str(http_method(rawValue: p.method)))
            head.target = String(decoding: target, as: UTF8.self)
        } else {
            head.status = Int(p.status_code)
        }
        // http-parser takes the last coding of a list or of repeated headers: `gzip, chunked`
        // or `chunked` twice would be read as chunked. ptk knows only a single `chunked`.
        if let codings = head.headers["transfer-encoding"], codings.lowercased() != "chunked" {
            failure = .malformed("Transfer-Encoding other than a single chunked")
            return 3
        }
        head.chunked = ptk_http_is_chunked(parser) != 0
        head.contentLength = ptk_http_has_length(parser) != 0 ? Int64(clamping: p.content_length) : nil
        head.keepAlive = http_should_keep_alive(parser) != 0
        stop = .head(head)
        http_parser_pause(parser, 1)
        return 0
    }

    /// Parses what it can of `data`. Returns how many bytes it used and where it stopped: after
    /// a head, after a message, or nil when it needs more bytes (all were used). Call again
    /// with the rest. Body bytes of the current message go to `body` (return false to refuse
    /// them, which ends in `.bodyRefused`).
    public func parse(_ data: UnsafeRawBufferPointer, body: (UnsafeRawBufferPointer) -> Bool) throws(HTTPParseError) -> (used: Int, stop: Stop?) {
        try withoutActuallyEscaping(body) { (sink) throws(HTTPParseError) -> (used: Int, stop: Stop?) in
            self.body = sink
            defer { self.body = nil }
            // The head's bytes are checked before http-parser sees them; a body's never are.
            if !check.done { try check.scan(data) }
            let base = data.baseAddress?.assumingMemoryBound(to: CChar.self)
            let used = http_parser_execute(parser, &settings, base, data.count)
            return try settle(used: used)
        }
    }

    /// Tells the parser the peer closed: completes a response whose body runs to the end of
    /// the connection. Returns `.complete` if that ended a message.
    public func finish() throws(HTTPParseError) -> Stop? {
        let used = http_parser_execute(parser, &settings, nil, 0)
        return try settle(used: used).stop
    }

    private func settle(used: Int) throws(HTTPParseError) -> (used: Int, stop: Stop?) {
        let errno = http_errno(rawValue: ptk_http_errno(parser))
        if let stop {
            self.stop = nil
            if stop == .complete { check = HeadCheck() }
            if errno == HPE_PAUSED { http_parser_pause(parser, 0) }
            return (used, stop)
        }
        if let failure { throw failure }
        if errno != HPE_OK {
            throw .malformed(String(cString: http_errno_description(errno)))
        }
        return (used, nil)
    }
}
