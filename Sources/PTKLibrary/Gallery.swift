import PTKSystem
import PTKVocabulary

extension PhotoLibrary {
    /// The default gallery folder: `.ptk/gallery/` of the received-photos directory.
    public var defaultGalleryFolder: String { folder + "/gallery" }

    /// Writes the static HTML page of the thumbnails that `page` renders from its contents
    /// (every photo, newest first, and the links: ptk's `gallery(to:)` renders it with
    /// PTKWeb's `StaticGallery.page`) as `index.html` in `outputDirectory` (default
    /// `.ptk/gallery/`), which a browser opens from disk. Links are relative, so the page works
    /// wherever the photos directory is mounted; outside the library folder the thumbnails are
    /// copied beside the page, and `leavingOut` is told why each thumbnail left out was (one
    /// that cannot be read, or is not one the library could have made: `thumbnail(of:side:)`;
    /// its photo is on the page without it). Returns the page's path and the number of
    /// photos. With `linkingFrom`,
    /// the files are written into `outputDirectory` but link as if they were in `linkingFrom`,
    /// where they are moved afterwards (root's `ptk gallery -o DIR` has the service user write
    /// them into a folder of its own in DIR).
    ///
    /// The output folder (and its `thumbnails`) is opened once, and everything is written
    /// through its descriptor: a folder swapped for a symbolic link after it was opened (the
    /// service user's `.ptk/gallery`) is not written through.
    public func writeGallery(
        to outputDirectory: String? = nil, linkingFrom finalDirectory: String? = nil,
        leavingOut: (String) -> Void = { _ in },
        page render: (GalleryContents) -> String
    ) throws(LibraryError) -> (path: String, photos: Int) {
        // Written through the path as given (a staging child writes into "."), linked as final.
        let out = outputDirectory ?? defaultGalleryFolder
        let final = absolutePath(finalDirectory ?? out)
        let inLibrary = final == absolutePath(defaultGalleryFolder)
        let folder: FileDescriptor
        do {
            if inLibrary {
                // .ptk/gallery is ptkd's folder: opened (made when missing) beneath the directory,
                // never through a symbolic link planted at its name or at .ptk.
                folder = try photos.openDirectoryBeneath(
                    Self.folderName + "/gallery", creating: 0o755, ownerOf: directory)
            } else {
                try makeDirectories(out, mode: 0o755, ownerLike: nil)
                folder = try openDirectory(out, followingLinks: true)
            }
        } catch {
            // unreadable: the error as it is
            let planted = inLibrary && (try? photos.status(of: Self.folderName + "/gallery"))?.isSymlink == true
            throw LibraryError(
                .io,
                "cannot create \(out): \(planted || error.code == .tooManySymlinks ? "it is a symbolic link, which is not followed" : "\(error)")"
            )
        }
        defer { folder.close() }
        let photosRelative = relativePath(from: final, to: absolutePath(directory))
        let thumbnailsRelative = inLibrary ? "../thumbnails" : "thumbnails"
        let photos = Array(try all(sort: .time).reversed())
        // Beside a page outside the library, the thumbnails are copied next to it, a batch at a
        // time (each at most `Thumbnailer.largestThumbnailBytes`), one flush for each batch.
        let side = Thumbnailer.gallerySides.max()!
        if !inLibrary {
            let thumbnails: FileDescriptor
            do {
                thumbnails = try folder.openDirectoryRefusingLinks(
                    "thumbnails", path: out + "/thumbnails", creating: 0o755)
            } catch {
                throw LibraryError(.io, "cannot create \(out)/thumbnails: \(error)")
            }
            defer { thumbnails.close() }
            var batch: [(name: String, bytes: [UInt8])] = []
            func flush() throws(LibraryError) {
                let errors = thumbnails.writeFilesAtomically(batch, mode: 0o644, path: out + "/thumbnails")
                if let error = errors.compactMap({ $0 }).first {
                    throw LibraryError(.io, "cannot write in \(out)/thumbnails: \(error)")
                }
                batch.removeAll()
            }
            for photo in photos where photo.hasThumbnail {
                guard let name = photo.thumbnailFileName(side: side) else { continue }
                do {
                    guard let rendition = try thumbnail(of: photo, side: side) else { continue }
                    batch.append((name, rendition.bytes))
                } catch {
                    leavingOut(error.description)
                    continue
                }
                if batch.count == 32 { try flush() }
            }
            if !batch.isEmpty { try flush() }
        }
        // A photo not indexed again since schema 5 shows its old `<id>.png`.
        var oldThumbnails: [Int64: String] = [:]
        for photo in photos where photo.hasOldThumbnail {
            oldThumbnails[photo.id] = photo.thumbnailFileName(side: side)
        }
        let html = render(
            GalleryContents(
                photos: photos, photosLink: photosRelative, thumbnailsLink: thumbnailsRelative,
                thumbnailSide: side, oldThumbnails: oldThumbnails))
        let page = out + "/index.html"
        do { try folder.replaceFileRefusingLinks("index.html", path: page, with: Array(html.utf8), mode: 0o644) } catch
        {
            throw LibraryError(.io, "cannot write \(page): \(error)")
        }
        return (final + "/index.html", photos.count)
    }
}

/// What the static gallery's page shows, for its renderer (`PhotoLibrary.writeGallery`).
public struct GalleryContents: Sendable {
    /// Every photo, newest first.
    public var photos: [Photo]
    /// The received-photos directory and the thumbnails folder, relative to the page
    /// (percent-encoded).
    public var photosLink: String
    /// The thumbnails folder (`.ptk/thumbnails/`), relative to the page (percent-encoded).
    public var thumbnailsLink: String
    /// The side of the thumbnails the page shows (the largest of `Thumbnailer.gallerySides`).
    public var thumbnailSide: Int
    /// The file names of the old `<id>.png` thumbnails (of photos not indexed again since
    /// schema 5), by photo id: shown for those photos instead.
    public var oldThumbnails: [Int64: String]
}

/// `path` made absolute against the working directory, without "." or "" components and with
/// ".." applied.
func absolutePath(_ path: String) -> String {
    let full = path.startsWithScalar("/") ? path : currentDirectory() + "/" + path
    var parts: [String] = []
    for part in full.parts(separatedBy: "/", omittingEmpty: true) {
        if part.utf8.elementsEqual(".".utf8) { continue }
        if part.utf8.elementsEqual("..".utf8) {
            _ = parts.popLast()
            continue
        }
        parts.append(part)
    }
    return "/" + parts.joined(separator: "/")
}

/// The relative path from the absolute directory `from` to the absolute `to`, percent-encoded
/// for a URL ("" when they are the same).
func relativePath(from: String, to: String) -> String {
    let a = from.parts(separatedBy: "/", omittingEmpty: true)
    let b = to.parts(separatedBy: "/", omittingEmpty: true)
    var common = 0
    while common < a.count && common < b.count && a[common].utf8.elementsEqual(b[common].utf8) { common += 1 }
    let up = Array(repeating: "..", count: a.count - common)
    let down = b[common...].map(percentEncode)
    return (up + down).joined(separator: "/")
}
