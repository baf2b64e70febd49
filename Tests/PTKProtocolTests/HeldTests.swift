import PTKTestTags
import Testing

@testable import PTKProtocol

/// A receiver after a HELLO that announced (or not) "held".
private func receiver(held: Bool) -> ReceiverSession {
    var r = ReceiverSession(settings: ReceiverSettings(name: "livingroom", window: 16, maxFileSize: 1 << 30))
    _ = r.handle(
        .frame(.hello(Hello(name: "alice", window: 4, features: held ? ["held", "something-new"] : ["something-new"]))))
    return r
}

@Suite("Whole files already held (protocol-v1.md section 7)", .tags(.unit))
struct HeldTests {
    let size: Int64 = 150_001  // off a chunk boundary
    var kept: Saved { Saved(name: "alice/IMG_1.png", size: size, sha256: sha) }

    @Test("HELLO.features: \"held\" is recognised, unknown strings ignored, absent means none")
    func features() {
        #expect(receiver(held: true).peerTakesHeld)
        #expect(!receiver(held: false).peerTakesHeld)
        var r = ReceiverSession(settings: ReceiverSettings(name: "x", window: 1, maxFileSize: 10))
        _ = r.handle(.frame(.hello(Hello(name: "old", window: 1))))
        #expect(!r.peerTakesHeld)
        #expect(Hello(name: "a", window: 1, features: ["held"]).announces(.held))
    }

    @Test("held: ACCEPT at the file's size, then DONE gets SAVED naming the kept photo with duplicate true")
    func heldPath() {
        var r = receiver(held: true)
        #expect(r.handle(.frame(.offer(offer(size: size)))) == [.evaluateOffer(offer(size: size))])
        #expect(r.handle(.offerDecided(.held(kept))) == [.send(.accept(Accept(offset: size)))])
        #expect(r.state == .holding(offer(size: size), kept))
        var answer = kept
        answer.duplicate = true
        #expect(r.handle(.frame(.done)) == [.send(.saved(answer))])
        #expect(r.state == .ready)
        // The session goes on.
        #expect(r.handle(.frame(.bye)) == [.close])
    }

    @Test("a CHUNK after ACCEPT at the end is ERROR unexpected-frame; no file is open to keep")
    func chunkWhileHolding() {
        var r = receiver(held: true)
        _ = r.handle(.frame(.offer(offer(size: size))))
        _ = r.handle(.offerDecided(.held(kept)))
        #expect(isError(r.handle(.frame(.chunk([1, 2, 3]))), .unexpectedFrame, keep: nil))
    }

    @Test("the store may not answer held to a sender that did not announce it, nor hold other bytes")
    func heldRefusedWhenNotAnnounced() {
        var r = receiver(held: false)
        _ = r.handle(.frame(.offer(offer(size: size))))
        #expect(isError(r.handle(.offerDecided(.held(kept))), .internal, keep: nil))
        var s = receiver(held: true)
        _ = s.handle(.frame(.offer(offer(size: size))))
        #expect(
            isError(
                s.handle(.offerDecided(.held(Saved(name: "x.png", size: size - 1, sha256: sha)))), .internal, keep: nil)
        )
    }

    @Test("ACCEPT.offset at the size off a chunk boundary: only for a sender that announced held")
    func wholeResume() {
        var r = receiver(held: true)
        _ = r.handle(.frame(.offer(offer(size: size))))
        #expect(r.handle(.offerDecided(.accept(offset: size))) == [.send(.accept(Accept(offset: size)))])
        #expect(r.handle(.frame(.done)) == [.finishFile])
        var old = receiver(held: false)
        _ = old.handle(.frame(.offer(offer(size: size))))
        #expect(isError(old.handle(.offerDecided(.accept(offset: size))), .internal, keep: nil))
    }

    @Test(
        "the sender announces held, takes ACCEPT at the size (off a boundary) and sends DONE at once; SAVED duplicate is a saved file"
    )
    func senderSide() {
        var s = SenderSession(
            name: "alice", window: 4, files: [OutgoingFile(name: "a.png", size: 150_001, sha256: sha)],
            pipelining: false)
        guard case .send(.hello(let hello)) = s.handle(.start).first else {
            Issue.record("no HELLO")
            return
        }
        #expect(hello.announces(.held))
        _ = s.handle(.frame(.welcome(Welcome(name: "rx", window: 4, maxFileSize: 1 << 30))))
        #expect(
            s.handle(.frame(.accept(Accept(offset: 150_001)))) == [.started(file: 0, offset: 150_001), .send(.done)])
        let saved = Saved(name: "alice/a.png", size: 150_001, sha256: sha, duplicate: true)
        #expect(s.handle(.frame(.saved(saved))) == [.finished(file: 0, .saved(saved)), .send(.bye), .close])
        // An offset off a boundary that is not the size is still refused.
        var t = SenderSession(
            name: "alice", window: 4, files: [OutgoingFile(name: "a.png", size: 150_001, sha256: sha)],
            pipelining: false)
        _ = t.handle(.start)
        _ = t.handle(.frame(.welcome(Welcome(name: "rx", window: 4, maxFileSize: 1 << 30))))
        #expect(isProtocolError(t.handle(.frame(.accept(Accept(offset: 150_000)))), .badFrame))
    }

    @Test("SAVED.duplicate and HELLO.features go on the wire only when set, and round-trip byte by byte")
    func encoding() throws {
        let plain = FrameEncoder.encode(.saved(Saved(name: "a.png", size: 1, sha256: sha)))
        #expect(!String(decoding: plain, as: UTF8.self).contains("duplicate"))
        for frame in [
            Frame.saved(Saved(name: "a/b.png", size: 1, sha256: sha, duplicate: true)),
            .hello(Hello(name: "a", window: 2, features: ["held"])),
        ] {
            let bytes = FrameEncoder.encode(frame)
            var decoder = FrameDecoder()
            var got: [Frame] = []
            for b in bytes {
                decoder.append(contentsOf: [b])
                while let f = try decoder.next() { got.append(f) }
            }
            #expect(got == [frame])
        }
        #expect(
            String(
                decoding: FrameEncoder.encode(.saved(Saved(name: "a/b.png", size: 1, sha256: sha, duplicate: true))),
                as: UTF8.self
            )
            .contains(#""duplicate":true"#))
    }
}
