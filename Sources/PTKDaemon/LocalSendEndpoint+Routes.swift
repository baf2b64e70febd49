import PTKConfiguration
import PTKLibrary
import PTKLocalSend
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTLS
import PTKTransport
import PTKTrust
import PTKVocabulary

/// ptkd as a LocalSend v2 receiver (docs/PROTOCOL.md, "LocalSend"): HTTPS on its own port,
/// the routes the apps call, and uploads into the same store, limits, trust list and library
/// as protocol v1. Each connection runs on a thread of its own, inside a session slot.
/// The routes: what each request gets (the decision is `LocalSendRoute`'s and
/// `LocalSendSessions`'), uploads streamed into the store.
extension LocalSendEndpoint {
    /// Answers one request; returns false when the connection must close after it.
    func handle(_ head: HTTPHead, _ c: Connection) throws(HTTPFailure) -> Bool {
        let idle = configuration.idleTimeout
        let replyBy = { Instant.now + idle }
        switch LocalSendRoute(method: head.method, path: head.path) {
        case .info:
            // With or without a body (some apps send one).
            try skipBody(c)
            try c.http.respond(200, LocalSendJSON.encode(info()), deadline: replyBy())
        case .register:
            // The caller is discovering us: answer at once, whatever its body says.
            _ = try c.http.readBody(limit: Self.ignoredBodyLimit, deadline: replyBy)
            try c.http.respond(200, LocalSendJSON.encode(info()), deadline: replyBy())
        case .prepareUpload:
            return try prepareUpload(head, c)
        case .upload:
            return try upload(head, c)
        case .cancel:
            try skipBody(c)
            let n = lock.withLock { sessions.cancel(session: head.query["sessionId"], address: c.address) }
            if n > 0 { Log.info("localsend \(c.id) from \(c.peer): the sender cancelled") }
            try c.http.respond(200, deadline: replyBy())
        case .methodNotAllowed:
            try skipBody(c)
            try c.http.respond(405, message("\(head.method) is not allowed here"), deadline: replyBy())
        case .notFound:
            try skipBody(c)
            try c.http.respond(404, message("no such route"), deadline: replyBy())
        }
        return true
    }

    /// Reads and drops a request's body (up to a limit).
    private func skipBody(_ c: Connection) throws(HTTPFailure) {
        _ = try c.http.readBody(limit: Self.ignoredBodyLimit, deadline: { .now + configuration.idleTimeout })
    }

    /// Who the sender is for the trust list, if it showed a certificate.
    private func senderID(_ c: Connection) -> SenderID? { c.certificate.map { .localSend($0) } }

    private func prepareUpload(_ head: HTTPHead, _ c: Connection) throws(HTTPFailure) -> Bool {
        let replyBy = { Instant.now + self.configuration.idleTimeout }
        // Who may send is known before the body is read: its certificate against the trust list.
        let trusted = senderID(c).map(trust.isTrusted) ?? false
        let allowed = configuration.senders == .anyone || trusted
        if !allowed {
            return try refuseUntrusted(head, c)
        }
        if trusted { c.http.proven() }
        // A body of a sender not on the trust list is held whole only up to `smallJSONLimit`;
        // a larger one takes a share of `largeBodies` for as long as it is read and decoded, so
        // that many of them at once cannot take the receiver's memory. Trusted senders are not held back.
        let large = !trusted && (head.contentLength.map { $0 > Int64(Self.smallJSONLimit) } ?? true)
        let share = large ? Int(min(head.contentLength ?? Int64(Self.jsonLimit), Int64(Self.jsonLimit))) : 0
        if large && !largeBodies.take(share) {
            Log.info("localsend \(c.id) from \(c.peer): prepare-upload of \(head.contentLength.map { formatBytes(Double($0)) } ?? "a chunked body") while \(formatBytes(Double(LargeBodies.capacity))) of large bodies are being read; answered 503")
            try c.http.respond(503, message("the receiver is busy reading other large requests; try again in a moment"), headers: [("Retry-After", "2")],
                               close: true, deadline: replyBy())
            return false
        }
        defer { if large { largeBodies.give(share) } }
        var request: PrepareUploadRequest
        do {
            // A large body holds a share of a small budget: it must come fast (64 KiB/s), so a
            // trickle cannot keep the budget from everyone for minutes.
            let body = try c.http.readBody(limit: large ? share : trusted ? Self.jsonLimit : Self.smallJSONLimit, deadline: replyBy,
                                           minimumRate: large ? Self.largeBodyRate : HTTPConnection.bodyMinimumRate)
            request = try LocalSendJSON.decode(PrepareUploadRequest.self, from: body).validated()
        } catch let error as HTTPFailure {
            throw error
        } catch {
            Log.info("localsend \(c.id) from \(c.peer): prepare-upload refused: \(quotedForTerminal(String(describing: error))); answered 400")
            try c.http.respond(400, message("invalid body: \(error)"), deadline: replyBy())
            return true
        }
        let who = "\"\(clean(request.info.alias))\"" + (c.certificate.map { " (LocalSend \(String($0.prefix(8))))" } ?? " (no certificate)")
        let prefix = "localsend \(c.id) from \(c.peer) \(who): prepare-upload of \(request.files.count) file(s)"
        let pin = head.query["pin"]
        if configuration.localSendPIN != nil && pin != nil && guesses.isSpent {
            Log.info("\(prefix): a PIN while too many wrong passwords or PINs were given this minute; answered 429")
            try c.http.respond(429, message("too many wrong PINs were given to this receiver; try again in a minute"), deadline: replyBy())
            return true
        }
        // Files whose SHA-256 the app gave and whose bytes the directory keeps are left out of
        // the answer, so the app does not send them (duplicates = skip).
        // A photo is one kept photo however often the request names it: its hook runs once.
        var held: [String: (FileInfo, String)] = [:]
        for (id, file) in request.files {
            guard let sha256 = file.sha256?.lowercased(), let name = arrivals.heldPhoto(sha256: sha256, size: file.size) else { continue }
            if held[sha256] == nil || file.fileName < held[sha256]!.0.fileName { held[sha256] = (file, name) }
            request.files[id] = nil
        }
        // A PIN from an address already locked out is not checked, so it spends nothing of the
        // receiver's budget: one address cannot keep everyone's passwords refused.
        let (outcome, pinChecked): (PrepareOutcome, Bool) = lock.withLock {
            let checked = configuration.localSendPIN != nil && pin != nil && !sessions.pinLockedOut(c.address, now: .now)
            return (sessions.prepare(request, address: c.address, fingerprint: c.certificate, pin: pin, allowed: allowed, now: .now), checked)
        }
        switch outcome {
        case .accepted, .nothingToTransfer:
            // Only a sender that may send learns what is kept, and only its duplicates run the hook.
            let sender = Sender(announcedName: request.info.alias, id: senderID(c), address: c.peer.description)
            for (file, name) in held.values.sorted(by: { $0.0.fileName < $1.0.fileName }) {
                Log.info("\(prefix): \(quotedForTerminal(file.fileName)) is already kept as \(quotedForTerminal(name)); not asked for")
                arrivals.saved(Saved(name: name, size: file.size, sha256: file.sha256?.lowercased() ?? "", duplicate: true),
                               type: PhotoType(mediaType: file.mediaType) ?? .png, from: sender, deviceID: c.certificate.map { "LocalSend \($0)" })
            }
        case .pinRequired(wrong: true), .tooManyTries where pinChecked && pin != configuration.localSendPIN:
            guesses.failed("PIN", from: c.address)
        default:
            break
        }
        switch outcome {
        case .accepted(let response):
            Log.info("\(prefix): accepted \(response.files.count), session \(response.sessionId.prefix(8))")
            try c.http.respond(outcome.status, LocalSendJSON.encode(response), deadline: replyBy())
        case .nothingToTransfer:
            Log.info("\(prefix): none accepted (types: \(configuration.types.joined(separator: ", ")); up to \(formatBytes(Double(configuration.maxFileSize)))); answered 204")
            try c.http.respond(outcome.status, deadline: replyBy())
        case .pinRequired(let wrong):
            if wrong { Log.info("\(prefix): wrong PIN; answered 401") }
            try c.http.respond(outcome.status, message(wrong ? "wrong PIN" : "PIN required"), deadline: replyBy())
        case .tooManyTries:
            Log.info("\(prefix): too many wrong PINs from \(c.address); answered 429")
            try c.http.respond(outcome.status, message("too many wrong PINs; try again later"), deadline: replyBy())
        case .refused:
            // Decided above, before the body; the sessions refuse no one that is allowed.
            try c.http.respond(outcome.status, message("this receiver accepts trusted devices only"), deadline: replyBy())
        case .full:
            Log.info("\(prefix): the sessions hold \(sessions.policy.maxFilesHeld) files already; answered 503")
            try c.http.respond(outcome.status, message("the receiver holds as many files in sessions as it takes; try again in a minute"),
                               headers: [("Retry-After", "30")], deadline: replyBy())
        case .busy:
            Log.info("\(prefix): a session from \(c.address) is still running; answered 409")
            try c.http.respond(outcome.status, message("a session from this address is still running"), deadline: replyBy())
        }
        return true
    }

    /// A prepare-upload from a sender the trust list does not name, under `senders = trusted`:
    /// refused (403) with at most `smallJSONLimit` of its body read, for the name the pending
    /// list shows (a larger body is not read: the connection closes after the answer).
    private func refuseUntrusted(_ head: HTTPHead, _ c: Connection) throws(HTTPFailure) -> Bool {
        let replyBy = { Instant.now + self.configuration.idleTimeout }
        var alias: String? = nil
        let small = head.contentLength.map { $0 <= Int64(Self.smallJSONLimit) } ?? false
        if small {
            let body = try c.http.readBody(limit: Self.smallJSONLimit, deadline: replyBy)
            alias = (try? LocalSendJSON.decode(PrepareUploadRequest.self, from: body))?.info.alias  // a body that does not parse names no one
        }
        let prefix = "localsend \(c.id) from \(c.peer) \"\(clean(alias ?? "?"))\": prepare-upload"
        if let id = senderID(c) {
            do { try trust.recordAttempt(id: id, name: alias ?? "LocalSend app", address: c.peer.description) } catch {
                Log.warning("localsend \(c.id): cannot record the refused device in \(trust.pendingFile): \(error)")
            }
            Log.info("\(prefix): refused, LocalSend \(id) is not trusted (`ptk trust allow \(id.short)`); answered 403")
        } else {
            Log.info("\(prefix): refused, the app showed no certificate and only trusted devices may send; answered 403")
        }
        try c.http.respond(403, message("this receiver accepts trusted devices only"), close: !small, deadline: replyBy())
        return small
    }

    private func upload(_ head: HTTPHead, _ c: Connection) throws(HTTPFailure) -> Bool {
        let replyBy = { Instant.now + self.configuration.idleTimeout }
        let q = head.query
        guard let sessionID = q["sessionId"], let fileID = q["fileId"], let token = q["token"] else {
            try skipBody(c)
            try c.http.respond(400, message("missing sessionId, fileId or token"), deadline: replyBy())
            return true
        }
        let begun = lock.withLock {
            Result { () throws(UploadRefusal) in try sessions.beginUpload(session: sessionID, file: fileID, token: token, address: c.address, now: .now) }
        }
        let session: LocalSendSession, file: FileInfo
        switch begun {
        case .success(let (s, f)) where s.fingerprint == c.certificate:
            (session, file) = (s, f)
            c.http.proven()
        case .success(let (s, _)):
            // The token is the session's, but the app is not: another certificate (or none) than
            // the one that prepared the session. The file stays owed to the session's own app.
            lock.withLock { sessions.endUpload(session: sessionID, file: fileID, saved: false, now: .now) }
            Log.info("localsend \(c.id) from \(c.peer): upload refused: the certificate (\(c.certificate.map { String($0.prefix(8)) } ?? "none")) is not the session's (\(s.fingerprint.map { String($0.prefix(8)) } ?? "none")); answered 403")
            try c.http.respond(403, message("this upload's certificate is not the one that prepared the session"), close: true, deadline: replyBy())
            return false
        case .failure(let refusal):
            Log.info("localsend \(c.id) from \(c.peer): upload refused: \(refusal.message); answered \(refusal.status)")
            // The body is not read: the connection closes after the answer.
            try c.http.respond(refusal.status, message(refusal.message), close: true, deadline: replyBy())
            return false
        }
        let (status, why, keepOpen) = receive(file, of: session, head: head, c)
        lock.withLock { sessions.endUpload(session: sessionID, file: fileID, saved: status == 200, now: .now) }
        guard let status else { return false }  // the connection is gone
        try c.http.respond(status, status == 200 ? [] : message(why), close: !keepOpen, deadline: replyBy())
        return keepOpen
    }

    /// Receives one file's body into the store: the answer's status (nil: the connection is gone,
    /// no answer), its reason, and whether the connection can carry on.
    private func receive(_ file: FileInfo, of session: LocalSendSession, head: HTTPHead, _ c: Connection) -> (Int?, String, Bool) {
        let name = "\(quotedForTerminal(file.fileName)) (\(formatBytes(Double(file.size))))"
        let who = "\"\(clean(session.sender.alias))\"" + (session.fingerprint.map { " (LocalSend \(String($0.prefix(8))))" } ?? "")
        let prefix = "localsend \(c.id) from \(c.peer) \(who)"
        let sender = Sender(announcedName: session.sender.alias, id: session.fingerprint.map { .localSend($0) }, address: c.peer.description)
        if let length = head.contentLength, length != file.size {
            Log.info("\(prefix): refused \(name): the body is \(length) bytes, prepare-upload said \(file.size); answered 400")
            return (400, "Content-Length \(length) is not the file's size \(file.size)", false)
        }
        let incoming: IncomingFile
        // The type accepted in prepare-upload picks the store's check and the name's ending.
        let request = PhotoType(mediaType: file.mediaType).map {
            StoreRequest(name: file.fileName, size: file.size, sha256: file.sha256 ?? "", type: $0, sender: session.sender.alias,
                         modified: file.metadata?.modified.flatMap { WallTime(iso8601: $0) }?.milliseconds, folder: arrivals.folder(for: sender))
        }
        switch request.map({ store.begin($0) }) ?? .failure(StoreFailure(.typeNotKept, "\(file.mediaType) is not a type this receiver keeps")) {
        case .success(let f): incoming = f
        case .failure(let failure):
            let (status, why) = Self.status(for: failure)
            Log.info("\(prefix): refused \(name): \(Problem(failure)); answered \(status)")
            return (status, why, false)
        }
        let started = Instant.now
        var received: Int64 = 0
        // A partial upload of the same content (cut off before: ptkd stopped, or the connection
        // broke) is resumed. The app sends from the start: the bytes the partial holds, which the
        // SHA-256 checked at the end covers, are passed over.
        if incoming.offset > 0 { Log.info("\(prefix): \(name): resuming at byte \(incoming.offset)") }
        let result = Result { () throws(HTTPFailure) in
            try c.http.readBody(into: incoming, size: file.size, skip: incoming.offset, idle: configuration.idleTimeout, received: &received,
                                statusFor: Self.status(for:)) {
                guard lock.withLock({ sessions.isCancelled(session.id) }) || shutdown.isRequested else { return nil }
                return (409, shutdown.isRequested ? "the receiver is shutting down" : "the session was cancelled")
            }
        }
        if case .failure(let error) = result {
            incoming.abandon(keepForResume: false)
            switch error {
            case .refused(let status, let why):
                Log.info("\(prefix): failed \(name) after \(received) bytes: \(why); answered \(status)")
                return (status, why, false)
            case .timedOut:
                Log.info("\(prefix): failed \(name): no bytes for \(formatDecimal(configuration.idleTimeout.seconds)) s after \(received); answered 408")
                return (408, "no bytes within the idle timeout", false)
            case .interrupted:
                Log.info("\(prefix): failed \(name) after \(received) bytes: the receiver is shutting down; answered 503")
                return (503, "the receiver is shutting down", false)
            case .gone, .bodyRefused:
                // The app closed, or reading from it failed: nothing more can be said to it.
                Log.info("\(prefix): failed \(name): the connection ended after \(received) of \(file.size) bytes")
                return (nil, "the connection ended", false)
            }
        }
        switch incoming.finish() {
        case .success(let saved):
            let seconds = max((Instant.now - started).seconds, 1e-6)
            if saved.isDuplicate {
                Log.info("\(prefix): \(name) is already kept as \(quotedForTerminal(saved.name)); nothing new stored")
            } else {
                Log.info("\(prefix): saved \(quotedForTerminal(saved.name)), \(formatBytes(Double(saved.size))) in \(formatDecimal(seconds)) s (\(formatBytes(Double(saved.size) / seconds))/s)")
            }
            // Before the answer: the library and the hook take it from here.
            arrivals.saved(saved, type: incoming.request.type, from: sender, deviceID: session.fingerprint.map { "LocalSend \($0)" })
            return (200, "", true)
        case .failure(let failure):
            let (status, why) = Self.status(for: failure)
            Log.info("\(prefix): failed \(name): \(Problem(failure)); answered \(status)")
            return (status, why, true)
        }
    }
}
