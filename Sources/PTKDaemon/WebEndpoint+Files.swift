import PTKConfiguration
import PTKDigest
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// The gallery, a photo's page, and the files a browser downloads (originals with Range, thumbnails, packages).
extension WebEndpoint {
    // MARK: Pages and files

    func gallery(_ r: WebRequest) throws(HTTPFailure) {
        let sender = r.head.query["sender"].flatMap { $0.isEmpty ? nil : $0 }
        let minRating = r.head.query["rating"].flatMap { Int($0) }.flatMap { (1...5).contains($0) ? $0 : nil }
        let filter = GalleryFilter(sender: sender, minRating: minRating)
        let cursor = r.head.query["after"].flatMap { GalleryCursor(token: $0) }
        let page: GalleryPage
        do { page = try r.context.connection.library().galleryPage(filter, after: cursor, limit: WebPages.pageSize) } catch { return try libraryFailed(r, error) }
        let more = page.next.map { next -> String in
            var query = ["after=" + next.token]
            if let sender { query.append("sender=" + percentEncode(sender)) }
            if let minRating { query.append("rating=\(minRating)") }
            return query.joined(separator: "&")
        }
        try html(r, 200, pages.gallery(page.sections.map { ($0.title, $0.photos.map(WebPhoto.init)) }, firstContinues: page.firstContinues,
                                       matching: page.matching, total: page.total, senders: page.senders, sender: sender,
                                       minRating: minRating, more: more, viewer: r.viewer!))
    }

    func photoPage(_ r: WebRequest, _ photo: Photo, message: String? = nil, status: Int = 200) throws(HTTPFailure) {
        let folder: String
        do { folder = try r.context.connection.library().thumbnailFolder } catch { return try libraryFailed(r, error) }
        try html(r, status, pages.photo(WebPhoto(photo), details: photo.details(thumbnailFolder: folder), viewer: r.viewer!, message: message))
    }

    func thumbnail(_ r: WebRequest, _ photo: Photo) throws(HTTPFailure) {
        let bytes: [UInt8]?
        do { bytes = try r.context.connection.library().thumbnail(of: photo) } catch { return try libraryFailed(r, error) }
        guard let bytes else {
            try html(r, 404, pages.error("\(photo.name) has no thumbnail: \(photo.problem ?? "not indexed yet")", viewer: r.viewer))
            return
        }
        // The gallery's URL names the photo's content (?v=), so a browser may keep it.
        try respond(r, 200, bytes, type: "image/png", headers: [("Cache-Control", r.head.query["v"] != nil ? "private, max-age=86400" : "no-cache")])
    }

    /// Sends a file, or the part a `Range` header asks for; `download` names it as an attachment.
    func sendFile(_ r: WebRequest, path: String, type: String, download: String?, cache: String = "private, no-cache") throws(HTTPFailure) {
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
    func package(_ r: WebRequest, _ photo: Photo) throws(HTTPFailure) {
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
