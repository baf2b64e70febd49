/// Text matched scalar by scalar, for every rule about paths, names and markup.
///
/// Swift compares a String's Characters, and a Character is a grapheme cluster: "/" followed
/// by a combining mark (U+0301), or a prepended mark (U+0600) followed by "<", is one Character
/// that equals neither "/" nor "<". So `"../\u{301}x".split(separator: "/")` is one part and
/// `"a/\u{301}b".contains("/")` is false, while the kernel (and a browser) sees the "/" (the
/// "<"). Whatever decides what a path reaches or what markup a text makes splits, searches and
/// compares with these instead.
extension StringProtocol {
    /// The parts between `separator` scalars ("/" for a path), as `split(separator:)` would give
    /// them if it compared scalars: an empty part between two separators, or at an end, is kept
    /// unless `omittingEmpty`.
    public func parts(separatedBy separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmpty: Bool = false)
        -> [String]
    {
        unicodeScalars.split(separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmpty)
            .map { String(String.UnicodeScalarView($0)) }
    }

    /// True when the scalar `scalar` occurs anywhere, whatever follows or precedes it.
    public func containsScalar(_ scalar: Unicode.Scalar) -> Bool {
        unicodeScalars.contains(scalar)
    }

    /// True when the first scalar is `scalar` (a leading "." hides a file, whatever follows it).
    public func startsWithScalar(_ scalar: Unicode.Scalar) -> Bool {
        unicodeScalars.first == scalar
    }

    /// True when the last scalar is `scalar`.
    public func endsWithScalar(_ scalar: Unicode.Scalar) -> Bool {
        unicodeScalars.last == scalar
    }

    /// True when this is exactly "." or "..", byte for byte (a path component the kernel treats
    /// as this folder or its parent).
    public var isDotOrDotDot: Bool {
        utf8.elementsEqual(".".utf8) || utf8.elementsEqual("..".utf8)
    }
}

/// The path's components between "/" scalars, empty ones included ("a//b" has "", "/a" starts
/// with ""): what the kernel walks.
public func pathComponents(_ path: some StringProtocol) -> [String] {
    path.parts(separatedBy: "/")
}

/// `path` split at its last "/" scalar: the folder before it (nil when there is no "/") and
/// the last component after it.
public func splitLastComponent(_ path: some StringProtocol) -> (folder: String?, last: String) {
    let scalars = path.unicodeScalars
    guard let slash = scalars.lastIndex(of: "/") else { return (nil, String(path)) }
    return (
        String(String.UnicodeScalarView(scalars[..<slash])),
        String(String.UnicodeScalarView(scalars[scalars.index(after: slash)...]))
    )
}

/// The last component of `path` (all of it when it has no "/"; "" when it ends in "/").
public func lastPathComponent(_ path: some StringProtocol) -> String {
    splitLastComponent(path).last
}

/// `path` without the "/" scalars at its end, but never shorter than one scalar ("/" stays "/").
public func droppingTrailingSlashes(_ path: String) -> String {
    var scalars = path.unicodeScalars
    while scalars.count > 1 && scalars.last == "/" { scalars.removeLast() }
    return String(scalars)
}
