import PTKStore
import PTKSystem
import PTKVocabulary

/// What a door that shows the directory as folders (WebDAV) asks of the library: photos by
/// their exact path (never `find`'s looser matching), a folder's hashes at once, and a folder
/// renamed with its photos' entries.
extension PhotoLibrary {
    /// The SHA-256 the library keeps for the photo at exactly `name` ("2024/IMG_1.jpg"), nil
    /// when it has no entry there.
    public func sha256(exactly name: String) throws(LibraryError) -> String? {
        let s = try database.prepare("SELECT sha256 FROM photos WHERE name = ?").bind(name)
        return try s.step() ? s.text(0) : nil
    }

    /// The SHA-256 of every photo directly in `folder` ("" for the directory itself), by the
    /// UTF-8 bytes of its name without the folder: one query for a listing of thousands. Keyed
    /// by bytes, since "é" precomposed and "e" + U+0301 are two files (and one String key).
    public func hashes(inFolder folder: String) throws(LibraryError) -> [[UInt8]: String] {
        let prefix = folder.isEmpty ? "" : folder + "/"
        let s = try database.prepare("SELECT name, sha256 FROM photos WHERE substr(name, 1, length(?)) = ?").bind(
            prefix, prefix)
        var out: [[UInt8]: String] = [:]
        while try s.step() {
            guard let name = s.text(0), let sha = s.text(1) else { continue }
            let leaf = Array(name.utf8.dropFirst(prefix.utf8.count))
            if !leaf.contains(UInt8(ascii: "/")) { out[leaf] = sha }
        }
        return out
    }

    /// Removes the photo at exactly `name`: its file, its entry (if any) and thumbnail. A file
    /// the library does not know is removed all the same. False when nothing was there.
    @discardableResult
    public func remove(exactly name: String) throws(LibraryError) -> Bool {
        var id: Int64? = nil
        var existed = false
        try database.writeTransaction { () throws(LibraryError) in
            let s = try database.prepare("SELECT id FROM photos WHERE name = ?").bind(name)
            if try s.step() { id = s.int(0) }
            try database.prepare("DELETE FROM photos WHERE name = ?").bind(name).run()
            do throws(SystemError) {
                let place = try photos.parentBeneath(name)
                defer { place.close() }
                try place.folder.unlink(place.name)
                existed = true
            } catch  where error.code == .noSuchFile {} catch {
                throw LibraryError(.io, "cannot remove '\(name)': \(error)")
            }
        }
        if let id { try? removeRenditions(id) }  // a thumbnail left behind is removed by the next sweep at start
        return existed || id != nil
    }

    /// Renames the photo or folder at exactly `old` to exactly `new` (both relative to the
    /// directory; `new`'s folder must exist and be one the store makes), never replacing
    /// anything, with the entries of the photos it is or holds: a door that shows the
    /// directory as folders (WebDAV's MOVE). No naming rule is applied here: the caller gives
    /// the final name.
    public func rename(exactly old: String, to new: String) throws(LibraryError) {
        guard StoreRequest.isValidFolder(new), !new.isEmpty else {
            throw LibraryError(.refused, "'\(new)' is not a name the receiver keeps")
        }
        try database.writeTransaction { () throws(LibraryError) in
            do throws(SystemError) { try photos.moveBeneath(old, to: new) } catch {
                if error.code == .exists || error.code == .notEmpty {
                    throw LibraryError(.refused, "'\(new)' exists; nothing is replaced")
                }
                throw LibraryError(.io, "cannot rename '\(old)' to '\(new)': \(error)")
            }
            try database.prepare("UPDATE photos SET name = ? WHERE name = ?").bind(new, old).run()
            let prefix = old + "/"
            // substr and length count characters, the same way for the prefix and the names.
            try database.prepare(
                "UPDATE photos SET name = ? || substr(name, length(?) + 1) WHERE substr(name, 1, length(?)) = ?"
            )
            .bind(new + "/", prefix, prefix, prefix).run()
        }
    }
}
