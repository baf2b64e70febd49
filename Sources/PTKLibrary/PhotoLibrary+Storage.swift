import PTKSystem

/// How much room the library takes: the photos and what it made of them.
public struct LibraryStorage: Sendable, Equatable {
    /// The photos' bytes, as the index knows their sizes.
    public var photos: Int64 = 0
    /// The gallery thumbnails in `.ptk/thumbnails`.
    public var thumbnails: Int64 = 0
    /// The previews in `.ptk/previews`.
    public var previews: Int64 = 0
    /// The index (`index.sqlite` and its -wal file).
    public var index: Int64 = 0
    /// Nothing counted yet.
    public init() {}
    /// Everything: the photos, their thumbnails and previews, and the index.
    public var total: Int64 { photos + thumbnails + previews + index }
    /// What the library adds to the photos.
    public var overhead: Int64 { thumbnails + previews + index }
}

extension PhotoLibrary {
    /// The library's size (`LibraryStorage`): the photos' sizes from the index, the regular
    /// files of the thumbnails and previews folders and the index's files, each read through
    /// the folders' descriptors without following a symlink. A folder that is missing or
    /// cannot be listed counts 0, as does a file that went meanwhile.
    public func storage() throws(LibraryError) -> LibraryStorage {
        var s = LibraryStorage()
        let sum = try database.prepare("SELECT coalesce(sum(size), 0) FROM photos").bind()
        if try sum.step() { s.photos = sum.int(0) ?? 0 }
        s.thumbnails = bytes(in: "thumbnails", where: { _ in true })
        s.previews = bytes(in: "previews", where: { _ in true })
        s.index = bytes(in: nil, where: { $0 == "index.sqlite" || $0 == "index.sqlite-wal" })
        return s
    }

    /// The total size of the regular files of the library folder `folderName` (nil: `.ptk`
    /// itself) whose names `include` takes.
    private func bytes(in folderName: String?, where include: (String) -> Bool) -> Int64 {
        let opened: FileDescriptor
        do {
            if let folderName {
                opened = try openLibraryFolder(folderName)
            } else {
                opened = try Self.openFolder(Self.folderName, in: photos, path: folder)
            }
        } catch {
            return 0  // a library without that folder takes no room there
        }
        defer { opened.close() }
        var total: Int64 = 0
        // A folder that cannot be listed now counts nothing; a file gone since the listing too.
        for name in (try? opened.entries()) ?? [] where include(name) {
            // gone or unreadable meanwhile: not counted
            if let st = try? opened.status(of: name), st.isRegularFile { total += st.size }
        }
        return total
    }
}
