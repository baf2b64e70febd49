/// RFC 9112's rules on a head's raw bytes that http-parser (built lenient) lets through: every
/// line ends in CRLF (§2.2: no bare LF, no CR alone), no whitespace between a field name and
/// its colon (§5.1: `Transfer-Encoding : chunked` was taken as chunked), no line folded onto
/// the previous one (obs-fold, §5.2). Fed each head's bytes in any pieces, up to the head's
/// end; body bytes never pass through it.
struct HeadCheck {
    private enum Place { case beforeStartLine, startLine, lineStart, name, value }
    private var place = Place.beforeStartLine
    private var afterCR = false
    /// The empty line ending the head has been seen: what follows is a body or the next message.
    private(set) var done = false

    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), colon = UInt8(ascii: ":")
    private static let sp = UInt8(ascii: " "), tab = UInt8(ascii: "\t")

    /// Checks `bytes` up to the head's end (the rest is left alone).
    mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) {
        for c in bytes {
            if afterCR {
                guard c == Self.lf else { throw .malformed("a CR not followed by LF in the head") }
                afterCR = false
                switch place {
                case .beforeStartLine: break  // an empty line before the request line: ignored (§2.2)
                case .lineStart:
                    done = true
                    return
                default: place = .lineStart
                }
                continue
            }
            switch (place, c) {
            case (_, Self.cr): afterCR = true
            case (_, Self.lf): throw .malformed("a line of the head ends in a bare LF, not CRLF")
            case (.beforeStartLine, _): place = .startLine
            case (.lineStart, Self.sp), (.lineStart, Self.tab):
                throw .malformed("a header line folded onto the previous one (obs-fold)")
            case (.lineStart, _): place = c == Self.colon ? .value : .name
            case (.name, Self.sp), (.name, Self.tab): throw .malformed("whitespace between a header name and its colon")
            case (.name, Self.colon): place = .value
            default: break
            }
        }
    }
}
