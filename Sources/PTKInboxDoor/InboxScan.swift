import PTKInbox
import PTKSystem

/// A file a scan found below a watched folder: its path's components and its status (taken
/// without following a link, so a symlink is seen as one and never read through).
struct FoundFile {
    /// The components below the folder's root ("anna-phone", "DCIM", "x.jpg").
    var components: [String]
    /// Its status as the folder listed it.
    var status: FileStatus
}

/// Walks one watched folder by descriptors, a folder at a time, never following a link and
/// never leaving the root: `InboxName` decides which folders are entered and which files are
/// candidates; a folder on another file system is entered only when `crossMounts`. Each folder
/// entered is passed to `entered` (to be watched) while it is open.
struct InboxScan {
    /// The folder's root, open.
    let root: FileDescriptor
    /// The root's device: a folder on another one is a mount point.
    let rootDevice: UInt64
    /// Enter mount points.
    let crossMounts: Bool
    /// Folders never entered, by device and inode: the photos directory and the other watched
    /// folders, which a bind mount can put below this one.
    var excluded: Set<FileID> = []
    /// At most this many files are listed in one scan (a folder of more is scanned in part, and
    /// said so once); the next scan lists them again.
    static let maxFiles = 200_000

    /// What one scan found, and what it could not read.
    struct Result {
        /// The candidates (regular files or not: the caller refuses what is not a regular file).
        var files: [FoundFile] = []
        /// Folders that could not be opened or listed, with why.
        var unreadable: [(path: String, why: String)] = []
        /// Mount points not entered.
        var mountsSkipped: [String] = []
        /// True when `maxFiles` was reached.
        var truncated = false
        /// Names left because they are not UTF-8.
        var notUTF8 = 0
        /// Folders not entered because they are excluded.
        var excludedSkipped: [String] = []
    }

    /// Walks the tree below `root`.
    func run(entered: (_ components: [String], _ folder: FileDescriptor) -> Void) -> Result {
        var result = Result()
        entered([], root)
        walk(root, [], &result, entered)
        return result
    }

    private func walk(
        _ folder: FileDescriptor, _ here: [String], _ result: inout Result,
        _ entered: (_ components: [String], _ folder: FileDescriptor) -> Void
    ) {
        let names: [BytePath]
        do { names = try folder.byteEntries() } catch {
            result.unreadable.append((here.joined(separator: "/"), "\(error)"))
            return
        }
        for entry in names {
            if result.files.count >= Self.maxFiles {
                result.truncated = true
                return
            }
            // A name that is not UTF-8 cannot be offered under its own name: left, as litter is.
            guard entry.isUTF8 else {
                result.notUTF8 += 1
                continue
            }
            let name = entry.text
            let components = here + [name]
            let status: FileStatus
            // Gone since it was listed: nothing to do.
            do { status = try folder.status(of: name) } catch { continue }
            if status.isDirectory {
                guard case .enter = InboxName.folderVerdict(components) else { continue }
                if excluded.contains(FileID(status)) {
                    result.excludedSkipped.append(components.joined(separator: "/"))
                    continue
                }
                if status.device != rootDevice && !crossMounts {
                    result.mountsSkipped.append(components.joined(separator: "/"))
                    continue
                }
                let sub: FileDescriptor
                do { sub = try folder.openSubdirectory(name) } catch {
                    result.unreadable.append((components.joined(separator: "/"), "\(error)"))
                    continue
                }
                // A bind mount of the same file system has the same device: statx says it is a
                // mount's root. (A status that cannot be taken is judged by the device alone.)
                if !crossMounts, (try? sub.isMountRoot()) == true {
                    sub.close()
                    result.mountsSkipped.append(components.joined(separator: "/"))
                    continue
                }
                entered(components, sub)
                walk(sub, components, &result, entered)
                sub.close()
            } else if case .candidate = InboxName.verdict(components) {
                result.files.append(FoundFile(components: components, status: status))
            }
        }
    }
}
