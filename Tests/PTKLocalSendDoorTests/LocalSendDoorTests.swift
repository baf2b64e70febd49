import Foundation
import PTKDigest
import PTKHTTP
import PTKLocalSend
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLocalSendDoor

/// LocalSend's route table, and every route driven through a scripted connection by
/// `RouteHarness` (no daemon, no socket, no TLS: `LocalSendFixture`): info and register,
/// prepare-upload and upload (Content-Length, chunked, cut short), cancel, and the refusals.
@Suite("LocalSend door: routes over a scripted connection", .tags(.unit))
struct LocalSendDoorTests {
    func prepare(_ files: [(id: String, name: String, bytes: [UInt8])], pin: String? = nil) -> [UInt8] {
        var entries: [String: Any] = [:]
        for f in files {
            entries[f.id] = [
                "id": f.id, "fileName": f.name, "size": f.bytes.count, "fileType": "image/png",
                "sha256": sha256Hex(f.bytes),
            ]
        }
        let body = Array(try! JSONSerialization.data(withJSONObject: ["info": ["alias": "Phone"], "files": entries]))
        return request(
            "POST", "/api/localsend/v2/prepare-upload" + (pin.map { "?pin=\($0)" } ?? ""),
            [("Content-Type", "application/json")], body: body)
    }

    /// The session id and the file tokens of a prepare-upload's answer.
    func tokens(_ r: ParsedResponse) throws -> (String, [String: String]) {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any], "\(r)")
        return (try #require(json["sessionId"] as? String), try #require(json["files"] as? [String: String]))
    }

    @Test(
        "info by GET or POST (v1 and v2, percent-encoded paths too), register; other methods 405 with Allow, other paths 404, in JSON; a lower-case method is not HTTP (400)"
    )
    func infoAndRefusals() throws {
        let f = try LocalSendFixture()
        let e = f.run([
            request("GET", "/api/localsend/v2/info"), request("POST", "/api/localsend/v1/info", body: Array("{}".utf8)),
            request("GET", "/api/localsend/v2/%69nfo"),
            request("POST", "/api/localsend/v2/register", body: Array("{\"alias\":\"x\"}".utf8)),
            request("PUT", "/api/localsend/v2/info", body: [1, 2, 3]), request("GET", "/api/localsend/v2/upload"),
            request("GET", "/"), request("POST", "/api/localsend/v2/upload/"),
            request("post", "/api/localsend/v2/upload"),
        ])
        #expect(
            e.responses.map(\.status) == [200, 200, 200, 200, 405, 405, 404, 404, 400], "\(e.responses.map(\.status))")
        for r in e.responses.prefix(4) {
            #expect(r.text.contains("\"alias\":\"") && r.text.contains("\"deviceType\":\"headless\""))
        }
        #expect(
            e.responses[4].header("allow") == "GET, POST"
                && e.responses[4].text == "{\"message\":\"PUT is not allowed here\"}")
        #expect(e.responses[5].header("allow") == "POST")
        #expect(e.responses[6].text == "{\"message\":\"no such route\"}")
    }

    @Test("HEAD of a route is refused in headers only (405 with Allow, 404), the connection going on")
    func headRefusals() throws {
        let f = try LocalSendFixture()
        let e = f.run([
            request("HEAD", "/api/localsend/v2/info"), request("HEAD", "/nope"),
            request("GET", "/api/localsend/v2/info"),
        ])
        let text = String(decoding: e.raw, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(
            parts.count == 4 && parts[0].hasPrefix("HTTP/1.1 405") && parts[1].hasPrefix("HTTP/1.1 404")
                && parts[2].hasPrefix("HTTP/1.1 200"), "\(text)")
        #expect(parts[0].contains("Allow: GET, POST") && parts[0].contains("Content-Length: 38"))
        #expect(parts[3].hasPrefix("{\"alias\""), "\(parts[3])")
    }

    @Test(
        "prepare-upload, then each file's upload (Content-Length, and chunked fed a byte at a time) is kept byte for byte"
    )
    func sends() throws {
        let f = try LocalSendFixture()
        let a = makePNG(size: 3000, seed: 3)
        let b = makePNG(size: 6000, seed: 4)
        let prepared = f.run([prepare([("a", "a.png", a), ("b", "b.png", b)])])
        #expect(prepared.first.status == 200, "\(prepared.first)")
        let (session, files) = try tokens(prepared.first)
        let upload = { (id: String, bytes: [UInt8], chunked: [Int]?) in
            request(
                "POST", "/api/localsend/v2/upload?sessionId=\(session)&fileId=\(id)&token=\(files[id]!)", body: bytes,
                chunked: chunked)
        }
        let e = f.run([upload("a", a, nil)])
        #expect(e.first.status == 200, "\(e.first)")
        let chunked = f.run([upload("b", b, [1, 4000])], readSize: 1)
        #expect(chunked.first.status == 200, "\(chunked.first)")
        #expect(
            f.kept() == ["a.png", "b.png"] || f.kept().allSatisfy { $0.hasSuffix(".png") } && f.kept().count == 2,
            "\(f.kept())")
        #expect(f.kept().compactMap { readFile(f.photos + "/" + $0) }.sorted { $0.count < $1.count } == [a, b])
        #expect(f.incoming().isEmpty)
    }

    @Test(
        "an upload cut short is not answered and keeps nothing; a wrong token is refused unread; the file can then be sent again"
    )
    func cutAndRefused() throws {
        let f = try LocalSendFixture()
        let a = makePNG(size: 8000, seed: 5)
        let (session, files) = try tokens(f.run([prepare([("a", "a.png", a)])]).first)
        let target = "/api/localsend/v2/upload?sessionId=\(session)&fileId=a&token="
        let cut = f.run([Array(request("POST", target + files["a"]!, body: a).prefix(3000))])
        #expect(cut.responses.isEmpty, "\(cut.responses)")
        let cutChunked = f.run(
            [Array(request("POST", target + files["a"]!, body: a, chunked: [1000]).prefix(5000))], whenEmpty: .reset)
        #expect(cutChunked.responses.isEmpty)
        #expect(f.kept().isEmpty)
        let wrong = f.run([request("POST", target + "nope", body: a)])
        #expect(wrong.first.status == 403 && wrong.first.header("connection") == "close", "\(wrong.first)")
        let again = f.run([request("POST", target + files["a"]!, body: a)])
        #expect(again.first.status == 200, "\(again.first)")
        #expect(f.kept().count == 1 && f.incoming().isEmpty)
    }

    @Test(
        "bytes that do not match the announced SHA-256 are 422 (as the apps expect); not a PNG 400; a body of another length 400"
    )
    func badBodies() throws {
        let f = try LocalSendFixture()
        let a = makePNG(size: 3000, seed: 6)
        let b = makePNG(size: 3000, seed: 7)
        let (session, files) = try tokens(
            f.run([prepare([("a", "a.png", a), ("n", "n.png", [UInt8](repeating: 1, count: 3000))])]).first)
        let target = { (id: String) in "/api/localsend/v2/upload?sessionId=\(session)&fileId=\(id)&token=\(files[id]!)"
        }
        let e = f.run([request("POST", target("a"), body: b)])
        #expect(e.first.status == 422, "\(e.first)")
        let n = f.run([request("POST", target("n"), body: [UInt8](repeating: 1, count: 3000))])
        #expect(n.first.status == 400 || n.first.status == 422, "\(n.first)")
        let long = f.run([request("POST", target("a"), body: a + [0])])
        #expect(long.first.status == 400 && long.first.text.contains("Content-Length"), "\(long.first)")
        #expect(f.kept().isEmpty && f.incoming().isEmpty)
    }

    @Test("a PIN: none given 401, a wrong one 401, the right one accepted; cancel ends the session")
    func pinAndCancel() throws {
        let f = try LocalSendFixture { $0.localSendPIN = "4711" }
        let a = makePNG(size: 2000)
        let e = f.run([
            prepare([("a", "a.png", a)]), prepare([("a", "a.png", a)], pin: "1"),
            prepare([("a", "a.png", a)], pin: "4711"),
        ])
        #expect(e.responses.map(\.status) == [401, 401, 200], "\(e.responses)")
        let (session, files) = try tokens(e.responses[2])
        let cancel = f.run([
            request("POST", "/api/localsend/v2/cancel?sessionId=\(session)", body: []),
            request("POST", "/api/localsend/v2/upload?sessionId=\(session)&fileId=a&token=\(files["a"]!)", body: a),
        ])
        #expect(cancel.responses.first?.status == 200)
        #expect(cancel.responses.count == 2 && cancel.responses[1].status != 200, "\(cancel.responses)")
        #expect(f.kept().isEmpty)
    }

    @Test("senders = trusted: an app without a certificate, or with one not on the trust list, is refused 403")
    func trustedOnly() throws {
        let f = try LocalSendFixture { $0.senders = .trusted }
        let a = makePNG(size: 2000)
        let none = f.run([prepare([("a", "a.png", a)])])
        #expect(none.first.status == 403, "\(none.first)")
        let unknown = f.run([prepare([("a", "a.png", a)])], certificate: String(repeating: "ab", count: 32))
        #expect(unknown.first.status == 403)
        #expect(try f.door.trust.pending().count == 1)
    }
}

extension LocalSendDoorTests {
    @Test(
        "refusals in JSON: a body that is not a prepare-upload 400 and an upload without its parameters 400 keep the connection; a sender not trusted is refused 403 with a large body unread, closing"
    )
    func refusalsAndKeepAlive() throws {
        let f = try LocalSendFixture()
        let e = f.run([
            request("POST", "/api/localsend/v2/prepare-upload", body: Array("{\"info\":1}".utf8)),
            request("POST", "/api/localsend/v2/upload?sessionId=x", body: [1, 2, 3]),
            request("POST", "/api/localsend/v2/cancel?sessionId=nope", body: []),
            request("GET", "/api/localsend/v2/info"),
        ])
        #expect(e.statuses == [400, 400, 200, 200], "\(e.responses)")
        #expect(
            e.responses[0].text.hasPrefix("{\"message\":\"invalid body: ")
                && e.responses[0].header("content-type") == "application/json")
        #expect(
            e.responses[1].text == "{\"message\":\"missing sessionId, fileId or token\"}"
                && e.responses[1].header("connection") == "keep-alive")
        #expect(e.responses[2].body.isEmpty && e.responses[2].header("content-type") == nil)
        #expect(
            e.responses[3].text.contains("\"fingerprint\":\"\(LocalSendFixture.fingerprint)\"")
                && e.responses[3].text.contains("\"port\":53317"))

        let t = try LocalSendFixture { $0.senders = .trusted }
        let large = [UInt8](repeating: 0x20, count: (64 << 10) + 1)
        let refused = t.run([
            request("POST", "/api/localsend/v2/prepare-upload", body: large), request("GET", "/api/localsend/v2/info"),
        ])
        #expect(refused.statuses == [403] && refused.first.header("connection") == "close", "\(refused.responses)")
        #expect(refused.first.text == "{\"message\":\"this receiver accepts trusted devices only\"}")
        let small = t.run([
            request("POST", "/api/localsend/v2/prepare-upload", body: Array("{}".utf8)),
            request("GET", "/api/localsend/v2/info"),
        ])
        #expect(small.statuses == [403, 200], "\(small.responses)")
    }
}
