import PTKVocabulary

/// A file as the sender offers it.
public struct OutgoingFile: Equatable, Sendable {
    /// The name sent in OFFER.name: the receiver derives the saved name from it (§5).
    public var name: String
    /// The size in bytes sent in OFFER.size; the file must not change while it is sent.
    public var size: Int64
    /// Nil until known: the session then asks for it (`SenderAction.hash`) when it is due to
    /// offer the file, so a sender can hash each file while the previous one is being sent.
    public var sha256: String?
    /// Its modification time, in milliseconds since the epoch (OFFER.modified); nil: not sent.
    public var modified: Int64?
    /// Its type, as its first bytes say (OFFER.mediaType). It is offered only when the
    /// receiver keeps that type (WELCOME.types, section 7).
    public var type: PhotoType
    /// `sha256` nil: the session asks for it when the file is due.
    public init(name: String, size: Int64, sha256: String? = nil, modified: Int64? = nil, type: PhotoType = .png) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.modified = modified
        self.type = type
    }
}

/// How one file's transfer ended, as the receiver said.
public enum FileOutcome: Equatable, Sendable {
    case saved(Saved)
    case rejected(Problem)
    case failed(Problem)
    /// Not offered: the receiver keeps only `kept` (its WELCOME.types, or PNG alone when it
    /// gave none), not this file's type.
    case notKept(kept: [PhotoType])
}

/// Something that happened to a sender session.
public enum SenderEvent: Equatable, Sendable {
    /// The connection is up: say HELLO.
    case start
    /// A whole frame arrived from the receiver.
    case frame(Frame)
    /// The decoder found a protocol violation in the byte stream.
    case violation(ProtocolViolation)
    /// The SHA-256 of file `file`, asked for by `SenderAction.hash`.
    case hashed(file: Int, sha256: String)
    /// The files this session sends, asked for by `SenderAction.plan`.
    case planned([OutgoingFile])
}

/// What the driver must do next for a sender session.
public enum SenderAction: Equatable, Sendable {
    /// Send this frame.
    case send(Frame)
    /// Give the SHA-256 of file `file` (event `hashed`); its OFFER waits for it.
    case hash(file: Int)
    /// Decide which files this session sends next (event `planned`; none left: an empty list).
    /// Only a session created with `planningAfterWelcome` asks: once the WELCOME came, and again
    /// each time it has offered every file it was given.
    case plan(Welcome)
    /// Send bytes `offset ..< offset + length` of file `file` as one CHUNK.
    case sendChunk(file: Int, offset: Int64, length: Int)
    /// The receiver accepted file `file` and holds its first `offset` bytes already.
    case started(file: Int, offset: Int64)
    /// The receiver acknowledged `bytes` more bytes of file `file`.
    case acknowledged(file: Int, bytes: Int)
    /// File `file` is finished, one way or the other.
    case finished(file: Int, FileOutcome)
    /// The session is over and the connection can be closed.
    case close
    /// The receiver answered with ERROR; nothing more will come.
    case remoteError(Problem)
    /// The receiver broke the protocol: ERROR was sent, close the connection.
    case protocolError(ProtocolViolation)
}

/// The sender's side of a session as a pure state machine: events in, actions out.
public struct SenderSession: Sendable {
    /// Where the session is; `file` is an index into `files`.
    public enum State: Equatable, Sendable {
        case idle
        case awaitingWelcome
        case awaitingPlan
        case awaitingHash(file: Int)
        case awaitingAnswer(file: Int)
        case sending(file: Int, next: Int64, outstanding: [Int])
        /// Nothing more to offer now: waits for the result of `file`, the oldest file whose DONE
        /// went out unanswered (those after it, when it announced `lateAnswers`, wait in
        /// `awaitingResults`); BYE or the next OFFER go out only once none is owed.
        case awaitingResult(file: Int)
        case closed
    }

    /// Where the session is; `.closed` once BYE or ERROR went out or came.
    public private(set) var state: State = .idle
    /// The window in force after WELCOME.
    public private(set) var window = 1
    /// The chunk size in force after WELCOME.
    public private(set) var chunkSize = ProtocolLimits.chunkSize
    /// The receiver's WELCOME, once it came.
    public private(set) var welcome: Welcome?
    /// The files to send, in order; a planning session appends to it as it is given more.
    public private(set) var files: [OutgoingFile]
    /// The sender's display name, sent in HELLO.name.
    public let name: String
    /// The window asked for in HELLO, clamped to 1...`ProtocolLimits.maxWindow`; WELCOME may lower it.
    public let requestedWindow: Int
    /// Send the next OFFER right after DONE instead of waiting for SAVED (protocol-v1.md §4).
    public let pipelining: Bool
    /// Files whose DONE went out and whose SAVED/FAILED has not come yet, oldest first (in state
    /// `.awaitingResult(file:)`, those after that file). At most one without `lateAnswers`;
    /// with it, any number, since the receiver may answer the next OFFER and CHUNKs first.
    public private(set) var awaitingResults: [Int] = []
    /// The first file neither offered nor passed over yet.
    private var nextFile = 0

    /// Asks for its files (`SenderAction.plan`) once the WELCOME came, instead of taking them at
    /// init, and for more each time it runs out.
    public private(set) var planning = false
    /// A planning session was told there are no more files.
    public private(set) var exhausted = false

    /// What HELLO.features announces.
    public let features: [ProtocolFeature]
    /// It announced `lateAnswers`: the receiver may send ACCEPT/REJECT for the next OFFER and
    /// ACKs for the next file's CHUNKs before the SAVED/FAILED owed for earlier DONEs. Those
    /// still come in DONE order, so a SAVED answers the oldest file in `awaitingResults`; a
    /// FAILED too, or, when none is owed, the file whose chunks flow (in place of an ACK).
    public var lateAnswers: Bool { features.contains(.lateAnswers) }

    /// A session before HELLO; `window` is clamped, and `features` go in HELLO.features.
    public init(
        name: String, window: Int, files: [OutgoingFile], pipelining: Bool = true, features: [ProtocolFeature] = [.held]
    ) {
        self.name = name
        self.requestedWindow = max(1, min(window, ProtocolLimits.maxWindow))
        self.files = files
        self.pipelining = pipelining
        self.features = features
    }

    /// A session whose files are chosen after the receiver's WELCOME, which says how many
    /// sessions it serves at once (a sender opens its first session alone, protocol-v1.md §4),
    /// and which asks for more whenever it has offered all it has: several sessions can so take
    /// their files from one list, and none is left holding files it cannot send.
    public static func planningAfterWelcome(
        name: String, window: Int, pipelining: Bool = true,
        features: [ProtocolFeature] = [.held]
    ) -> SenderSession {
        var session = SenderSession(name: name, window: window, files: [], pipelining: pipelining, features: features)
        session.planning = true
        return session
    }

    /// Outcomes of files finished before an earlier file's owed result came (a REJECT, a type
    /// not kept, with late answers): reported once every earlier file is, so files are always
    /// reported in their order, as without late answers.
    private var heldOutcomes: [(file: Int, outcome: FileOutcome)] = []

    /// Feeds one event; returns the actions to perform, in order. Files are reported finished
    /// in their order.
    public mutating func handle(_ event: SenderEvent) -> [SenderAction] {
        let actions = step(event)
        guard lateAnswers else { return actions }
        var owedFiles = awaitingResults
        if case .awaitingResult(let file) = state { owedFiles.append(file) }
        let firstOwed = owedFiles.min() ?? Int.max
        var ordered: [SenderAction] = []
        var lastFinished = -1
        for action in actions {
            if case .finished(let file, let outcome) = action, file > firstOwed {
                heldOutcomes.append((file, outcome))
                continue
            }
            ordered.append(action)
            if case .finished = action { lastFinished = ordered.count - 1 }
        }
        // Those whose earlier files are all reported now, after the last reported in this step
        // (so before a BYE or close that follows it).
        // A session that ends reports every held one (its earlier files end unanswered).
        let releaseBelow = state == .closed ? Int.max : firstOwed
        let due = heldOutcomes.filter { $0.file < releaseBelow }.sorted { $0.file < $1.file }
        if !due.isEmpty {
            heldOutcomes.removeAll { $0.file < releaseBelow }
            let ending =
                ordered.firstIndex {
                    switch $0 {
                    case .send(.bye), .send(.error), .close, .remoteError, .protocolError: return true
                    default: return false
                    }
                } ?? ordered.count
            let at = lastFinished >= 0 ? min(lastFinished + 1, ending) : ending
            ordered.insert(contentsOf: due.map { SenderAction.finished(file: $0.file, $0.outcome) }, at: at)
        }
        return ordered
    }

    private mutating func step(_ event: SenderEvent) -> [SenderAction] {
        switch (state, event) {
        case (.closed, _):
            return []
        case (.idle, .start):
            state = .awaitingWelcome
            return [.send(.hello(Hello(name: name, window: requestedWindow, features: features.map(\.rawValue))))]
        case (_, .violation(let v)):
            return fail(v)
        case (_, .frame(.error(let problem))):
            state = .closed
            return [.remoteError(problem), .close]
        case (.awaitingHash(let i), .hashed(let file, let sha256)) where file == i:
            files[i].sha256 = sha256
            return offer(i)
        case (_, .hashed):
            // Not asked for now: nothing the peer did, so nothing to answer.
            return []
        case (.awaitingPlan, .planned(let planned)):
            let next = files.count
            files += planned
            if next < files.count { return offer(next) }
            exhausted = true
            // Nothing more: BYE, or, while files whose DONE went out (pipelining) still owe
            // their results, waiting for the oldest of them first (`offer` decides).
            return offer(next)
        case (_, .planned):
            return []
        case (.awaitingResult(let i), .frame(.saved(let s))):
            return answered(i, .saved(s))
        case (.awaitingResult(let i), .frame(.failed(let p))):
            return answered(i, .failed(p))
        case (.awaitingAnswer, .frame(.saved(let s))) where !awaitingResults.isEmpty,
            (.awaitingHash, .frame(.saved(let s))) where !awaitingResults.isEmpty,
            (.awaitingPlan, .frame(.saved(let s))) where !awaitingResults.isEmpty,
            (.sending, .frame(.saved(let s))) where !awaitingResults.isEmpty:
            // The answer for the oldest file whose DONE went out before this OFFER (pipelining).
            // While chunks flow, only with `lateAnswers`: without it no file is owed by then.
            return [.finished(file: awaitingResults.removeFirst(), .saved(s))]
        case (.awaitingAnswer, .frame(.failed(let p))) where !awaitingResults.isEmpty,
            (.awaitingHash, .frame(.failed(let p))) where !awaitingResults.isEmpty,
            (.awaitingPlan, .frame(.failed(let p))) where !awaitingResults.isEmpty,
            (.sending, .frame(.failed(let p))) where !awaitingResults.isEmpty:
            // A FAILED in place of an ACK comes only once every earlier DONE was answered: while
            // one is owed, a FAILED is that one's.
            return [.finished(file: awaitingResults.removeFirst(), .failed(p))]
        case (.awaitingAnswer, .frame(.accept)) where !awaitingResults.isEmpty && !lateAnswers,
            (.awaitingAnswer, .frame(.reject)) where !awaitingResults.isEmpty && !lateAnswers:
            return fail(
                ProtocolViolation(.unexpectedFrame, "answer to an OFFER before the result of the file sent earlier"))
        case (.awaitingWelcome, .frame(.welcome(let w))):
            guard w.version == ProtocolLimits.version else {
                return fail(ProtocolViolation(.unsupportedVersion, "the receiver speaks version \(w.version)"))
            }
            guard w.chunkSize >= 1, w.chunkSize <= ProtocolLimits.chunkSize else {
                return fail(ProtocolViolation(.badFrame, "WELCOME.chunkSize \(w.chunkSize) is not usable"))
            }
            welcome = w
            window = max(1, min(requestedWindow, w.window))
            chunkSize = w.chunkSize
            if planning {
                state = .awaitingPlan
                return [.plan(w)]
            }
            return offer(0)
        case (.awaitingAnswer(let i), .frame(.accept(let a))):
            let file = files[i]
            // The offset may be the file's size off a chunk boundary: the receiver holds it whole ("held", section 7).
            guard a.offset >= 0, a.offset <= file.size, a.offset % Int64(chunkSize) == 0 || a.offset == file.size else {
                return fail(
                    ProtocolViolation(.badFrame, "ACCEPT.offset \(a.offset) is not a chunk boundary within the file"))
            }
            state = .sending(file: i, next: a.offset, outstanding: [])
            return [.started(file: i, offset: a.offset)] + fillWindow()
        case (.awaitingAnswer(let i), .frame(.reject(let p))):
            return [.finished(file: i, .rejected(p))] + offer(i + 1)
        case (.sending(let i, let next, var outstanding), .frame(.ack)):
            guard !outstanding.isEmpty else {
                return fail(ProtocolViolation(.unexpectedFrame, "ACK with no chunk outstanding"))
            }
            let bytes = outstanding.removeFirst()
            state = .sending(file: i, next: next, outstanding: outstanding)
            return [.acknowledged(file: i, bytes: bytes)] + fillWindow()
        case (.sending(let i, _, _), .frame(.failed(let p))):
            // Nothing owed (above): in place of an ACK, about the file whose chunks flow.
            return [.finished(file: i, .failed(p))] + offer(i + 1)
        case (_, .frame(let frame)):
            return fail(ProtocolViolation(.unexpectedFrame, "\(frame.type) is not expected now"))
        case (_, .start):
            return []
        }
    }

    /// File `i`, the oldest whose result was owed, got it: the next owed one is waited for, and
    /// once none is, the session goes on after `i` (`offer` skips the files already offered).
    private mutating func answered(_ i: Int, _ outcome: FileOutcome) -> [SenderAction] {
        if !awaitingResults.isEmpty {
            state = .awaitingResult(file: awaitingResults.removeFirst())
            return [.finished(file: i, outcome)]
        }
        return [.finished(file: i, outcome)] + offer(i + 1)
    }

    /// Offers file `i` (asking for its hash first when it is not known); after the last, asks
    /// for more (a planning session), waits for the results still owed (`lateAnswers`: a REJECT
    /// may come before them), or says BYE. Files of a type the receiver does not keep
    /// (section 7) are not offered: each is finished `notKept`, and the next one is offered.
    private mutating func offer(_ first: Int) -> [SenderAction] {
        var actions: [SenderAction] = []
        // Files before `nextFile` were offered or passed over already (a result that comes
        // after the next files were passed over, with pipelining, must not pass them over again).
        var i = max(first, nextFile)
        while i < files.count, let kept = welcome?.keptTypes, !kept.contains(files[i].type) {
            actions.append(.finished(file: i, .notKept(kept: kept)))
            i += 1
        }
        nextFile = i
        guard i < files.count else {
            if planning && !exhausted, let welcome {
                state = .awaitingPlan
                return actions + [.plan(welcome)]
            }
            // BYE never goes out while a result is owed.
            if !awaitingResults.isEmpty {
                state = .awaitingResult(file: awaitingResults.removeFirst())
                return actions
            }
            state = .closed
            return actions + [.send(.bye), .close]
        }
        let f = files[i]
        guard let sha256 = f.sha256 else {
            state = .awaitingHash(file: i)
            return actions + [.hash(file: i)]
        }
        state = .awaitingAnswer(file: i)
        return actions + [
            .send(
                .offer(
                    Offer(name: f.name, size: f.size, sha256: sha256, mediaType: f.type.mediaType, modified: f.modified)
                ))
        ]
    }

    /// Whether a file from `i` on is of a type the receiver keeps: one more OFFER will go out.
    private func hasOfferable(from i: Int) -> Bool {
        guard i < files.count else { return false }
        guard let kept = welcome?.keptTypes else { return true }
        return files[i...].contains { kept.contains($0.type) }
    }

    /// Sends chunks while the window allows, then DONE once all are acknowledged.
    private mutating func fillWindow() -> [SenderAction] {
        guard case .sending(let i, var next, var outstanding) = state else { return [] }
        let size = files[i].size
        var actions: [SenderAction] = []
        while outstanding.count < window && next < size {
            let length = Int(min(Int64(chunkSize), size - next))
            actions.append(.sendChunk(file: i, offset: next, length: length))
            outstanding.append(length)
            next += Int64(length)
        }
        if outstanding.isEmpty && next == size {
            actions.append(.send(.done))
            // A planning session that may get more files asks for them now, so the next OFFER
            // can follow DONE at once.
            if pipelining && (hasOfferable(from: i + 1) || (planning && !exhausted)) {
                awaitingResults.append(i)
                actions += offer(i + 1)
            } else {
                // Nothing more to offer: wait for every owed result, oldest first (more than
                // this one only with `lateAnswers`).
                awaitingResults.append(i)
                state = .awaitingResult(file: awaitingResults.removeFirst())
            }
        } else {
            state = .sending(file: i, next: next, outstanding: outstanding)
        }
        return actions
    }

    private mutating func fail(_ v: ProtocolViolation) -> [SenderAction] {
        state = .closed
        return [.send(.error(Problem(v.code, v.message))), .protocolError(v), .close]
    }
}
