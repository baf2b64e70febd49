import PTKLibrary
import PTKLog
import PTKStore
import PTKSystem
import PTKVocabulary

extension InboxDoor {
    /// Whether the file open as `status` (at `key`, new or changed: not the bytes its record
    /// says were taken) may be taken as a hard link (`inbox-links = yes`). Not when it is the
    /// very file taken before and still has another name: it was linked, so its photo is this
    /// same file, and it was written in place, which inbox-links promises its writer never
    /// does. The photo's bytes changed with it: said loudly, naming both, and the new bytes are
    /// taken as a new photo by reflink or copy (never linked again to that file); the photo
    /// linked before keeps its name and holds the new bytes too.
    /// `record` is the library's record of the source taken from `key` before, if any.
    func mayLink(_ status: FileStatus, _ key: FileKey, _ watched: WatchedFolder, _ record: InboxSourceRecord?) -> Bool {
        guard watched.ways.links, status.linkCount > 1, let record,
            record.identity.device == status.device, record.identity.inode == status.inode
        else { return true }
        let label = "\(watched.folder.kind.rawValue) \(watched.folder.path)"
        let photo: String
        if let name = record.photo, let kept = try? fileStatus(settings.directory + "/" + name),  // gone: unnamed below
            kept.device == status.device, kept.inode == status.inode
        {
            photo = "the photo \(quotedForTerminal(name))"
        } else {
            photo = "a photo taken from it as a hard link"
        }
        Log.error(
            "\(label): \(photo) changed: its bytes were written in place through its inbox source \(quotedForTerminal(key.path)), the same file (inbox-links = yes, which promises the writer replaces files by rename and never writes in place); the new bytes are taken as a new photo by copy, and the photo linked before holds them too: set inbox-links = no for this writer"
        )
        return false
    }
}
