import FoundationEssentials

/// Turns frames into their wire bytes.
public enum FrameEncoder {
    /// Appends the 5-byte header of a frame of `type` with a `length`-byte payload.
    public static func appendHeader(type: FrameType, length: Int, to out: inout [UInt8]) {
        precondition(length >= 0 && length <= Int(UInt32.max))
        let n = UInt32(length)
        out.append(type.rawValue)
        out.append(UInt8(truncatingIfNeeded: n >> 24))
        out.append(UInt8(truncatingIfNeeded: n >> 16))
        out.append(UInt8(truncatingIfNeeded: n >> 8))
        out.append(UInt8(truncatingIfNeeded: n))
    }

    /// Appends the whole wire form of `frame` to `out`.
    public static func encode(_ frame: Frame, into out: inout [UInt8]) {
        let payload: [UInt8]
        switch frame {
        case .hello(let m): payload = json(m)
        case .welcome(let m): payload = json(m)
        case .offer(let m): payload = json(m)
        case .accept(let m): payload = json(m)
        case .reject(let m), .failed(let m), .error(let m): payload = json(m)
        case .saved(let m): payload = json(m)
        case .bye: payload = []
        case .ack: payload = ProtocolLimits.ackPayload
        case .done: payload = ProtocolLimits.donePayload
        case .chunk(let bytes):
            appendHeader(type: .chunk, length: bytes.count, to: &out)
            out.append(contentsOf: bytes)
            return
        }
        appendHeader(type: frame.type, length: payload.count, to: &out)
        out.append(contentsOf: payload)
    }

    /// The wire form of `frame`.
    public static func encode(_ frame: Frame) -> [UInt8] {
        var out: [UInt8] = []
        encode(frame, into: &out)
        return out
    }

    /// One encoder for every frame: creating one per frame cost more than the encoding.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private static func json<T: Encodable>(_ value: T) -> [UInt8] {
        // Encoding these plain structs of strings and integers cannot fail.
        guard let data = try? encoder.encode(value) else { preconditionFailure("JSON encoding failed") }
        var message = [UInt8](data)
        if message.count > ProtocolLimits.maxJSONPayload {
            // Only a pathological name could do this; never send a frame the peer must refuse.
            message = Array("{}".utf8)
        }
        return message
    }
}

/// An incremental frame decoder. Feed it bytes as they arrive; `next()` returns a frame once a
/// whole one is buffered, or nil when it needs more bytes. The length of each frame is checked
/// against its type's limit as soon as the 5-byte header is in, before any payload is awaited.
public struct FrameDecoder: Sendable {
    /// The CHUNK payload limit in force.
    public var chunkSize: Int
    private var buffer: [UInt8] = []
    private var start = 0

    /// A decoder that allows CHUNK payloads of up to `chunkSize` bytes.
    public init(chunkSize: Int = ProtocolLimits.chunkSize) {
        self.chunkSize = chunkSize
    }

    /// Bytes buffered and not yet returned as frames.
    public var bufferedCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes from raw memory.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// How many more bytes the frame being assembled needs, when that is known; the transport
    /// uses it to read no further than the current frame's limit allows.
    public func peekHeader() throws(ProtocolViolation) -> (type: FrameType, length: Int)? {
        guard bufferedCount >= ProtocolLimits.headerSize else { return nil }
        let code = buffer[start]
        guard let type = FrameType(rawValue: code) else {
            throw ProtocolViolation(.badFrame, "unknown frame type 0x\(String(code, radix: 16))")
        }
        var length = 0
        for i in 1...4 { length = length << 8 | Int(buffer[start + i]) }
        let limit = type.maxPayload(chunkSize: chunkSize)
        guard length <= limit else {
            throw ProtocolViolation(.frameTooLarge, "\(type) frame of \(length) bytes exceeds the limit of \(limit)")
        }
        return (type, length)
    }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(ProtocolViolation) -> Frame? {
        guard let (type, length) = try peekHeader() else { return nil }
        let payloadStart = start + ProtocolLimits.headerSize
        guard buffer.count - payloadStart >= length else { return nil }
        let payload = buffer[payloadStart..<payloadStart + length]
        let frame = try Self.parse(type: type, payload: payload)
        start = payloadStart + length
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return frame
    }

    /// Takes the next frame, whose header `peekHeader` returned and whose payload is not all
    /// buffered, out of the decoder: drops the header and moves the payload bytes buffered so far
    /// (at most `destination.count`) into `destination`, returning how many. The transport then
    /// reads the rest of a CHUNK's payload straight into the same memory, so a chunk's bytes
    /// are copied once, from the kernel, on their way in.
    public mutating func takeHeader(movingPayloadInto destination: UnsafeMutableRawBufferPointer) -> Int {
        precondition(bufferedCount >= ProtocolLimits.headerSize, "takeHeader without a buffered header")
        let payloadStart = start + ProtocolLimits.headerSize
        let count = min(buffer.count - payloadStart, destination.count)
        buffer.withUnsafeBytes { b in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[payloadStart..<payloadStart + count]))
        }
        start = payloadStart + count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return count
    }

    private mutating func compactIfWorthwhile() {
        if start > 0 && (start >= 65_536 || start == buffer.count) {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Parses one payload whose length has already passed the type's limit.
    static func parse(type: FrameType, payload: ArraySlice<UInt8>) throws(ProtocolViolation) -> Frame {
        switch type {
        case .hello: return .hello(try json(Hello.self, payload, type))
        case .welcome: return .welcome(try json(Welcome.self, payload, type))
        case .offer: return .offer(try json(Offer.self, payload, type))
        case .accept: return .accept(try json(Accept.self, payload, type))
        case .reject: return .reject(try json(Problem.self, payload, type))
        case .saved: return .saved(try json(Saved.self, payload, type))
        case .failed: return .failed(try json(Problem.self, payload, type))
        case .error: return .error(try json(Problem.self, payload, type))
        case .bye:
            return .bye
        case .ack:
            guard payload.elementsEqual(ProtocolLimits.ackPayload) else {
                throw ProtocolViolation(.badFrame, "ACK payload must be the single byte \"1\"")
            }
            return .ack
        case .done:
            guard payload.elementsEqual(ProtocolLimits.donePayload) else {
                throw ProtocolViolation(.badFrame, "DONE payload must be \"File Transfer Done\"")
            }
            return .done
        case .chunk:
            guard !payload.isEmpty else { throw ProtocolViolation(.badFrame, "empty CHUNK") }
            return .chunk(Array(payload))
        }
    }

    private static let decoder = JSONDecoder()

    private static func json<T: Decodable>(_: T.Type, _ payload: ArraySlice<UInt8>, _ type: FrameType)
        throws(ProtocolViolation) -> T
    {
        do {
            return try decoder.decode(T.self, from: Data(payload))
        } catch {
            throw ProtocolViolation(.badFrame, "\(type) payload is not the expected JSON object")
        }
    }
}
