import Foundation
import Glibc
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@Suite("End to end: the WebDAV door against an upload password's audit (issue 54)", .serialized, .tags(.endToEnd))
struct DAVUploadAuditE2ETests {
    @Test(
        "one app password used from two addresses in turn: the passwords file is rewritten at most once a minute, and the latest use is in it once ptkd stops"
    )
    func usesNotedOnceAMinute() throws {
        let d = try DaemonProcess.withDAV()
        defer { _ = d.stop() }
        let phone = try d.appPassword("phone", access: "upload")
        let context = try TLSContext(server: false, identity: nil, flavor: .web)
        let file = d.stateDir + "/web/app-passwords"
        var last = try fileStatus(file)
        var rewrites = 0
        for i in 0..<40 {
            let c = try connect(port: d.webPort, from: i % 2 == 0 ? "127.0.0.1" : "127.0.0.2", context: context)
            let r = try c.request(
                "OPTIONS", "/dav/", contentType: nil, extraHeaders: "Authorization: \(phone.basic)\r\n")
            c.close()
            #expect(r.status == 200)
            let now = try fileStatus(file)
            if now != last { rewrites += 1 }
            last = now
        }
        #expect(rewrites <= 2, "\(rewrites) rewrites of the passwords file")
        #expect(d.stop() == 0)
        let listed = try library(d, ["app-password", "list", "--json"])
        let array = try #require(
            try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stdout)")
        #expect(array.first?["address"] as? String == "127.0.0.2", "\(listed.stdout)")
    }
}
