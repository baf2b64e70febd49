import PTKTime
import PTKVocabulary

/// The static gallery's page (`ptk gallery`): thumbnails newest first, at their own aspect
/// ratio in rows (the checkerboard only behind transparent ones, long names cut), in sections
/// (`WebPhoto.grouped`), each with its name, sender, time, rating and note, and a link to the
/// full photo. A page a browser opens from disk: no script, its style inline. Every text from
/// outside goes through `escapeHTML`; links are percent-encoded folder by folder. No I/O: the
/// library copies the thumbnails and writes the page.
public enum StaticGallery {
    /// The page for `photos` (newest first) of the received-photos `directory`: the photos are
    /// linked through `photosLink` (relative to the page, percent-encoded; "" when the page is in
    /// the directory), the thumbnails through `thumbnailsLink` (each `ID-SIDE.jpg`, or `.png`
    /// as `WebPhoto.thumbnailType` says: the library's gallery thumbnail of `thumbnailSide`;
    /// `thumbnailFiles` names another file by photo id, the old `ID.png` of a library of a schema
    /// before 5 kept until the photo is indexed again).
    public static func page(
        directory: String, photos: [WebPhoto], photosLink: String, thumbnailsLink: String, thumbnailSide: Int = 360,
        thumbnailFiles: [Int64: String] = [:]
    ) -> String {
        let groups = WebPhoto.grouped(photos)
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
            .grid { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 1rem .6rem; }
            figure { margin: 0; min-width: 0; max-width: 100%; display: flex; flex-direction: column; }
            figure a { display: block; background: #e8e8e8; }
            figure.alpha a { background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
            figure img { display: block; max-width: 100%; height: auto; }
            figcaption { width: 0; min-width: 100%; font-size: .8rem; margin-top: .4rem; overflow-wrap: anywhere; }
            .name, .meta { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
            .name { font-weight: 600; }
            h2 { font-size: 1rem; font-weight: 600; margin: 1.5rem 0 .5rem; }
            .meta { color: #666; }
            .none { display: block; width: 180px; color: #999; font-size: .8rem; padding: 1rem; text-align: center; }
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
            let href = photosLink.isEmpty ? encoded : photosLink + "/" + encoded
            var image =
                "<span class=\"none\">\(escapeHTML(photo.problem ?? (photo.indexed ? "no thumbnail" : "not indexed yet")))</span>"
            if photo.hasThumbnail, let type = photo.thumbnailType {
                let file = thumbnailFiles[photo.id] ?? "\(photo.id)-\(thumbnailSide).\(type == .png ? "png" : "jpg")"
                // At its 180 rendition's size (the 360 file is sharp at 2x), never stretched.
                let size = photo.fitted(in: 180).map { " width=\"\($0.width)\" height=\"\($0.height)\"" } ?? ""
                image =
                    "<img src=\"\(thumbnailsLink)/\(file)\" alt=\"\(escapeHTML(photo.name))\"\(size) loading=\"lazy\">"
            }
            var meta = [photo.takenMinutes.map { "taken " + $0 } ?? photo.received.description]
            if let sender = photo.senderName { meta.append("from " + sender) }
            meta.append(photo.dimensions)
            // A video (issue 58): said, with its length (the link opens it in the browser's player).
            if photo.isVideo { meta.append("video" + (photo.duration.map { " " + DurationText.clock($0) } ?? "")) }
            // A Live Photo's still (issue 58): its video is linked here, not an item of its own.
            var motion = ""
            if let name = photo.motionName {
                let encoded = pathComponents(name).map(percentEncode).joined(separator: "/")
                motion =
                    "<div class=\"meta\">Live Photo: <a href=\"\(escapeHTML(photosLink.isEmpty ? encoded : photosLink + "/" + encoded))\">its video</a></div>"
            }
            if let rating = photo.rating {
                meta.append(String(repeating: "★", count: rating) + String(repeating: "☆", count: 5 - rating))
            }
            html += """
                <figure\(photo.checkerboard ? " class=\"alpha\"" : "")><a href="\(href)">\(image)</a>
                <figcaption><div class="name" title="\(escapeHTML(photo.name))">\(escapeHTML(photo.name))</div><div class="meta">\(escapeHTML(meta.joined(separator: " · ")))</div>\(motion)\(photo.note.map { "<div>\(escapeHTML($0))</div>" } ?? "")</figcaption></figure>

                """
        }
        html += "</div>\n</body>\n</html>\n"
        return html
    }
}
