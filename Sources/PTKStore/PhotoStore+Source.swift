import PTKSystem
import PTKVocabulary

/// How a watched folder's files become photos (issue 56), and what was learnt doing it: a hard
/// link to the source where `links` allows it and the file system takes it, else a reflink
/// where the file system has them, else a copy. One per watched folder, used by one thread
/// (the inbox door's). Each way, and each reason a better one was not taken, is said once.
public final class SourceWays {
    /// How a file was taken.
    public enum Way: String, Sendable {
        /// The source itself, given a second name in the photos directory: no byte copied.
        case link = "hard link"
        /// A copy-on-write clone of the source (FICLONE): no byte copied.
        case reflink
        /// Read and written.
        case copy
    }

    /// Whether a source may be linked (`inbox-links = yes`): its writer replaces files by
    /// rename and never writes in place.
    public let links: Bool
    /// Where the lines about the ways taken go (the log), each said once.
    private let say: (String) -> Void
    private var said: Set<String> = []
    /// Devices whose files FICLONE cannot clone into the photos directory (said so once).
    var cannotClone: [UInt64: String] = [:]
    /// Sources the photos directory may not link (by device and owner: EXDEV is a device's,
    /// fs.protected_hardlinks's EPERM an owner's), and why.
    var cannotLink: [Owner: String] = [:]
    /// The way the last photo was taken (tests, the log).
    public private(set) var last: Way?

    /// A device and an owner of files on it.
    struct Owner: Hashable {
        var device: UInt64
        var user: UInt32
    }

    /// The ways of a folder whose sources may be linked when `links`; `say` tells the log.
    public init(links: Bool, say: @escaping (String) -> Void) {
        self.links = links
        self.say = say
    }

    /// A photo was taken `way`; `because` says why not a better way.
    func took(_ way: Way, because: String?) {
        last = way
        let how: String
        switch way {
        case .link: how = "takes photos as hard links to their sources (inbox-links = yes): no byte copied"
        case .reflink: how = "takes photos by reflink: no byte copied, and the source stays the writer's own"
        case .copy: how = "takes photos by copy"
        }
        let line = because.map { "\($0): \(how)" } ?? how
        if said.insert(line).inserted { say(line) }
    }
}

extension PhotoStore {
    /// Takes a watched folder's file as `take(_:from:stop:)` does, the best way `ways` allows
    /// (a hard link, a reflink, a copy) with the same checks, names, duplicates rule and flush
    /// rounds whichever it is. A link is tried only with `ways.links` and `mayLink` (false for a
    /// source found written in place since it was linked: never linked again), for a source
    /// with no other name; where it is refused (another file system, fs.protected_hardlinks,
    /// too many links) the file is taken by reflink or copy. A reflink is tried unless the
    /// source's file system said it cannot clone into the photos directory.
    public func take(
        _ request: StoreRequest, from source: FileDescriptor, ways: SourceWays, mayLink: Bool = true,
        stop: () -> Bool = { false }
    ) -> Result<StoredPhoto, StoreFailure> {
        startTaking(request, from: source, ways: ways, mayLink: mayLink, stop: stop, notify: nil).conclude()
    }

    /// `take(_:from:ways:mayLink:stop:)` in two halves, as `startTaking(_:from:stop:notify:owner:held:)`
    /// splits `take(_:from:stop:)`: the file taken the best way `ways` allows and checked, then
    /// queued for the next flush round; `conclude` answers.
    public func startTaking(
        _ request: StoreRequest, from source: FileDescriptor, ways: SourceWays, mayLink: Bool = true,
        stop: () -> Bool = { false }, notify: (@Sendable () -> Void)?, owner: Int? = nil,
        held: (_ sha256: String, _ size: Int64) -> String? = { _, _ in nil }
    ) -> FinishingPhoto {
        finishing(
            prepare(request, from: source, ways: ways, mayLink: mayLink, stop: stop), notify: notify, owner: owner,
            held: held)
    }

    /// The file taken (linked, cloned or copied into `.incoming`) and checked, not yet flushed
    /// nor published; the way it was taken is said once through `ways`.
    func prepare(
        _ request: StoreRequest, from source: FileDescriptor, ways: SourceWays, mayLink: Bool, stop: () -> Bool
    ) -> Result<IncomingFile, StoreFailure> {
        // fstat of an open descriptor fails only on EIO: copied then, whose read fails as it must.
        guard let status = try? source.status() else { return read(request, from: source, stop: stop) }
        var why: String?
        if ways.links && mayLink {
            let owner = SourceWays.Owner(device: status.device, user: status.owner)
            if let refused = ways.cannotLink[owner] {
                why = refused
            } else if status.linkCount > 1 {
                why = "inbox-links = yes, but a source with other hard links (a photo already?) is never linked"
            } else {
                switch link(request, from: source, status: status, stop: stop) {
                case .taken(let result):
                    if case .success = result { ways.took(.link, because: nil) }
                    return result
                case .refused(let reason, let remember):
                    why = "inbox-links = yes, but \(reason)"
                    if remember { ways.cannotLink[owner] = why }
                }
            }
        }
        if ways.cannotClone[status.device] == nil {
            switch clone(request, from: source, stop: stop) {
            case .taken(let result):
                if case .success = result { ways.took(.reflink, because: why) }
                return result
            case .refused(let reason, _):
                ways.cannotClone[status.device] = reason
            }
        }
        let result = read(request, from: source, stop: stop)
        if case .success = result {
            ways.took(.copy, because: [why, ways.cannotClone[status.device]].compactMap { $0 }.joined(separator: "; "))
        }
        return result
    }

    /// What trying one way came to: the photo taken (or failed as any photo fails), or the way
    /// refused for this file (`remember`: for its folder's like files too), to be taken another.
    enum Attempt {
        case taken(Result<IncomingFile, StoreFailure>)
        case refused(String, remember: Bool)
    }

    /// The source cloned into a new temporary file (FICLONE), then the temporary file's bytes
    /// (not the source's, which may change after the clone) read through the checks.
    ///
    /// The free space is counted as for a copy (`begin` reserves the photo's size, so a photo
    /// is refused at min-free whichever way it would be taken), and the reservation is given
    /// back once the clone is made: it shares the source's blocks, which the free space counts
    /// already, and never needs blocks of its own (a source removed frees nothing, its blocks
    /// stay the photo's; a source written in place takes new blocks for the writer's bytes).
    func clone(_ request: StoreRequest, from source: FileDescriptor, stop: () -> Bool) -> Attempt {
        let file: IncomingFile
        switch begin(request) {
        case .success(let f): file = f
        case .failure(let failure): return .taken(.failure(failure))
        }
        // As in `take`: EIO only, and then the clone fails too.
        let before = try? source.status()
        do { try file.clone(from: source) } catch {
            file.abandon(keepForResume: false)
            if error.code.meansCannotClone {
                return .refused(
                    "the file system cannot clone it into the photos directory (\(error.reason))", remember: true)
            }
            return .taken(
                .failure(StoreFailure(error.isNoSpace ? .noSpace : .io, "cloning the photo: \(error.reason)")))
        }
        file.reservation?.release()
        do { try file.checkHeldBytes(stop: stop) } catch {
            file.abandon(keepForResume: false)
            return .taken(.failure(error))
        }
        // As `take` does: a source written while it was cloned may have been cloned half old, half new.
        let after = try? source.status()  // as `before`
        if let before, let after, !Self.unchanged(before, after, changeTime: true) {
            file.abandon(keepForResume: false)
            return .taken(.failure(StoreFailure(.sizeMismatch, "the file changed while it was read")))
        }
        return .taken(.success(file))
    }

    /// True when `after` shows the file of `before` unwritten: the same size and modification
    /// time, and (`changeTime`) change time.
    static func unchanged(_ before: FileStatus, _ after: FileStatus, changeTime: Bool) -> Bool {
        before.size == after.size && before.modified == after.modified
            && before.modifiedNanoseconds == after.modifiedNanoseconds
            && (!changeTime || before.changedAt == after.changedAt)
    }
}
