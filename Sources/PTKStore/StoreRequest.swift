import PTKSystem
import PTKVocabulary

/// A photo the store is asked to take, whoever brings it (a ptk-send OFFER, a LocalSend upload,
/// `ptk import`): the store's own terms, not any protocol's message.
public struct StoreRequest: Sendable, Equatable {
    /// The name it was offered under; the naming rules (protocol §5) apply when it is published.
    public var name: String
    /// The length announced, in bytes: more or fewer received is refused.
    public var size: Int64
    /// The SHA-256 it must have, 64 lowercase hex digits; "" when the sender gave none (it is
    /// then saved with the hash it has, and cannot be resumed).
    public var sha256: String
    /// The type announced: the bytes are checked for its structure (PNG, JPEG or HEIF).
    public var type: PhotoType
    /// Who sent it, as the logs and the library name them; nil when nobody did (`ptk import`).
    public var sender: String?
    /// The modification time the sender gave, in milliseconds since the epoch; nil when none.
    public var modified: Int64?
    /// The folder below the received-photos directory it is published into: components
    /// separated by "/", each already a valid name (`isValidFolder`); "" for the directory itself.
    public var folder: String
    /// The sender takes an ACCEPT.offset at the file's end (it announced "held", protocol-v1.md
    /// section 7): a partial upload that is already whole is resumed at its end, not at its last
    /// chunk boundary.
    public var wholeResumable: Bool

    /// A request as a door fills it; `sender`, `modified` and `folder` default to none and the directory itself.
    public init(
        name: String, size: Int64, sha256: String, type: PhotoType, sender: String? = nil, modified: Int64? = nil,
        folder: String = "",
        wholeResumable: Bool = false
    ) {
        self.wholeResumable = wholeResumable
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.type = type
        self.sender = sender
        self.modified = modified
        self.folder = folder
    }

    /// Folders are at most this deep.
    public static let maxFolderDepth = FileName.maxFolderDepth

    /// `folder` (the layout's, "" for none) with the folders of an offered name
    /// ("2024/summer/IMG_1.jpg" adds "2024/summer"), each by the naming rules
    /// (`FileName.folderComponent`), "." and ".." and empty ones left out, and no deeper than
    /// `maxFolderDepth` in all: the outermost are kept.
    public static func folder(_ folder: String, adding offeredName: String) -> String {
        // Split at "/" scalars: "/" and a combining mark after it are one Character.
        var parts = folder.isEmpty ? [] : folder.parts(separatedBy: "/", omittingEmpty: true)
        let given = offeredName.parts(separatedBy: "/", omittingEmpty: true).dropLast()
        for part in given where !part.isDotOrDotDot && parts.count < maxFolderDepth {
            parts.append(FileName.folderComponent(part))
        }
        return parts.joined(separator: "/")
    }

    /// True when `folder` is "" or up to `maxFolderDepth` components (split at each "/" scalar)
    /// that the naming rules keep as they are: none empty, ".", "..", hidden, with control
    /// characters, starting or ending with a mark that joins a "/" (`FileName.joinsSlashBefore`,
    /// `joinsSlashAfter`) or over 200 bytes.
    public static func isValidFolder(_ folder: String) -> Bool {
        if folder.isEmpty { return true }
        // Split at "/" scalars, and no part starts with a mark that joins the "/" before it into
        // one Character, or ends with one that joins the "/" after it: code that splits by
        // Characters then finds the same folders as the kernel.
        let parts = pathComponents(folder)
        return parts.count <= maxFolderDepth
            && parts.allSatisfy { part in
                guard let first = part.unicodeScalars.first, let last = part.unicodeScalars.last else { return false }
                return first != "." && !FileName.joinsSlashBefore(first) && !FileName.joinsSlashAfter(last)
                    && part.utf8.count <= 200
                    && part.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
            }
    }
}
