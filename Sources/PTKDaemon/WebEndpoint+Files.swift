import PTKConfiguration
import PTKDigest
import PTKHTTP
import PTKLibrary
import PTKPhotoPages
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// The gallery, a photo's page, and the files a browser downloads (originals with Range, thumbnails, packages).
extension WebEndpoint {
    // MARK: Pages and files

    /// The gallery's filters a request carries (`sender`, `rating` 1-5; others are ignored),
    /// and the same as a query for the links that keep them.
    func galleryFilter(_ r: WebRequest) -> (filter: GalleryFilter, query: String) {
        let sender = r.head.query["sender"].flatMap { $0.isEmpty ? nil : $0 }
        let minRating = r.head.query["rating"].flatMap { Int($0) }.flatMap { (1...5).contains($0) ? $0 : nil }
        return (GalleryFilter(sender: sender, minRating: minRating), WebPages.filterQuery(sender: sender, minRating: minRating))
    }

    func gallery(_ r: WebRequest) throws(HTTPError) {
        let (filter, filters) = galleryFilter(r)
        let cursor = r.head.query["after"].flatMap { GalleryCursor(token: $0) }
        let page: GalleryPage
        do { page = try r.context.connection.library().galleryPage(filter, after: cursor, limit: WebPages.pageSize) } catch { return try libraryFailed(r, error) }
        let more = page.next.map { next in (["after=" + next.token] + (filters.isEmpty ? [] : [filters])).joined(separator: "&") }
        try html(r, 200, pages.gallery(page.sections.map { ($0.title, $0.photos.map(WebPhoto.init)) }, firstContinues: page.firstContinues,
                                       matching: page.matching, total: page.total, senders: page.senders, sender: filter.sender,
                                       minRating: filter.minRating, more: more, viewer: r.viewer!))
    }

    func photoPage(_ r: WebRequest, _ photo: Photo, message: String? = nil, status: Int = 200) throws(HTTPError) {
        try html(r, status, pages.photo(WebPhoto(photo), details: Self.details(photo), viewer: r.viewer!, message: message))
    }

    /// The photo's details for the pages: the library's, but its thumbnail told as made, coming
    /// or why there is none (never its path on the host), and where its preview stands.
    static func details(_ photo: Photo) -> [(String, DetailValue)] {
        let preview: String
        switch photo.preview {
        case .made: preview = "made"
        case .notNeeded: preview = "not needed: the original is shown"
        case .pending: preview = photo.indexed || photo.hasThumbnail ? "coming" : "(not indexed yet)"
        case .failed(let why): preview = "none: " + why
        }
        var details: [(String, DetailValue)] = []
        for (key, value) in photo.details(thumbnailFolder: "") {
            // The library's preview line names a path on the host: told below, after the thumbnail.
            if key == "preview" { continue }
            guard key == "thumbnail" else {
                details.append((key, value))
                continue
            }
            let thumbnail: String
            if !photo.indexed {
                thumbnail = "coming"
            } else if photo.hasThumbnail {
                thumbnail = "made" + (photo.problem.map { " (\($0))" } ?? "")
            } else {
                thumbnail = "none: \(photo.problem ?? "unknown reason")"
            }
            details.append((key, .text(thumbnail)))
            details.append(("preview", .text(preview)))
        }
        return details
    }

    /// A gallery thumbnail (`side` one of `Thumbnailer.gallerySides`), as JPEG or PNG.
    func thumbnail(_ r: WebRequest, _ photo: Photo, side: Int) throws(HTTPError) {
        let rendition: Rendition?
        do { rendition = try r.context.connection.library().thumbnail(of: photo, side: side) } catch { return try libraryFailed(r, error) }
        guard let rendition else {
            try html(r, 404, pages.error("\(photo.name) has no thumbnail: \(photo.problem ?? "not indexed yet")", viewer: r.viewer))
            return
        }
        try respond(r, 200, rendition.bytes, type: rendition.type.mediaType, headers: [("Cache-Control", imageCache(r))])
    }

    /// The photo's preview (a JPEG of at most `Thumbnailer.previewSide` pixels), or a page
    /// saying why it has none.
    func preview(_ r: WebRequest, _ photo: Photo) throws(HTTPError) {
        let bytes: [UInt8]?
        do { bytes = try r.context.connection.library().preview(of: photo) } catch { return try libraryFailed(r, error) }
        guard let bytes else {
            let why: String
            switch photo.preview {
            case .notNeeded: why = "none is needed: its original is shown"
            case .failed(let reason): why = "it could not be made: \(reason)"
            case .pending, .made: why = "it is not made yet"
            }
            try html(r, 404, pages.error("\(photo.name) has no preview: \(why)", viewer: r.viewer))
            return
        }
        // A JPEG, or a PNG for a photo with transparency.
        try respond(r, 200, bytes, type: (photo.previewType ?? .jpeg).mediaType, headers: [("Cache-Control", imageCache(r))])
    }

    /// The gallery's and the pages' image addresses name the photo's content (`?v=`), so a
    /// browser may keep what they gave for a day; without it, it asks again each time.
    func imageCache(_ r: WebRequest) -> String { r.head.query["v"] != nil ? "private, max-age=86400" : "no-cache" }

    /// Sends a file, or the part a `Range` header asks for; `download` names it as an attachment.
    func sendFile(_ r: WebRequest, path: String, type: String, download: String?, cache: String = "private, no-cache") throws(HTTPError) {
        let fd: FileDescriptor
        let size: Int64
        do {
            fd = try FileDescriptor.open(path, flags: [.readOnly, .noFollow])
            let status = try fd.status()
            size = status.isRegularFile ? status.size : -1
        } catch {
            r.log("cannot open \(path): \(error); answered 404")
            try html(r, 404, pages.error("The photo's file cannot be read: \(error.reason)", viewer: r.viewer))
            return
        }
        defer { fd.close() }
        guard size >= 0 else {
            r.log("\(path) is not a regular file; answered 404")
            try html(r, 404, pages.error("The photo's file is not a regular file", viewer: r.viewer))
            return
        }
        var headers = [("Cache-Control", cache)]
        if let download { headers.append(("Content-Disposition", attachment(download))) }
        try r.http.sendFile(fd, size: size, type: type, headers: headers, range: r.head.header("range"), headOnly: r.headOnly,
                            idle: configuration.idleTimeout) { offset, error in
            r.log((error.map { "cannot read \(path) at byte \(offset): \($0)" } ?? "\(path) became shorter while being sent") + "; connection closed")
        }
    }

    /// The photo's `.ptk` package as a zip archive (NAME.ptk/photo.data and photo.metadata):
    /// exported into a folder of its own below the state directory, archived, sent, removed.
    func package(_ r: WebRequest, _ photo: Photo) throws(HTTPError) {
        let work = access.directory + "/export-" + randomBytes(16).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
        let folder = work + "/" + Package.folderName(for: photo.name)
        defer {
            // Each export has a folder of its own: whatever of it exists goes now (a file already
            // gone, or a folder not made, is nothing to remove).
            for file in [folder + "/" + Package.dataName, folder + "/" + Package.metadataName, work + "/package.zip"] {
                try? removeFile(file)  // see above
            }
            try? removeDirectory(folder)  // see above
            try? removeDirectory(work)  // see above
        }
        let archive: String
        do {
            try makeDirectories(work, mode: 0o700)
            let library = try r.context.connection.library()
            _ = try library.export(photo.name, to: work)
            archive = try library.archive(package: folder, to: work + "/package.zip")
        } catch let error as LibraryError {
            return try libraryFailed(r, error)
        } catch {
            return try libraryFailed(r, LibraryError(.io, "cannot make the package: \(error)"))
        }
        try sendFile(r, path: archive, type: "application/zip", download: Package.folderName(for: photo.name) + ".zip", cache: "no-store")
    }
}
