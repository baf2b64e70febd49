import PTKConfiguration
import PTKVocabulary

/// What the inbox door (watched inboxes and drop folders, issue 56) needs of ptkd's
/// configuration, and nothing else: made once where the door is built.
public struct InboxSettings: Sendable, Equatable {
    /// Each folder watched: inboxes first, then drop folders, in the order configured.
    public var folders: [InboxFolder]
    /// A full scan of every folder this often.
    public var scanInterval: Duration
    /// A file is taken once unchanged this long and not open for writing.
    public var settle: Duration
    /// Enter folders that are mount points of their own.
    public var crossMounts: Bool
    /// Take an inbox's photos as hard links to their sources where it can (`inbox-links`).
    public var links: Bool
    /// The largest photo taken, in bytes; a larger file is reported and left.
    public var maxFileSize: Int64
    /// The types kept.
    public var types: [PhotoType]
    /// The received-photos directory in force (no folder may hold it or be held by it).
    public var directory: String

    /// The inbox door's part of `configuration`.
    public init(_ configuration: DaemonConfiguration) {
        folders =
            configuration.inboxes.map { InboxFolder(path: $0, kind: .inbox) }
            + configuration.dropFolders.map { InboxFolder(path: $0, kind: .dropFolder) }
        scanInterval = configuration.inboxScanInterval
        settle = configuration.inboxSettle
        crossMounts = configuration.inboxMounts
        links = configuration.inboxLinks
        maxFileSize = configuration.maxFileSize
        types = configuration.types
        directory = configuration.effectiveDirectory
    }
}

/// One folder the inbox door watches.
public struct InboxFolder: Sendable, Equatable {
    /// What becomes of its sources.
    public enum Kind: String, Sendable, Equatable {
        /// Kept in sync by another program: the source stays as it is (`inbox`).
        case inbox
        /// Dropped into: the source is removed once its photo is saved (`drop-folder`).
        case dropFolder = "drop-folder"
    }
    /// Its absolute path, as configured.
    public var path: String
    /// Inbox or drop folder.
    public var kind: Kind

    /// A folder of `kind` at `path`.
    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }
}
