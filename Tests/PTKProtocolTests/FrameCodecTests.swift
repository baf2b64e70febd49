import PTKTestTags
import Testing

@testable import PTKProtocol

let sampleFrames: [Frame] = [
    .hello(Hello(name: "alice-laptop", window: 16)),
    .welcome(Welcome(name: "livingroom", window: 16, maxFileSize: 536_870_912)),
    .welcome(Welcome(name: "livingroom", window: 16, maxFileSize: 536_870_912, sessions: 8)),
    .welcome(
        Welcome(
            name: "livingroom", window: 16, maxFileSize: 536_870_912, sessions: 8, types: ["image/png", "image/jpeg"])),
    .offer(Offer(name: "IMG_0001.png", size: 1_234_567, sha256: String(repeating: "ab", count: 32))),
    .accept(Accept(offset: 204_800)),
    .reject(Problem(.tooLarge, "too big")),
    .saved(Saved(name: "IMG_0001 (2).png", size: 1_234_567, sha256: String(repeating: "0f", count: 32))),
    .failed(Problem(.hashMismatch, "bad hash")),
    .bye,
    .chunk(Array(0..<255)),
    .chunk([0x31]),
    .ack,
    .done,
    .error(Problem(.busy, "full")),
]

func decodeAll(_ bytes: [UInt8], stepSize: Int) throws -> [Frame] {
    var decoder = FrameDecoder()
    var frames: [Frame] = []
    var i = 0
    while i < bytes.count {
        let end = min(i + stepSize, bytes.count)
        decoder.append(contentsOf: bytes[i..<end])
        i = end
        while let f = try decoder.next() { frames.append(f) }
    }
    #expect(decoder.bufferedCount == 0)
    return frames
}

/// Feeds `bytes` and returns the violation the decoder reports.
func violation(of bytes: [UInt8]) -> ProtocolViolation? {
    var decoder = FrameDecoder()
    decoder.append(contentsOf: bytes)
    do {
        _ = try decoder.next()
        return nil
    } catch {
        return error
    }
}

func header(_ type: UInt8, _ length: UInt32) -> [UInt8] {
    [type, UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
}

@Suite("Frame codec", .tags(.unit))
struct FrameCodecTests {
    @Test("every frame type round-trips", arguments: sampleFrames)
    func roundTrip(frame: Frame) throws {
        let bytes = FrameEncoder.encode(frame)
        #expect(try decodeAll(bytes, stepSize: bytes.count) == [frame])
    }

    @Test("one byte at a time, all at once, and several frames in one buffer decode the same")
    func incremental() throws {
        var stream: [UInt8] = []
        for f in sampleFrames { FrameEncoder.encode(f, into: &stream) }
        let whole = try decodeAll(stream, stepSize: stream.count)
        #expect(whole == sampleFrames)
        #expect(try decodeAll(stream, stepSize: 1) == sampleFrames)
        #expect(try decodeAll(stream, stepSize: 7) == sampleFrames)
    }

    @Test("the wire form follows the spec to the byte")
    func wireForm() {
        #expect(FrameEncoder.encode(.ack) == [0x11, 0, 0, 0, 1, 0x31])
        #expect(FrameEncoder.encode(.done) == [0x12, 0, 0, 0, 18] + Array("File Transfer Done".utf8))
        #expect(FrameEncoder.encode(.bye) == [0x08, 0, 0, 0, 0])
        #expect(FrameEncoder.encode(.accept(Accept(offset: 0))) == [0x04, 0, 0, 0, 12] + Array("{\"offset\":0}".utf8))
        let chunk = FrameEncoder.encode(.chunk([UInt8](repeating: 7, count: 102_400)))
        #expect(Array(chunk.prefix(5)) == [0x10, 0x00, 0x01, 0x90, 0x00])
    }

    @Test("the worked example in docs/PROTOCOL.md is what the encoder produces")
    func workedExample() {
        let sha = "c23c1848002082e128f533dc3c24a49fc57329293cc1468cc9dc36339b1abcac"
        let hello = FrameEncoder.encode(.hello(Hello(name: "alice-laptop", window: 16, features: ["held"])))
        #expect(Array(hello.prefix(5)) == [0x01, 0, 0, 0, 0x51])
        #expect(
            String(decoding: hello.dropFirst(5), as: UTF8.self)
                == #"{"features":["held"],"name":"alice-laptop","proto":"ptk","version":1,"window":16}"#)
        let welcome = FrameEncoder.encode(
            .welcome(
                Welcome(
                    name: "livingroom", window: 16, maxFileSize: 536_870_912, sessions: 8,
                    types: ["image/png", "image/jpeg", "image/heic", "image/heif"])))
        #expect(Array(welcome.prefix(5)) == [0x02, 0, 0, 0, 0xA2])
        #expect(
            String(decoding: welcome.dropFirst(5), as: UTF8.self)
                == #"{"chunkSize":102400,"maxFileSize":536870912,"name":"livingroom","sessions":8,"types":["image/png","image/jpeg","image/heic","image/heif"],"version":1,"window":16}"#
        )
        // A receiver that predates WELCOME.sessions sends none, and a sender reads that as 1.
        let old = FrameEncoder.encode(.welcome(Welcome(name: "livingroom", window: 16, maxFileSize: 536_870_912)))
        #expect(Array(old.prefix(5)) == [0x02, 0, 0, 0, 0x58])
        guard case .welcome(let w)? = try? decodeAll(old, stepSize: 1).first else {
            Issue.record("the WELCOME without sessions did not decode")
            return
        }
        #expect(w.sessions == nil && w.sessionsAllowed == 1)
        let offer = FrameEncoder.encode(.offer(Offer(name: "basn0g01.png", size: 164, sha256: sha)))
        #expect(Array(offer.prefix(5)) == [0x03, 0, 0, 0, 0x86])
        #expect(
            String(decoding: offer.dropFirst(5), as: UTF8.self)
                == #"{"mediaType":"image/png","name":"basn0g01.png","sha256":"\#(sha)","size":164}"#)
        let saved = FrameEncoder.encode(.saved(Saved(name: "basn0g01.png", size: 164, sha256: sha)))
        #expect(Array(saved.prefix(5)) == [0x06, 0, 0, 0, 0x6E])
    }

    @Test("a 1-byte last chunk \"1\" is never taken for an ACK")
    func chunkIsNotAck() throws {
        #expect(try decodeAll(FrameEncoder.encode(.chunk([0x31])), stepSize: 1) == [.chunk([0x31])])
    }

    @Test(
        "oversize lengths are rejected from the header alone, before the payload arrives",
        arguments: [
            (UInt8(0x01), UInt32(65_537)), (0x03, 0xFFFF_FFFF), (0x10, 102_401), (0x11, 2), (0x12, 19), (0x08, 1),
            (0x7F, 70_000),
        ])
    func oversize(type: UInt8, length: UInt32) {
        #expect(violation(of: header(type, length))?.code == .frameTooLarge)
    }

    @Test(
        "unknown frame types are rejected from the header alone",
        arguments: [UInt8(0x00), 0x09, 0x13, 0x7E, 0x80, 0xFF])
    func unknownType(type: UInt8) {
        #expect(violation(of: header(type, 0))?.code == .badFrame)
    }

    @Test("a partial header waits for more bytes")
    func partialHeader() throws {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0x10, 0x00, 0x01])
        #expect(try decoder.next() == nil)
        #expect(try decoder.peekHeader() == nil)
    }

    @Test(
        "bad payloads are rejected",
        arguments: [
            header(0x11, 1) + [0x32],  // ACK "2"
            header(0x11, 0),  // empty ACK
            header(0x12, 18) + Array("File Transfer DONE".utf8),  // wrong DONE text
            header(0x12, 4) + Array("Done".utf8),  // short DONE
            header(0x10, 0),  // empty CHUNK
            header(0x03, 5) + Array("{nope".utf8),  // JSON that does not parse
            header(0x03, 2) + Array("[]".utf8),  // JSON that is not an object
            header(0x03, 14) + Array("{\"name\":\"x\"}  ".utf8),  // OFFER missing keys
            header(0x04, 14) + Array("{\"offset\":\"0\"}".utf8),  // ACCEPT with a string offset
            header(0x01, 4) + [0xFF, 0xFE, 0x7B, 0x7D],  // not UTF-8
        ])
    func badPayload(bytes: [UInt8]) {
        #expect(violation(of: bytes)?.code == .badFrame)
    }

    @Test("unknown JSON keys are ignored")
    func unknownKeys() throws {
        let json = Array("{\"offset\":102400,\"future\":[1,2,3]}".utf8)
        let frames = try decodeAll(header(0x04, UInt32(json.count)) + json, stepSize: 3)
        #expect(frames == [.accept(Accept(offset: 102_400))])
    }

    @Test("a HELLO without a window decodes with window nil")
    func helloWithoutWindow() throws {
        let json = Array("{\"proto\":\"ptk\",\"version\":1,\"name\":\"x\"}".utf8)
        let frames = try decodeAll(header(0x01, UInt32(json.count)) + json, stepSize: 1)
        #expect(frames == [.hello(Hello(proto: "ptk", version: 1, name: "x", window: nil))])
    }
}

extension Hello {
    init(proto: String, version: Int, name: String, window: Int?) {
        self.init(proto: proto, version: version, name: name, window: 1)
        self.window = window
    }
}
