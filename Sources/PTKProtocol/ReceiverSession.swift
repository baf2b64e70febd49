import PTKVocabulary

/// Settings the receiver's state machine needs.
public struct ReceiverSettings: Sendable, Equatable {
    /// The display name sent in WELCOME.
    public var name: String
    /// The largest window this receiver grants (1...64).
    public var window: Int
    /// Offers above this size are REJECTed `too-large`.
    public var maxFileSize: Int64
    /// Bytes per CHUNK.
    public var chunkSize: Int
    /// Sessions served at once for one sender address, sent as WELCOME.sessions (nil: not sent).
    public var sessions: Int?
    /// A plaintext HELLO is served (else: ERROR `tls-required`).
    public var plaintextAllowed: Bool
    /// Only senders on the trust list are served (else: ERROR `unauthorized`).
    public var trustedSendersOnly: Bool
    /// The types this receiver keeps, sent as WELCOME.types; an OFFER of another type is
    /// REJECTed `unsupported-type` (protocol-v1.md section 7).
    public var types: [PhotoType]
    /// Answer DONEs late for a sender that announced `"late-answers"` (ptk's addition), so a
    /// session's photos share flush rounds; false answers every sender in order.
    public var lateAnswers: Bool

    /// Defaults fit a receiver that takes every type, plaintext and any sender; the daemon sets
    /// each from its configuration.
    public init(
        name: String, window: Int, maxFileSize: Int64, chunkSize: Int = ProtocolLimits.chunkSize, sessions: Int? = nil,
        plaintextAllowed: Bool = true, trustedSendersOnly: Bool = false, types: [PhotoType] = PhotoType.allCases,
        lateAnswers: Bool = true
    ) {
        self.lateAnswers = lateAnswers
        self.name = name
        self.window = window
        self.maxFileSize = maxFileSize
        self.chunkSize = chunkSize
        self.sessions = sessions
        self.plaintextAllowed = plaintextAllowed
        self.trustedSendersOnly = trustedSendersOnly
        self.types = types
    }
}

/// What the transport says about the sender of a session (protocol §6).
public enum SenderCredentials: Equatable, Sendable {
    /// No TLS: nobody knows who it is.
    case plaintext
    /// TLS; the sender's device ID (nil when its certificate has no Ed25519 key, or it sent
    /// none) and whether that ID is on the trust list.
    case tls(DeviceID?, trusted: Bool)
}

/// What the store decided about an OFFER.
public enum OfferDecision: Equatable, Sendable {
    /// Take it; the store already holds `offset` bytes of it.
    case accept(offset: Int64)
    /// Refuse it with a REJECT.
    case reject(Problem)
    /// The receiver already keeps these bytes (same size and SHA-256) as `saved.name`: ACCEPT
    /// with the offset at the file's end, and SAVED with `duplicate` after DONE (protocol-v1.md
    /// section 7). Only for a sender that announced `"held"`.
    case held(Saved)
}

/// Something that happened to a receiver session.
public enum ReceiverEvent: Equatable, Sendable {
    /// A whole frame arrived from the sender.
    case frame(Frame)
    /// The decoder found a protocol violation in the byte stream.
    case violation(ProtocolViolation)
    /// The store's answer to `.evaluateOffer`.
    case offerDecided(OfferDecision)
    /// The bytes of the last `.writeChunk` are in the temporary file.
    case chunkWritten
    /// Writing failed; the file cannot be completed.
    case chunkFailed(Problem)
    /// The result of `.finishFile`: the final name, or why the file failed.
    case fileFinished(Result<Saved, StoreFailure>)
    /// The sender sent nothing for the idle timeout.
    case timedOut
    /// The daemon is shutting down.
    case shutdown
    /// The sender closed the connection.
    case peerClosed
}

/// What the driver must do next for a receiver session.
public enum ReceiverAction: Equatable, Sendable {
    /// Send this frame.
    case send(Frame)
    /// Ask the store about this offer, then report `.offerDecided`.
    case evaluateOffer(Offer)
    /// Append these bytes to the open file, then report `.chunkWritten` or `.chunkFailed`.
    case writeChunk([UInt8])
    /// Verify and publish the open file, then report `.fileFinished`.
    case finishFile
    /// Verify the open file and start publishing it (a flush round) without waiting: its answer
    /// is owed. The driver reports `.fileFinished` for owed answers in the order they were
    /// owed, when each is known (late answers).
    case finishFileLater
    /// An answer owed like `finishFileLater`'s, known already (a file held whole, a size
    /// mismatch): the driver reports it as `.fileFinished` in its turn.
    case owe(Result<Saved, StoreFailure>)
    /// The session ends with an ERROR while answers are owed: send each owed answer now, in
    /// order (waiting for their rounds), without reporting them back.
    case drainOwed
    /// Drop the open file: keep its bytes for a later resume, or delete them.
    case abandonFile(keepForResume: Bool)
    /// End the session. After an ERROR the close is graceful so the ERROR reaches the peer.
    case close
    /// Note that this untrusted device tried to send (the pending list), under its HELLO name.
    case recordRefusedSender(DeviceID, name: String)
}

/// The receiver's side of a session as a pure state machine: events in, actions out.
/// It owns every protocol rule; the driver only performs I/O and reports back.
public struct ReceiverSession: Sendable {
    /// Where in the session the receiver is.
    public enum State: Equatable, Sendable {
        case awaitingHello
        case ready
        case awaitingDecision(Offer)
        case receiving(Transfer)
        /// The receiver holds the offered file already (`OfferDecision.held`); DONE is owed.
        case holding(Offer, Saved)
        case finishing(Offer)
        /// After FAILED in place of an ACK: CHUNKs of that file are dropped unacknowledged.
        case discarding
        /// BYE came while answers are owed (late answers): they go out, then the session closes.
        case draining
        case closed
    }

    /// Progress of the file being received.
    public struct Transfer: Equatable, Sendable {
        /// The OFFER being received.
        public var offer: Offer
        /// Bytes of the file received so far, resumed ones included.
        public var received: Int64
        /// CHUNKs received whose ACK has not been sent yet.
        public var unacknowledged: Int
    }

    /// Where the session is; the driver reads it to know whether a file is open and when to close.
    public private(set) var state: State = .awaitingHello
    /// The window in force after HELLO.
    public private(set) var window = 1
    /// The sender's name from HELLO.
    public private(set) var peerName = ""
    /// The sender announced `"held"` in HELLO.features: it takes ACCEPT.offset equal to the
    /// file's size (protocol-v1.md section 7).
    public private(set) var peerTakesHeld = false
    /// The sender announced `"folders"`: OFFER.name's folders are kept (ptk's addition).
    public private(set) var peerKeepsFolders = false
    /// The sender announced `"late-answers"` and the settings allow them: DONEs are answered
    /// once their flush round is over, while later frames are answered meanwhile.
    public private(set) var answersLate = false
    /// DONEs read whose SAVED or FAILED has not been sent (late answers only).
    public private(set) var owed = 0
    /// A FAILED in place of an ACK, held until every owed answer went out before it.
    public private(set) var heldFailure: Problem?
    /// Fixed for the session's life.
    public let settings: ReceiverSettings
    /// Who the transport says the sender is.
    public let sender: SenderCredentials

    /// A session before HELLO; `sender` defaults to a plaintext peer with no identity.
    public init(settings: ReceiverSettings, sender: SenderCredentials = .plaintext) {
        self.settings = settings
        self.sender = sender
    }

    /// True while a temporary file is open for the current offer.
    public var hasOpenFile: Bool {
        switch state {
        case .receiving, .finishing: return true
        default: return false
        }
    }

    /// Feeds one event; returns the actions to perform, in order.
    public mutating func handle(_ event: ReceiverEvent) -> [ReceiverAction] {
        if case .closed = state { return [] }
        switch event {
        case .frame(let frame): return handle(frame: frame)
        case .violation(let v): return fail(v.code, v.message)
        case .timedOut: return fail(.timeout, "no frame for the idle timeout")
        case .shutdown: return fail(.shuttingDown, "the receiver is shutting down; resume later")
        case .peerClosed:
            let keep = hasOpenFile
            state = .closed
            return keep ? [.abandonFile(keepForResume: true), .close] : [.close]
        case .offerDecided(let decision):
            guard case .awaitingDecision(let offer) = state else { return internalError("offer decision out of order") }
            switch decision {
            case .accept(let offset):
                // A whole file already held may end off a chunk boundary, for a sender that takes it.
                let whole = offset == offer.size && peerTakesHeld
                guard offset >= 0, offset <= offer.size, offset % Int64(settings.chunkSize) == 0 || whole else {
                    return internalError("store offered resume offset \(offset)")
                }
                state = .receiving(Transfer(offer: offer, received: offset, unacknowledged: 0))
                return [.send(.accept(Accept(offset: offset)))]
            case .reject(let problem):
                state = .ready
                return [.send(.reject(problem))]
            case .held(let saved):
                guard peerTakesHeld else {
                    return internalError("the store answered held to a sender that did not announce it")
                }
                guard saved.size == offer.size, saved.sha256 == offer.sha256 else {
                    return internalError("the store holds other bytes than offered")
                }
                state = .holding(offer, saved)
                return [.send(.accept(Accept(offset: offer.size)))]
            }
        case .chunkWritten:
            guard case .receiving(var t) = state, t.unacknowledged > 0 else {
                return internalError("chunk write out of order")
            }
            t.unacknowledged -= 1
            state = .receiving(t)
            return [.send(.ack)]
        case .chunkFailed(let problem):
            guard case .receiving = state else { return internalError("chunk failure out of order") }
            state = .discarding
            return [.abandonFile(keepForResume: false)] + failCurrent(problem)
        case .fileFinished(let result):
            let answer: Frame
            switch result {
            case .success(let saved): answer = .saved(saved)
            case .failure(let failure): answer = .failed(Problem(failure))
            }
            if case .finishing = state {
                state = .ready
                return [.send(answer)]
            }
            guard owed > 0 else { return internalError("file result out of order") }
            owed -= 1
            var actions: [ReceiverAction] = [.send(answer)]
            if owed == 0, let held = heldFailure {
                heldFailure = nil
                actions.append(.send(.failed(held)))
            }
            if owed == 0, case .draining = state {
                state = .closed
                actions.append(.close)
            }
            return actions
        }
    }

    private mutating func handle(frame: Frame) -> [ReceiverAction] {
        switch (state, frame) {
        case (_, .error):
            // The sender gave up; it closes, so answer nothing.
            let keep = hasOpenFile
            state = .closed
            return keep ? [.abandonFile(keepForResume: true), .close] : [.close]

        case (.awaitingHello, .hello(let hello)):
            guard hello.proto == "ptk" else { return fail(.badFrame, "HELLO.proto must be \"ptk\"") }
            guard hello.version == ProtocolLimits.version else {
                return fail(.unsupportedVersion, "this receiver speaks protocol version \(ProtocolLimits.version) only")
            }
            peerName = hello.name
            peerTakesHeld = hello.announces(.held)
            peerKeepsFolders = hello.announces(.folders)
            answersLate = settings.lateAnswers && hello.announces(.lateAnswers)
            switch sender {
            case .plaintext where !settings.plaintextAllowed:
                return fail(.tlsRequired, "this receiver takes TLS sessions only")
            case .plaintext where settings.trustedSendersOnly:
                return fail(
                    .tlsRequired,
                    "this receiver takes photos from trusted devices only, and a device is known only over TLS")
            case .tls(let id, trusted: false) where settings.trustedSendersOnly:
                guard let id else {
                    return fail(
                        .unauthorized,
                        "this receiver takes photos from trusted devices only, and this sender has no Ed25519 device identity"
                    )
                }
                var actions: [ReceiverAction] = [.recordRefusedSender(id, name: hello.name)]
                actions += fail(
                    .unauthorized,
                    "device \(id) is not trusted by this receiver; its administrator can allow it with `ptk trust allow \(id.compact.prefix(8))`"
                )
                return actions
            default:
                break
            }
            window = max(1, min(hello.window ?? 1, settings.window))
            state = .ready
            return [
                .send(
                    .welcome(
                        Welcome(
                            name: settings.name, window: window, chunkSize: settings.chunkSize,
                            maxFileSize: settings.maxFileSize, sessions: settings.sessions,
                            types: settings.types.map(\.mediaType))))
            ]

        case (.discarding, .offer) where heldFailure != nil:
            return fail(.unexpectedFrame, "OFFER before the FAILED of the file whose chunks flowed")

        case (.ready, .offer(let offer)), (.discarding, .offer(let offer)):
            return handle(offer: offer)

        case (.ready, .bye), (.discarding, .bye):
            if owed > 0 {
                state = .draining
                return []
            }
            state = .closed
            return [.close]

        case (.discarding, .chunk):
            return []

        case (.holding(_, let saved), .done):
            state = .ready
            var answer = saved
            answer.duplicate = true
            if owed > 0 {
                owed += 1
                return [.owe(.success(answer))]
            }
            return [.send(.saved(answer))]

        case (.holding, .chunk):
            return fail(.unexpectedFrame, "CHUNK of a file the receiver holds whole (ACCEPT.offset was its size)")

        case (.receiving(var t), .chunk(let bytes)):
            let remaining = t.offer.size - t.received
            guard remaining > 0 else { return fail(.unexpectedFrame, "CHUNK after the file's last chunk") }
            guard t.unacknowledged < window else {
                return fail(.unexpectedFrame, "more than \(window) unacknowledged chunks")
            }
            let expected = Int(min(Int64(settings.chunkSize), remaining))
            guard bytes.count == expected else {
                state = .discarding
                return [.abandonFile(keepForResume: false)]
                    + failCurrent(
                        Problem(
                            .sizeMismatch,
                            "chunk at offset \(t.received) has \(bytes.count) bytes, expected \(expected)"))
            }
            t.received += Int64(bytes.count)
            t.unacknowledged += 1
            state = .receiving(t)
            return [.writeChunk(bytes)]

        case (.receiving(let t), .done):
            guard t.unacknowledged == 0 else {
                return fail(.unexpectedFrame, "DONE before every chunk was acknowledged")
            }
            guard t.received == t.offer.size else {
                state = .ready
                let failure = StoreFailure(.sizeMismatch, "received \(t.received) of \(t.offer.size) bytes")
                if owed > 0 {
                    owed += 1
                    return [.abandonFile(keepForResume: false), .owe(.failure(failure))]
                }
                return [.abandonFile(keepForResume: false), .send(.failed(Problem(failure)))]
            }
            if answersLate {
                state = .ready
                owed += 1
                return [.finishFileLater]
            }
            state = .finishing(t.offer)
            return [.finishFile]

        case (_, .hello), (_, .offer), (_, .chunk), (_, .done), (_, .bye),
            (_, .welcome), (_, .accept), (_, .reject), (_, .saved), (_, .failed), (_, .ack):
            return fail(.unexpectedFrame, "\(frame.type) is not allowed \(stateDescription)")
        }
    }

    private mutating func handle(offer: Offer) -> [ReceiverAction] {
        guard offer.size >= 0 else { return fail(.badFrame, "OFFER.size is negative") }
        guard offer.sha256.isLowercaseSHA256Hex else {
            return fail(.badFrame, "OFFER.sha256 must be 64 lowercase hex digits")
        }
        state = .ready
        guard let type = PhotoType(mediaType: offer.mediaType), settings.types.contains(type) else {
            let kept = settings.types.map(\.mediaType).joined(separator: ", ")
            return [
                .send(
                    .reject(Problem(.unsupportedType, "\(offer.mediaType) is not a type this receiver keeps (\(kept))"))
                )
            ]
        }
        if offer.size < Int64(ProtocolLimits.pngSignature.count) {
            return [.send(.reject(Problem(.notPNG, "\(offer.size) bytes is too small for a \(type.displayName)")))]
        }
        if offer.size > settings.maxFileSize {
            return [
                .send(
                    .reject(
                        Problem(
                            .tooLarge, "\(offer.size) bytes is over this receiver's limit of \(settings.maxFileSize)")))
            ]
        }
        state = .awaitingDecision(offer)
        return [.evaluateOffer(offer)]
    }

    /// FAILED in place of an ACK for the file whose chunks flow: now, or once every owed answer
    /// went out before it (late answers).
    private mutating func failCurrent(_ problem: Problem) -> [ReceiverAction] {
        if owed > 0 {
            heldFailure = problem
            return []
        }
        return [.send(.failed(problem))]
    }

    /// Sends ERROR and closes; a file in progress is kept for resume. The driver sends the owed
    /// answers first (`owed`), as far as the connection takes them.
    private mutating func fail(_ code: ErrorCode, _ message: String) -> [ReceiverAction] {
        let keep = hasOpenFile
        state = .closed
        var actions: [ReceiverAction] = []
        if keep { actions.append(.abandonFile(keepForResume: true)) }
        // What is owed is answered before the ERROR (the photos are saved or not regardless).
        if owed > 0 {
            owed = 0
            actions.append(.drainOwed)
            if let held = heldFailure {
                heldFailure = nil
                actions.append(.send(.failed(held)))
            }
        }
        actions.append(.send(.error(Problem(code, message))))
        actions.append(.close)
        return actions
    }

    private mutating func internalError(_ message: String) -> [ReceiverAction] {
        fail(.internal, message)
    }

    private var stateDescription: String {
        switch state {
        case .awaitingHello: return "before HELLO"
        case .ready: return "between files"
        case .awaitingDecision: return "while an offer is decided"
        case .receiving: return "while chunks flow"
        case .holding: return "before DONE of a file already held"
        case .finishing: return "while the file is verified"
        case .discarding: return "after FAILED"
        case .draining: return "after BYE"
        case .closed: return "after the session ended"
        }
    }
}
