import COpenSSL

/// Standard base64 (RFC 4648 §4, with padding) decoded by OpenSSL's `EVP_DecodeBlock`: nil
/// for text that is not whole groups of four characters of the alphabet with at most two "="
/// at its end (an HTTP Basic credential, which is never split over lines).
public func base64Decoded(_ text: String) -> [UInt8]? {
    let input = Array(text.utf8)
    guard !input.isEmpty, input.count % 4 == 0, input.count <= 1 << 20 else { return input.isEmpty ? [] : nil }
    let alphabet: (UInt8) -> Bool = { c in
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2F
    }
    let padding = input.reversed().prefix(while: { $0 == 0x3D }).count
    guard padding <= 2, input.dropLast(padding).allSatisfy(alphabet) else { return nil }
    var output = [UInt8](repeating: 0, count: input.count / 4 * 3)
    let n = input.withUnsafeBufferPointer { i in
        output.withUnsafeMutableBufferPointer { o in EVP_DecodeBlock(o.baseAddress, i.baseAddress, Int32(i.count)) }
    }
    guard n == output.count else { return nil }
    // EVP_DecodeBlock counts the padding as zero bytes.
    return Array(output.dropLast(padding))
}
