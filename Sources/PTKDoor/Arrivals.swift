import PTKConfiguration
import PTKHooks
import PTKLibrary
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary

/// Who sent a photo, as every path that brings one (protocol v1, LocalSend) tells it.
public struct Sender: Sendable {
    /// The name it introduced itself with (HELLO.name, the LocalSend alias).
    public var announcedName: String
    /// Its identity on the trust list's terms, when it showed one.
    public var id: SenderID?
    /// "192.0.2.1:50000".
    public var address: String

    /// A sender as a door tells it.
    public init(announcedName: String, id: SenderID?, address: String) {
        self.announcedName = announcedName
        self.id = id
        self.address = address
    }

    /// The address without its port ("192.0.2.1", "2001:db8::1").
    public var host: String {
        if address.hasPrefix("["), let close = address.unicodeScalars.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        guard let colon = address.unicodeScalars.lastIndex(of: ":"),
            address.unicodeScalars.filter({ $0 == ":" }).count == 1
        else { return address }
        return String(address[..<colon])
    }
}

/// What happens around each photo, whichever path brought it: the folder it is filed in (the
/// layout), whether its bytes are kept already (duplicates), and, once it is saved, the
/// library and the `on-saved` hook.
public final class Arrivals: @unchecked Sendable {
    // Everything is fixed at init; each part is thread-safe.
    /// The received-photos directory.
    public let directory: String
    /// The folders photos are filed in (the `layout` setting).
    public let layout: FolderLayout
    /// The trust list, whose names a trusted sender's folder takes.
    public let trust: TrustStore
    /// Indexes saved photos; nil with `library = off`.
    public let library: LibraryIndexer?
    /// The photos kept, by content (duplicates = skip with the library on); else nil.
    public let held: HeldPhotos?
    /// The `on-saved` hook; nil when none is set.
    public let hooks: HookRunner?

    /// What happens around each photo, from its parts (each may be off: nil).
    public init(
        directory: String, layout: FolderLayout, trust: TrustStore, library: LibraryIndexer?, held: HeldPhotos?,
        hooks: HookRunner?
    ) {
        self.directory = directory
        self.layout = layout
        self.trust = trust
        self.library = library
        self.held = held
        self.hooks = hooks
    }

    /// The sender's name for its folder: the name the trust list gives it, else the one it announced.
    public func folderName(of sender: Sender) -> String {
        guard layout.usesSender else { return sender.announcedName }
        if let id = sender.id, let entry = trust.trusted().first(where: { $0.id == id }) { return entry.name }
        return sender.announcedName
    }

    /// The folder a photo from `sender` arriving now is filed in ("" for the flat layout).
    public func folder(for sender: Sender) -> String {
        layout.levels.isEmpty ? "" : layout.folder(sender: folderName(of: sender), day: WallTime.now.localDay)
    }

    /// A sender's name as the library keeps it for people to read (`ptk list`, `ptk watch`, the
    /// web pages): controls of every kind (`isTerminalControl`: C0, C1, line separators, bidi
    /// overrides) become spaces, and it is cut to 256 bytes. The hook gets it as announced (bounded).
    public static func shownName(_ name: String) -> String {
        HookJob.bounded(String(String.UnicodeScalarView(name.unicodeScalars.map { isTerminalControl($0) ? " " : $0 })))
    }

    /// The name of a photo the directory keeps with these bytes (duplicates = skip), or nil.
    public func heldPhoto(sha256: String, size: Int64) -> String? {
        guard !sha256.isEmpty else { return nil }
        return held?.find(sha256: sha256, size: size)
    }

    /// Called once a photo is saved (or found held), before SAVED or 200 goes out: the library
    /// indexes it (not a duplicate: its entry is there), later photos see it as held, and the
    /// hook's run is queued (written to disk, so it happens even if ptkd dies after answering).
    public func saved(_ saved: StoredPhoto, type: PhotoType, from sender: Sender, deviceID: String?) {
        let received = WallTime.now
        if !saved.isDuplicate {
            library?.add(
                Arrival(
                    name: saved.name, size: saved.size, sha256: saved.sha256, received: received,
                    senderName: Self.shownName(sender.announcedName), senderAddress: sender.address, senderID: deviceID)
            )
            held?.remember(name: saved.name, sha256: saved.sha256, size: saved.size)
        }
        // A duplicate's run is owed once per photo and sending address: not per device, since a
        // LocalSend app or a v1 sender may show a fresh certificate with every request.
        let duplicateKey = saved.isDuplicate ? saved.sha256 + " " + ConnectionTable.slotKey(sender.host) : nil
        hooks?.enqueue(duplicateKey: duplicateKey) { sequence in
            HookJob(
                sequence: sequence, name: saved.name, path: directory + "/" + saved.name, size: saved.size,
                sha256: saved.sha256,
                mediaType: type.mediaType, senderName: HookJob.bounded(sender.announcedName),
                senderID: deviceID.map(HookJob.bounded),
                senderAddress: sender.address, received: received.iso8601, taken: nil, duplicate: saved.isDuplicate)
        }
    }
}
