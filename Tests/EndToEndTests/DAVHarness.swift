import Foundation
import Glibc
import PTKHTTP
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTransport
import Testing

// What the WebDAV door's end-to-end tests share (issue 44): a ptkd with the door, app
// passwords, a raw keep-alive HTTPS session for the scripted Finder and Explorer sessions, a
// 207 reader, the photos a client sends, and what the photos directory holds afterwards.

/// Set by .ci/run: there every WebDAV client is installed, so a missing one fails its test
/// instead of skipping.
let davClientsRequired = environment("PTK_REQUIRE_DAV_CLIENTS") == "1"

/// The door's challenge: Basic, realm "ptk" (RFC 7617's charset="UTF-8" may follow).
func isPTKChallenge(_ value: String) -> Bool {
    value == #"Basic realm="ptk""# || value == #"Basic realm="ptk", charset="UTF-8""#
}

/// A client program of the tests, by its absolute path or on PATH.
func haveProgram(_ name: String) -> Bool {
    name.hasPrefix("/") ? access(name, X_OK) == 0 : findProgram(name) != nil
}

/// What `ptk app-password add NAME --json` prints.
struct AppPassword {
    var url: String
    var user: String
    var password: String
    var access: String
    /// The Authorization header's value.
    var basic: String { "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }
}

extension DaemonProcess {
    /// A ptkd with its web interface, and so the WebDAV door, on a free port.
    static func withDAV(_ extra: [String] = []) throws -> DaemonProcess {
        try withWeb(extra)
    }

    /// The door's URL on loopback.
    var davURL: String { "https://127.0.0.1:\(webPort)/dav/" }

    /// The web interface's certificate (PEM), which the door shows.
    var webCertificate: String { stateDir + "/web/tls/cert.pem" }

    /// `ptk app-password add NAME --access ACCESS --json`, checked to be one whole object.
    func appPassword(_ name: String, access: String = "full") throws -> AppPassword {
        let r = try library(self, ["app-password", "add", name, "--access", access, "--json"])
        guard r.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
            let url = object["url"] as? String, let user = object["user"] as? String,
            let password = object["password"] as? String, let granted = object["access"] as? String
        else {
            throw HarnessError(
                "ptk app-password add \(name) --access \(access) --json: \(r.status) \(r.stdout) \(r.stderr)")
        }
        return AppPassword(url: url, user: user, password: password, access: granted)
    }

    /// Every regular file below the photos directory (not `.incoming`, not the library's
    /// `.ptk`), by its path relative to it, with its bytes.
    var photoFiles: [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        func walk(_ relative: String) {
            for name in listDirectory(relative.isEmpty ? dir : dir + "/" + relative) {
                if relative.isEmpty && (name == ".incoming" || name == ".ptk") { continue }
                let path = relative.isEmpty ? name : relative + "/" + name
                var st = stat()
                guard lstat(dir + "/" + path, &st) == 0 else { continue }
                if (st.st_mode & S_IFMT) == S_IFDIR {
                    walk(path)
                } else {
                    files[path] = readFile(dir + "/" + path) ?? []
                }
            }
        }
        walk("")
        return files
    }
}

/// Names Finder and Explorer write beside what they copy; the door keeps them apart from the photos.
func isClientLitter(_ path: String) -> Bool {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    return name.hasPrefix("._") || name == ".DS_Store" || name == "Thumbs.db" || name == "desktop.ini"
}

/// The photos a client sends: relative path -> bytes, each different (ptkd keeps a photo's bytes
/// once), PNG, JPEG and HEIC in folders, one name with a space and one with an accent.
func davPhotoTree(seed: Int = 1) -> [String: [UInt8]] {
    let s = UInt64(seed)
    return [
        "IMG_0001.png": makePNG(size: 20_000, seed: 100 + s),
        "2024/IMG_0002.jpg": makeJPEG(width: 96, height: 64, seed: 200 + s),
        "2024/summer/IMG_0003.heic": readFile(fixturePath("heif/picture.heic")) ?? [],
        "2024/summer/beach day.jpeg": makeJPEG(width: 80, height: 48, quality: 80, seed: 300 + s),
        "Été/IMG_0005.png": makePNG(size: 9_000, seed: 400 + s),
    ]
}

/// Writes `tree` below `root`, making its folders.
func writeTree(_ tree: [String: [UInt8]], in root: String) {
    for (path, bytes) in tree {
        let full = root + "/" + path
        try? FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        writeFile(full, bytes)
    }
}

/// A path's segments percent-encoded for a request target ("Été/beach day.jpeg" ->
/// "%C3%89t%C3%A9/beach%20day.jpeg").
func davEscape(_ path: String) -> String {
    var allowed = CharacterSet.alphanumerics.intersection(
        CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
    allowed.insert(charactersIn: "-._~/")
    return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
}

/// One answer of the door.
struct DAVResponse: CustomStringConvertible {
    var status: Int
    var head: HTTPHead?
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { head?.header(name) }
    var description: String { "\(status) \(head?.headers ?? [:]) \(text.prefix(600))" }
}

/// A WebDAV client's keep-alive HTTPS connection, written byte for byte as the test says: its
/// user agent, Basic credentials on every request once it has them (as Finder and Explorer
/// send them after the first 401), chunked bodies spelled as that client spells them.
final class DAVSession {
    let port: UInt16
    let userAgent: String
    /// The Authorization header's value; nil sends none.
    var authorization: String?
    private let browser: WebBrowser
    private var connection: AppConnection?
    /// Every request and its status, in order, for messages.
    private(set) var transcript: [String] = []

    init(port: UInt16, userAgent: String, authorization: String?) throws {
        self.port = port
        self.userAgent = userAgent
        self.authorization = authorization
        browser = try WebBrowser(port: port)
    }

    /// Sends one request on the kept connection (a new one if the door closed it) and reads
    /// the answer. `chunked` sends the body in pieces of that size, with `Transfer-Encoding:
    /// <chunkedSpelling>`; otherwise with Content-Length when it has a body or the method carries one.
    @discardableResult
    func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        chunked: Int? = nil, chunkedSpelling: String = "chunked"
    ) throws -> DAVResponse {
        let c = try connection ?? browser.connect()
        connection = c
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: \(userAgent)\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        var out: [UInt8]
        if let size = chunked {
            out = Array((head + "Transfer-Encoding: \(chunkedSpelling)\r\n\r\n").utf8)
            var i = 0
            while i < body.count {
                let piece = body[i..<min(i + size, body.count)]
                out += Array((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Array("\r\n".utf8)
                i += size
            }
            out += Array("0\r\n\r\n".utf8)
        } else {
            let carries = ["PUT", "PROPFIND", "PROPPATCH", "LOCK", "MKCOL", "POST"].contains(method)
            if !body.isEmpty || carries { head += "Content-Length: \(body.count)\r\n" }
            out = Array((head + "\r\n").utf8) + body
        }
        let r: (status: Int, body: [UInt8])
        do {
            try c.write(out)
            r = try c.readResponse()
        } catch {
            connection = nil
            c.close()
            throw error
        }
        let answer = DAVResponse(status: r.status, head: c.lastHead, body: r.body)
        transcript.append("\(method) \(target) -> \(r.status)")
        if r.status == 0 || c.lastHead?.keepAlive == false {
            c.close()
            connection = nil
        }
        return answer
    }

    /// A HEAD request on a connection of its own (no body follows its answer): the status and
    /// the headers, names lowercased.
    func head(_ target: String, headers: [(String, String)] = []) throws -> (status: Int, headers: [String: String]) {
        let c = try browser.connect()
        defer { c.close() }
        var head = "HEAD \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: \(userAgent)\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try c.write(Array((head + "\r\n").utf8))
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !String(decoding: got, as: UTF8.self).contains("\r\n\r\n") {
            let n = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(TransportError) in try c.stream.read(into: b, deadline: .now + .seconds(10)) }
            }.get()
            if n == 0 { break }
            got += buffer[..<n]
        }
        let lines = String(decoding: got, as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        transcript.append("HEAD \(target) -> \(status)")
        return (status, fields)
    }

    func close() {
        connection?.close()
        connection = nil
    }

    deinit { close() }
}

/// One `response` of a 207 Multi-Status: its href (percent-decoded, path only), whether it is
/// a collection, its getcontentlength, the status of each propstat, and its raw text.
struct DAVEntry {
    var href: String
    var isCollection: Bool
    var length: Int?
    var statuses: [Int]
    var raw: String
}

/// The responses of a 207 body, read with patterns (any namespace prefix): enough to check
/// what a client would list.
func multistatus(_ text: String) -> [DAVEntry] {
    func matches(_ pattern: String, in s: String) -> [[String]] {
        guard
            let re = try? NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators, .caseInsensitive])
        else { return [] }
        let ns = s as NSString
        return re.matches(in: s, range: NSRange(location: 0, length: ns.length)).map { m in
            (0..<m.numberOfRanges).map {
                m.range(at: $0).location == NSNotFound ? "" : ns.substring(with: m.range(at: $0))
            }
        }
    }
    let prefix = #"(?:[A-Za-z_][\w.-]*:)?"#
    return matches("<\(prefix)response(?:\\s[^>]*)?>(.*?)</\(prefix)response>", in: text).map { m in
        let block = m[1]
        var href = matches("<\(prefix)href>\\s*([^<]*?)\\s*</\(prefix)href>", in: block).first?[1] ?? ""
        href = href.replacingOccurrences(of: "&amp;", with: "&")
        if let r = href.range(of: #"^https?://[^/]+"#, options: .regularExpression) { href.removeSubrange(r) }
        href = href.removingPercentEncoding ?? href
        let length = matches("<\(prefix)getcontentlength>\\s*(\\d+)\\s*</", in: block).first.flatMap { Int($0[1]) }
        let statuses = matches("<\(prefix)status>\\s*HTTP/1\\.[01] (\\d{3})", in: block).compactMap { Int($0[1]) }
        let collection =
            block.range(of: "<\(prefix)collection\\s*/>", options: [.regularExpression, .caseInsensitive]) != nil
        return DAVEntry(href: href, isCollection: collection, length: length, statuses: statuses, raw: block)
    }
}

/// The hrefs a Depth 1 PROPFIND of `folder` lists below it: names only, folders ending in "/".
func listedNames(_ text: String, in folder: String) -> Set<String> {
    var names = Set<String>()
    for entry in multistatus(text) {
        var href = entry.href
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        guard href.hasPrefix(base) else { continue }
        href.removeFirst(base.count)
        if href.isEmpty || href == "/" { continue }
        let trimmed = href.hasSuffix("/") ? String(href.dropLast()) : href
        names.insert(trimmed + (entry.isCollection ? "/" : ""))
    }
    return names
}

/// The PROPFIND body Finder (WebDAVFS) sends for an item's attributes.
let finderPropfind = Array(
    """
    <?xml version="1.0" encoding="utf-8"?>
    <D:propfind xmlns:D="DAV:">
    <D:prop>
    <D:getlastmodified/>
    <D:getcontentlength/>
    <D:creationdate/>
    <D:resourcetype/>
    </D:prop>
    </D:propfind>

    """.utf8)

/// A lock request's body: exclusive write, the owner an href.
func lockInfo(owner: String, shared: Bool = false) -> [UInt8] {
    Array(
        """
        <?xml version="1.0" encoding="utf-8"?>
        <D:lockinfo xmlns:D="DAV:">
        <D:lockscope><D:\(shared ? "shared" : "exclusive")/></D:lockscope>
        <D:locktype><D:write/></D:locktype>
        <D:owner>
        <D:href>\(owner)</D:href>
        </D:owner>
        </D:lockinfo>

        """.utf8)
}

/// The token of a LOCK's answer, from its Lock-Token header ("<opaquelocktoken:...>" without the brackets).
func lockToken(_ r: DAVResponse) -> String? {
    guard var token = r.header("lock-token")?.trimmingCharacters(in: .whitespaces), !token.isEmpty else { return nil }
    if token.hasPrefix("<") && token.hasSuffix(">") { token = String(token.dropFirst().dropLast()) }
    return token
}
