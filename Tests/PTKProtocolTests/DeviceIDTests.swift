import PTKTestTags
import Testing

@testable import PTKProtocol

@Suite("Device IDs (protocol §6)", .tags(.unit))
struct DeviceIDTests {
    @Test(
        "base32 is RFC 4648's, upper case, without padding",
        arguments: [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ])
    func rfc4648Vectors(input: String, encoded: String) {
        #expect(DeviceID.base32(Array(input.utf8)) == encoded)
    }

    @Test("a SHA-256 digest gives 52 characters, shown as 13 groups of 4; the short form is the first two")
    func shape() {
        let id = DeviceID(sha256: (0..<32).map { UInt8($0 * 7 & 0xFF) })
        #expect(id.compact.count == 52)
        #expect(id.compact.allSatisfy { ("A"..."Z").contains($0) || ("2"..."7").contains($0) })
        #expect(id.description.split(separator: "-").map(\.count) == Array(repeating: 4, count: 13))
        #expect(String(id.description.filter { $0 != "-" }) == id.compact)
        #expect(id.short == String(id.description.prefix(9)))
        // All-zero and all-ones digests: the edges of the alphabet, and the 4 spare bits zero.
        #expect(DeviceID(sha256: Array(repeating: 0, count: 32)).compact == String(repeating: "A", count: 52))
        #expect(DeviceID(sha256: Array(repeating: 0xFF, count: 32)).compact == String(repeating: "7", count: 51) + "Q")
    }

    @Test("parsing ignores case, spaces and dashes, and refuses anything that is not an ID")
    func parsing() {
        let id = DeviceID(sha256: (0..<32).map { UInt8(255 - $0) })
        #expect(DeviceID(parsing: id.compact) == id)
        #expect(DeviceID(parsing: id.description) == id)
        #expect(DeviceID(parsing: id.description.lowercased()) == id)
        #expect(DeviceID(parsing: String(id.description.map { $0 == "-" ? " " : $0 })) == id)
        #expect(DeviceID(parsing: String(id.compact.dropLast())) == nil)  // 51 characters
        #expect(DeviceID(parsing: id.compact + "A") == nil)  // 53
        #expect(DeviceID(parsing: String(id.compact.dropLast()) + "1") == nil)  // not base32
        #expect(DeviceID(parsing: String(id.compact.dropLast()) + "B") == nil)  // stray low bits
        #expect(DeviceID(parsing: "") == nil)
    }

    @Test("a prefix matches as typed, and an empty or foreign one matches nothing")
    func prefixes() {
        let id = DeviceID(sha256: Array(repeating: 0x42, count: 32))
        #expect(id.hasPrefix(String(id.compact.prefix(5)).lowercased()))
        #expect(id.hasPrefix(String(id.description.prefix(7))))
        #expect(!id.hasPrefix(""))
        #expect(!id.hasPrefix("-"))
        #expect(!id.hasPrefix("0"))
        #expect(!id.hasPrefix("Z" + id.compact))
    }
}
