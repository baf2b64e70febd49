/// One protocol message, typed. Its wire form is type (1 byte), length (4 bytes, big-endian), payload.
public enum Frame: Equatable, Sendable {
    case hello(Hello)
    case welcome(Welcome)
    case offer(Offer)
    case accept(Accept)
    case reject(Problem)
    case saved(Saved)
    case failed(Problem)
    case bye
    case chunk([UInt8])
    case ack
    case done
    case error(Problem)

    /// The frame's type code.
    public var type: FrameType {
        switch self {
        case .hello: return .hello
        case .welcome: return .welcome
        case .offer: return .offer
        case .accept: return .accept
        case .reject: return .reject
        case .saved: return .saved
        case .failed: return .failed
        case .bye: return .bye
        case .chunk: return .chunk
        case .ack: return .ack
        case .done: return .done
        case .error: return .error
        }
    }
}

extension Frame: CustomStringConvertible {
    /// A short form for logs and test failures; never the chunk's bytes.
    public var description: String {
        switch self {
        case .chunk(let bytes): return "CHUNK(\(bytes.count) bytes)"
        case .error(let p): return "ERROR(\(p))"
        case .reject(let p): return "REJECT(\(p))"
        case .failed(let p): return "FAILED(\(p))"
        default: return "\(type)".uppercased()
        }
    }
}
