import Foundation
import PTKDigest
import PTKHTTP
import PTKLocalSend
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTransport
import Testing

/// A LocalSend app as the tests need one, written from the protocol (LocalSend v2.1/2.2):
/// HTTPS with or without a client certificate, keep-alive connections, uploads with a
/// Content-Length or chunked, and raw bytes for the hostile cases.
final class LocalSendApp: @unchecked Sendable {
    let port: UInt16
    /// The app's certificate (1.18 shows one); nil acts as an older app.
    let identity: Identity?
    let context: TLSContext
    let alias: String
    let version: String

    /// `identity` is the app's certificate to show (one made for it when nil and `certificate`).
    init(
        port: UInt16, certificate: Bool = true, identity: Identity? = nil, alias: String = "Test Phone",
        version: String = "2.1"
    ) throws {
        // OpenSSL writes with write(2): a request body still going out when ptkd has answered
        // and closed (as it does for a refused upload) must be an error here, not SIGPIPE.
        ignoreBrokenPipeSignal()
        self.port = port
        self.identity = try identity ?? (certificate ? Identity.ephemeral(.rsa, commonName: "LocalSend User") : nil)
        context = try TLSContext(server: false, identity: self.identity, flavor: .https)
        self.alias = alias
        self.version = version
    }

    /// What ptkd stores for this app: the SHA-256 of its certificate.
    var fingerprint: String? { identity?.certificateFingerprint }

    var info: [String: Any] {
        [
            "alias": alias, "version": version, "deviceModel": NSNull(), "deviceType": "mobile",
            "fingerprint": fingerprint ?? "random-\(alias)", "port": 53317, "protocol": "https", "download": false,
        ]
    }

    /// A new HTTPS connection to ptkd.
    func connect() throws -> AppConnection {
        let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
        let sock = try Socket.connect(to: address, deadline: .now + .seconds(5))
        return AppConnection(
            stream: try TLSStream(socket: sock, peer: address, context: context, deadline: .now + .seconds(5)))
    }

    /// `prepare-upload` of `files` (id, name, bytes, type, sha256 given?) on a new connection.
    func prepare(
        _ files: [(id: String, name: String, bytes: [UInt8], type: String, hash: String?)], pin: String? = nil,
        modified: String? = nil, on connection: AppConnection? = nil
    ) throws -> (status: Int, json: [String: Any]) {
        var entries: [String: Any] = [:]
        for f in files {
            var e: [String: Any] = [
                "id": f.id, "fileName": f.name, "size": f.bytes.count, "fileType": f.type, "preview": NSNull(),
            ]
            if let h = f.hash { e["sha256"] = h }
            if let modified { e["metadata"] = ["modified": modified, "accessed": modified] }
            entries[f.id] = e
        }
        let body = try JSONSerialization.data(withJSONObject: ["info": info, "files": entries])
        let c = try connection ?? connect()
        defer { if connection == nil { c.close() } }
        let target = "/api/localsend/v2/prepare-upload" + (pin.map { "?pin=\($0)" } ?? "")
        let r = try c.request("POST", target, body: Array(body))
        let json = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
        return (r.status, json)
    }

    /// Uploads `bytes` as file `fileID` of `session`; `chunked` sends it in chunks of that size
    /// without Content-Type, as the apps' chunked uploads do.
    func upload(
        session: String, fileID: String, token: String, bytes: [UInt8], chunked: Int? = nil,
        on connection: AppConnection? = nil
    ) throws -> (status: Int, body: String) {
        let c = try connection ?? connect()
        defer { if connection == nil { c.close() } }
        let r = try c.request(
            "POST", "/api/localsend/v2/upload?sessionId=\(session)&fileId=\(fileID)&token=\(token)",
            body: bytes, chunked: chunked, contentType: chunked == nil ? "image/png" : nil)
        return (r.status, String(decoding: r.body, as: UTF8.self))
    }
}

/// One keep-alive HTTPS connection of the test app.
final class AppConnection {
    let stream: ByteStream
    private var parser = HTTPParser(.response)
    private var pending: [UInt8] = []
    private var closed = false
    /// The last response's head (its headers: Set-Cookie, Content-Range, ...).
    private(set) var lastHead: HTTPHead?

    init(stream: ByteStream) { self.stream = stream }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { b in
            Result { () throws(TransportError) in try stream.write(b, deadline: .now + .seconds(10)) }
        }.get()
    }

    /// Sends a request and reads its response.
    func request(
        _ method: String, _ target: String, body: [UInt8] = [], chunked: Int? = nil,
        contentType: String? = "application/json",
        extraHeaders: String = ""
    ) throws -> (status: Int, body: [UInt8]) {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extraHeaders
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if let size = chunked {
            head += "Transfer-Encoding: chunked\r\n\r\n"
            var out = Array(head.utf8)
            var i = 0
            while i < body.count {
                let piece = body[i..<min(i + size, body.count)]
                out += Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Array("\r\n".utf8)
                i += size
                if out.count > 1 << 20 {
                    try write(out)
                    out = []
                }
            }
            try write(out + Array("0\r\n\r\n".utf8))
        } else {
            if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
            try write(Array((head + "\r\n").utf8) + body)
        }
        return try readResponse()
    }

    /// Reads one response (status and body); status 0 when the server closed without one.
    func readResponse(timeout: Double = 20) throws -> (status: Int, body: [UInt8]) {
        var status = 0
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            if !pending.isEmpty {
                let (used, stop) = try pending.withUnsafeBytes { b in
                    try parser.parse(b) {
                        body.append(contentsOf: $0)
                        return true
                    }
                }
                pending.removeFirst(used)
                switch stop {
                case .head(let h):
                    status = h.status
                    lastHead = h
                case .complete: return (status, body)
                case nil: break
                }
                continue
            }
            let n = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(TransportError) in try stream.read(into: b, deadline: .now + .seconds(timeout)) }
            }.get()
            if n == 0 {
                if try parser.finish() == .complete { return (status, body) }
                return (0, body)
            }
            pending = Array(buffer[..<n])
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        stream.close()
    }

    deinit { close() }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
    var h = SHA256()
    bytes.withUnsafeBytes { h.update($0) }
    return h.finalizeHex()
}

extension DaemonProcess {
    /// The LocalSend endpoint's port, from ptkd's log.
    var localSendPort: UInt16 { loggedPort("LocalSend receiver on port") }

    /// The port ptkd logs after `words` (the LocalSend endpoint's, the web interface's), once
    /// logged: just after the line DaemonProcess waits for.
    func loggedPort(_ words: String) -> UInt16 {
        var port: UInt16 = 0
        _ = eventually(10) {
            guard let range = log.range(of: words + #" (\d+)"#, options: .regularExpression) else { return false }
            port = UInt16(log[range].split(separator: " ").last!)!
            return true
        }
        return port
    }

    /// A ptkd with its LocalSend endpoint on a free port.
    static func withLocalSend(_ extra: [String] = [], root: String? = nil, wrapper: [String] = [], mdns: Bool = false)
        throws -> DaemonProcess
    {
        try DaemonProcess(
            ["--localsend", "on", "--localsend-port", "0"] + extra, root: root, wrapper: wrapper, mdns: mdns)
    }
}
