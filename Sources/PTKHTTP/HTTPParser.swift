import CHTTPParser

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

    /// A short reason, for the log and the body of the 400, 414 or 431 it is answered with.
    public var description: String {
        switch self {
        case .headTooLarge: return "request line and headers over \(HTTPParser.maxHeadBytes) bytes"
        case .targetTooLong: return "request target over \(HTTPParser.maxTargetBytes) bytes"
        case .bodyRefused: return "body refused"
        case .malformed(let why): return "malformed HTTP (\(why))"
        }
    }
}

/// An incremental HTTP/1.x parser over Node's http-parser: bytes go in as they arrive, in any
/// pieces; it stops after each message's head (so the caller can decide where the body goes
/// before any of it is passed on) and after each message's end (so pipelined requests are
/// taken one at a time). Body bytes are handed to a callback without being copied.
public final class HTTPParser {
    /// Which messages the parser reads: requests (the doors) or responses (LocalSend's register client).
    public enum Kind: Sendable { case request, response }
    /// Where parsing stopped: after a message's head, or at the end of its body.
    public enum Stop: Equatable, Sendable {
        case head(HTTPHead)
        case complete
    }

    /// Request line (or status line) and headers, together.
    public static let maxHeadBytes = 16 << 10
    /// The longest request target taken, in bytes; a longer one is refused 414.
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
    /// The current message's head has ended: header fields now would be a chunked body's trailer.
    private var headDone = false
    private var headBytes = 0
    private var check = HeadCheck()
    private var failure: HTTPParseError?
    private var stop: Stop?
    private var body: ((UnsafeRawBufferPointer) -> Bool)?

    /// A parser for messages of `kind`, at the start of a message.
    public init(_ kind: Kind) {
        self.kind = kind
        parser = .allocate(capacity: 1)
        http_parser_init(parser, kind == .request ? HTTP_REQUEST : HTTP_RESPONSE)
        http_parser_settings_init(&settings)
        settings.on_message_begin = { p in
            HTTPParser.of(p).beginMessage()
            return 0
        }
        settings.on_url = { p, at, n in HTTPParser.of(p).add(.target, at, n) }
        settings.on_status = { p, _, n in HTTPParser.of(p).count(n) }
        settings.on_header_field = { p, at, n in
            let me = HTTPParser.of(p)
            // A chunked body's trailer fields never pass RFC 9112's line checks (`HeadCheck`
            // sees heads only), and ptk has no use for them: refused.
            if me.headDone {
                me.failure = .malformed("a chunked body's trailer fields are not taken")
                return 1
            }
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
        headDone = false
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
        headDone = true
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
            // http-parser ends a CONNECT, or a request asking to upgrade the protocol, at its
            // head and hands what follows over as another protocol's bytes: a body such a
            // request announces would be read as the next request. ptk serves neither.
            if head.method == "CONNECT" || ptk_http_is_upgrade(parser) != 0 {
                failure = .malformed(
                    "\(head.method == "CONNECT" ? "CONNECT" : "a protocol upgrade") is not served here")
                return 3
            }
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
        head.minorVersion = Int(p.http_minor)
        stop = .head(head)
        http_parser_pause(parser, 1)
        return 0
    }

    /// Parses what it can of `data`. Returns how many bytes it used and where it stopped: after
    /// a head, after a message, or nil when it needs more bytes (all were used). Call again
    /// with the rest. Body bytes of the current message go to `body` (return false to refuse
    /// them, which ends in `.bodyRefused`).
    public func parse(_ data: UnsafeRawBufferPointer, body: (UnsafeRawBufferPointer) -> Bool) throws(HTTPParseError)
        -> (used: Int, stop: Stop?)
    {
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
