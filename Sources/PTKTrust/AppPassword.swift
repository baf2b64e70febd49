import PTKSystem
import PTKVocabulary

/// What an app password may do through the WebDAV door.
public enum AppAccess: String, Sendable, CaseIterable {
    /// Add photos only (phones, backup apps): the default.
    case upload
    /// Read, add, rename and delete (a desktop's file manager).
    case full
}

/// One app password as stored: everything but the password, which is kept nowhere.
public struct AppPassword: Sendable, Equatable {
    /// 16 lower-case hex digits, fixed at creation: a new password with an old name gets a new
    /// one, so state kept by it (the WebDAV door's) never passes to the next holder of the name.
    public var id: String
    /// The user name in Basic auth (`validName`).
    public var name: String
    /// What it may do through the WebDAV door; `.upload` unless made with full access.
    public var access: AppAccess
    /// Unix time, seconds.
    public var created: Int64
    /// Unix time, seconds; nil when never used.
    public var lastUsed: Int64?
    /// The address it was last used from.
    public var lastAddress: String?

    /// The fields as stored; making a password (and its ID) is `AppPasswords.add`'s work.
    public init(
        id: String, name: String, access: AppAccess, created: Int64, lastUsed: Int64? = nil, lastAddress: String? = nil
    ) {
        self.id = id
        self.name = name
        self.access = access
        self.created = created
        self.lastUsed = lastUsed
        self.lastAddress = lastAddress
    }
}

/// The file `STATE/web/app-passwords`, one password a line, tab-separated: id, name, access,
/// SHA-256 of the password (hex), created, last used (`-` never), address (`-` none); `#` comments.
/// A line that does not parse is left out: it verifies nothing.
struct AppPasswordFile {
    /// One stored line: the password's public part and its hash.
    struct Entry: Sendable, Equatable {
        var password: AppPassword
        var hash: String
    }

    static let header =
        "# App passwords (`ptk app-password`): id, name, access, SHA-256 of the password, created, last used, address (- for none).\n"

    static func parse(_ text: String) -> [Entry] {
        TrustStore.lines(text).compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 7, isID(f[0]), AppPasswords.validName(f[1]), let access = AppAccess(rawValue: f[2]),
                // Times the service user could have planted: out of range, the line verifies nothing.
                f[3].utf8.count == 64, f[3].utf8.allSatisfy(isLowerHex), let created = Int64(f[4]),
                WallTime.storedSecondsRange.contains(created)
            else { return nil }
            let used: Int64?
            if f[5] == "-" {
                used = nil
            } else {
                guard let t = Int64(f[5]), WallTime.storedSecondsRange.contains(t) else { return nil }
                used = t
            }
            return Entry(
                password: AppPassword(
                    id: f[0], name: f[1], access: access, created: created, lastUsed: used,
                    lastAddress: f[6] == "-" || f[6].isEmpty ? nil : f[6]),
                hash: f[3])
        }
    }

    static func format(_ entries: [Entry]) -> String {
        var text = header
        for e in entries {
            let p = e.password
            text +=
                [
                    p.id, p.name, p.access.rawValue, e.hash, "\(p.created)", p.lastUsed.map { "\($0)" } ?? "-",
                    p.lastAddress.map(cleanAddress) ?? "-",
                ].joined(separator: "\t") + "\n"
        }
        return text
    }

    /// An address fit for one field: no controls (tabs and newlines included), at most 128
    /// characters, `-` when empty.
    static func cleanAddress(_ address: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                address.unicodeScalars.filter { !isTerminalControl($0) && $0 != "\t" && $0 != " " }
            ).prefix(128))
        return cleaned.isEmpty ? "-" : cleaned
    }

    /// 16 lower-case hex digits.
    static func isID(_ text: String) -> Bool { text.utf8.count == 16 && text.utf8.allSatisfy(isLowerHex) }

    static func isLowerHex(_ c: UInt8) -> Bool { (0x30...0x39).contains(c) || (0x61...0x66).contains(c) }
}
