import PTKTestTags
import PTKTime
import Testing

@testable import PTKLocalSend

/// Session IDs and tokens t1, t2, ... in the order asked for.
final class Sequence: @unchecked Sendable {
    var n = 0
    func next() -> String {
        n += 1
        return "t\(n)"
    }
}

func request(_ files: [FileInfo], alias: String = "Phone") -> PrepareUploadRequest {
    PrepareUploadRequest(
        info: DeviceInfo(alias: alias, version: "2.1"),
        files: Dictionary(uniqueKeysWithValues: files.map { ($0.id, $0) }))
}

let png = FileInfo(id: "a", fileName: "a.png", size: 10, fileType: "image/png")
let jpeg = FileInfo(id: "b", fileName: "b.jpg", size: 10, fileType: "image/jpeg")

func sessions(_ policy: LocalSendPolicy = LocalSendPolicy()) -> LocalSendSessions {
    let seq = Sequence()
    return LocalSendSessions(policy: policy) { seq.next() }
}

/// The instant `seconds` after the start of a test's made-up clock.
private func at(_ seconds: Double) -> Instant { Instant(seconds: seconds) }

@Suite(.tags(.unit)) struct SessionTests {
    @Test func acceptsOnlyTheAcceptedTypesAndSizes() {
        var s = sessions(LocalSendPolicy(maxFileSize: 100))
        let big = FileInfo(id: "c", fileName: "c.png", size: 101, fileType: "image/png")
        let typed = FileInfo(id: "d", fileName: "d.png", size: 1, fileType: "Image/PNG; q=1")
        let outcome = s.prepare(
            request([png, jpeg, big, typed]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(0))
        guard case .accepted(let r) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(Set(r.files.keys) == ["a", "d"])
        #expect(outcome.status == 200)
        #expect(s.sessions[r.sessionId]?.files.count == 2)
    }

    @Test func nothingAcceptedIs204() {
        var s = sessions()
        #expect(
            s.prepare(request([jpeg]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(0))
                == .nothingToTransfer)
        #expect(s.sessions.isEmpty)
    }

    @Test func refusedSenderIs403() {
        var s = sessions()
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: "F", pin: nil, allowed: false, now: at(0)) == .refused)
    }

    @Test func secondSessionFromTheSameAddressIsBusyUntilTheFirstEnds() throws {
        var s = sessions()
        guard
            case .accepted(let r) = s.prepare(
                request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(0))
        else {
            Issue.record("not accepted")
            return
        }
        #expect(s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(1)) == .busy)
        // Another address is not blocked.
        guard
            case .accepted = s.prepare(
                request([png]), address: "B", fingerprint: nil, pin: nil, allowed: true, now: at(1))
        else {
            Issue.record("B blocked")
            return
        }
        _ = try s.beginUpload(session: r.sessionId, file: "a", token: r.files["a"]!, address: "A", now: at(2))
        s.endUpload(session: r.sessionId, file: "a", saved: true, now: at(3))
        #expect(s.sessions[r.sessionId] == nil)
        guard
            case .accepted = s.prepare(
                request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(4))
        else {
            Issue.record("A still busy")
            return
        }
    }

    @Test func theSameAppStartingOverReplacesItsSessionWhenNoUploadRuns() throws {
        var s = sessions()
        let two = [png, FileInfo(id: "c", fileName: "c.png", size: 5, fileType: "image/png")]
        guard
            case .accepted(let first) = s.prepare(
                request(two), address: "A", fingerprint: "F", pin: nil, allowed: true, now: at(0))
        else {
            Issue.record("not accepted")
            return
        }
        // Another app at the address (no certificate, or another one) waits.
        #expect(s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(1)) == .busy)
        #expect(s.prepare(request([png]), address: "A", fingerprint: "G", pin: nil, allowed: true, now: at(1)) == .busy)
        // The same app waits too while an upload of its session runs.
        _ = try s.beginUpload(session: first.sessionId, file: "a", token: first.files["a"]!, address: "A", now: at(2))
        #expect(s.prepare(request([png]), address: "A", fingerprint: "F", pin: nil, allowed: true, now: at(3)) == .busy)
        // Once that upload has ended (its connection lost), the session is unsettled (c never
        // came) but idle: the same app starting over replaces it, and its tokens are void.
        s.endUpload(session: first.sessionId, file: "a", saved: false, now: at(4))
        guard
            case .accepted(let second) = s.prepare(
                request([png]), address: "A", fingerprint: "F", pin: nil, allowed: true, now: at(5))
        else {
            Issue.record("not replaced")
            return
        }
        #expect(s.sessions.keys.sorted() == [second.sessionId])
        #expect(throws: UploadRefusal.self) {
            try s.beginUpload(session: first.sessionId, file: "c", token: first.files["c"]!, address: "A", now: at(6))
        }
        // A session whose answer was lost (nothing uploaded yet) is replaced the same way.
        guard
            case .accepted(let third) = s.prepare(
                request([png]), address: "A", fingerprint: "F", pin: nil, allowed: true, now: at(7))
        else {
            Issue.record("not replaced")
            return
        }
        #expect(s.sessions.keys.sorted() == [third.sessionId])
    }

    @Test func idleSessionExpires() {
        var s = sessions(LocalSendPolicy(sessionIdle: .seconds(10)))
        _ = s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(0))
        #expect(s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(9)) == .busy)
        guard
            case .accepted = s.prepare(
                request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(11))
        else {
            Issue.record("not expired")
            return
        }
        #expect(s.sessions.count == 1)
    }

    @Test func pinMissingWrongAndLockedOut() {
        var s = sessions(LocalSendPolicy(pin: "1234"))
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(0))
                == .pinRequired(wrong: false))
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: "1", allowed: true, now: at(0))
                == .pinRequired(wrong: true))
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: "2", allowed: true, now: at(0))
                == .pinRequired(wrong: true))
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: "3", allowed: true, now: at(0))
                == .tooManyTries)
        // Locked out: even the right PIN gets 429, from that address only.
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: "1234", allowed: true, now: at(10))
                == .tooManyTries)
        guard
            case .accepted = s.prepare(
                request([png]), address: "B", fingerprint: nil, pin: "1234", allowed: true, now: at(10))
        else {
            Issue.record("B locked")
            return
        }
        // After the lockout the right PIN works.
        guard
            case .accepted = s.prepare(
                request([png]), address: "A", fingerprint: nil, pin: "1234", allowed: true, now: at(400))
        else {
            Issue.record("A still locked")
            return
        }
    }

    @Test func pinIsCheckedBeforeTrust() {
        var s = sessions(LocalSendPolicy(pin: "1"))
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: false, now: at(0))
                == .pinRequired(wrong: false))
        #expect(
            s.prepare(request([png]), address: "A", fingerprint: nil, pin: "1", allowed: false, now: at(0)) == .refused)
    }

    @Test func uploadNeedsTheRightSessionTokenAndAddress() throws {
        var s = sessions()
        guard
            case .accepted(let r) = s.prepare(
                request([png, FileInfo(id: "z", fileName: "z.png", size: 1, fileType: "image/png")]), address: "A",
                fingerprint: "F", pin: nil, allowed: true, now: at(0))
        else {
            Issue.record("not accepted")
            return
        }
        let token = r.files["a"]!
        #expect(throws: UploadRefusal.forbidden("no such session")) {
            try s.beginUpload(session: "nope", file: "a", token: token, address: "A", now: at(1))
        }
        #expect(throws: UploadRefusal.forbidden("the session belongs to another address")) {
            try s.beginUpload(session: r.sessionId, file: "a", token: token, address: "B", now: at(1))
        }
        #expect(throws: UploadRefusal.forbidden("wrong file ID or token")) {
            try s.beginUpload(session: r.sessionId, file: "a", token: r.files["z"]!, address: "A", now: at(1))
        }
        #expect(throws: UploadRefusal.forbidden("wrong file ID or token")) {
            try s.beginUpload(session: r.sessionId, file: "q", token: token, address: "A", now: at(1))
        }
        let (session, info) = try s.beginUpload(session: r.sessionId, file: "a", token: token, address: "A", now: at(1))
        #expect(info == png)
        #expect(session.fingerprint == "F")
        #expect(throws: UploadRefusal.conflict("this file is being uploaded already")) {
            try s.beginUpload(session: r.sessionId, file: "a", token: token, address: "A", now: at(1))
        }
        // A failed upload may be retried; a saved one may not.
        s.endUpload(session: r.sessionId, file: "a", saved: false, now: at(2))
        _ = try s.beginUpload(session: r.sessionId, file: "a", token: token, address: "A", now: at(3))
        s.endUpload(session: r.sessionId, file: "a", saved: true, now: at(4))
        #expect(throws: UploadRefusal.conflict("this file was uploaded already")) {
            try s.beginUpload(session: r.sessionId, file: "a", token: token, address: "A", now: at(5))
        }
        #expect(UploadRefusal.conflict("x").status == 409)
        #expect(UploadRefusal.forbidden("x").status == 403)
    }

    @Test func cancelStopsUploadsAndFreesTheAddress() throws {
        var s = sessions()
        guard
            case .accepted(let r) = s.prepare(
                request([png, jpeg.withType("image/png")]), address: "A", fingerprint: nil, pin: nil, allowed: true,
                now: at(0))
        else {
            Issue.record("not accepted")
            return
        }
        _ = try s.beginUpload(session: r.sessionId, file: "a", token: r.files["a"]!, address: "A", now: at(1))
        #expect(s.cancel(session: r.sessionId, address: "B") == 0)
        #expect(!s.isCancelled(r.sessionId))
        #expect(s.cancel(session: r.sessionId, address: "A") == 1)
        #expect(s.isCancelled(r.sessionId))
        #expect(throws: UploadRefusal.forbidden("no such session")) {
            try s.beginUpload(session: r.sessionId, file: "b", token: r.files["b"]!, address: "A", now: at(2))
        }
        guard
            case .accepted = s.prepare(
                request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(2))
        else {
            Issue.record("still busy")
            return
        }
        s.endUpload(session: r.sessionId, file: "a", saved: false, now: at(3))
        s.expire(now: at(3))
        #expect(s.sessions[r.sessionId] == nil)
    }

    @Test func cancelWithoutIDCancelsTheAddressesSessions() {
        var s = sessions()
        _ = s.prepare(request([png]), address: "A", fingerprint: nil, pin: nil, allowed: true, now: at(0))
        #expect(s.cancel(session: nil, address: "A") == 1)
        #expect(s.sessions.isEmpty)
    }

    @Test func randomTokensDiffer() {
        let a = randomToken()
        let b = randomToken()
        #expect(a.count == 32 && b.count == 32 && a != b)
    }
}

extension FileInfo {
    func withType(_ t: String) -> FileInfo {
        var f = self
        f.fileType = t
        return f
    }
}

@Suite(.tags(.unit)) struct MessageTests {
    @Test func decodesWhatTheAppsSend() throws {
        let body = #"""
            {"info":{"alias":"Nice Orange","version":"2.2","deviceModel":null,"deviceType":"mobile","fingerprint":"abc","port":53317,"protocol":"https","download":false},
             "files":{"f1":{"id":"f1","fileName":"DCIM/Screenshot 1.png","size":324242,"fileType":"image/png","sha256":"ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789","preview":null,"metadata":{"modified":"2024-01-01T00:00:00Z"}},
                      "f2":{"id":"other","fileName":"b.png","size":1,"fileType":"image/png"}}}
            """#
        let r = try LocalSendJSON.decode(PrepareUploadRequest.self, from: Array(body.utf8)).validated()
        #expect(r.info.alias == "Nice Orange")
        #expect(r.info.deviceModel == nil)
        #expect(r.info.version == "2.2")
        #expect(r.files["f1"]?.sha256 == "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
        #expect(r.files["f2"]?.id == "f2")
        #expect(r.files["f2"]?.sha256 == nil)
    }

    @Test(arguments: [
        (#"{"files":{}}"#, "missing \"info\""),
        (#"{"info":{"alias":"a"},"files":{}}"#, "no files"),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"","size":1,"fileType":"image/png"}}}"#,
            "file x has no name"
        ),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"a","size":-1,"fileType":"image/png"}}}"#,
            "file x has a negative size"
        ),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"a","size":1,"fileType":"image/png","sha256":"xyz"}}}"#,
            "file x: sha256 is not 64 hex digits"
        ),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"a","size":"1","fileType":"image/png"}}}"#,
            "wrong type at \"files.x.size\""
        ),
        ("not json", "not JSON"),
        ("", "not JSON"),
    ])
    func refusesBadBodies(body: String, why: String) {
        #expect(throws: BodyError(why)) {
            try LocalSendJSON.decode(PrepareUploadRequest.self, from: Array(body.utf8)).validated()
        }
    }

    @Test func announcementRoundTrip() throws {
        let info = DeviceInfo(
            alias: "ptkd", version: "2.1", deviceModel: "Linux", deviceType: "headless", fingerprint: "F",
            port: 53317, protocol: "https", download: false, announce: true, announcement: true)
        let bytes = LocalSendJSON.encode(info)
        #expect(
            String(decoding: bytes, as: UTF8.self).hasPrefix(
                #"{"alias":"ptkd","announce":true,"announcement":true,"deviceModel":"Linux""#))
        #expect(try LocalSendJSON.decode(DeviceInfo.self, from: bytes) == info)
        #expect(info.asksForAnswers)
        #expect(
            try LocalSendJSON.decode(DeviceInfo.self, from: Array(#"{"alias":"x","announcement":true}"#.utf8))
                .asksForAnswers)
        #expect(try !LocalSendJSON.decode(DeviceInfo.self, from: Array(#"{"alias":"x"}"#.utf8)).asksForAnswers)
    }
}
