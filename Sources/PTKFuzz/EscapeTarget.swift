import PTKLibrary
import PTKVocabulary
import PTKWeb

extension FuzzTargets {
    /// The escapers over arbitrary text (the input as UTF-8, broken sequences replaced):
    /// `escapeHTML` leaves no raw `<`, `>`, `"` or `'` scalar and no `&` but those of the entities
    /// it writes, and unescaping gives the text back scalar for scalar; `percentEncode` writes only
    /// unreserved ASCII and `%XX`, which decode to the text's bytes; `attachment` (a download's
    /// Content-Disposition) is printable ASCII with no quote or backslash inside its file name.
    public static func escape(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)

        let escaped = escapeHTML(text)
        let entities: [(String, Unicode.Scalar)] = [
            ("amp;", "&"), ("lt;", "<"), ("gt;", ">"), ("quot;", "\""), ("#39;", "'"),
        ]
        var back = String.UnicodeScalarView()
        var rest = escaped.unicodeScalars[...]
        while let u = rest.popFirst() {
            precondition(
                u != "<" && u != ">" && u != "\"" && u != "'", "escapeHTML left a raw U+\(String(u.value, radix: 16))")
            guard u == "&" else {
                back.append(u)
                continue
            }
            guard let (entity, plain) = entities.first(where: { rest.starts(with: $0.0.unicodeScalars) }) else {
                preconditionFailure("escapeHTML left an & that starts no entity it writes")
            }
            back.append(plain)
            rest = rest.dropFirst(entity.unicodeScalars.count)
        }
        precondition(
            back.elementsEqual(text.unicodeScalars), "unescaping escapeHTML's output does not give the text back")

        let encoded = Array(percentEncode(text).utf8)
        var decoded: [UInt8] = []
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while i < encoded.count {
            let c = encoded[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < encoded.count, let h = hex(encoded[i + 1]), let l = hex(encoded[i + 2]) else {
                    preconditionFailure("percentEncode wrote a % without two hex digits")
                }
                decoded.append(h << 4 | l)
                i += 3
            } else {
                let unreserved =
                    (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c)
                    || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "~")
                precondition(unreserved, "percentEncode wrote the byte \(c) as it is")
                decoded.append(c)
                i += 1
            }
        }
        precondition(decoded == Array(text.utf8), "percentEncode's output does not decode to the text")

        let header = attachment(text)
        precondition(
            header.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F },
            "Content-Disposition with a byte that is not printable ASCII")
        // The two quotes around the ASCII file name, no other (filename* is percent-encoded).
        let quotes = header.utf8.filter { $0 == UInt8(ascii: "\"") }.count
        precondition(quotes == 2 && !header.utf8.contains(UInt8(ascii: "\\")), "the file name broke out of its quotes")
    }
}
