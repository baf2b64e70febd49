/// The one-byte type code at the start of every frame.
public enum FrameType: UInt8, Sendable, CaseIterable {
    case hello = 0x01
    case welcome = 0x02
    case offer = 0x03
    case accept = 0x04
    case reject = 0x05
    case saved = 0x06
    case failed = 0x07
    case bye = 0x08
    case chunk = 0x10
    case ack = 0x11
    case done = 0x12
    case error = 0x7F

    /// True for the types whose payload is a JSON object.
    public var carriesJSON: Bool {
        switch self {
        case .hello, .welcome, .offer, .accept, .reject, .saved, .failed, .error: return true
        case .bye, .chunk, .ack, .done: return false
        }
    }

    /// The largest payload a frame of this type may carry, checked before the payload is read.
    public func maxPayload(chunkSize: Int) -> Int {
        switch self {
        case .bye: return 0
        case .ack: return ProtocolLimits.ackPayload.count
        case .done: return ProtocolLimits.donePayload.count
        case .chunk: return chunkSize
        default: return ProtocolLimits.maxJSONPayload
        }
    }
}
