import PTKVocabulary

/// Fixed numbers of protocol v1 (protocol-v1.md sections 1-4).
public enum ProtocolLimits {
    /// The default TCP port.
    public static let defaultPort: UInt16 = 47850
    /// The protocol version this implementation speaks.
    public static let version = 1
    /// Bytes in every CHUNK but a file's last.
    public static let chunkSize = 102_400
    /// The largest JSON payload a frame may carry.
    public static let maxJSONPayload = 65_536
    /// The largest window either side may ask for.
    public static let maxWindow = 64
    /// Bytes in a frame header: type (1) + big-endian length (4).
    public static let headerSize = 5
    /// The ACK payload: the single ASCII byte "1".
    public static let ackPayload: [UInt8] = Array("1".utf8)
    /// The DONE payload: the 18 ASCII bytes "File Transfer Done".
    public static let donePayload: [UInt8] = Array("File Transfer Done".utf8)
    /// The 8-byte PNG signature.
    public static let pngSignature: [UInt8] = PhotoType.pngSignature
}
