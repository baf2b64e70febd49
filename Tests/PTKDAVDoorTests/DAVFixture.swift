import Foundation
import PTKDAV
import PTKDigest
import PTKLibrary
import PTKTestSupport
import PTKTrust
import PTKVocabulary
import Testing

@testable import PTKDAVDoor
@testable import PTKWebDoor

/// An app password of a `DoorFixture`'s receiver, and what a client sends to present it.
struct DAVAccount {
    let name: String
    let password: String
    let id: String

    /// `Authorization: Basic ...` for these credentials.
    var authorization: (String, String) { ("Authorization", basicAuthorization(name, password)) }
}

/// The value of an `Authorization: Basic` header.
func basicAuthorization(_ name: String, _ password: String) -> String {
    "Basic " + Data((name + ":" + password).utf8).base64EncodedString()
}

extension DoorFixture {
    /// The receiver's app passwords, as `ptk app-password` edits them (its own instance: the
    /// door notices a change by the file's).
    var appPasswords: AppPasswords { AppPasswords(directory: web.dav.configuration.webDirectory) }
    /// Where the door keeps names and sidecars.
    var davState: String { web.dav.configuration.webDirectory + "/dav" }

    /// A new app password named `name`.
    func appPassword(_ name: String, _ access: AppAccess = .full) throws -> DAVAccount {
        let (entry, password) = try appPasswords.add(name: name, access: access, now: 1_700_000_000)
        return DAVAccount(name: name, password: password, id: entry.id)
    }

    /// Plays `requests` to the web door on one connection (DAV targets reach `DAVEndpoint`).
    func dav(_ requests: [UInt8]..., readSize: Int = 1 << 20, headOnly: Bool = false) -> Exchange {
        web(requests, readSize: readSize, headOnly: headOnly)
    }

    /// The photos directory's files and folders, recursively, hidden ones included ("a/", "a/b.png", ".incoming/").
    func everything() -> [String] {
        func walk(_ folder: String, _ prefix: String) -> [String] {
            listDirectory(folder).flatMap { name -> [String] in
                let path = folder + "/" + name
                if isSymlink(path) { return [prefix + name + "@"] }
                return isDirectory(path) ? [prefix + name + "/"] + walk(path, prefix + name + "/") : [prefix + name]
            }
        }
        return walk(photos, "").sorted()
    }

    /// The library's entries (after reconciling it with the directory).
    func libraryNames() throws -> [String] {
        let library = try PhotoLibrary(directory: photos, create: false)
        return try library.names().sorted()
    }

    /// Brings the library up to date with the directory and indexes what it found (SHA-256
    /// included), as ptkd's indexer would: the fixture's daemon does not run it.
    func reconcile() throws {
        let library = try PhotoLibrary(directory: photos, create: false)
        _ = try library.reconcile()
        _ = try library.index(ids: try library.pending(limit: 10_000))
    }
}

func isSymlink(_ path: String) -> Bool {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
}

/// A WebDAV request's bytes, authorised by `account` (none: no Authorization header).
func dav(
    _ method: String, _ path: String, _ account: DAVAccount?, _ headers: [(String, String)] = [], body: [UInt8] = [],
    chunked: [Int]? = nil, expectedLength: Bool = false
) -> [UInt8] {
    request(
        method, path, (account.map { [$0.authorization] } ?? []) + headers, body: body, chunked: chunked,
        expectedLength: expectedLength)
}

/// A PROPFIND of `props` (DAV: names; nil: an empty body, which is allprop).
func propfind(
    _ path: String, _ account: DAVAccount?, depth: String? = "1", props: [String]? = nil,
    headers: [(String, String)] = []
) -> [UInt8] {
    let body =
        props.map { names in
            Array(
                ("<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\"><D:prop>" + names.map { "<D:\($0)/>" }.joined()
                    + "</D:prop></D:propfind>").utf8)
        } ?? []
    return dav("PROPFIND", path, account, (depth.map { [("Depth", $0)] } ?? []) + headers, body: body)
}

/// The body of a LOCK: `<D:lockinfo>` with the scope and an owner.
func lockInfo(_ scope: String = "exclusive", owner: String = "<D:href>mailto:ann@example.org</D:href>") -> [UInt8] {
    Array(
        ("<?xml version=\"1.0\" encoding=\"utf-8\"?><D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:\(scope)/></D:lockscope>"
            + "<D:locktype><D:write/></D:locktype><D:owner>\(owner)</D:owner></D:lockinfo>").utf8)
}

/// One `<D:response>` of a 207 answer: its href (as sent and decoded), and each property by
/// expanded name with the status of its propstat and its element.
struct DAVEntry {
    var href: String
    var properties: [XMLName: (status: Int, element: XMLElement)] = [:]

    /// The href's path percent-decoded ("/dav/a b.png").
    var path: String { percentDecoded(href) }
    /// The last name of `path` ("" for the root).
    var name: String {
        path.split(separator: "/", omittingEmptySubsequences: true).dropFirst().last.map(String.init) ?? ""
    }

    func status(_ local: String) -> Int? { properties[.dav(local)]?.status }
    func text(_ local: String) -> String? { properties[.dav(local)]?.element.text }
    var isCollection: Bool { properties[.dav("resourcetype")]?.element.child(.dav("collection")) != nil }
}

/// The responses of a 207 body, in order; nil when it is not a multistatus document.
func multistatus(_ response: ParsedResponse) -> [DAVEntry]? {
    guard response.status == 207,
        case .success(let root) = DAVXML.parse(
            response.body, limits: XMLLimits(maxBytes: 16 << 20, maxElements: 1 << 20)),
        root.name == .dav("multistatus")
    else { return nil }
    return root.children(.dav("response")).map { r in
        var entry = DAVEntry(href: r.child(.dav("href"))?.text ?? "")
        for propstat in r.children(.dav("propstat")) {
            let status = statusCode(propstat.child(.dav("status"))?.text ?? "")
            for property in propstat.child(.dav("prop"))?.children ?? [] {
                entry.properties[property.name] = (status, property)
            }
        }
        return entry
    }
}

/// `text` with each %XX turned into its byte (UTF-8 decoded; a bad escape is kept as sent).
func percentDecoded(_ text: String) -> String {
    var out: [UInt8] = []
    var bytes = Array(text.utf8)[...]
    while let b = bytes.popFirst() {
        if b == UInt8(ascii: "%"), bytes.count >= 2,
            let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
        {
            out.append(v)
            bytes = bytes.dropFirst(2)
        } else {
            out.append(b)
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// 404 of "HTTP/1.1 404 Not Found".
func statusCode(_ line: String) -> Int { line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0 }

/// The names a depth-1 PROPFIND lists below the folder it asked about (the folder itself left out).
func listedNames(_ response: ParsedResponse) -> [String]? {
    multistatus(response).map { entries in entries.dropFirst().map(\.name).sorted() }
}

/// The parsed XML of a response body (nil when it is none).
func xml(_ response: ParsedResponse) -> XMLElement? {
    try? DAVXML.parse(response.body).get()
}

/// The lock token of a LOCK's answer, without its angle brackets.
func lockToken(_ response: ParsedResponse) -> String? {
    guard let header = response.header("lock-token"), header.hasPrefix("<"), header.hasSuffix(">") else { return nil }
    return String(header.dropFirst().dropLast())
}

/// The SHA-256 of `bytes` ("missing" for nil): compared in place of the bytes, so a failure prints 64 digits, not a photo.
func digest(_ bytes: [UInt8]?) -> String { bytes.map { SHA256.hex(of: $0) } ?? "missing" }

/// A symbolic link at `path` to `target`.
func createSymbolicLink(_ target: String, at path: String) throws {
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
}

extension DoorFixture.Exchange {
    /// The `i`th response, or an empty one with status 0 when there are fewer (an expectation fails, the run goes on).
    subscript(_ i: Int) -> ParsedResponse {
        i < responses.count ? responses[i] : ParsedResponse(status: 0, headers: [:], body: [])
    }
}
