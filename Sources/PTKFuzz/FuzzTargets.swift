import PTKProtocol
import PTKStore
import PTKVocabulary

/// Fuzz entry points shared by the libFuzzer executables and the corpus replay test. Each
/// must return normally for every input: a crash, trap or sanitizer report is a finding.
public enum FuzzTargets {
    /// Feeds arbitrary bytes to the frame decoder, in pieces whose sizes come from the input,
    /// and every decoded frame to a receiver state machine, answering its actions the way a
    /// well-behaved driver would.
    public static func frames(_ data: UnsafeRawBufferPointer) {
        guard data.count > 0 else { return }
        let step = Int(data[0] % 64) + 1
        let bytes = UnsafeRawBufferPointer(rebasing: data[1...])
        var decoder = FrameDecoder(chunkSize: ProtocolLimits.chunkSize)
        var machine = ReceiverSession(settings: ReceiverSettings(name: "fuzz", window: 4, maxFileSize: 1 << 20))
        var i = 0
        var steps = 0
        while i < bytes.count && machine.state != .closed {
            let end = min(i + step, bytes.count)
            decoder.append(UnsafeRawBufferPointer(rebasing: bytes[i..<end]))
            i = end
            while machine.state != .closed {
                let event: ReceiverEvent
                do {
                    guard let frame = try decoder.next() else { break }
                    event = .frame(frame)
                } catch {
                    event = .violation(error)
                }
                drive(&machine, event, &steps)
            }
            precondition(
                decoder.bufferedCount <= ProtocolLimits.chunkSize + ProtocolLimits.headerSize + step,
                "decoder buffered more than one frame")
        }
        if machine.state != .closed { drive(&machine, .peerClosed, &steps) }
        precondition(machine.state == .closed)
    }

    private static func drive(_ machine: inout ReceiverSession, _ first: ReceiverEvent, _ steps: inout Int) {
        var pending = [first]
        // Late answers, in the order owed, reported once the event's actions are done (a round
        // that ends between frames).
        var owed: [ReceiverEvent] = []
        while !pending.isEmpty || !owed.isEmpty {
            if pending.isEmpty { pending.append(owed.removeFirst()) }
            steps += 1
            precondition(steps < 1_000_000, "state machine does not settle")
            for action in machine.handle(pending.removeFirst()) {
                switch action {
                case .evaluateOffer(let o):
                    pending.append(
                        o.size % 3 == 0
                            ? .offerDecided(.reject(Problem(.noSpace, ""))) : .offerDecided(.accept(offset: 0)))
                case .writeChunk(let bytes):
                    pending.append(bytes.first == 0xFF ? .chunkFailed(Problem(.ioError, "")) : .chunkWritten)
                case .finishFile:
                    pending.append(.fileFinished(.failure(StoreFailure(.hashMismatch, ""))))
                case .finishFileLater:
                    owed.append(.fileFinished(.success(Saved(name: "p.png", size: 1, sha256: ""))))
                case .owe(let result):
                    owed.append(.fileFinished(result))
                case .drainOwed:
                    owed.removeAll()
                case .send, .abandonFile, .close, .recordRefusedSender:
                    break
                }
            }
        }
    }

    /// Runs the streaming PNG check over arbitrary bytes, fed in pieces whose sizes come from
    /// the input, and checks it agrees with a whole-buffer run.
    public static func png(_ data: UnsafeRawBufferPointer) {
        agreesHoweverSplit(data, "PNG") { PNGValidator(totalSize: $0) }
    }

    /// Runs a streaming structure check over the input after its first byte, whole and in
    /// pieces of that byte's value + 1: both runs must come to the same verdict.
    static func agreesHoweverSplit<Check: FormatCheck>(
        _ data: UnsafeRawBufferPointer, _ format: String, _ make: (Int64) -> Check
    ) {
        guard data.count > 0 else { return }
        let step = Int(data[0]) + 1
        let bytes = UnsafeRawBufferPointer(rebasing: data[1...])
        func passes(pieceSize: Int) -> Bool {
            var check = make(Int64(bytes.count))
            do throws(FormatError) {
                var i = 0
                while i < bytes.count {
                    let end = min(i + pieceSize, bytes.count)
                    try check.feed(UnsafeRawBufferPointer(rebasing: bytes[i..<end]))
                    i = end
                }
                try check.finish()
                return true
            } catch { return false }
        }
        precondition(
            passes(pieceSize: max(1, bytes.count)) == passes(pieceSize: step),
            "\(format) check depends on how the bytes are split")
    }
}
