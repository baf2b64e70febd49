import PTKProtocol
import PTKSystem
import PTKTransport
import PTKVocabulary

/// How ptk-send runs a session.
public struct SendOptions: Sendable {
    /// The name sent in HELLO.
    public var name: String
    /// The window asked for (the receiver may grant less).
    public var window: Int
    /// Seconds to wait for the receiver (connecting, and each answer).
    public var timeout: Duration
    /// Chunks are sent from a memory map of the file; false reads them into a buffer, which is
    /// also what happens to a file that cannot be mapped.
    public var mapFiles: Bool
    /// Names carry folders ("2024/summer/IMG_1.jpg"), announced as HELLO.features `folders`
    /// (`--keep-folders`).
    public var keepFolders: Bool

    /// Defaults: the host's name, window 64, 30 seconds, mapped files, flat names.
    public init(
        name: String = hostName(), window: Int = 64, timeout: Duration = .seconds(30), mapFiles: Bool = true,
        keepFolders: Bool = false
    ) {
        self.name = name
        self.window = window
        self.timeout = timeout
        self.mapFiles = mapFiles
        self.keepFolders = keepFolders
    }

    /// What HELLO.features announces: `held` and `lateAnswers` always (the session takes a
    /// file's SAVED/FAILED after later answers, so the receiver can flush a session's photos in
    /// one round: issue 46), `folders` with `keepFolders`.
    public var features: [ProtocolFeature] { keepFolders ? [.held, .lateAnswers, .folders] : [.held, .lateAnswers] }
}

/// What the sender tells its progress display.
public enum SendProgress: Sendable {
    /// Connected to `address`; the receiver is called `receiverName`.
    case connected(address: String, receiverName: String)
    /// File `file` starts at byte `offset` (non-zero when resuming).
    case started(file: Int, offset: Int64)
    /// `bytes` more bytes of file `file` were acknowledged.
    case acknowledged(file: Int, bytes: Int)
    /// File `file` is finished.
    case finished(file: Int, FileOutcome)
    /// The receiver is busy: the call waits for its turn, `pause` before it asks again.
    /// `ahead` is how many senders wait before this one, when the receiver says.
    case waiting(ahead: Int?, pause: Duration)
}

/// Why a session failed as a whole.
public enum SendFailure: Error, Sendable, CustomStringConvertible {
    /// No address could be connected to.
    case unreachable(String)
    /// The receiver answered ERROR.
    case remoteError(Problem)
    /// The receiver broke the protocol or is not a ptk receiver.
    case protocolError(String)
    /// The receiver went silent or closed the connection.
    case connectionLost(String)
    /// A local file could not be read while sending.
    case localFile(String)
    /// The receiver answered a TLS handshake in plaintext (it needs `--plaintext`).
    case notTLS(String)
    /// The TLS handshake failed, or the receiver has no device identity.
    case tlsFailed(String)
    /// The receiver's device ID is not the one expected: the session stopped before HELLO.
    case identityMismatch(expected: ExpectedReceiver, presented: DeviceID)

    /// The line ptk-send prints for the failure, with the fix where there is one.
    public var description: String {
        switch self {
        case .unreachable(let s): return s
        case .remoteError(let p): return "the receiver answered ERROR \(p)"
        case .protocolError(let s): return "the peer does not speak ptk protocol v1 correctly: \(s)"
        case .connectionLost(let s): return s
        case .localFile(let s): return s
        case .notTLS(let s): return s + "; if it is a ptkd that predates TLS, send with --plaintext"
        case .tlsFailed(let s): return s
        case .identityMismatch(let expected, let presented):
            return "the receiver's device ID is \(presented), but \(expected.source) says \(expected.id)"
        }
    }
}

/// Which of its files a session sends.
public enum SessionFiles {
    /// These indices into the files, in this order.
    case fixed([Int])
    /// The indices the closure returns once the receiver's WELCOME came (it says how many
    /// sessions the receiver serves at once), and again each time the session has offered all it
    /// was given, until the closure returns none: sessions of one call take their files from one list.
    case pulled((Welcome) -> [Int])
}

/// Sends files in one session, driving the pure `SenderSession` over a connection.
public final class Sender {
    /// Every file of the call; the session sends those `plan` picks. Progress and `outcomes`
    /// use indices into this array.
    public let files: [LocalFile]
    /// How the session runs, the same for every session of a call.
    public let options: SendOptions
    private let plan: SessionFiles
    private let progress: (SendProgress) -> Void
    /// Outcomes of the files finished so far, by index.
    public private(set) var outcomes: [Int: FileOutcome] = [:]
    /// Hashes the files the session may send (the call's, shared by its sessions; or the
    /// session's own, made at init).
    private let hashes: HashAhead
    /// The session's own hasher, which it stops when it ends.
    private let ownsHashes: Bool

    /// Sends all of `files`, in order.
    public convenience init(
        files: [LocalFile], options: SendOptions, progress: @escaping (SendProgress) -> Void = { _ in }
    ) {
        self.init(files: files, plan: .fixed(Array(files.indices)), options: options, progress: progress)
    }

    /// Sends the files of `files` that `plan` picks.
    public convenience init(
        files: [LocalFile], plan: SessionFiles, options: SendOptions,
        progress: @escaping (SendProgress) -> Void = { _ in }
    ) {
        self.init(files: files, plan: plan, options: options, hashes: nil, progress: progress)
    }

    /// `hashes`, when given, hashes every file `plan` may pick (`Delivery` shares one among its sessions).
    init(
        files: [LocalFile], plan: SessionFiles, options: SendOptions, hashes: HashAhead?,
        progress: @escaping (SendProgress) -> Void
    ) {
        self.files = files
        self.plan = plan
        self.options = options
        self.progress = progress
        ownsHashes = hashes == nil
        if let hashes {
            self.hashes = hashes
        } else if case .fixed(let indices) = plan {
            self.hashes = HashAhead(files, order: indices)
        } else {
            self.hashes = HashAhead(files)
        }
    }

    /// Connects with `connect` and runs the session over the connection.
    public func run(_ connect: Connector) throws(SendFailure) {
        let (stream, peer) = try connect()
        try run(stream: stream, peer: peer)
    }

    /// Runs the whole session over `stream`; returns when BYE is sent or the session failed.
    public func run(stream: ByteStream, peer: String) throws(SendFailure) {
        let connection = FramedConnection(stream: stream, timeout: options.timeout)
        defer { connection.close() }
        // The session's files, as indices into `files`; the state machine counts from 0 in this list.
        var order: [Int] = []
        defer { if ownsHashes { hashes.cancel() } }
        /// Takes `indices` as the session's next files: returns them as offered.
        func take(_ indices: [Int]) -> [OutgoingFile] {
            order += indices
            return indices.map {
                OutgoingFile(
                    name: files[$0].name, size: files[$0].size, modified: files[$0].modified?.milliseconds,
                    type: files[$0].type)
            }
        }
        var machine: SenderSession
        switch plan {
        case .fixed(let indices):
            machine = SenderSession(
                name: options.name, window: options.window, files: take(indices), features: options.features)
        case .pulled:
            machine = .planningAfterWelcome(name: options.name, window: options.window, features: options.features)
        }
        var openFile: (index: Int, fd: FileDescriptor, map: MappedFile?)?
        defer { openFile?.fd.close() }
        // Only for a file that cannot be mapped; grown on first use.
        var chunkBuffer: [UInt8] = []

        var event = SenderEvent.start
        while true {
            var answer: SenderEvent?
            for action in machine.handle(event) {
                switch action {
                case .plan(let welcome):
                    guard case .pulled(let choose) = plan else { preconditionFailure("only a planning session asks") }
                    answer = .planned(take(choose(welcome)))
                case .hash(let index):
                    // What is queued (DONE of the file before) must not wait for this hash.
                    if !hashes.isReady(order[index]) {
                        do { try connection.flush() } catch { throw lost(error, machine) }
                    }
                    do { answer = .hashed(file: index, sha256: try hashes.sha256(of: order[index])) } catch {
                        throw .localFile("\(error)")
                    }
                case .send(let frame):
                    // DONE and the next OFFER leave in one write, when the session next waits.
                    connection.enqueue(frame)
                case .sendChunk(let index, let offset, let length):
                    let path = files[order[index]].path
                    if openFile?.index != index {
                        openFile?.fd.close()
                        openFile = nil
                        do {
                            let fd = try files[order[index]].open()
                            // A file that cannot be mapped is read chunk by chunk instead (the same bytes).
                            openFile = (
                                index, fd,
                                options.mapFiles ? try? MappedFile(fd, length: Int(files[order[index]].size)) : nil
                            )
                        } catch {
                            throw .localFile("\(path): \(error.reason)")
                        }
                    }
                    let fd = openFile!.fd
                    if let map = openFile!.map {
                        // Straight from the mapped file: one copy, into the socket (plaintext), or
                        // none before TLS encrypts it.
                        do throws(SystemError) { try map.prepare(Int(offset)..<Int(offset) + length) } catch {
                            throw .localFile(
                                "\(path): the file changed or could not be read while sending (\(error.reason))")
                        }
                        do throws(TransportError) {
                            try map.withBytes(in: Int(offset)..<Int(offset) + length) {
                                (payload) throws(TransportError) in
                                try connection.sendChunk(payload: payload)
                            }
                        } catch {
                            throw lost(error, machine)
                        }
                        break
                    }
                    // Not mappable (a file system without mmap): read it into the buffer.
                    if chunkBuffer.count < ProtocolLimits.headerSize + length {
                        chunkBuffer = [UInt8](repeating: 0, count: ProtocolLimits.headerSize + length)
                    }
                    let result = chunkBuffer.withUnsafeMutableBytes { buf -> Result<Void, SendFailure> in
                        // The 5-byte header in place, so each chunk goes out in one write with no allocation.
                        buf[0] = FrameType.chunk.rawValue
                        withUnsafeBytes(of: UInt32(length).bigEndian) { buf[1..<5].copyBytes(from: $0) }
                        var got = 0
                        while got < length {
                            let dst = UnsafeMutableRawBufferPointer(
                                rebasing: buf[(ProtocolLimits.headerSize + got)..<(ProtocolLimits.headerSize + length)])
                            // A read that fails is reported as the file's failure just below, by the short count.
                            guard let n = try? fd.read(fromAbsoluteOffset: offset + Int64(got), into: dst), n > 0 else {
                                return .failure(
                                    .localFile("\(path): the file changed or could not be read while sending"))
                            }
                            got += n
                        }
                        do throws(TransportError) {
                            try connection.writeRaw(
                                UnsafeRawBufferPointer(rebasing: buf[..<(ProtocolLimits.headerSize + length)]))
                        } catch {
                            return .failure(lost(error, machine))
                        }
                        return .success(())
                    }
                    try result.get()
                case .started(let file, let offset):
                    progress(.started(file: order[file], offset: offset))
                case .acknowledged(let file, let bytes):
                    progress(.acknowledged(file: order[file], bytes: bytes))
                case .finished(let file, let outcome):
                    outcomes[order[file]] = outcome
                    if openFile?.index == file {
                        openFile?.fd.close()
                        openFile = nil
                    }
                    progress(.finished(file: order[file], outcome))
                case .close:
                    return
                case .remoteError(let problem):
                    throw .remoteError(problem)
                case .protocolError(let violation):
                    throw .protocolError(violation.description)
                }
            }
            if let answer {
                event = answer
                continue
            }
            let frame: Frame?
            do { frame = try connection.receive() } catch {
                guard case .violation(let v) = error else { throw lost(error, machine) }
                event = .violation(v)
                continue
            }
            guard let frame else { throw .connectionLost("the receiver closed the connection") }
            if case .welcome(let w) = frame {
                progress(.connected(address: peer, receiverName: w.name))
                // Files of a type the receiver does not keep are never offered: not hashed either.
                let kept = w.keptTypes
                let types = files.map(\.type)
                hashes.passOver { !kept.contains(types[$0]) }
            }
            event = .frame(frame)
        }
    }

    private func lost(_ error: TransportError, _ machine: SenderSession) -> SendFailure {
        switch error {
        case .timedOut: return .connectionLost("the receiver sent nothing for \(formatSeconds(options.timeout))")
        case .peerClosed: return .connectionLost("the receiver closed the connection")
        case .violation(let v): return .protocolError(v.description)
        case .interrupted: return .connectionLost("interrupted")
        case .system(let e): return .connectionLost(e.description)
        case .tls(let m): return .connectionLost("TLS: \(m)")
        case .notTLS(let m): return .notTLS(m)
        }
    }
}
