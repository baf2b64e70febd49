import PTKSystem
import PTKTime
import PTKTransport
import PTKVocabulary

/// HTTP/1.1 over a byte stream (TLS for the doors and LocalSend's register client, plain TCP
/// for a plain-HTTP request on an HTTPS port, a scripted stream in tests):
/// the parser, a read buffer whose leftover bytes start the next request (pipelining and
/// keep-alive), and responses.
public final class HTTPConnection {
    /// The stream under the connection (TLS, TCP, scripted); the connection reads and writes it, the caller closes it.
    public let stream: ByteStream
    private let parser: HTTPParser
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    /// Some bytes of the current message have arrived.
    private var inMessage = false

    private let kind: HTTPParser.Kind
    /// How long a read or a write may wait for the peer: each body read and each write of a
    /// response (`send`) has until `.now + idle`.
    public let idle: Duration

    /// `bufferSize` is the read buffer's size in bytes; `idle` is each body read's and write's wait.
    public init(stream: ByteStream, kind: HTTPParser.Kind, bufferSize: Int = 256 << 10, idle: Duration = .seconds(60)) {
        self.stream = stream
        self.kind = kind
        self.idle = idle
        parser = HTTPParser(kind)
        buffer = [UInt8](repeating: 0, count: bufferSize)
    }

    /// Reads until the next message's head, by `deadline`; nil when the peer closed between
    /// messages.
    public func nextHead(deadline: Instant) throws(HTTPError) -> HTTPHead? {
        inMessage = false
        while true {
            if start < end {
                inMessage = true
                switch try parseBuffered(body: { _ in true }) {
                case .head(let head):
                    closing = !head.keepAlive
                    bodyPending = head.chunked || (head.contentLength ?? 0) > 0
                    // An HTTP/1.0 request's expectation is ignored (RFC 9110 10.1.1): its client
                    // would read a 100 as the answer.
                    expectsContinue = head.minorVersion >= 1 && head.header("expect")?.lowercased() == "100-continue"
                    return head
                case .complete:
                    // The end of a message whose body was not read (a refused request, a GET):
                    // what follows is a new message, and nothing of it has come yet.
                    inMessage = false
                    continue
                case nil: break
                }
            }
            if try !fill(deadline: deadline) {
                if inMessage { throw .refused(400, "the request ended before its headers did") }
                return nil
            }
        }
    }

    /// A request body must come at least this fast on average, after `bodyGrace`: a client
    /// sending a byte now and then cannot hold its slot for longer than its size allows (a
    /// photo over the weakest Wi-Fi still comes faster).
    public static let bodyMinimumRate = 1 << 10
    /// How long a body may come slower than `bodyMinimumRate` (bytes a second) at its start.
    public static let bodyGrace: Duration = .seconds(10)

    /// Tells where the connection is in its life (`ConnectionStage`), for the connection slots.
    public var onStage: ((ConnectionStage) -> Void)?

    /// The request being answered is one its sender has the right to (a session, a token):
    /// its connection is working and is not displaced for a newcomer.
    public func proven() { onStage?(.working) }

    /// Asks the connection slots whether this connection may work for `owner` (an app
    /// password), which may hold only its share of the slots, as an address does; false: it
    /// holds its share already, and this connection may be displaced again.
    public var onClaim: ((String) -> Bool)?

    /// See `onClaim` (true when no one keeps count: a scripted connection).
    public func claim(_ owner: String) -> Bool { onClaim?(owner) ?? true }

    /// Passes the body of the message whose head was just read to `sink`, piece by piece, each
    /// read by `deadline()`; returns once the message is complete. `sink` returning false stops
    /// with `.refused(status, why)` from `refusal()`. Requests (not responses) must also keep to
    /// `minimumRate` (bytes a second) after `bodyGrace`, or end in 408.
    public func readBody(
        deadline: () -> Instant, minimumRate: Int = bodyMinimumRate, sink: (UnsafeRawBufferPointer) -> Bool,
        refusal: () -> (Int, String) = { (400, "body refused") }
    ) throws(HTTPError) {
        if expectsContinue {
            // The client waits for this before it sends the body (curl -T waits a second).
            expectsContinue = false
            try write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), deadline: deadline())
        }
        let started = Instant.now
        var received = 0
        let counted: (UnsafeRawBufferPointer) -> Bool = { piece in
            received += piece.count
            return sink(piece)
        }
        while true {
            if start < end {
                let stop: HTTPParser.Stop?
                do { stop = try parseBuffered(body: counted) } catch {
                    if case .bodyRefused = error {
                        let (status, why) = refusal()
                        throw .refused(status, why)
                    }
                    throw error
                }
                if stop == .complete {
                    inMessage = false
                    bodyPending = false
                    return
                }
            }
            var next = deadline()
            var slow = false
            if kind == .request {
                // The moment by which the next byte must come for the body to keep its rate.
                let byRate = started + Self.bodyGrace + .seconds(Double(received + 1) / Double(minimumRate))
                if byRate < next { (next, slow) = (byRate, true) }
            }
            let more: Bool
            do { more = try fill(deadline: next) } catch {
                if case .timedOut = error, slow {
                    throw .refused(
                        408,
                        "the request's body came slower than \(minimumRate >> 10) KiB/s (\(received) bytes in \(formatDecimal((Instant.now - started).seconds)) s)"
                    )
                }
                throw error
            }
            if !more {
                // A body that runs to the end of the connection (responses) ends here. Any other
                // body cut short means the peer has gone (closed, or reset): no one to answer.
                if (try? parser.finish()) == .complete { return }  // an error is the cut body
                throw .gone
            }
        }
    }

    /// Reads a whole body of at most `limit` bytes, at `minimumRate` (see above).
    public func readBody(limit: Int, deadline: () -> Instant, minimumRate: Int = bodyMinimumRate) throws(HTTPError)
        -> [UInt8]
    {
        var body: [UInt8] = []
        try readBody(
            deadline: deadline, minimumRate: minimumRate,
            sink: { piece in
                guard body.count + piece.count <= limit else { return false }
                body.append(contentsOf: piece)
                return true
            }, refusal: { (413, "the body is over \(limit) bytes") })
        return body
    }

    private func parseBuffered(body: (UnsafeRawBufferPointer) -> Bool) throws(HTTPError) -> HTTPParser.Stop? {
        let result = buffer.withUnsafeBytes { b in
            Result { () throws(HTTPParseError) in
                try parser.parse(UnsafeRawBufferPointer(rebasing: b[start..<end]), body: body)
            }
        }
        switch result {
        case .success(let (used, stop)):
            start += used
            return stop
        case .failure(let error):
            switch error {
            case .headTooLarge: throw .refused(431, error.description)
            case .targetTooLong: throw .refused(414, error.description)
            case .bodyRefused: throw .bodyRefused
            case .malformed: throw .refused(400, error.description)
            }
        }
    }

    /// Reads more bytes into the empty buffer; false when the peer closed.
    private func fill(deadline: Instant) throws(HTTPError) -> Bool {
        start = 0
        end = 0
        let read = buffer.withUnsafeMutableBytes { b in
            Result { () throws(TransportError) in try stream.read(into: b, deadline: deadline) }
        }
        let n: Int
        switch read {
        case .success(let count): n = count
        case .failure(let error):
            switch error {
            case .timedOut: throw .timedOut(partial: inMessage)
            case .interrupted: throw .interrupted
            default: throw .gone
            }
        }
        end = n
        return n > 0
    }

    /// The request being answered asked for `100 Continue` before its body (RFC 9110 10.1.1):
    /// sent when its body is first read; a response before that means the body is not wanted.
    private var expectsContinue = false

    /// The request being answered has a body not yet read to its end: its answer closes the
    /// connection (what follows on it is the rest of that body, not a request).
    public private(set) var bodyPending = false

    /// The body of the request whose head was just read, read through `idle`'s deadlines.
    public var requestBody: RequestBody { RequestBody(connection: self) }

    /// A response with `Connection: close` went out before the request was read to its end.
    public private(set) var refusedMidRequest = false

    /// Reads and drops what the peer still sends, until it closes, `deadline`, or `limit` bytes.
    public func drain(until deadline: Instant, limit: Int) {
        var total = 0
        while total < limit, Instant.now < deadline {
            let n = buffer.withUnsafeMutableBytes { b in
                // A failed read ends the request like a closed connection: the caller answers or closes.
                (try? Result { () throws(TransportError) in
                    try stream.read(into: b, deadline: deadline, interruptible: true)
                }.get()) ?? 0
            }
            if n == 0 { return }
            total += n
        }
    }

    /// Header lines (each ending in CRLF) every response carries (the web interface's security headers).
    public var fixedHeaders = ""

    /// Sends a response: `body` with `contentType`, `headers`, and `Connection: close` when
    /// `close`. `headOnly` (a HEAD request) sends the head alone, with the body's length.
    public func respond(
        _ status: Int, _ body: [UInt8] = [], contentType: String = "application/json", headers: [(String, String)] = [],
        close: Bool = false, headOnly: Bool = false, deadline: Instant
    ) throws(HTTPError) {
        let head = responseHead(
            status, contentLength: Int64(body.count), contentType: body.isEmpty ? nil : contentType,
            headers: headers, close: close)
        try write(headOnly ? head : head + body, deadline: deadline)
    }

    /// A response's head: status line, length, type, `headers`, the fixed ones and Connection.
    /// `contentLength` nil: the body is sent in chunks (`ChunkedBody`).
    public func responseHead(
        _ status: Int, contentLength: Int64?, contentType: String?, headers: [(String, String)] = [], close: Bool
    ) -> [UInt8] {
        if close && inMessage { refusedMidRequest = true }
        expectsContinue = false
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        head += contentLength.map { "Content-Length: \($0)\r\n" } ?? "Transfer-Encoding: chunked\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += fixedHeaders
        head += close || closing ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n"
        return Array(head.utf8)
    }

    /// The request being answered asked to close after it (`Connection: close`, HTTP/1.0):
    /// its answer says so.
    private var closing = false

    /// Sends `response` to the request whose head was just read (`headOnly`: a HEAD request,
    /// which gets the head alone, with the body's length), each write by `.now + idle`; returns
    /// whether the connection may carry another request: not when the response asks to close,
    /// the request's body was not read to its end, or the client asked to close. The
    /// response's `whenDone` runs once it is sent, or failed to be.
    public func send(_ response: Response, headOnly: Bool) throws(HTTPError) -> Bool {
        defer { response.whenDone?() }
        let close = response.closesConnection || bodyPending
        let status = response.status.code
        let headers = response.headers.map { ($0.name, $0.value) }
        switch response.body {
        case .empty:
            try write(
                responseHead(status, contentLength: 0, contentType: nil, headers: headers, close: close),
                deadline: .now + idle)
        case .bytes(let body, let type):
            let head = responseHead(
                status, contentLength: Int64(body.count), contentType: body.isEmpty ? nil : type, headers: headers,
                close: close)
            try write(headOnly ? head : head + body, deadline: .now + idle)
        case .file(let fd, let first, let last, let type, let failed):
            try write(
                responseHead(
                    status, contentLength: last - first + 1, contentType: type, headers: headers, close: close),
                deadline: .now + idle)
            if !headOnly { try sendFileBytes(fd, first: first, last: last, idle: idle, failed: failed) }
        case .stream(let type, let produce):
            try write(
                responseHead(status, contentLength: nil, contentType: type, headers: headers, close: close),
                deadline: .now + idle)
            let body = ChunkedBody(connection: self, silent: headOnly)
            do throws(HTTPError) { try produce(body) } catch {
                // The head went out: whatever went wrong (a refusal, a timeout, the stop) cannot
                // be answered now, only the body cut short (no last chunk) by closing. Any other
                // error would let the caller write a second answer into the body.
                throw .gone
            }
            try body.finish()
        }
        return !close && !closing
    }

    /// Sends bytes `first` through `last` of `fd`, read in 256 KiB pieces from their offsets.
    func sendFileBytes(
        _ fd: FileDescriptor, first: Int64, last: Int64, idle: Duration, failed: (Int64, SystemError?) -> Void
    ) throws(HTTPError) {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var offset = first
        while offset <= last {
            let want = Int(min(Int64(buffer.count), last - offset + 1))
            let read = buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in
                    try fd.read(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                }
            }
            let n: Int
            switch read {
            case .success(let count): n = count
            case .failure(let error):
                // The head promised bytes that cannot come: closing is the only honest answer.
                failed(offset, error)
                throw .gone
            }
            if n == 0 {
                failed(offset, nil)
                throw .gone
            }
            try write(Array(buffer[..<n]), deadline: .now + idle)
            offset += Int64(n)
        }
    }

    /// Sends `bytes` as they are.
    public func write(_ bytes: [UInt8], deadline: Instant) throws(HTTPError) {
        let written = bytes.withUnsafeBytes { b in
            Result { () throws(TransportError) in try stream.write(b, deadline: deadline) }
        }
        if case .failure = written { throw .gone }
    }

    /// The reason phrase of `status` (`HTTPStatus.reason`).
    public static func reason(_ status: Int) -> String { HTTPStatus(status).reason }
}

/// The body of a chunked response (RFC 9112 §7.1): each `write` one chunk, `finish` the last
/// (zero-length) chunk. Pieces may be any size; an empty one is not sent (it would end the body).
public struct ChunkedBody {
    let connection: HTTPConnection
    /// A HEAD request's: nothing is sent.
    let silent: Bool

    /// Sends `bytes` as one chunk.
    public func write(_ bytes: [UInt8], deadline: Instant) throws(HTTPError) {
        guard !silent, !bytes.isEmpty else { return }
        try connection.write(
            Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10], deadline: deadline)
    }

    /// Sends the last chunk: the response is complete.
    public func finish(deadline: Instant) throws(HTTPError) {
        guard !silent else { return }
        try connection.write(Array("0\r\n\r\n".utf8), deadline: deadline)
    }

    /// Sends `bytes` as one chunk, by the connection's `idle` from now.
    public func write(_ bytes: [UInt8]) throws(HTTPError) { try write(bytes, deadline: .now + connection.idle) }

    /// Sends the last chunk, by the connection's `idle` from now.
    func finish() throws(HTTPError) { try finish(deadline: .now + connection.idle) }
}
