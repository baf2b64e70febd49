import PTKSystem

extension PhotoLibrary {
    /// The default gallery folder: `.ptk/gallery/` of the received-photos directory.
    public var defaultGalleryFolder: String { folder + "/gallery" }

    /// Writes a static HTML page of the thumbnails (newest first: name, sender, time, rating,
    /// note; each links to the full photo) as `index.html` in `outputDirectory` (default
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
        let groups = Self.grouped(Array(try all(sort: .time).reversed()))
        let list = groups.flatMap(\.photos)
        // Each section starts at its first photo's id.
        var sections: [Int64: String] = [:]
        if groups.count > 1 || groups.first?.title.isEmpty == false {
            for g in groups { sections[g.photos[0].id] = g.title }
        }
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escapeHTML("Photos in " + directory))</title>
            <style>
            body { font-family: system-ui, sans-serif; margin: 1rem; background: #fafafa; color: #222; }
            h1 { font-size: 1.2rem; font-weight: 600; }
            .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 1rem; }
            figure { margin: 0; background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .5rem; }
            figure a { display: flex; align-items: center; justify-content: center; height: 200px;
                       background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
            figure img { max-width: 100%; max-height: 200px; }
            figcaption { font-size: .8rem; margin-top: .4rem; overflow-wrap: anywhere; }
            .name { font-weight: 600; }
            h2 { font-size: 1rem; font-weight: 600; margin: 1.5rem 0 .5rem; }
            .meta { color: #666; }
            .none { color: #999; font-size: .8rem; padding: 1rem; text-align: center; }
            </style>
            </head>
            <body>
            <h1>\(escapeHTML("\(list.count) photo\(list.count == 1 ? "" : "s") in " + directory)), newest first</h1>
            <div class="grid">

            """
        for photo in list {
            if let title = sections[photo.id] {
                html += "</div>\n<h2>\(escapeHTML(title))</h2>\n<div class=\"grid\">\n"
            }
            // Each folder of the path is encoded on its own, so the link keeps its "/".
            let encoded = pathComponents(photo.name).map(percentEncode).joined(separator: "/")
            let href = photosRelative.isEmpty ? encoded : photosRelative + "/" + encoded
            var image = "<span class=\"none\">\(escapeHTML(photo.problem ?? (photo.indexed ? "no thumbnail" : "not indexed yet")))</span>"
            if photo.hasThumbnail {
                // A thumbnail that cannot be read leaves its photo on the page without one.
                if !inLibrary, let bytes = try? thumbnail(of: photo) {
                    let path = out + "/thumbnails/\(photo.id).png"
                    do {
                        let fd = try FileDescriptor.open(path, flags: [.writeOnly, .create, .truncate, .noFollow], mode: 0o644)
                        defer { fd.close() }
                        try fd.writeAll(bytes)
                    } catch {
                        throw LibraryError(.io, "cannot write \(path): \(error)")
                    }
                }
                image = "<img src=\"\(thumbnailsRelative)/\(photo.id).png\" alt=\"\(escapeHTML(photo.name))\" loading=\"lazy\">"
            }
            var meta = [photo.takenMinutes.map { "taken " + $0 } ?? photo.received.description]
            if let sender = photo.senderName { meta.append("from " + sender) }
            meta.append(photo.dimensions)
            if let rating = photo.rating { meta.append(String(repeating: "★", count: rating) + String(repeating: "☆", count: 5 - rating)) }
            html += """
                <figure><a href="\(href)">\(image)</a>
                <figcaption><div class="name">\(escapeHTML(photo.name))</div><div class="meta">\(escapeHTML(meta.joined(separator: " · ")))</div>\(photo.note.map { "<div>\(escapeHTML($0))</div>" } ?? "")</figcaption></figure>

                """
        }
        html += "</div>\n</body>\n</html>\n"
        let page = out + "/index.html"
        do { try writeFileAtomically(page, Array(html.utf8), mode: 0o644) } catch {
            throw LibraryError(.io, "cannot write \(page): \(error)")
        }
        return (final + "/index.html", list.count)
    }
}

extension PhotoLibrary {
    /// `photos` (newest first) in the gallery's sections: photos filed in folders (the layout
    /// setting) folder by folder, the folder with the newest photo first, titled "folder/" (or
    /// "(top folder)"); without folders, by the day each was taken (else received), newest
    /// first, titled by the day. One untitled section when there is nothing to tell apart.
    public static func grouped(_ photos: [Photo]) -> [(title: String, photos: [Photo])] {
        guard !photos.isEmpty else { return [] }
        let folderOf = { (p: Photo) -> String in splitLastComponent(p.name).folder ?? "" }
        let byFolder = photos.contains(where: { $0.name.containsScalar("/") })
        guard byFolder || Set(photos.map(\.day)).count > 1 else { return [("", photos)] }
        var list = photos
        if !byFolder { list.sort { ($0.day, $0.received) > ($1.day, $1.received) } }
        let grouping: (Photo) -> String = byFolder ? folderOf : { $0.day }
        var order: [String] = []
        var groups: [String: [Photo]] = [:]
        for p in list {
            let f = grouping(p)
            if groups[f] == nil { order.append(f) }
            groups[f, default: []].append(p)
        }
        return order.map { f in (!byFolder ? f : f.isEmpty ? "(top folder)" : f + "/", groups[f]!) }
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

/// Text safe inside HTML elements and quoted attribute values: `&`, `<`, `>`, `"` and `'` as
/// entities (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`), every other scalar as it is.
///
/// It walks Unicode scalars, as a browser's tokenizer does, never Characters: a Character is a
/// grapheme cluster, and `">\u{301}"` (">" and a combining accent) or `"\u{600}<"` (a prepended
/// mark and "<") is one Character equal to neither ">" nor "<", which a Character walk would
/// let through as markup.
public func escapeHTML(_ s: String) -> String {
    var out = String.UnicodeScalarView()
    for u in s.unicodeScalars {
        switch u {
        case "&": out.append(contentsOf: "&amp;".unicodeScalars)
        case "<": out.append(contentsOf: "&lt;".unicodeScalars)
        case ">": out.append(contentsOf: "&gt;".unicodeScalars)
        case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
        case "'": out.append(contentsOf: "&#39;".unicodeScalars)
        default: out.append(u)
        }
    }
    return String(out)
}

/// A file name as one URL path segment: every byte but unreserved ones (RFC 3986) as %XX.
public func percentEncode(_ s: String) -> String {
    var out = ""
    for byte in s.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.append(Character(Unicode.Scalar(byte)))
        default:
            let hex = Array("0123456789ABCDEF")
            out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
        }
    }
    return out
}
