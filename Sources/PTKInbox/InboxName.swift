import PTKVocabulary

/// Which paths below an inbox are candidates: the names the writers people use give their
/// unfinished files (Syncthing, rsync, PhotoSync, browsers), the litter file managers leave on a
/// share (macOS, Windows), Syncthing's own markers, ptk's own folders and every dot name are
/// never taken, and neither is a path deeper or a component longer than any real photo needs.
///
/// Every rule compares Unicode scalars or bytes, never Characters: ".\u{301}x" begins with the
/// Character ".\u{301}", which is not ".", but the file is a dot file all the same. The Windows
/// names are compared ASCII case-insensitively (a share's clients write "THUMBS.DB" too). Control
/// characters are no reason here: the store's naming rules clean them when the photo is named.
public enum InboxName {
    /// The most components a path below the inbox's root may have, the file's name included.
    public static let maxDepth = 32
    /// The most bytes of UTF-8 one component may have (NAME_MAX on Linux's file systems).
    public static let maxComponentBytes = 255

    /// What becomes of a file below the inbox.
    public enum Verdict: Sendable, Equatable {
        /// A candidate: it is watched until it has settled and then checked (`SettleTracker`).
        case candidate
        /// Never taken, for this reason.
        case ignored(Reason)
    }

    /// What becomes of a folder below the inbox when a scan or a new watch reaches it.
    public enum FolderVerdict: Sendable, Equatable {
        /// Entered: watched, and its entries judged.
        case enter
        /// Neither entered nor watched, for this reason.
        case skip(Reason)
    }

    /// Why a path is not taken, or a folder not entered.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// No component at all, or one that is empty, "." or "..", or holds "/" or NUL: no
        /// directory entry is named so.
        case notAName
        /// More components than `maxDepth` (the count is given).
        case tooDeep(Int)
        /// A component of more than `maxComponentBytes` bytes (its length is given).
        case componentTooLong(Int)
        /// ptk's own folders (".ptk", ".incoming"): a photos directory shared into an inbox.
        case ptkOwn(String)
        /// Syncthing's folder marker, ignore file or versions folder (".stfolder", ".stignore",
        /// ".stversions").
        case syncthingMarker(String)
        /// A file Syncthing is still writing (".syncthing.NAME.tmp", "~syncthing~NAME.tmp").
        case syncthingTemporary(String)
        /// A download or transfer not finished: "*.part" (browsers, many FTP and sftp clients),
        /// "*.crdownload" (Chromium), "*.tacitpart" (PhotoSync).
        case partialTransfer(String)
        /// What file managers write beside files on a share: macOS's AppleDouble "._*" and
        /// ".DS_Store", Windows's "Thumbs.db" and "desktop.ini".
        case litter(String)
        /// Any other name beginning with ".", a file's or a folder's at any level: hidden by
        /// convention, and rsync's temporary ".NAME.XXXXXX".
        case hidden(String)

        /// For the log: what was skipped and why.
        public var description: String {
            switch self {
            case .notAName: "not a file name"
            case .tooDeep(let depth): "\(depth) folders deep, more than \(InboxName.maxDepth)"
            case .componentTooLong(let bytes): "a name of \(bytes) bytes, more than \(InboxName.maxComponentBytes)"
            case .ptkOwn(let name): "\(name) is ptk's own"
            case .syncthingMarker(let name): "\(name) is Syncthing's marker"
            case .syncthingTemporary(let name): "\(name) is a file Syncthing is still writing"
            case .partialTransfer(let name): "\(name) is a transfer not finished"
            case .litter(let name): "\(name) is a file manager's, not a photo"
            case .hidden(let name): "\(name) is hidden (it begins with a dot)"
            }
        }
    }

    /// The verdict on a file at `components` below the inbox's root ("anna-phone", "DCIM",
    /// "x.jpg"): every folder on the way must be one `folderVerdict` enters, and the name must
    /// be none of the writers' temporaries nor litter.
    public static func verdict(_ components: [String]) -> Verdict {
        guard let name = components.last else { return .ignored(.notAName) }
        if case .skip(let reason) = folderVerdict(components.dropLast()) { return .ignored(reason) }
        if let reason = componentReason(name) ?? fileReason(name) { return .ignored(reason) }
        return .candidate
    }

    /// Whether the folder at `components` below the inbox's root is entered (the root itself,
    /// no components, always is): never a dot folder, ptk's or Syncthing's own, nor one so
    /// deep that no file in it could be taken (a file in it would have more than `maxDepth`
    /// components).
    public static func folderVerdict(_ components: some Collection<String>) -> FolderVerdict {
        if components.count >= maxDepth { return .skip(.tooDeep(components.count + 1)) }
        for name in components {
            if let reason = componentReason(name) ?? folderReason(name) { return .skip(reason) }
        }
        return .enter
    }

    /// What is wrong with any component as a component: empty, ".", "..", "/" or NUL in it, too long.
    private static func componentReason(_ name: String) -> Reason? {
        if name.isEmpty || name.isDotOrDotDot || name.containsScalar("/") || name.containsScalar("\0") {
            return .notAName
        }
        let bytes = name.utf8.count
        return bytes > maxComponentBytes ? .componentTooLong(bytes) : nil
    }

    /// Names of ptk's own folders.
    private static let ptkNames: Set<String> = [".ptk", ".incoming"]
    /// Syncthing's marker folder or file, ignore file and versions folder.
    private static let syncthingNames: Set<String> = [".stfolder", ".stignore", ".stversions"]
    /// Windows's litter, lower-cased (compared ASCII case-insensitively).
    private static let windowsLitter: Set<String> = ["thumbs.db", "desktop.ini"]
    /// Endings of transfers not finished, lower-cased (compared ASCII case-insensitively).
    private static let partialEndings = [".part", ".crdownload", ".tacitpart"]

    /// Why a folder named `name` is not entered, or nil.
    private static func folderReason(_ name: String) -> Reason? {
        if ptkNames.contains(name) { return .ptkOwn(name) }
        if syncthingNames.contains(name) { return .syncthingMarker(name) }
        if name.startsWithScalar(".") { return .hidden(name) }
        return nil
    }

    /// Why a file named `name` is not taken, or nil.
    private static func fileReason(_ name: String) -> Reason? {
        let lowered = asciiLowercased(name)
        if ptkNames.contains(name) { return .ptkOwn(name) }
        if syncthingNames.contains(name) { return .syncthingMarker(name) }
        if lowered.utf8.starts(with: ".syncthing.".utf8) && lowered.utf8.reversed().starts(with: "pmt.".utf8)
            || lowered.utf8.starts(with: "~syncthing~".utf8)
        {
            return .syncthingTemporary(name)
        }
        if lowered.utf8.starts(with: "._".utf8) || lowered == ".ds_store" || windowsLitter.contains(lowered) {
            return .litter(name)
        }
        if name.startsWithScalar(".") { return .hidden(name) }
        for ending in partialEndings where lowered.utf8.reversed().starts(with: ending.utf8.reversed()) {
            return .partialTransfer(name)
        }
        return nil
    }

    /// `text` with ASCII letters lower-cased and every other scalar as it is (no Unicode case
    /// mapping: "K" (U+212A KELVIN SIGN) stays itself, as it does for Windows's FAT and SMB).
    private static func asciiLowercased(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            scalars.append(s.value >= 65 && s.value <= 90 ? Unicode.Scalar(UInt8(s.value + 32)) : s)
        }
        return String(scalars)
    }
}
