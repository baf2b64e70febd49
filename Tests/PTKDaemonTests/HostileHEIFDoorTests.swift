import Foundation
import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing
@testable import PTKDaemon

/// The audits' hostile HEICs (issue 54: a grid or overlay whose output is not its ispe, a coded
/// image larger than its ispe; a second ispe, an empty NAL unit, an item placed twice, two
/// pictures in one image) at every door: each refuses them as not a photo, in its own
/// terms, with the reason, and keeps nothing.
@Suite("Hostile HEICs at every door (issue 54)", .tags(.unit))
struct HostileHEIFDoorTests {
    static let files = ["grid-20000.heic": "makes a 20000x20000 image", "overlay-20000.heic": "makes a 20000x20000 image",
                        "coded-2048.heic": "is coded 2048x2048", "coded-in-band.heic": "is coded 2048x2048",
                        // The second image audit's (what libheif 1.15 reads otherwise than the check did).
                        "ispe2-grid-7500.heic": "has 2 ispe properties", "nal-zero.heic": "a NAL unit of 0 bytes",
                        "iloc-twice.heic": "iloc places item 1 twice", "pictures-2.heic": "holds 2 pictures"]

    static func bytes(_ name: String) throws -> [UInt8] { try #require(readFile(fixturePath("heif/hostile/" + name))) }

    @Test("protocol v1: FAILED not-png after DONE, the reason in its message")
    func protocolV1() throws {
        let dir = try StoreDirectory()
        let stream = ScriptedStream { _, _ in }
        stream.feed(.hello(Hello(name: "hostile", window: 4)))
        for name in Self.files.keys.sorted() {
            let b = try Self.bytes(name)
            stream.feed(.offer(Offer(name: name, size: Int64(b.count), sha256: SHA256.hex(of: b), mediaType: "image/heic")))
            stream.feed(.chunk(b))
            stream.feed(.done)
        }
        stream.feed(.bye)
        stream.whenEmpty = .close
        try serveScripted(stream, dir)
        let failed = stream.written.compactMap { if case .failed(let p) = $0 { p } else { nil } }
        #expect(failed.count == Self.files.count, "\(stream.written)")
        for (p, name) in zip(failed, Self.files.keys.sorted()) {
            #expect(p.code == FileErrorCode.notPNG.rawValue && p.message.contains(Self.files[name]!), "\(name): \(p)")
        }
        #expect(dir.photos.isEmpty && dir.partials.isEmpty)
    }

    @Test("LocalSend, the web upload and WebDAV: 400 with the reason; nothing kept")
    func httpDoors() throws {
        let f = try DoorFixture()
        let (cookie, csrf) = try f.login()
        let desk = try f.appPassword("desk")
        for (name, words) in Self.files {
            let b = try Self.bytes(name)
            // LocalSend: prepare-upload of one HEIC, then its upload.
            let entries = ["h": ["id": "h", "fileName": name, "size": b.count, "fileType": "image/heic", "sha256": sha256Hex(b)] as [String: Any]]
            let body = Array(try JSONSerialization.data(withJSONObject: ["info": ["alias": "Phone"], "files": entries]))
            let prepared = f.localSend([request("POST", "/api/localsend/v2/prepare-upload", [("Content-Type", "application/json")], body: body)])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(prepared.first.body)) as? [String: Any], "\(prepared.first)")
            let session = try #require(json["sessionId"] as? String)
            let token = try #require((json["files"] as? [String: String])?["h"])
            let localSend = f.localSend([request("POST", "/api/localsend/v2/upload?sessionId=\(session)&fileId=h&token=\(token)", body: b)])
            #expect(localSend.first.status == 400 && localSend.first.text.contains(words), "LocalSend \(name): \(localSend.first)")
            let web = f.web([request("POST", "/upload?name=\(name)", [("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "image/heic")], body: b)])
            #expect(web.first.status == 400 && web.first.text.contains(words), "web \(name): \(web.first)")
            let dav = f.dav(dav("PUT", "/dav/\(name)", desk, body: b))
            #expect(dav.first.status == 400 && dav.first.text.contains(words), "WebDAV \(name): \(dav.first)")
        }
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.kept()) \(f.incoming())")
    }
}
