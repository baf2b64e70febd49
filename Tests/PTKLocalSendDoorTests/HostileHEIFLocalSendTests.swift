import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKLocalSendDoor

/// The audits' hostile HEICs (`HostileHEICs`, issue 54) at the LocalSend door: each refused as
/// not a photo, 400 with the reason in its `{"message"}`, and nothing kept.
@Suite("Hostile HEICs at the LocalSend door (issue 54)", .tags(.unit))
struct HostileHEIFLocalSendTests {
    @Test("prepare-upload of one HEIC, then its upload: 400 with the reason; nothing kept")
    func refused() throws {
        let f = try LocalSendFixture()
        for (name, words) in HostileHEICs.files {
            let b = try #require(HostileHEICs.bytes(name))
            let entries = [
                "h": ["id": "h", "fileName": name, "size": b.count, "fileType": "image/heic", "sha256": sha256Hex(b)]
                    as [String: Any]
            ]
            let body = Array(
                try JSONSerialization.data(withJSONObject: ["info": ["alias": "Phone"], "files": entries]))
            let prepared = f.run([
                request("POST", "/api/localsend/v2/prepare-upload", [("Content-Type", "application/json")], body: body)
            ])
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(prepared.first.body)) as? [String: Any], "\(prepared.first)"
            )
            let session = try #require(json["sessionId"] as? String)
            let token = try #require((json["files"] as? [String: String])?["h"])
            let localSend = f.run([
                request("POST", "/api/localsend/v2/upload?sessionId=\(session)&fileId=h&token=\(token)", body: b)
            ])
            #expect(
                localSend.first.status == 400 && localSend.first.text.contains(words),
                "LocalSend \(name): \(localSend.first)")
        }
        #expect(f.kept().isEmpty && f.incoming().isEmpty, "\(f.kept()) \(f.incoming())")
    }
}
