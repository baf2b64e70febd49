/// Text escaped for the languages the programs write: HTML (pages, the static gallery), URL
/// path segments and query values, JSON string literals. Pure, so that every module that writes
/// one of them escapes it the same way.

/// Text safe inside HTML elements and quoted attribute values: `&`, `<`, `>`, `"` and `'` as
/// entities (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`), every other scalar as it is.
///
/// It walks Unicode scalars, as a browser's tokenizer does, never Characters: a Character is a
/// grapheme cluster, and `">\u{301}"` (">" and a combining accent) or `"\u{600}<"` (a prepended
/// mark and "<") is one Character equal to neither ">" nor "<", which a Character walk would
/// let through as markup.
public func escapeHTML(_ s: String) -> String {
    var out = String.UnicodeScalarView()
    for u in s.unicodeScalars {
        switch u {
        case "&": out.append(contentsOf: "&amp;".unicodeScalars)
        case "<": out.append(contentsOf: "&lt;".unicodeScalars)
        case ">": out.append(contentsOf: "&gt;".unicodeScalars)
        case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
        case "'": out.append(contentsOf: "&#39;".unicodeScalars)
        default: out.append(u)
        }
    }
    return String(out)
}

/// Text safe in XML character data and quoted attribute values (WebDAV's bodies, the OCS
/// API's): `&`, `<`, `>`, `"` and `'` as entities, CR as `&#13;` (a parser would turn a raw one
/// into LF), and the scalars XML 1.0 cannot carry at all (C0 controls but tab and LF, U+FFFE,
/// U+FFFF) as U+FFFD. Walks scalars, never Characters (`"<\u{301}"` is one Character).
public func escapeXML(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    for u in text.unicodeScalars {
        switch u {
        case "&": out.append(contentsOf: "&amp;".unicodeScalars)
        case "<": out.append(contentsOf: "&lt;".unicodeScalars)
        case ">": out.append(contentsOf: "&gt;".unicodeScalars)
        case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
        case "'": out.append(contentsOf: "&apos;".unicodeScalars)
        case "\r": out.append(contentsOf: "&#13;".unicodeScalars)
        case "\t", "\n": out.append(u)
        default: out.append(u.value < 0x20 || u.value == 0xFFFE || u.value == 0xFFFF ? "\u{FFFD}" : u)
        }
    }
    return String(out)
}

/// A file name as one URL path segment: every byte but unreserved ones (RFC 3986) as %XX.
public func percentEncode(_ s: String) -> String {
    var out = ""
    for byte in s.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.append(Character(Unicode.Scalar(byte)))
        default:
            let hex = Array("0123456789ABCDEF")
            out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
        }
    }
    return out
}

/// The bytes of %-encoded text (and `+` as a space when `plusIsSpace`, as in a query or a
/// form); nil when a "%" lacks two hex digits. The one percent-decoder: HTTP targets, queries
/// and forms, and WebDAV's paths and hrefs.
public func percentDecoded<C: Collection<UInt8>>(bytes raw: C, plusIsSpace: Bool = false) -> [UInt8]? {
    var out: [UInt8] = []
    out.reserveCapacity(raw.count)
    var bytes = raw[...]
    while let c = bytes.popFirst() {
        if c == UInt8(ascii: "%") {
            guard let h = bytes.popFirst().flatMap(hexValue), let l = bytes.popFirst().flatMap(hexValue) else {
                return nil
            }
            out.append(h << 4 | l)
        } else if plusIsSpace && c == UInt8(ascii: "+") {
            out.append(UInt8(ascii: " "))
        } else {
            out.append(c)
        }
    }
    return out
}

/// `percentDecoded(bytes:)` of `text` as text; nil also when the bytes are not UTF-8.
public func percentDecoded(_ text: String, plusIsSpace: Bool) -> String? {
    percentDecoded(bytes: text.utf8, plusIsSpace: plusIsSpace).flatMap { String(validating: $0, as: UTF8.self) }
}

/// The value of one hex digit, either case.
private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// A JSON string literal.
public func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if u.value < 0x20 {
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count)
                    + String(u.value, radix: 16)
            } else {
                out.unicodeScalars.append(u)
            }
        }
    }
    return out + "\""
}
