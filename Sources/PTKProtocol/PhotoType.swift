/// The kinds of photo a received-photos directory keeps. Protocol v1 carries PNG only; the
/// LocalSend endpoint may also take JPEG (`localsend-types`). The type decides the structural
/// check a file must pass and the ending its name gets.
public enum PhotoType: String, Sendable, CaseIterable {
    case png = "image/png"
    case jpeg = "image/jpeg"

    /// The MIME type ("image/png").
    public var mediaType: String { rawValue }

    /// The name endings kept as they are (in any case); the first is added to a name that has
    /// none of them.
    public var endings: [String] {
        switch self {
        case .png: return [".png"]
        case .jpeg: return [".jpg", ".jpeg"]
        }
    }

    /// `name` split into its stem and its ending of this type as written ("" when it has none).
    public func split(_ name: String) -> (stem: String, ending: String) {
        let lower = name.lowercased()
        for ending in endings where lower.hasSuffix(ending) {
            return (String(name.dropLast(ending.count)), String(name.suffix(ending.count)))
        }
        return (name, "")
    }

    /// "PNG", "JPEG".
    public var displayName: String { self == .png ? "PNG" : "JPEG" }

    public init?(mediaType: String) {
        self.init(rawValue: mediaType.lowercased())
    }

    /// The type a file name's ending says, nil for any other ending.
    public init?(fileName: String) {
        let lower = fileName.lowercased()
        guard let type = PhotoType.allCases.first(where: { t in t.endings.contains { lower.hasSuffix($0) && lower.count > $0.count } }) else {
            return nil
        }
        self = type
    }

    /// The type a file's first bytes say (the PNG signature; a JPEG's SOI marker followed by
    /// another marker), nil when neither.
    public static func sniff(_ head: some Collection<UInt8>) -> PhotoType? {
        if head.starts(with: ProtocolLimits.pngSignature) { return .png }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        return nil
    }
}
