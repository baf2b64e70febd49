import PTKDigest
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKTransport
import Testing

@testable import PTKV1Door

/// The audits' hostile HEICs (`HostileHEICs`, issue 54) at protocol v1's door: refused as not
/// a photo, in its own terms, with the reason, and nothing kept. (Each HTTP door's test of them
/// is in that door's test target: HostileHEIF*Tests.)
@Suite("Hostile HEICs at protocol v1's door (issue 54)", .tags(.unit))
struct HostileHEIFDoorTests {
    static let files = HostileHEICs.files

    static func bytes(_ name: String) throws -> [UInt8] { try #require(HostileHEICs.bytes(name)) }

    @Test("protocol v1: FAILED not-png after DONE, the reason in its message")
    func protocolV1() throws {
        let dir = try StoreDirectory()
        let stream = ScriptedStream { _, _ in }
        stream.feed(.hello(Hello(name: "hostile", window: 4)))
        for name in Self.files.keys.sorted() {
            let b = try Self.bytes(name)
            stream.feed(
                .offer(Offer(name: name, size: Int64(b.count), sha256: SHA256.hex(of: b), mediaType: "image/heic")))
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
}
