import PTKClient
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("ptk-send's known receivers", .tags(.unit))
struct KnownReceiversTests {
    @Test(
        "remembered, found by name in any case, saved and read back; unknown lines are kept; forget by name or address")
    func roundTrip() throws {
        let dir = makeTemporaryDirectory("ptk-known")
        defer { removeTree(dir) }
        let path = dir + "/known-receivers"
        writeFile(path, Array("# mine\nsomething I wrote\n".utf8))
        var known = try KnownReceivers(path: path)
        let a = DeviceID(sha256: Array(repeating: 7, count: 32))
        let b = DeviceID(sha256: Array(repeating: 8, count: 32))
        known.remember(
            KnownReceiver(
                id: a, name: "Living Room", address: "[fe80::1%eth0]:47850", firstSeen: WallTime(seconds: 1000)))
        known.remember(
            KnownReceiver(id: b, name: "10.0.0.2:47850", address: "10.0.0.2:47850", firstSeen: WallTime(seconds: 2000)))
        try known.save()
        #expect(try fileStatus(path).permissions == 0o600)
        var again = try KnownReceivers(path: path)
        #expect(again.entries == known.entries)
        #expect(again.entry(named: "living room")?.id == a)
        #expect(again.entry(named: "kitchen") == nil)
        let text = String(decoding: readFile(path) ?? [], as: UTF8.self)
        #expect(text.contains("# mine\nsomething I wrote\n"))
        #expect(again.forget("10.0.0.2:47850") == 1)
        #expect(again.forget("[FE80::1%eth0]:47850") == 1)
        #expect(again.forget("nothing") == 0)
        #expect(again.entries.isEmpty)
    }

    @Test("a missing file is an empty list")
    func missing() throws {
        #expect(try KnownReceivers(path: "/nonexistent/known-receivers").entries.isEmpty)
    }
}
