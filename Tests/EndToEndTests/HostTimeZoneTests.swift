import Glibc
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKLibrary

/// `ptk list` and `ptk show` give times in the host's time zone, named (issue 45); `--json`
/// keeps UTC. Zones are POSIX TZ strings, so no time zone database is needed.
@Suite(.tags(.endToEnd)) struct HostTimeZoneTests {
    /// A library of one photo, received 2026-12-02T06:15:03Z, modified 2020-05-06T10:13:20Z,
    /// and one taken 2024-07-03T14:22:00+02:00 (an instant) and one at 2024-07-04T09:00:00 (the
    /// camera's clock, no zone).
    func makeLibrary() throws -> String {
        let dir = makeTemporaryDirectory("ptk-host-time")
        let library = try PhotoLibrary(directory: dir, create: true)
        var arrivals: [Arrival] = []
        for name in ["sent.png", "offset.png", "clock.png"] {
            let bytes = makeImagePNG(width: 4, height: 3) { x, y in [UInt8(x), UInt8(y), UInt8(name.utf8.count)] }
            writeFile(dir + "/" + name, bytes)
            var times = [timespec(tv_sec: 1_588_760_000, tv_nsec: 0), timespec(tv_sec: 1_588_760_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, dir + "/" + name, &times, 0) == 0)
            arrivals.append(
                Arrival(
                    name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes),
                    received: WallTime(iso8601: "2026-12-02T06:15:03Z")!,
                    senderName: "Bob", senderAddress: "192.0.2.7:4000", senderID: nil))
        }
        try library.record(arrivals)
        while let id = try library.pending(limit: 1).first { try library.index(id: id) }
        try library.database.execute("UPDATE photos SET taken = '2024-07-03T14:22:00+02:00' WHERE name = 'offset.png'")
        try library.database.execute("UPDATE photos SET taken = '2024-07-04T09:00:00' WHERE name = 'clock.png'")
        try library.database.execute("UPDATE photos SET taken = NULL WHERE name = 'sent.png'")
        return dir
    }

    func ptk(_ dir: String, _ args: [String], zone: String) throws -> String {
        let r = try run(
            "ptk", ["--config", "/dev/null", "--dir", dir, "--state-dir", dir + "/state"] + args,
            environment: ["TZ": zone])
        #expect(r.status == 0, "\(args): \(r.stderr)")
        return r.stdout
    }

    @Test("ptk show and ptk list give times in TZ's zone, named; UTC when TZ says so")
    func timesInTheHostZone() throws {
        let dir = try makeLibrary()
        defer { removeTree(dir) }
        let india = try ptk(dir, ["show", "sent"], zone: "IST-5:30")
        #expect(india.contains("received:  2026-12-02 11:45:03 IST\n"), "\(india)")
        #expect(india.contains("modified:  2020-05-06 15:43:20 IST\n"), "\(india)")
        let utc = try ptk(dir, ["show", "sent"], zone: "UTC")
        #expect(
            utc.contains("received:  2026-12-02 06:15:03 UTC\n")
                && utc.contains("modified:  2020-05-06 10:13:20 UTC\n"), "\(utc)")
        let europe = try ptk(dir, ["show", "sent"], zone: "CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(
            europe.contains("received:  2026-12-02 07:15:03 CET\n")
                && europe.contains("modified:  2020-05-06 12:13:20 CEST\n"), "\(europe)")
        let list = try ptk(dir, ["list", "--sort", "name"], zone: "IST-5:30").split(separator: "\n").map(String.init)
        #expect(list.count == 3)
        // clock.png: the camera's clock as it said; offset.png: an instant, in the zone; sent.png: received.
        #expect(list[0].contains("  2024-07-04 09:00  "), "\(list)")
        #expect(list[1].contains("  2024-07-03 17:52 IST  "), "\(list)")
        #expect(list[2].contains("  2026-12-02 11:45 IST  "), "\(list)")
    }

    @Test("--json is the same whatever the zone: UTC ISO 8601")
    func jsonKeepsUTC() throws {
        let dir = try makeLibrary()
        defer { removeTree(dir) }
        for args in [["list", "--json"], ["show", "--json", "sent"]] {
            let india = try ptk(dir, args, zone: "IST-5:30")
            #expect(india == (try ptk(dir, args, zone: "UTC")), "\(args)")
            #expect(india.contains("\"Received\" : \"2026-12-02T06:15:03.000Z\""), "\(india)")
            #expect(india.contains("\"Modified\" : \"2020-05-06T10:13:20.000Z\""), "\(india)")
        }
    }

    @Test("--json of 2,500 photos, written a thousand at a time, is the one array the encoder writes")
    func longJSONIsOneArray() throws {
        let dir = makeTemporaryDirectory("ptk-long-json")
        defer { removeTree(dir) }
        let library = try PhotoLibrary(directory: dir, create: true)
        try library.record(
            (0..<2500).map { i in
                Arrival(
                    name: "p\(i).png", size: Int64(i), sha256: String(repeating: "a", count: 64),
                    received: WallTime(milliseconds: 1_764_000_000_000 + Int64(i) * 1000),
                    senderName: "Bob \(i % 7) \"é\"", senderAddress: "192.0.2.7:4000", senderID: nil)
            })
        let expected =
            PhotoMetadata.json(
                try library.all().map {
                    var m = PhotoMetadata($0)
                    m.indexed = $0.indexed
                    m.id = $0.id
                    return m
                }) + "\n"
        let listed = try ptk(dir, ["list", "--json"], zone: "IST-5:30")
        #expect(listed == expected)
        #expect(listed.utf8.count > 500_000)
    }
}
