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
extension WebDoor {
    // MARK: Pages and files

    /// The gallery's filters a request carries (`sender`, `rating` 1-5; others are ignored),
    /// and the same as a query for the links that keep them.
    func galleryFilter(_ r: Request) -> (filter: GalleryFilter, query: String) {
        let sender = r.head.query["sender"].flatMap { $0.isEmpty ? nil : $0 }
        let minRating = r.head.query["rating"].flatMap { Int($0) }.flatMap { (1...5).contains($0) ? $0 : nil }
        return (
            GalleryFilter(sender: sender, minRating: minRating),
            WebPages.filterQuery(sender: sender, minRating: minRating)
        )
    }

    func gallery(_ r: Request, _ c: SignedIn) throws(HTTPError) -> Response {
        let (filter, filters) = galleryFilter(r)
        let cursor = r.query["after"].flatMap { GalleryCursor(token: $0) }
        let page: GalleryPage
        do { page = try c.connection.library().galleryPage(filter, after: cursor, limit: WebPages.pageSize) } catch {
            throw libraryFailed(r, error)
        }
        let more = page.next.map { next in
            (["after=" + next.token] + (filters.isEmpty ? [] : [filters])).joined(separator: "&")
        }
        return html(
            .ok,
            pages.gallery(
                page.sections.map { ($0.title, $0.photos.map(WebPhoto.init)) }, firstContinues: page.firstContinues,
                matching: page.matching, total: page.total, senders: page.senders, sender: filter.sender,
                minRating: filter.minRating, more: more, viewer: c.viewer))
    }

    func photoPage(_ c: SignedIn, _ photo: Photo, message: String? = nil, status: HTTPStatus = .ok) -> Response {
        // A Live Photo's other half is named in its details (issue 58); a library that cannot
        // say leaves the line out rather than the page.
        let partner = try? c.connection.library().livePartner(of: photo)
        return html(
            status,
            pages.photo(
                WebPhoto(photo), details: Self.details(photo, livePartner: partner ?? nil), viewer: c.viewer,
                message: message))
    }

    /// The photo's details for the pages: the library's, but its thumbnail told as made, coming
    /// or why there is none (never its path on the host), and where its preview stands.
    static func details(_ photo: Photo, livePartner: Photo? = nil) -> [(String, DetailValue)] {
        let preview: String
        switch photo.preview {
        case .made: preview = "made"
        case .notNeeded: preview = "not needed: the original is shown"
        case .pending: preview = photo.indexed || photo.hasThumbnail ? "coming" : "(not indexed yet)"
        case .failed(let why): preview = "none: " + why
        }
        var details: [(String, DetailValue)] = []
        for (key, value) in photo.details(thumbnailFolder: "", livePartner: livePartner) {
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
    func thumbnail(_ r: Request, _ c: SignedIn, _ photo: Photo, side: Int) throws(HTTPError) -> Response {
        let rendition: Rendition?
        do { rendition = try c.connection.library().thumbnail(of: photo, side: side) } catch {
            throw libraryFailed(r, error)
        }
        guard let rendition else {
            throw .status(.notFound, "\(photo.name) has no thumbnail: \(photo.problem ?? "not indexed yet")")
        }
        return .bytes(.ok, rendition.bytes, type: rendition.type.mediaType, headers: ["Cache-Control": imageCache(r)])
    }

    /// The photo's preview (a JPEG of at most `Thumbnailer.previewSide` pixels), or a page
    /// saying why it has none.
    func preview(_ r: Request, _ c: SignedIn, _ photo: Photo) throws(HTTPError) -> Response {
        let bytes: [UInt8]?
        do { bytes = try c.connection.library().preview(of: photo) } catch { throw libraryFailed(r, error) }
        guard let bytes else {
            let why: String
            switch photo.preview {
            case .notNeeded: why = "none is needed: its original is shown"
            case .failed(let reason): why = "it could not be made: \(reason)"
            case .pending, .made: why = "it is not made yet"
            }
            throw .status(.notFound, "\(photo.name) has no preview: \(why)")
        }
        // A JPEG, or a PNG for a photo with transparency or a PNG of at most 360x360.
        return .bytes(
            .ok, bytes, type: (photo.previewType ?? .jpeg).mediaType, headers: ["Cache-Control": imageCache(r)])
    }

    /// The gallery's and the pages' image addresses name the photo's content (`?v=`), so a
    /// browser may keep what they gave for a day; without it, it asks again each time.
    func imageCache(_ r: Request) -> String { r.query["v"] != nil ? "private, max-age=86400" : "no-cache" }

    /// A file, or the part a `Range` header asks for; `download` names it as an attachment. The
    /// response holds the file open until the connection has sent it.
    func sendFile(_ r: Request, path: String, type: String, download: String?, cache: String = "private, no-cache")
        throws(HTTPError) -> Response
    {
        let fd: FileDescriptor
        let size: Int64
        do throws(SystemError) {
            fd = try FileDescriptor.open(path, flags: [.readOnly, .noFollow])
            let status: FileStatus
            do throws(SystemError) { status = try fd.status() } catch {
                fd.close()
                throw error
            }
            size = status.isRegularFile ? status.size : -1
        } catch {
            r.log("cannot open \(path): \(error); answered 404")
            throw .status(.notFound, "The photo's file cannot be read: \(error.reason)")
        }
        guard size >= 0 else {
            fd.close()
            r.log("\(path) is not a regular file; answered 404")
            throw .status(.notFound, "The photo's file is not a regular file")
        }
        var headers: HTTPFields = ["Cache-Control": cache]
        if let download { headers.append("Content-Disposition", attachment(download)) }
        var response = Response.file(fd, size: size, type: type, headers: headers, range: r.head.header("range")) {
            offset, error in
            r.log(
                (error.map { "cannot read \(path) at byte \(offset): \($0)" }
                    ?? "\(path) became shorter while being sent") + "; connection closed")
        }
        response.whenDone = { fd.close() }
        return response
    }

    /// The photo's `.ptk` package as a zip archive (NAME.ptk/photo.data and photo.metadata):
    /// exported into a folder of its own below the state directory, archived, opened, removed,
    /// and sent from the open file.
    func package(_ r: Request, _ c: SignedIn, _ photo: Photo) throws(HTTPError) -> Response {
        let work =
            access.directory + "/export-"
            + randomBytes(16).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
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
            let library = try c.connection.library()
            _ = try library.export(photo.name, to: work)
            archive = try library.archive(package: folder, to: work + "/package.zip")
        } catch let error as LibraryError {
            throw libraryFailed(r, error)
        } catch {
            throw libraryFailed(r, LibraryError(.io, "cannot make the package: \(error)"))
        }
        // Opened before the files are removed (below): the open file keeps its bytes until it is sent.
        return try sendFile(
            r, path: archive, type: "application/zip", download: Package.folderName(for: photo.name) + ".zip",
            cache: "no-store")
    }
}
