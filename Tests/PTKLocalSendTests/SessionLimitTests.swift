import PTKTestTags
import PTKTime
import Testing

@testable import PTKLocalSend

@Suite("LocalSend sessions: what all of them may hold", .tags(.unit))
struct SessionLimitTests {
    @Test(
        "the sessions of many apps hold at most maxFilesHeld files together: the next is 503, and room comes back as sessions end"
    )
    func filesHeldBounded() {
        var policy = LocalSendPolicy()
        policy.maxFilesHeld = 3
        var s = sessions(policy)
        let now = Instant(seconds: 100)
        let two = request([png, FileInfo(id: "c", fileName: "c.png", size: 10, fileType: "image/png")])
        #expect(s.prepare(two, address: "192.0.2.1", fingerprint: nil, pin: nil, allowed: true, now: now).status == 200)
        #expect(s.filesHeld == 2)
        #expect(s.prepare(two, address: "192.0.2.2", fingerprint: nil, pin: nil, allowed: true, now: now) == .full)
        #expect(PrepareOutcome.full.status == 503)
        #expect(
            s.prepare(request([png]), address: "192.0.2.3", fingerprint: nil, pin: nil, allowed: true, now: now).status
                == 200)
        // Idle sessions are forgotten: their files no longer count.
        #expect(
            s.prepare(two, address: "192.0.2.4", fingerprint: nil, pin: nil, allowed: true, now: now + .seconds(120))
                .status == 200)
    }

    @Test("an address locked out for wrong PINs is said to be, so its further PINs are not checked")
    func pinLockout() {
        var policy = LocalSendPolicy(pin: "4711")
        policy.pinTries = 2
        var s = sessions(policy)
        let now = Instant(seconds: 100)
        #expect(!s.pinLockedOut("192.0.2.1", now: now))
        _ = s.prepare(request([png]), address: "192.0.2.1", fingerprint: nil, pin: "1", allowed: true, now: now)
        _ = s.prepare(request([png]), address: "192.0.2.1", fingerprint: nil, pin: "2", allowed: true, now: now)
        #expect(s.pinLockedOut("192.0.2.1", now: now))
        #expect(!s.pinLockedOut("192.0.2.2", now: now))
    }
}
