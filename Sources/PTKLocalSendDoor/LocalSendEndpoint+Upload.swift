import PTKConfiguration
import PTKDoor
import PTKHTTP
import PTKLocalSend
import PTKLog
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKUpload
import PTKVocabulary

/// prepare-upload and upload: who may send (the trust list, the PIN, through
/// `LocalSendSessions`' decisions), and each file's body streamed into the store.
extension LocalSendDoor {
    func prepareUpload(_ r: Request, _ c: LocalSendContext) throws(HTTPError) -> Response {
        // Who may send is known before the body is read: its certificate against the trust list.
        let trusted = c.trusted
        if trusted { r.proven() }
        let allowed = configuration.senders == .anyone || trusted
        if !allowed {
            return try refuseUntrusted(r, c)
        }
        // A body of a sender not on the trust list is held whole only up to `smallJSONLimit`;
        // a larger one takes a share of `largeBodies` for as long as it is read and decoded, so
        // that many of them at once cannot take the receiver's memory. Trusted senders are not held back.
        let large = !trusted && (r.head.contentLength.map { $0 > Int64(Self.smallJSONLimit) } ?? true)
        let share = large ? Int(min(r.head.contentLength ?? Int64(Self.jsonLimit), Int64(Self.jsonLimit))) : 0
        if large && !largeBodies.take(share) {
            r.logWhole(
                "localsend \(r.connectionID) from \(r.peer): prepare-upload of \(r.head.contentLength.map { formatBytes(Double($0)) } ?? "a chunked body") while \(formatBytes(Double(LargeBodies.capacity))) of large bodies are being read; answered 503"
            )
            // The body is not read: the connection closes after the answer.
            throw .status(
                .serviceUnavailable, "the receiver is busy reading other large requests; try again in a moment",
                headers: ["Retry-After": "2"])
        }
        defer { if large { largeBodies.give(share) } }
        // A large body holds a share of a small budget: it must come fast (64 KiB/s), so a
        // trickle cannot keep the budget from everyone for minutes.
        let body = try r.body.collect(
            limit: large ? share : trusted ? Self.jsonLimit : Self.smallJSONLimit,
            minimumRate: large ? Self.largeBodyRate : HTTPConnection.bodyMinimumRate)
        var request: PrepareUploadRequest
        do {
            request = try LocalSendJSON.decode(PrepareUploadRequest.self, from: body).validated()
        } catch {
            r.logWhole(
                "localsend \(r.connectionID) from \(r.peer): prepare-upload refused: \(quotedForLog(String(describing: error))); answered 400"
            )
            throw .status(.badRequest, "invalid body: \(error)")
        }
        let who =
            "\"\(clean(request.info.alias))\""
            + (r.certificate.map { " (LocalSend \(String($0.prefix(8))))" } ?? " (no certificate)")
        let prefix =
            "localsend \(r.connectionID) from \(r.peer) \(who): prepare-upload of \(request.files.count) file(s)"
        let pin = r.query["pin"]
        if configuration.localSendPIN != nil && pin != nil && guesses.isSpent {
            r.logWhole("\(prefix): a PIN while too many wrong passwords or PINs were given this minute; answered 429")
            throw .status(.tooManyRequests, "too many wrong PINs were given to this receiver; try again in a minute")
        }
        // Files whose SHA-256 the app gave and whose bytes the directory keeps are left out of
        // the answer, so the app does not send them (duplicates = skip).
        // A photo is one kept photo however often the request names it: its hook runs once.
        var held: [String: (FileInfo, String)] = [:]
        for (id, file) in request.files {
            guard let sha256 = file.sha256?.lowercased(), let name = arrivals.heldPhoto(sha256: sha256, size: file.size)
            else { continue }
            if held[sha256] == nil || file.fileName < held[sha256]!.0.fileName { held[sha256] = (file, name) }
            request.files[id] = nil
        }
        // A PIN from an address already locked out is not checked, so it spends nothing of the
        // receiver's budget: one address cannot keep everyone's passwords refused.
        let (outcome, pinChecked): (PrepareOutcome, Bool) = lock.withLock {
            let checked =
                configuration.localSendPIN != nil && pin != nil && !sessions.pinLockedOut(r.address, now: .now)
            return (
                sessions.prepare(
                    request, address: r.address, fingerprint: r.certificate, pin: pin, allowed: allowed, now: .now),
                checked
            )
        }
        switch outcome {
        case .accepted, .nothingToTransfer:
            // Only a sender that may send learns what is kept, and only its duplicates run the hook.
            let sender = Sender(announcedName: request.info.alias, id: c.sender, address: r.peer.description)
            for (file, name) in held.values.sorted(by: { $0.0.fileName < $1.0.fileName }) {
                r.logWhole(
                    "\(prefix): \(quotedForLog(file.fileName)) is already kept as \(quotedForTerminal(name)); not asked for"
                )
                arrivals.saved(
                    StoredPhoto(
                        name: name, size: file.size, sha256: file.sha256?.lowercased() ?? "", isDuplicate: true),
                    type: PhotoType(mediaType: file.mediaType) ?? .png, from: sender,
                    deviceID: r.certificate.map { "LocalSend \($0)" })
            }
        case .pinRequired(wrong: true),
            .tooManyTries where pinChecked && pin != configuration.localSendPIN:
            guesses.failed("PIN", from: r.address)
        default:
            break
        }
        let status = HTTPStatus(outcome.status)
        switch outcome {
        case .accepted(let response):
            r.logWhole("\(prefix): accepted \(response.files.count), session \(response.sessionId.prefix(8))")
            return jsonAnswer(status, LocalSendJSON.encode(response))
        case .nothingToTransfer:
            r.logWhole(
                "\(prefix): none accepted (types: \(configuration.mediaTypes.joined(separator: ", ")); up to \(formatBytes(Double(configuration.maxFileSize)))); answered 204"
            )
            return Response(status)
        case .pinRequired(let wrong):
            if wrong { r.logWhole("\(prefix): wrong PIN; answered 401") } else { r.needsNoLogLine() }
            throw .status(status, wrong ? "wrong PIN" : "PIN required")
        case .tooManyTries:
            r.logWhole("\(prefix): too many wrong PINs from \(r.address); answered 429")
            throw .status(status, "too many wrong PINs; try again later")
        case .refused:
            // Decided above, before the body; the sessions refuse no one that is allowed.
            throw .status(status, "this receiver accepts trusted devices only")
        case .full:
            r.logWhole("\(prefix): the sessions hold \(sessions.policy.maxFilesHeld) files already; answered 503")
            throw .status(
                status, "the receiver holds as many files in sessions as it takes; try again in a minute",
                headers: ["Retry-After": "30"])
        case .busy:
            r.logWhole("\(prefix): a session from \(r.address) is still running; answered 409")
            throw .status(status, "a session from this address is still running")
        }
    }

    /// A prepare-upload from a sender the trust list does not name, under `senders = trusted`:
    /// refused (403) with at most `smallJSONLimit` of its body read, for the name the pending
    /// list shows (a larger body is not read: the connection closes after the answer).
    func refuseUntrusted(_ r: Request, _ c: LocalSendContext) throws(HTTPError) -> Response {
        var alias: String? = nil
        let small = r.head.contentLength.map { $0 <= Int64(Self.smallJSONLimit) } ?? false
        if small {
            let body = try r.body.collect(limit: Self.smallJSONLimit)
            // a body that does not parse names no one
            alias = (try? LocalSendJSON.decode(PrepareUploadRequest.self, from: body))?.info.alias
        }
        let prefix = "localsend \(r.connectionID) from \(r.peer) \"\(clean(alias ?? "?"))\": prepare-upload"
        if let id = c.sender {
            do { try trust.recordAttempt(id: id, name: alias ?? "LocalSend app", address: r.peer.description) } catch {
                Log.warning(
                    "localsend \(r.connectionID): cannot record the refused device in \(trust.pendingFile): \(error)")
            }
            r.logWhole(
                "\(prefix): refused, LocalSend \(id) is not trusted (`ptk trust allow \(id.short)`); answered 403")
        } else {
            r.logWhole(
                "\(prefix): refused, the app showed no certificate and only trusted devices may send; answered 403")
        }
        // A larger body is not read: the connection closes after the answer.
        throw .status(.forbidden, "this receiver accepts trusted devices only")
    }

    func upload(_ r: Request, _ c: LocalSendContext) throws(HTTPError) -> Response {
        let q = r.query
        guard let sessionID = q["sessionId"], let fileID = q["fileId"], let token = q["token"] else {
            try r.body.discard(limit: RequestBody.ignoredBodyLimit)
            throw .status(.badRequest, "missing sessionId, fileId or token")
        }
        let begun = lock.withLock {
            Result { () throws(UploadRefusal) in
                try sessions.beginUpload(session: sessionID, file: fileID, token: token, address: r.address, now: .now)
            }
        }
        let session: LocalSendSession
        let file: FileInfo
        switch begun {
        case .success(let (s, f)) where s.fingerprint == r.certificate:
            (session, file) = (s, f)
            r.proven()
        case .success(let (s, _)):
            // The token is the session's, but the app is not: another certificate (or none) than
            // the one that prepared the session. The file stays owed to the session's own app.
            lock.withLock { sessions.endUpload(session: sessionID, file: fileID, saved: false, now: .now) }
            r.logWhole(
                "localsend \(r.connectionID) from \(r.peer): upload refused: the certificate (\(r.certificate.map { String($0.prefix(8)) } ?? "none")) is not the session's (\(s.fingerprint.map { String($0.prefix(8)) } ?? "none")); answered 403"
            )
            // The body is not read: the connection closes after the answer.
            throw .status(.forbidden, "this upload's certificate is not the one that prepared the session")
        case .failure(let refusal):
            r.logWhole(
                "localsend \(r.connectionID) from \(r.peer): upload refused: \(refusal.message); answered \(refusal.status)"
            )
            // The body is not read: the connection closes after the answer.
            throw .status(HTTPStatus(refusal.status), refusal.message)
        }
        let (status, why) = receive(file, of: session, r)
        lock.withLock { sessions.endUpload(session: sessionID, file: fileID, saved: status == .ok, now: .now) }
        guard let status else { throw .gone }
        // A refusal before the body's end leaves it unread: the connection closes after the answer.
        guard status == .ok else { throw .status(status, why) }
        return Response(.ok)
    }

    /// Receives one file's body into the store: the answer's status (nil: the connection is gone,
    /// no answer) and its reason.
    func receive(_ file: FileInfo, of session: LocalSendSession, _ r: Request) -> (HTTPStatus?, String) {
        let name = "\(quotedForLog(file.fileName)) (\(formatBytes(Double(file.size))))"
        let who =
            "\"\(clean(session.sender.alias))\""
            + (session.fingerprint.map { " (LocalSend \(String($0.prefix(8))))" } ?? "")
        let prefix = "localsend \(r.connectionID) from \(r.peer) \(who)"
        let sender = Sender(
            announcedName: session.sender.alias, id: session.fingerprint.map { .localSend($0) },
            address: r.peer.description)
        if let length = r.head.contentLength, length != file.size {
            r.logWhole(
                "\(prefix): refused \(name): the body is \(length) bytes, prepare-upload said \(file.size); answered 400"
            )
            return (.badRequest, "Content-Length \(length) is not the file's size \(file.size)")
        }
        // The type accepted in prepare-upload picks the store's check and the name's ending.
        guard let type = PhotoType(mediaType: file.mediaType) else {
            let failure = StoreFailure(.typeNotKept, "\(file.mediaType) is not a type this receiver keeps")
            let (status, why) = StoreUpload.status(for: failure)
            r.logWhole("\(prefix): refused \(name): \(Problem(failure)); answered \(status)")
            return (HTTPStatus(status), why)
        }
        let request = StoreRequest(
            name: file.fileName, size: file.size, sha256: file.sha256 ?? "", type: type, sender: session.sender.alias,
            modified: file.metadata?.modified.flatMap { WallTime(iso8601: $0) }?.milliseconds,
            folder: arrivals.folder(for: sender))
        // A partial upload of the same content (cut off before: ptkd stopped, or the connection
        // broke) is resumed. The app sends from the start: the bytes the partial holds, which the
        // SHA-256 checked at the end covers, are passed over.
        let outcome = StoreUpload.receive(
            request, into: store, from: r.body,
            resuming: { r.logWhole("\(prefix): \(name): resuming at byte \($0)") }
        ) {
            guard lock.withLock({ sessions.isCancelled(session.id) }) || shutdown.isRequested else { return nil }
            return (409, shutdown.isRequested ? "the receiver is shutting down" : "the session was cancelled")
        }
        switch outcome {
        case .saved(let saved, let seconds):
            if saved.isDuplicate {
                r.logWhole("\(prefix): \(name) is already kept as \(quotedForTerminal(saved.name)); nothing new stored")
            } else {
                r.logWhole(
                    "\(prefix): saved \(quotedForTerminal(saved.name)), \(formatBytes(Double(saved.size))) in \(formatDecimal(seconds)) s (\(formatBytes(Double(saved.size) / seconds))/s)",
                    always: true)
            }
            // Before the answer: the library and the hook take it from here.
            arrivals.saved(saved, type: type, from: sender, deviceID: session.fingerprint.map { "LocalSend \($0)" })
            return (.ok, "")
        case .failed(let failure):
            switch (failure.stage, failure.status) {
            case (.begin, _): r.logWhole("\(prefix): refused \(name): \(failure.detail); answered \(failure.status)")
            case (.body, _) where failure.idle:
                r.logWhole(
                    "\(prefix): failed \(name): no bytes for \(formatDecimal(configuration.idleTimeout.seconds)) s after \(failure.received); answered 408"
                )
            case (.body, _):
                r.logWhole(
                    "\(prefix): failed \(name) after \(failure.received) bytes: \(failure.detail); answered \(failure.status)"
                )
            case (.finish, _): r.logWhole("\(prefix): failed \(name): \(failure.detail); answered \(failure.status)")
            }
            return (HTTPStatus(failure.status), failure.reason)
        case .gone(let received):
            // The app closed, or reading from it failed: nothing more can be said to it.
            r.logWhole("\(prefix): failed \(name): the connection ended after \(received) of \(file.size) bytes")
            return (nil, "the connection ended")
        }
    }
}
