import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKCloudDoor
@testable import PTKDAVDoor

/// The parsed JSON of a response body.
func json(_ response: ParsedResponse) -> [String: Any]? {
    try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
}

/// `ocs.data` of an OCS answer in JSON.
func ocsData(_ response: ParsedResponse) -> Any? {
    ((json(response)?["ocs"] as? [String: Any])?["data"])
}

/// `ocs.meta.statuscode` of an OCS answer in JSON.
func ocsCode(_ response: ParsedResponse) -> Int? {
    ((json(response)?["ocs"] as? [String: Any])?["meta"] as? [String: Any])?["statuscode"] as? Int
}

/// The Nextcloud-compatible door's own answers on the web port (issue 57), every route
/// through a scripted connection: what the apps read before they upload.
@Suite("Nextcloud-compatible door: status.php, the connectivity check, OCS", .tags(.unit))
struct CloudDoorTests {
    @Test("status.php and the connectivity check answer anyone, with a Date")
    func openAnswers() throws {
        let f = try DoorFixture()
        let e = f.web([request("GET", "/status.php"), request("GET", "/index.php/204")])
        #expect(e.responses.map(\.status) == [200, 204], "\(e.responses.map(\.status))")
        let status = json(e.first)
        #expect(status?["installed"] as? Bool == true)
        #expect(status?["maintenance"] as? Bool == false)
        #expect((status?["version"] as? String)?.hasPrefix("31.") == true)
        #expect(status?["productname"] as? String == "ptk")
        #expect(e.first.header("content-type") == "application/json; charset=utf-8")
        #expect(e.first.header("date") != nil)
        #expect(e[1].body.isEmpty)
    }

    @Test("capabilities in v1 JSON, v2 XML, and asked by Accept")
    func capabilities() throws {
        let f = try DoorFixture()
        let e = f.web([
            request("GET", "/ocs/v1.php/cloud/capabilities?format=json", [("OCS-APIREQUEST", "true")]),
            request("GET", "/ocs/v2.php/cloud/capabilities"),
            request("GET", "/ocs/v2.php/cloud/capabilities", [("Accept", "application/json")]),
        ])
        #expect(e.responses.map(\.status) == [200, 200, 200])
        #expect(ocsCode(e[0]) == 100)
        let caps = (ocsData(e[0]) as? [String: Any])?["capabilities"] as? [String: Any]
        #expect((caps?["dav"] as? [String: Any])?["chunking"] as? String == "1.0")
        #expect(e[1].header("content-type")?.hasPrefix("text/xml") == true)
        let xml = String(decoding: e[1].body, as: UTF8.self)
        #expect(xml.contains("<statuscode>200</statuscode>") && xml.contains("<chunking>1.0</chunking>"), "\(xml)")
        #expect(ocsCode(e[2]) == 200)
    }

    @Test("the user needs an app password, and is that password's own: another name is not there")
    func user() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        _ = try f.appPassword("tablet", .upload)
        let e = f.web([
            request("GET", "/ocs/v1.php/cloud/user?format=json")
        ])
        #expect(e.first.status == 401)
        #expect(e.first.header("www-authenticate")?.hasPrefix("Basic") == true)
        #expect(ocsCode(e.first) == 997)
        let ok = f.web([
            dav("GET", "/ocs/v1.php/cloud/user?format=json", phone),
            dav("GET", "/ocs/v2.php/cloud/users/phone?format=json", phone),
            dav("GET", "/ocs/v2.php/cloud/users/tablet?format=json", phone),
            dav("GET", "/ocs/v1.php/cloud/users/tablet?format=json", phone),
        ])
        #expect(ok.responses.map(\.status) == [200, 200, 404, 200], "\(ok.responses.map(\.status))")
        let user = ocsData(ok[0]) as? [String: Any]
        #expect(user?["id"] as? String == "phone")
        #expect(user?["display-name"] as? String == "phone")
        #expect((user?["quota"] as? [String: Any])?["used"] as? Int == 0)
        #expect(ocsCode(ok[3]) == 998)
        let wrong = f.web([dav("GET", "/ocs/v1.php/cloud/user", DAVAccount(name: "phone", password: "nope", id: ""))])
        #expect(wrong.first.status == 401)
    }

    @Test("what the apps ask at start is an empty list; anything else under /ocs is OCS's 404")
    func stubsAndUnknown() throws {
        let f = try DoorFixture()
        let phone = try f.appPassword("phone", .upload)
        var requests = CloudEndpoint.emptyLists.map { dav("GET", "/ocs/v2.php" + $0 + "?format=json", phone) }
        requests.append(dav("GET", "/ocs/v2.php/apps/files_versions/api?format=json", phone))
        requests.append(dav("GET", "/ocs/v2.php/config?format=json", phone))
        let e = f.web(requests)
        let n = CloudEndpoint.emptyLists.count
        #expect(
            e.responses.map(\.status) == Array(repeating: 200, count: n) + [404, 200], "\(e.responses.map(\.status))")
        for i in 0..<n { #expect((ocsData(e[i]) as? [Any])?.isEmpty == true) }
        #expect(ocsCode(e[n]) == 404)
        #expect((ocsData(e[n + 1]) as? [String: Any])?["version"] as? String == "1.7")
    }
}
