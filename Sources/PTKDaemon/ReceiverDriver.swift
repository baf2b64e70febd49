import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTransport
import PTKTrust

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

    /// HELLO must arrive by then.
    private let handshakeDeadline: Instant

    /// `peer` is the sender's address; `sender` who the transport says it is (every log line
    /// names it); `trust` records refused devices (nil: not recorded).
    init(id: Int, connection: FramedConnection, peer: SocketAddress, sender: SenderCredentials = .plaintext, store: PhotoStore,
         trust: TrustStore? = nil, arrivals: Arrivals? = nil, settings: ReceiverSettings, shutdown: ShutdownSignal, handshakeDeadline: Instant) {
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
            let event = pending.isEmpty ? nextEvent() : pending.removeFirst()
            if case .frame(.offer(let offer)) = event { lastOffer = offer }
            for action in machine.handle(event) {
                if let follow = perform(action) { pending.append(follow) }
            }
        }
        file?.abandon(keepForResume: true)
        let seconds = (Instant.now - started).seconds
        Log.info("session \(id) from \(peer): \(endReason) after \(formatDecimal(seconds)) s, \(saved) photo(s) saved, \(formatBytes(Double(savedBytes)))")
    }

    private func nextEvent() -> ReceiverEvent {
        if shutdown.isRequested { return .shutdown }
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
                return .offerDecided(.reject(failure.problem))
            }
        case .writeChunk(let bytes):
            guard let file else { return .chunkFailed(Problem(.ioError, "no open file")) }
            do { try file.append(bytes) } catch { return .chunkFailed(error.problem) }
            return .chunkWritten
        case .finishFile:
            guard let file else { return .fileFinished(.failure(FileFailure(.ioError, "no open file"))) }
            self.file = nil
            return .fileFinished(file.finish())
        case .abandonFile(let keep):
            file?.abandon(keepForResume: keep)
            file = nil
            return nil
        case .recordRefusedSender(let deviceID, let name):
            do { try trust?.recordAttempt(id: deviceID, name: name, address: address) } catch {
                Log.warning("session \(id) from \(peer): cannot record the refused device in \(trust?.pendingFile ?? "the pending list"): \(error)")
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
            let seconds = max((Instant.now - fileStarted).seconds, 1e-6)
            saved += 1
            if s.isDuplicate {
                Log.info("session \(id) from \(peer): \(currentOfferName) is already kept as \(quotedForTerminal(s.name)); nothing new stored")
            } else {
                savedBytes += s.size
                Log.info("session \(id) from \(peer): saved \(quotedForTerminal(s.name)), \(formatBytes(Double(s.size))) in \(formatDecimal(seconds)) s (\(formatBytes(Double(s.size) / seconds))/s)")
            }
            // Before SAVED goes out (it is sent when the session next waits for the peer): the
            // library and the hook take it from here, without delaying it.
            var deviceID: String? = nil
            if case .tls(let id?, _) = sender { deviceID = id.description }
            let type = lastOffer.flatMap { PhotoType(mediaType: $0.mediaType) } ?? .png
            arrivals?.saved(s, type: type, from: senderInfo, deviceID: deviceID)
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

extension StoreRequest {
    /// The store's request for a protocol v1 OFFER from `sender`, or the REJECT an offer of a
    /// type the store does not keep gets.
    static func of(_ offer: Offer, sender: String?) -> Result<StoreRequest, FileFailure> {
        guard let type = PhotoType(mediaType: offer.mediaType) else {
            return .failure(FileFailure(.notPNG, "\(offer.mediaType) is not a type the store keeps (\(PhotoType.allCases.map(\.mediaType).joined(separator: ", ")))"))
        }
        return .success(StoreRequest(name: offer.name, size: offer.size, sha256: offer.sha256, type: type, sender: sender, modified: offer.modified))
    }
}
