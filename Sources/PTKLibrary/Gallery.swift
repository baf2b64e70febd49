import PTKSystem
import PTKVocabulary
import PTKWeb

extension PhotoLibrary {
    /// The default gallery folder: `.ptk/gallery/` of the received-photos directory.
    public var defaultGalleryFolder: String { folder + "/gallery" }

    /// Writes the static HTML page of the thumbnails (`StaticGallery.page`, newest first: name,
    /// sender, time, rating, note; each links to the full photo) as `index.html` in `outputDirectory` (default
    /// `.ptk/gallery/`), which a browser opens from disk. Links are relative, so the page works
    /// wherever the photos directory is mounted; outside the library folder the thumbnails are
    /// copied beside the page. Returns the page's path. With `linkingFrom`, the files are
    /// written into `outputDirectory` but link as if they were in `linkingFrom`, where they are
    /// moved afterwards (root's `ptk gallery -o DIR` has the service user write them into a
    /// folder of its own in DIR).
    public func gallery(to outputDirectory: String? = nil, linkingFrom finalDirectory: String? = nil) throws(LibraryError) -> (path: String, photos: Int) {
        // Written through the path as given (a staging child writes into "."), linked as final.
        let out = outputDirectory ?? defaultGalleryFolder
        let final = absolutePath(finalDirectory ?? out)
        let inLibrary = final == absolutePath(defaultGalleryFolder)
        do {
            if inLibrary {
                // .ptk/gallery is ptkd's folder: opened (made when missing) beneath the directory,
                // never through a symbolic link planted at its name or at .ptk.
                let folder = try photos.openDirectoryBeneath(Self.folderName + "/gallery", creating: 0o755, ownerOf: directory)
                folder.close()
            } else {
                try makeDirectories(out, mode: 0o755, ownerLike: nil)
            }
        } catch {
            let planted = inLibrary && (try? photos.status(of: Self.folderName + "/gallery"))?.isSymlink == true  // unreadable: the error as it is
            throw LibraryError(.io, "cannot create \(out): \(planted || error.code == .tooManySymlinks ? "it is a symbolic link, which is not followed" : "\(error)")")
        }
        let photosRelative = relativePath(from: final, to: absolutePath(directory))
        let thumbnailsRelative: String
        if inLibrary {
            thumbnailsRelative = "../thumbnails"
        } else {
            thumbnailsRelative = "thumbnails"
            do { try makeDirectories(out + "/thumbnails", mode: 0o755) } catch {
                throw LibraryError(.io, "cannot create \(out)/thumbnails: \(error)")
            }
        }
        let photos = Array(try all(sort: .time).reversed())
        // Beside a page outside the library, the thumbnails are copied next to it.
        let side = Thumbnailer.gallerySides.max()!
        if !inLibrary {
            for photo in photos where photo.hasThumbnail {
                // A thumbnail that cannot be read leaves its photo on the page without one.
                guard let name = photo.thumbnailFileName(side: side), let bytes = try? thumbnail(of: photo, side: side)?.bytes else { continue }
                let path = out + "/thumbnails/" + name
                do {
                    let fd = try FileDescriptor.open(path, flags: [.writeOnly, .create, .truncate, .noFollow], mode: 0o644)
                    defer { fd.close() }
                    try fd.writeAll(bytes)
                } catch {
                    throw LibraryError(.io, "cannot write \(path): \(error)")
                }
            }
        }
        // A photo not indexed again since schema 5 shows its old `<id>.png`.
        var oldThumbnails: [Int64: String] = [:]
        for photo in photos where photo.hasOldThumbnail { oldThumbnails[photo.id] = photo.thumbnailFileName(side: side) }
        let html = StaticGallery.page(directory: directory, photos: photos.map(WebPhoto.init), photosLink: photosRelative, thumbnailsLink: thumbnailsRelative,
                                       thumbnailSide: side, thumbnailFiles: oldThumbnails)
        let page = out + "/index.html"
        do { try writeFileAtomically(page, Array(html.utf8), mode: 0o644) } catch {
            throw LibraryError(.io, "cannot write \(page): \(error)")
        }
        return (final + "/index.html", photos.count)
    }
}

/// `path` made absolute against the working directory, without "." or "" components and with
/// ".." applied.
func absolutePath(_ path: String) -> String {
    let full = path.startsWithScalar("/") ? path : currentDirectory() + "/" + path
    var parts: [String] = []
    for part in full.parts(separatedBy: "/", omittingEmpty: true) {
        if part.utf8.elementsEqual(".".utf8) { continue }
        if part.utf8.elementsEqual("..".utf8) { _ = parts.popLast(); continue }
        parts.append(part)
    }
    return "/" + parts.joined(separator: "/")
}

/// The relative path from the absolute directory `from` to the absolute `to`, percent-encoded
/// for a URL ("" when they are the same).
func relativePath(from: String, to: String) -> String {
    let a = from.parts(separatedBy: "/", omittingEmpty: true), b = to.parts(separatedBy: "/", omittingEmpty: true)
    var common = 0
    while common < a.count && common < b.count && a[common].utf8.elementsEqual(b[common].utf8) { common += 1 }
    let up = Array(repeating: "..", count: a.count - common)
    let down = b[common...].map(percentEncode)
    return (up + down).joined(separator: "/")
}
