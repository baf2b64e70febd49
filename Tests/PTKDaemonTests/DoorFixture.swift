import PTKConfiguration
import PTKDigest
@testable import PTKDaemon
import PTKHTTP
import PTKLibrary
import PTKSystem
import PTKTestSupport
import Testing

/// A receiver whose HTTP doors are driven without sockets or TLS: a real `Daemon` (store,
/// trust list, web access, library) built in a temporary directory but never run; each
/// "connection" is a `ScriptedHTTPStream` playing a client's bytes to a door's
/// `HTTPSServer.converse` with the door's own handler, as `serve` does after TLS.
final class DoorFixture {
    let root = makeTemporaryDirectory("ptk-doors")
    let daemon: Daemon
    let peer = SocketAddress(numericHost: "192.0.2.7", port: 40000)!
    var photos: String { root + "/photos" }

    init(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) throws {
        var c = DaemonConfiguration()
        c.directory = root + "/photos"
        c.stateDirectory = root + "/state"
        c.port = 0
        c.localSendPort = 0
        c.webPort = 0
        c.listen = ["127.0.0.1"]
        c.mdns = false
        c.idleTimeout = .seconds(5)
        adjust(&c)
        daemon = try Daemon(configuration: c)
        if c.library { _ = try PhotoLibrary(directory: root + "/photos", create: true) }
    }

    deinit {
        daemon.web?.listener.close()
        daemon.localSend?.listener.close()
        daemon.listener.close()
        removeTree(root)
    }

    var web: WebEndpoint { daemon.web! }
    var localSend: LocalSendEndpoint { daemon.localSend! }

    /// What one scripted connection came to: the responses in order, how it ended (the log's
    /// words, nil for a plain close), whether the client's end was left open, and log lines.
    struct Exchange {
        var responses: [ParsedResponse]
        var ending: String?
        var raw: [UInt8]
        var stream: ScriptedHTTPStream
        var first: ParsedResponse { responses.first ?? ParsedResponse(status: 0, headers: [:], body: []) }
    }

    /// Plays `pieces` (a client's bytes) to the web door on one connection.
    func web(_ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close, headOnly: Bool = false,
             certificate: String? = nil) -> Exchange {
        let server = web.httpsServer()
        return converse(server, web.handler(id: 1, peer: peer), pieces, readSize: readSize, whenEmpty: whenEmpty, headOnly: headOnly,
                        certificate: certificate)
    }

    /// Plays `pieces` to the LocalSend door on one connection, showing `certificate`, through
    /// its route table (`RouteHarness`).
    func localSend(_ pieces: [[UInt8]], readSize: Int = 1 << 20, whenEmpty: ScriptedStream.WhenEmpty = .close,
                   certificate: String? = nil) -> Exchange {
        let door = localSend.door
        let e = RouteHarness(door.responder(), idle: door.configuration.idleTimeout, errorBody: LocalSendDoor.errorBody)
            .run(pieces, certificate: certificate, readSize: readSize, whenEmpty: whenEmpty)
        return Exchange(responses: e.responses, ending: e.ending, raw: e.raw, stream: e.stream)
    }

    private func converse(_ server: HTTPSServer, _ respond: @escaping (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Response,
                          _ pieces: [[UInt8]], readSize: Int, whenEmpty: ScriptedStream.WhenEmpty, headOnly: Bool,
                          certificate: String?) -> Exchange {
        let stream = ScriptedHTTPStream(pieces, readSize: readSize, whenEmpty: whenEmpty)
        let http = server.connection(over: stream)
        let ending = server.conversation.converse(http, certificate: certificate, deadline: .now + .seconds(5), respond: respond)
        let responses = ParsedResponse.all(in: stream.written, headOnly: headOnly)
        return Exchange(responses: responses, ending: ending, raw: stream.written, stream: stream)
    }

    /// A logged-in browser's cookie and CSRF token.
    func login(name: String = "ann") throws -> (cookie: String, csrf: String) {
        let (session, secret) = try web.access.login(name: name, address: peer.host)
        return ("\(WebEndpoint.cookieName)=\(secret)", session.csrf)
    }

    /// Names of the files in the photos directory (recursively, without hidden folders).
    func kept() -> [String] {
        func walk(_ folder: String, _ prefix: String) -> [String] {
            listDirectory(folder).filter { !$0.hasPrefix(".") }.flatMap { name -> [String] in
                let path = folder + "/" + name
                return isDirectory(path) ? walk(path, prefix + name + "/") : [prefix + name]
            }
        }
        return walk(photos, "").sorted()
    }

    /// Files waiting in `.incoming/` (none after any finished or refused upload).
    func incoming() -> [String] { listDirectory(photos + "/.incoming") }
}

func isDirectory(_ path: String) -> Bool {
    (try? fileStatus(path))?.isDirectory ?? false  // a path that is gone is no folder
}

/// A request's bytes: the request line, `headers`, and `body` with its Content-Length (or
/// chunked in `chunks` pieces of the given sizes, with X-Expected-Entity-Length when asked).
func request(_ method: String, _ target: String, _ headers: [(String, String)] = [], body: [UInt8] = [], chunked: [Int]? = nil,
             expectedLength: Bool = false) -> [UInt8] {
    var head = "\(method) \(target) HTTP/1.1\r\nHost: ptk.test\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    guard let chunked else {
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }
    head += "Transfer-Encoding: chunked\r\n"
    if expectedLength { head += "X-Expected-Entity-Length: \(body.count)\r\n" }
    var out = Array((head + "\r\n").utf8)
    var rest = body[...]
    var sizes = chunked[...]
    while !rest.isEmpty {
        let n = min(sizes.popFirst() ?? rest.count, rest.count)
        out += Array((String(n, radix: 16) + ";ext=1\r\n").utf8) + rest.prefix(n) + Array("\r\n".utf8)
        rest = rest.dropFirst(n)
    }
    return out + Array("0\r\n\r\n".utf8)
}
