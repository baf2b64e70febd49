import FoundationEssentials

/// `value` as a compact JSON body with sorted keys (the web interface's upload answers; the
/// LocalSend messages have their own coder in PTKLocalSend).
public func jsonBody<T: Encodable>(_ value: T) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding plain structs of strings, numbers and booleans cannot fail.
    return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
}
