import PTKVocabulary

/// `Content-Disposition: attachment` for a download named `name` (its last component, after
/// the last "/" scalar): an ASCII fallback and the UTF-8 name (RFC 6266), neither able to break
/// out of the header. Built scalar by scalar: `"\"\u{301}"` is one Character but two scalars.
public func attachment(_ name: String) -> String {
    let last = lastPathComponent(name)
    var ascii = String.UnicodeScalarView()
    for s in last.unicodeScalars {
        ascii.append(
            s.isASCII && s.value >= 0x20 && s.value != 0x7F && s != "\"" && s != "\\" && s != "/" && s != ";" ? s : "_")
    }
    return "attachment; filename=\"\(String(ascii))\"; filename*=UTF-8''\(percentEncode(last))"
}
