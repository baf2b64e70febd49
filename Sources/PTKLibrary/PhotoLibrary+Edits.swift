import PTKStore
import PTKSystem
import PTKVocabulary

/// The changes ptk makes (and the web interface): rename, note, rating, removal, and the
/// look-up of a photo already held. Each file change and its entry in one write transaction.
extension PhotoLibrary {
    /// The name `newName` gives a photo of `type` now at `current`: its last component by the
    /// rules of received names; the folders before it (each by those rules, at most
    /// `StoreRequest.maxFolderDepth`) when it has any, else `current`'s own folder.
    static func renamed(_ current: String, to newName: String, type: PhotoType) -> String {
        // Every "/" is found by scalars: "../\u{301}x.png" has a "/" though no Character is "/".
        var parts = newName.parts(separatedBy: "/", omittingEmpty: true)
        // "bob/" (or "/" for the top folder) moves the photo keeping its name.
        if newName.endsWithScalar("/") {
            parts.append(current.parts(separatedBy: "/", omittingEmpty: true).last ?? current)
        }
        let leaf = PhotoStore.finalName(parts.last ?? newName, type: type)
        guard newName.containsScalar("/") else {
            guard let folder = splitLastComponent(current).folder else { return leaf }
            return folder + "/" + leaf
        }
        let folders = parts.dropLast().map(PhotoStore.folderName)
        return (folders + [leaf]).joined(separator: "/")
    }

    /// Renames a photo's file and entry together, moving it to another folder (made as needed)
    /// when the new name has folders ("bob/IMG_1.png"). The new name follows the rules of
    /// received names and never replaces a file. Returns the photo as renamed.
    public func rename(_ name: String, to newName: String) throws(LibraryError) -> Photo {
        var photo = try find(name)
        // A JPEG keeps a JPEG ending (and a PNG a PNG one): the name says what the file is.
        if newName.containsScalar("/") && newName != "/" {
            // "/" alone moves a photo to the top folder; otherwise every folder must be one the store makes.
            let folders = pathComponents(newName).dropLast().joined(separator: "/")
            guard StoreRequest.isValidFolder(folders) else {
                throw LibraryError(
                    .refused,
                    "'\(folders)' is not a folder a photo can move to (at most \(StoreRequest.maxFolderDepth) names, none empty, '..' or starting with a dot)"
                )
            }
        }
        let final = Self.renamed(photo.name, to: newName, type: PhotoType(fileName: photo.name) ?? .png)
        if final == photo.name { throw LibraryError(.refused, "'\(photo.name)' already has that name") }
        try database.writeTransaction { () throws(LibraryError) in
            guard try self.photo(id: photo.id)?.name == photo.name else {
                throw LibraryError(.refused, "'\(photo.name)' changed while renaming it; try again")
            }
            let taken = try database.prepare("SELECT id FROM photos WHERE name = ?").bind(final)
            // Anything at the new name (even what cannot be read) means it is taken.
            if try taken.step() || (try? photos.statusBeneath(final)) != nil {
                throw LibraryError(.refused, "'\(final)' exists; ptk rename never replaces a photo")
            }
            do throws(SystemError) { try move(photo.name, to: final) } catch {
                if error.code == .exists {
                    throw LibraryError(.refused, "'\(final)' exists; ptk rename never replaces a photo")
                }
                throw LibraryError(.io, "cannot rename '\(photo.name)' to '\(final)': \(error)")
            }
            do throws(LibraryError) {
                try database.prepare("UPDATE photos SET name = ? WHERE id = ?").bind(final, photo.id).run()
            } catch {
                // If even this fails, the next reconcile follows the file to its new name.
                try? move(final, to: photo.name)
                throw error
            }
        }
        photo.name = final
        return photo
    }

    /// Moves the photo file `old` to `new` (both relative to the directory), making the folders
    /// `new` needs; never replaces a file, never follows a symlink.
    private func move(_ old: String, to new: String) throws(SystemError) {
        let from = try photos.parentBeneath(old)
        defer { from.close() }
        let (inFolder, leaf) = splitLastComponent(new)
        let folder = inFolder ?? ""
        let to = folder.isEmpty ? photos : try photos.openDirectoryBeneath(folder, creating: 0o755, ownerOf: directory)
        defer { if !folder.isEmpty { to.close() } }
        try to.move(from.name, in: from.folder, to: leaf)
        try to.sync()
        if from.folder.rawValue != to.rawValue { try from.folder.sync() }
    }

    /// The photo the library keeps with these bytes (SHA-256 and size), if its file is still
    /// there with that size: its name. What `duplicates = skip` looks up.
    public func held(sha256: String, size: Int64) throws(LibraryError) -> String? {
        let s = try database.prepare("SELECT name FROM photos WHERE sha256 = ? AND size = ? ORDER BY id").bind(
            sha256, size)
        while try s.step() {
            guard let name = s.text(0) else { continue }
            // The file may have gone or changed since it was indexed: only a file still there counts.
            if let st = try? photos.statusBeneath(name), st.isRegularFile, st.size == size { return name }
        }
        return nil
    }

    /// Removes photos' files, entries, thumbnails and previews.
    public func remove(_ name: String) throws(LibraryError) -> Photo {
        let photo = try find(name)
        try database.writeTransaction { () throws(LibraryError) in
            try database.prepare("DELETE FROM photos WHERE id = ?").bind(photo.id).run()
            do throws(SystemError) {
                let place = try photos.parentBeneath(photo.name)
                defer { place.close() }
                try place.folder.unlink(place.name)
            } catch  where error.code == .noSuchFile {} catch {
                throw LibraryError(.io, "cannot remove '\(photo.name)': \(error)")
            }
        }
        // A thumbnail or preview left behind is removed by the next sweep at start.
        try? removeRenditions(photo.id)
        return photo
    }

    /// Sets (or, with nil or "", clears) a photo's note.
    public func setNote(_ name: String, _ note: String?) throws(LibraryError) -> Photo {
        var photo = try find(name)
        let text = note.flatMap { $0.isEmpty ? nil : $0 }
        try database.writeTransaction { () throws(LibraryError) in
            try database.prepare("UPDATE photos SET note = ? WHERE id = ?").bind(text, photo.id).run()
        }
        photo.note = text
        return photo
    }

    /// Sets (0-5) or clears (nil) a photo's rating.
    public func setRating(_ name: String, _ rating: Int?) throws(LibraryError) -> Photo {
        if let rating, !(0...5).contains(rating) { throw LibraryError(.badInput, "a rating is 0 to 5") }
        var photo = try find(name)
        try database.writeTransaction { () throws(LibraryError) in
            try database.prepare("UPDATE photos SET rating = ? WHERE id = ?").bind(rating, photo.id).run()
        }
        photo.rating = rating
        return photo
    }
}
