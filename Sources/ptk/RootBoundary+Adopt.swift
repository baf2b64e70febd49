import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKLibrary
import PTKSystem
import PTKVocabulary

/// What root's ptk does with what a child made as the service user: thumbnails told from
/// other files, results adopted into place, a staging tree removed.
extension RootBoundary {
    /// "123-360.jpg" or "123-360.png" (digits, a dash, digits): a thumbnail the gallery writes.
    static func isThumbnailName(_ name: String) -> Bool {
        guard name.hasSuffix(".jpg") || name.hasSuffix(".png") else { return false }
        let parts = name.utf8.dropLast(4).split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        return parts.count == 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
    }

    /// Gives `name` in `folder` to root: a regular file of one name of at most `limit` bytes,
    /// or (with `files`) a folder holding those regular files of one name each, each of at
    /// most its limit. Opened without following a link. What the child made beyond what it
    /// could have (it bounds its copies itself) is refused here too: EFBIG.
    static func adopt(_ name: String, in folder: FileDescriptor, limit: Int64, files: [String: Int64]? = nil)
        throws(SystemError)
    {
        let root = Credentials(user: 0, group: 0, name: "root")
        func adoptFile(_ name: String, in folder: FileDescriptor, limit: Int64) throws(SystemError) {
            let fd = try FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .noFollow, .nonBlocking])
            defer { fd.close() }
            let (status, links, _) = try fd.statusWithLinks()
            guard status.isRegularFile, links == 1 else {
                throw SystemError(call: "open", object: name, errno: Errno.invalidArgument.rawValue)
            }
            guard status.size <= limit else {
                throw SystemError(call: "open", object: name, errno: Errno.fileTooLarge.rawValue)
            }
            try fd.give(to: root)
        }
        guard let files else { return try adoptFile(name, in: folder, limit: limit) }
        let package = try FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .directory, .noFollow])
        defer { package.close() }
        for entry in try package.entries() {
            guard let most = files[entry] else {
                throw SystemError(call: "open", object: name + "/" + entry, errno: Errno.invalidArgument.rawValue)
            }
            try adoptFile(entry, in: package, limit: most)
        }
        try package.give(to: root)
    }

    /// Removes `name` in `folder` and, if it is a folder, all it holds, following no link.
    static func removeTree(_ name: String, in folder: FileDescriptor) {
        // not a folder: unlinked below
        if let sub = try? FileDescriptor.open(name, relativeTo: folder, flags: [.readOnly, .directory, .noFollow]) {
            // unreadable: the rmdir below says so
            for entry in (try? sub.entries()) ?? [] { removeTree(entry, in: sub) }
            sub.close()
            do { try folder.removeDirectory(name) } catch {
                writeToStandardError("ptk: cannot remove the staging folder \(quotedForTerminal(name)): \(error)")
            }
        } else {
            try? folder.unlink(name)  // what cannot be removed stays in the staging folder, whose removal then says so
        }
    }
}
