import Foundation
import PTKHTTP
import PTKSystem
import PTKTime
import PTKTransport

/// A `ByteStream` that plays a client's script to HTTP code under test, without a socket or
/// TLS (as swift-nio tests a handler over an EmbeddedChannel): each read returns the next
/// piece of `pieces` (at most `readSize` bytes of it: 1 feeds the server a byte at a time);
/// once they are read, `whenEmpty` says what the client does (goes silent, resets, or closes).
/// Everything the server writes is kept in `written`.
public final class ScriptedHTTPStream: ByteStream, @unchecked Sendable {
    // Used by the one thread that runs the code under test.
    /// Every byte the server wrote, in order; `responses` parses them.
    public private(set) var written: [UInt8] = []
    /// What the client does once the script is read; a test may change it between requests.
    public var whenEmpty: ScriptedStream.WhenEmpty
    /// Bytes a read returns at most: 1 feeds the server one byte at a time.
    public var readSize: Int
    /// The server shut down its sending side; later writes fail as if the client had gone.
    public private(set) var wroteEnd = false
    /// The server closed the stream; later writes fail as if the client had gone.
    public private(set) var isClosed = false
    private var pieces: [[UInt8]]

    /// Empty pieces are dropped, so they cannot read as end of stream.
    public init(_ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close) {
        self.pieces = pieces.filter { !$0.isEmpty }
        self.readSize = readSize
        self.whenEmpty = whenEmpty
    }

    /// A script of text pieces (a request's head and body, as a client writes them).
    public convenience init(
        text pieces: String..., readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close
    ) {
        self.init(pieces.map { Array($0.utf8) }, readSize: readSize, whenEmpty: whenEmpty)
    }

    /// Adds bytes for the server to read.
    public func feed(_ bytes: [UInt8]) { if !bytes.isEmpty { pieces.append(bytes) } }

    /// The next script piece, up to `readSize` bytes; once none is left, as `whenEmpty` says
    /// (`.silent` times out at once).
    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool)
        throws(TransportError) -> Int
    {
        guard !pieces.isEmpty else {
            switch whenEmpty {
            case .silent: throw .timedOut
            case .reset: throw .peerClosed
            case .close: return 0
            }
        }
        let n = min(buffer.count, readSize, pieces[0].count)
        buffer.copyBytes(from: pieces[0][..<n])
        pieces[0].removeFirst(n)
        if pieces[0].isEmpty { pieces.removeFirst() }
        return n
    }

    /// Keeps the bytes in `written`; after `shutdownWrite` or `close` it throws `.peerClosed`.
    public func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        if wroteEnd || isClosed { throw .peerClosed }
        written += bytes
    }

    /// Records it in `wroteEnd`.
    public func shutdownWrite() { wroteEnd = true }
    /// Records it in `isClosed`; a second close is not caught here.
    public func close() { isClosed = true }

    /// The responses written so far, parsed.
    public var responses: [ParsedResponse] { ParsedResponse.all(in: written) }
}

/// A response as a client reads it: status, headers (names in lower case), body (chunked
/// bodies joined).
public struct ParsedResponse: Sendable, Equatable, CustomStringConvertible {
    /// The status code from the status line.
    public var status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    public var headers: [String: String]
    /// The body, a chunked one joined.
    public var body: [UInt8]
    /// Header names must already be in lower case for `header(_:)` to find them.
    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
    /// The body as UTF-8, invalid bytes replaced.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The value of header `name`, in any case; nil when absent.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
    /// Status, headers and the first 300 characters of the body, for failure messages.
    public var description: String { "\(status) \(headers) \(text.prefix(300))" }

    /// Every whole response in `bytes`, in order (a HEAD's response has no body: parse those
    /// with `headOnly`).
    public static func all(in bytes: [UInt8], headOnly: Bool = false) -> [ParsedResponse] {
        if headOnly {
            // Heads alone: split at each blank line.
            var out: [ParsedResponse] = []
            let text = String(decoding: bytes, as: UTF8.self)
            for head in text.components(separatedBy: "\r\n\r\n") where head.hasPrefix("HTTP/1.1 ") {
                var lines = head.components(separatedBy: "\r\n")
                let status = Int(lines.removeFirst().split(separator: " ")[1]) ?? 0
                var headers: [String: String] = [:]
                for line in lines {
                    let kv = line.split(separator: ":", maxSplits: 1)
                    if kv.count == 2 { headers[kv[0].lowercased()] = kv[1].trimmingCharacters(in: .whitespaces) }
                }
                out.append(ParsedResponse(status: status, headers: headers, body: []))
            }
            return out
        }
        let parser = HTTPParser(.response)
        var out: [ParsedResponse] = []
        var current: ParsedResponse? = nil
        var rest = bytes[...]
        while !rest.isEmpty {
            var body: [UInt8] = []
            let result = rest.withUnsafeBytes { b in
                Result { () throws(HTTPParseError) in
                    try parser.parse(b) { piece in
                        body += piece
                        return true
                    }
                }
            }
            guard case .success(let (used, stop)) = result else { break }
            if current != nil { current!.body += body }
            rest = rest.dropFirst(used)
            switch stop {
            case .head(let head)?: current = ParsedResponse(status: head.status, headers: head.headers, body: [])
            case .complete?:
                if let c = current { out.append(c) }
                current = nil
            case nil: if used == 0 { return out }
            }
        }
        return out
    }
}

/// `bytes` as a chunked request body (RFC 9112 §7.1): chunks of `size` bytes, then the last chunk.
public func chunkedBody(_ bytes: [UInt8], size: Int) -> [UInt8] {
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
        let end = min(i + size, bytes.count)
        out += Array((String(end - i, radix: 16) + "\r\n").utf8) + bytes[i..<end] + [13, 10]
        i = end
    }
    return out + Array("0\r\n\r\n".utf8)
}
