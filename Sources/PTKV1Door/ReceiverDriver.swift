import PTKDoor
import PTKLog
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTransport
import PTKTrust
import PTKVocabulary

/// Runs one receiver session on its own thread: reads frames, feeds the pure
/// `ReceiverSession`, and performs its actions against the connection and the store.
final class ReceiverDriver {
    private let id: Int
    private let connection: FramedConnection
    private let peer: String
    private let address: String
    private let sender: SenderCredentials
    private let store: PhotoStore
    private let trust: TrustStore?
    private let arrivals: Arrivals?
    private let shutdown: ShutdownSignal
    private var machine: ReceiverSession
    private var file: IncomingFile?
    private var fileStarted = Instant.now
    private var saved = 0
    private var savedBytes: Int64 = 0
    private var sentError: Problem?
    private var endReason = "ended"
    private var lastOffer: Offer?
    /// Answers owed to DONEs (late answers), in the order owed: each photo's flush round ticket,
    /// and what its log line names.
    private var owedAnswers: [OwedAnswer] = []
    /// Made readable by a flush round that answers one of `owedAnswers` (made at the first).
    private var wake: WakePipe?

    private struct OwedAnswer {
        var file: IncomingFile?
        var ticket: FlushTicket
        var offer: Offer?
        var started: Instant
        /// It holds one of the store's `lateFinishes` (given back when answered). A photo in a
        /// round without one is waited for before the session reads on.
        var slot = false
    }

    /// Run as the session is about to wait for its peer or an owed answer, with the oldest owed
    /// answer's ticket (the tests' seam, to end that round at that moment).
    var beforeWaitingForPeer: ((FlushTicket?) -> Void)?

    /// Most answers one session may owe: further frames are read once the oldest is given.
    static let maxOwed = 64

    /// HELLO must arrive by then.
    private let handshakeDeadline: Instant

    /// `peer` is the sender's address; `sender` who the transport says it is (every log line
    /// names it); `trust` records refused devices (nil: not recorded).
    init(
        id: Int, connection: FramedConnection, peer: SocketAddress, sender: SenderCredentials = .plaintext,
        store: PhotoStore,
        trust: TrustStore? = nil, arrivals: Arrivals? = nil, settings: ReceiverSettings, shutdown: ShutdownSignal,
        handshakeDeadline: Instant
    ) {
        self.handshakeDeadline = handshakeDeadline
        self.id = id
        self.connection = connection
        self.address = peer.description
        self.peer = "\(peer) (\(sender.logText))"
        self.sender = sender
        self.store = store
        self.trust = trust
        self.arrivals = arrivals
        self.shutdown = shutdown
        self.machine = ReceiverSession(settings: settings, sender: sender)
    }

    /// Serves the session until it ends; closes the connection.
    func run() {
        let started = Instant.now
        Log.info("session \(id) from \(peer): started")
        var pending: [ReceiverEvent] = []
        while machine.state != .closed {
            if pending.isEmpty, let answer = nextOwedAnswer(waiting: mustAnswerBeforeReading) {
                answerOwed(answer)
                continue
            }
            // Nil: an owed answer came due while the session waited; it goes first.
            guard let event = pending.isEmpty ? nextEvent() : pending.removeFirst() else { continue }
            if case .frame(.offer(let offer)) = event { lastOffer = offer }
            for action in machine.handle(event) {
                if let follow = perform(action) { pending.append(follow) }
            }
        }
        // Photos still in a round are the round's until it answers (they are published or not
        // whatever happens to the session); one published is recorded though its answer cannot
        // go out (the sender closed after DONE, sent ERROR, or timed out waiting for SAVED).
        while let answer = nextOwedAnswer(waiting: true) { recordUnanswered(answer) }
        file?.abandon(keepForResume: true)
        let seconds = (Instant.now - started).seconds
        Log.info(
            "session \(id) from \(peer): \(endReason) after \(formatDecimal(seconds)) s, \(saved) photo(s) saved, \(formatBytes(Double(savedBytes)))"
        )
    }

    /// The session must not read on: BYE came and answers are owed, or it owes the most it may.
    private var mustAnswerBeforeReading: Bool {
        guard !owedAnswers.isEmpty else { return false }
        if case .draining = machine.state { return true }
        if wake == nil { return true }
        // The store's budget of open files for late answers was spent: wait for this photo.
        if owedAnswers.contains(where: { $0.file != nil && !$0.slot }) { return true }
        return owedAnswers.count >= Self.maxOwed
    }

    /// The oldest owed answer, taken off the list, once its round is over (waiting for it when
    /// `waiting`); nil when none is owed or it is not over.
    private func nextOwedAnswer(waiting: Bool) -> (OwedAnswer, Result<StoredPhoto, StoreFailure>)? {
        guard let head = owedAnswers.first, waiting || head.ticket.result != nil else { return nil }
        owedAnswers.removeFirst()
        let result = head.file.map { $0.conclude(head.ticket) } ?? head.ticket.wait()
        if head.slot { store.lateFinishes.give() }
        return (head, result)
    }

    /// Performs `action` with the log naming `owed`'s photo rather than the current one.
    private func perform(_ action: ReceiverAction, about owed: OwedAnswer) {
        let (current, currentStarted) = (lastOffer, fileStarted)
        (lastOffer, fileStarted) = (owed.offer, owed.started)
        // An owed answer's actions are sends: none asks for a follow-up event.
        _ = perform(action)
        (lastOffer, fileStarted) = (current, currentStarted)
    }

    /// Gives the machine an owed answer; its log line names that answer's photo (a held FAILED
    /// that follows it is the current file's). A session that has ended sends nothing, but the
    /// photo is recorded all the same.
    private func answerOwed(_ owed: (OwedAnswer, Result<StoredPhoto, StoreFailure>)) {
        let actions = machine.state == .closed ? [] : machine.handle(.fileFinished(owed.1.map(Saved.init)))
        guard let first = actions.first, case .send(let frame) = first, frame.answersFile else {
            recordUnanswered(owed)
            for action in actions { _ = perform(action) }
            return
        }
        perform(first, about: owed.0)
        // The rest are sends and close: none asks for a follow-up event.
        for action in actions.dropFirst() { _ = perform(action) }
    }

    /// An owed answer that cannot go out: the photo it is about goes to the library, the held
    /// index and the hook as if SAVED had been sent (it is published), and the log says so.
    private func recordUnanswered(_ owed: (OwedAnswer, Result<StoredPhoto, StoreFailure>)) {
        let (current, currentStarted) = (lastOffer, fileStarted)
        (lastOffer, fileStarted) = (owed.0.offer, owed.0.started)
        defer { (lastOffer, fileStarted) = (current, currentStarted) }
        switch owed.1 {
        case .success(let saved): record(saved, answered: false)
        case .failure(let failure):
            Log.info(
                "session \(id) from \(peer): failed \(currentOfferName): \(Problem(failure)) (not answered: the session had ended)"
            )
        }
    }

    /// While answers are owed and nothing of the peer is buffered: waits until the peer's bytes
    /// arrive or the oldest owed answer's round is over, whichever is first (the answers leave
    /// when their round ends, not when the peer next sends). True when an answer came due. The
    /// idle timeout does not run meanwhile: a peer silent while its answer is owed (ptk-send at
    /// its last photo) waits for the receiver, and a round longer than the timeout must not end
    /// its session with ERROR timeout (it counts from the answer, in the read that follows).
    private func waitForPeerOrAnswer() -> Bool {
        beforeWaitingForPeer?(owedAnswers.first?.ticket)
        guard let head = owedAnswers.first else { return false }
        // Its round may have ended since the session last looked: the answer goes now (reading
        // on instead would wait for a sender that waits for this answer).
        if head.ticket.result != nil { return true }
        guard let wake, !connection.hasInputWaiting, let socket = connection.stream.readinessDescriptor else {
            return false
        }
        // A write that fails ends writing on the connection for good (FramedConnection): the
        // read that follows fails with it, and the session ends (its photos recorded).
        try? connection.flush()
        while head.ticket.result == nil && !shutdown.isRequested {
            // A poll that fails (never expected) falls back to reading as before. Each wait is
            // bounded (the round's result is looked at again), though the round wakes it.
            guard
                let revents = try? poll(
                    [(socket, .readable), (wake.readEnd, .readable), (shutdown.pipe.readEnd, .readable)],
                    until: .now + connection.timeout)
            else { return false }
            wake.drain()
            if !revents[0].isEmpty || !revents[2].isEmpty { break }
        }
        return head.ticket.result != nil
    }

    /// The next event; nil when an owed answer came due first.
    private func nextEvent() -> ReceiverEvent? {
        if shutdown.isRequested { return .shutdown }
        if waitForPeerOrAnswer() { return nil }
        do {
            let deadline = machine.state == .awaitingHello ? handshakeDeadline : nil
            guard let frame = try connection.receive(deadline: deadline) else { return .peerClosed }
            return .frame(frame)
        } catch {
            switch error {
            case .timedOut: return .timedOut
            case .interrupted: return .shutdown
            case .violation(let v): return .violation(v)
            case .peerClosed: return .peerClosed
            case .system(let e):
                endReason = "connection failed (\(e))"
                return .peerClosed
            case .tls(let m), .notTLS(let m):
                endReason = "TLS failed (\(m))"
                return .peerClosed
            }
        }
    }

    private func perform(_ action: ReceiverAction) -> ReceiverEvent? {
        switch action {
        case .send(let frame):
            log(sending: frame)
            // Answers go out together when the session next waits for the peer (FramedConnection);
            // a peer that has gone shows as a failed read or write there.
            connection.enqueue(frame)
            return nil
        case .evaluateOffer(let offer):
            // The same bytes in a round still (late answers): answered first, so the lookup
            // below finds them kept, as it would have in order.
            if arrivals?.held != nil,
                owedAnswers.contains(where: { $0.offer?.sha256 == offer.sha256 && $0.offer?.size == offer.size })
            {
                while let owed = nextOwedAnswer(waiting: true) { answerOwed(owed) }
            }
            // The same bytes kept already: nothing moves, for a sender that takes it (section 7).
            if machine.peerTakesHeld, let name = arrivals?.heldPhoto(sha256: offer.sha256, size: offer.size) {
                fileStarted = .now
                return .offerDecided(.held(Saved(name: name, size: offer.size, sha256: offer.sha256)))
            }
            var folder = arrivals?.folder(for: senderInfo) ?? ""
            // The sender's own folders, below the layout's (ptk's "folders" addition).
            if machine.peerKeepsFolders { folder = StoreRequest.folder(folder, adding: offer.name) }
            let request = StoreRequest.of(offer, sender: machine.peerName).map { request -> StoreRequest in
                var r = request
                r.folder = folder
                r.wholeResumable = machine.peerTakesHeld
                return r
            }
            switch request.flatMap({ store.begin($0) }) {
            case .success(let incoming):
                file = incoming
                fileStarted = .now
                return .offerDecided(.accept(offset: incoming.offset))
            case .failure(let failure):
                return .offerDecided(.reject(Problem(failure)))
            }
        case .writeChunk(let bytes):
            guard let file else { return .chunkFailed(Problem(.ioError, "no open file")) }
            do { try file.append(bytes) } catch { return .chunkFailed(Problem(error)) }
            return .chunkWritten
        case .finishFile:
            guard let file else { return .fileFinished(.failure(StoreFailure(.io, "no open file"))) }
            self.file = nil
            return .fileFinished(file.finish().map(Saved.init))
        case .finishFileLater:
            guard let file else {
                owedAnswers.append(
                    OwedAnswer(
                        ticket: FlushTicket(.failure(StoreFailure(.io, "no open file"))), offer: lastOffer,
                        started: fileStarted))
                return nil
            }
            self.file = nil
            // None (out of descriptors): the session waits for each answer before it reads on.
            if wake == nil { wake = try? WakePipe() }
            var notify: (@Sendable () -> Void)? = nil
            if let pipe = wake { notify = { pipe.signal() } }
            let ticket = file.startFinishing(notify: notify, owner: id)
            owedAnswers.append(
                OwedAnswer(
                    file: file, ticket: ticket, offer: lastOffer, started: fileStarted,
                    slot: ticket.result == nil && store.lateFinishes.tryTake()))
            return nil
        case .drainOwed:
            // The session ends with an ERROR: every owed answer goes first, in order, as far as
            // the connection still takes it (the photos are published or not either way).
            while let owed = nextOwedAnswer(waiting: true) {
                switch owed.1 {
                case .success(let saved): perform(.send(.saved(Saved(saved))), about: owed.0)
                case .failure(let failure): perform(.send(.failed(Problem(failure))), about: owed.0)
                }
            }
            return nil
        case .owe(let result):
            owedAnswers.append(
                OwedAnswer(ticket: FlushTicket(result.map(StoredPhoto.init)), offer: lastOffer, started: fileStarted))
            return nil
        case .abandonFile(let keep):
            file?.abandon(keepForResume: keep)
            file = nil
            return nil
        case .recordRefusedSender(let deviceID, let name):
            do { try trust?.recordAttempt(id: deviceID, name: name, address: address) } catch {
                Log.warning(
                    "session \(id) from \(peer): cannot record the refused device in \(trust?.pendingFile ?? "the pending list"): \(error)"
                )
            }
            return nil
        case .close:
            if let sentError {
                endReason = "ended with ERROR \(sentError)"
                connection.closeGracefully(linger: shutdown.isRequested ? .milliseconds(500) : .seconds(2))
            } else {
                connection.close()
            }
            return nil
        }
    }

    private func log(sending frame: Frame) {
        switch frame {
        case .saved(let s):
            // Before SAVED goes out (it is sent when the session next waits for the peer): the
            // library and the hook take it from here, without delaying it.
            record(StoredPhoto(s), answered: true)
        case .reject(let p):
            Log.info("session \(id) from \(peer): refused \(currentOfferName): \(p)")
        case .failed(let p):
            Log.info("session \(id) from \(peer): failed \(currentOfferName): \(p)")
        case .error(let p):
            sentError = p
        default:
            break
        }
    }

    /// A photo saved (or found held): logged, counted, and handed to the library, the held
    /// index and the hook. `answered`: its SAVED goes out; else the session ended before.
    private func record(_ s: StoredPhoto, answered: Bool) {
        let seconds = max((Instant.now - fileStarted).seconds, 1e-6)
        let unanswered = answered ? "" : " (not answered: the session had ended)"
        saved += 1
        if s.isDuplicate {
            Log.info(
                "session \(id) from \(peer): \(currentOfferName) is already kept as \(quotedForTerminal(s.name)); nothing new stored\(unanswered)"
            )
        } else {
            savedBytes += s.size
            Log.info(
                "session \(id) from \(peer): saved \(quotedForTerminal(s.name)), \(formatBytes(Double(s.size))) in \(formatDecimal(seconds)) s (\(formatBytes(Double(s.size) / seconds))/s)\(unanswered)"
            )
        }
        var deviceID: String? = nil
        if case .tls(let id?, _) = sender { deviceID = id.description }
        let type = lastOffer.flatMap { PhotoType(mediaType: $0.mediaType) } ?? .png
        arrivals?.saved(s, type: type, from: senderInfo, deviceID: deviceID)
    }

    /// The sender as the layout and the hook see it.
    private var senderInfo: Sender {
        var id: SenderID? = nil
        if case .tls(let device?, _) = sender { id = .device(device) }
        return Sender(announcedName: machine.peerName, id: id, address: address)
    }

    private var currentOfferName: String {
        guard let o = lastOffer else { return "the offer" }
        return "\(quotedForTerminal(o.name)) (\(formatBytes(Double(o.size))))"
    }
}

extension Frame {
    /// SAVED or FAILED: a file's answer.
    fileprivate var answersFile: Bool {
        switch self {
        case .saved, .failed: return true
        default: return false
        }
    }
}

extension StoreRequest {
    /// The store's request for a protocol v1 OFFER from `sender`, or the REJECT an offer of a
    /// type the store does not keep gets.
    static func of(_ offer: Offer, sender: String?) -> Result<StoreRequest, StoreFailure> {
        guard let type = PhotoType(mediaType: offer.mediaType) else {
            return .failure(
                StoreFailure(
                    .typeNotKept,
                    "\(offer.mediaType) is not a type the store keeps (\(PhotoType.allCases.map(\.mediaType).joined(separator: ", ")))"
                ))
        }
        return .success(
            StoreRequest(
                name: offer.name, size: offer.size, sha256: offer.sha256, type: type, sender: sender,
                modified: offer.modified))
    }
}

extension Saved {
    /// SAVED for a photo the store took (`duplicate` is absent unless it was kept already).
    init(_ stored: StoredPhoto) {
        self.init(
            name: stored.name, size: stored.size, sha256: stored.sha256, duplicate: stored.isDuplicate ? true : nil)
    }
}

extension StoredPhoto {
    /// The photo a SAVED names, in the store's terms (for the library, the held index and the hook).
    init(_ saved: Saved) {
        self.init(name: saved.name, size: saved.size, sha256: saved.sha256, isDuplicate: saved.isDuplicate)
    }
}
