import PTKVocabulary

/// Where a request points inside the door: a request-target or Destination turned into decoded
/// names below the door's prefix, refusing anything that could name a file outside it or a
/// name the store must not see; and the hrefs the door writes back.

/// A resource below the door's prefix, as its decoded names ([] for the door's root).
///
/// Two paths are equal when their names are equal byte for byte (UTF-8): "é" precomposed and
/// "e" + U+0301 are two files on Linux, so they are two paths here (Swift's String equality
/// would call them equal).
public struct DAVPath: Sendable, Hashable, CustomStringConvertible {
    /// The decoded names from the root down; root = [].
    public var components: [String]

    /// The path of these names (not checked: `parse` is the way in from the wire).
    public init(_ components: [String] = []) {
        self.components = components
    }

    /// The door's root.
    public static let root = DAVPath()

    /// Same names, compared by their UTF-8 bytes: two spellings of "é" are two resources, as on disk.
    public static func == (a: DAVPath, b: DAVPath) -> Bool {
        a.components.count == b.components.count
            && zip(a.components, b.components).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    /// Hashes the names' bytes, in step with `==` (not Unicode equivalence).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(components.count)
        for c in components {
            hasher.combine(c.utf8.count)
            for b in c.utf8 { hasher.combine(b) }
        }
    }

    /// Whether this is the door's root.
    public var isRoot: Bool { components.isEmpty }
    /// The collection holding it; nil for the root.
    public var parent: DAVPath? { isRoot ? nil : DAVPath(Array(components.dropLast())) }
    /// Its last name; nil for the root.
    public var name: String? { components.last }
    /// The member `name` of this collection.
    public func appending(_ name: String) -> DAVPath { DAVPath(components + [name]) }
    /// Whether `other` is strictly below this path.
    public func isAncestor(of other: DAVPath) -> Bool {
        components.count < other.components.count && DAVPath(Array(other.components.prefix(components.count))) == self
    }
    /// Whether `other` is this path or below it.
    public func contains(_ other: DAVPath) -> Bool { self == other || isAncestor(of: other) }
    /// The names joined by "/", decoded: "a/b", "" for the root.
    public var string: String { components.joined(separator: "/") }
    /// `string`, for messages.
    public var description: String { "/" + string }

    /// The href of this path under `prefix` ("/dav"; a trailing "/" on it is ignored), each name
    /// percent-encoded as one segment (every byte but RFC 3986's unreserved ones and
    /// `! $ ( ) * , = : @` as %XX, so "%", "#", "?", ";", "&", "'" and "+" are always encoded),
    /// with a trailing "/" for a collection (RFC 4918 section 8.3) and always for the root.
    public func href(prefix: String, collection: Bool) -> String {
        var out = String(DAVPath.trimmedPrefix(prefix))
        for c in components { out += "/" + DAVPath.encode(c) }
        return collection || isRoot ? out + "/" : out
    }

    private static func trimmedPrefix(_ prefix: String) -> Substring {
        var p = Substring(prefix)
        while p.hasSuffix("/") { p = p.dropLast() }
        return p
    }

    private static func encode(_ name: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in name.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
                UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"),
                UInt8(ascii: ","), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a request-target or Destination names no resource of the door (the door answers 400,
/// or 403/502 for a Destination elsewhere, as it decides).
public enum DAVPathRefusal: Error, Sendable, Equatable {
    /// Not under the prefix, an absolute URI of another scheme, or (Destination) another host.
    case outside
    /// A "." or ".." segment, sent so or percent-encoded (%2e%2e, %2E.): never resolved.
    case dotSegment
    /// %2F or %5C inside a segment, or a raw backslash: a name with a slash in it.
    case encodedSlash
    /// A "%" not followed by two hex digits, or a name that is not UTF-8.
    case badEncoding
    /// NUL or another control character (C0, DEL, C1) in a name.
    case control
    /// Over 1,024 bytes of decoded path, over 32 names, or a name over 255 bytes.
    case tooLong
}

extension DAVPath {
    /// The most bytes of a decoded path below the prefix.
    public static let maxBytes = 1024
    /// The most names in a path.
    public static let maxComponents = 32
    /// The most bytes of one name (what Linux file systems take).
    public static let maxNameBytes = 255

    /// The path `target` names below `prefix` ("/dav"; "/" or "" for a door at the root). The
    /// target is a request-target as sent: an absolute path, or an absolute http(s) URI whose
    /// authority is not checked here (`destination` checks it); a query or fragment is
    /// dropped. "/dav" and "/dav/" are the root; empty segments ("//") are collapsed. The
    /// prefix matches whole decoded segments, so "/davx" and "/dav.." are outside "/dav".
    /// Dot segments are refused, never resolved (RFC 3986 5.2.4 would let "/dav/../x" out).
    public static func parse(target: String, prefix: String) -> Result<DAVPath, DAVPathRefusal> {
        // By bytes, as everywhere here: "?\u{301}" is one Character that is not "?".
        var path = Substring(target)
        if let cut = path.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            path = path[..<cut]
        }
        if path.utf8.first != UInt8(ascii: "/") {
            guard let (_, _, rest) = splitAbsolute(path) else { return .failure(.outside) }
            path = rest
        }
        // A cheap bound before any decoding: every byte of a path at the limits encoded, and more.
        if path.utf8.count > 3 * (maxBytes + prefix.utf8.count) + 64 { return .failure(.tooLong) }
        var segments: [[UInt8]] = []
        for raw in path.utf8.split(separator: UInt8(ascii: "/")) {
            guard let decoded = percentDecoded(bytes: raw) else { return .failure(.badEncoding) }
            segments.append(decoded)
        }
        let prefixSegments = prefix.utf8.split(separator: UInt8(ascii: "/")).map {
            percentDecoded(bytes: $0) ?? Array($0)
        }
        guard segments.count >= prefixSegments.count,
            zip(prefixSegments, segments).allSatisfy({ $0 == $1 })
        else { return .failure(.outside) }
        let names = segments.dropFirst(prefixSegments.count)
        if names.count > maxComponents { return .failure(.tooLong) }
        var components: [String] = []
        var total = 0
        for bytes in names {
            if bytes.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) {
                return .failure(.encodedSlash)
            }
            if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return .failure(.control) }
            guard let name = String(validating: bytes, as: UTF8.self) else { return .failure(.badEncoding) }
            if name.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) { return .failure(.control) }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { return .failure(.dotSegment) }
            if bytes.count > maxNameBytes { return .failure(.tooLong) }
            total += bytes.count + (components.isEmpty ? 0 : 1)
            if total > maxBytes { return .failure(.tooLong) }
            components.append(name)
        }
        return .success(DAVPath(components))
    }

    /// The path a Destination header (RFC 4918 section 10.3) names below `prefix`. An absolute
    /// URI must be http or https and have exactly the request's authority `host` (the Host
    /// header, ASCII case-insensitive, port included: "host" and "host:80" differ); with no
    /// Host header, no absolute URI is taken. Anything else is `.outside`; then as `parse`.
    public static func destination(_ header: String, prefix: String, host: String?) -> Result<DAVPath, DAVPathRefusal> {
        let value = trimmed(header)
        if value.utf8.first != UInt8(ascii: "/") {
            guard let (_, authority, _) = splitAbsolute(Substring(value)), let host,
                asciiLowercased(String(authority)).utf8.elementsEqual(asciiLowercased(host).utf8)
            else { return .failure(.outside) }
        }
        return parse(target: value, prefix: prefix)
    }

    /// "http://authority/path" or "https://..." split by bytes, the scheme compared ASCII
    /// case-insensitively; the path is "/" when there is none. nil for anything else.
    static func splitAbsolute(_ uri: Substring) -> (scheme: Substring, authority: Substring, path: Substring)? {
        guard let colon = uri.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = uri[..<colon]
        let lowered = asciiLowercased(String(scheme))
        guard lowered.utf8.elementsEqual("http".utf8) || lowered.utf8.elementsEqual("https".utf8) else { return nil }
        let rest = uri[colon...]
        guard rest.utf8.starts(with: "://".utf8) else { return nil }
        let afterSlashes = rest[rest.utf8.index(colon, offsetBy: 3)...]
        let end =
            afterSlashes.utf8.firstIndex(where: {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            })
            ?? afterSlashes.endIndex
        let authority = afterSlashes[..<end]
        guard !authority.isEmpty else { return nil }
        let path = afterSlashes[end...]
        return (scheme, authority, path.utf8.first == UInt8(ascii: "/") ? path : "/")
    }
}
