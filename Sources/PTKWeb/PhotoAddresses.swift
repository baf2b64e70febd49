import PTKVocabulary

/// The addresses the pages give a photo's images and views: its gallery thumbnails, its
/// preview, its original, the viewer with the gallery's filters, and the image the photo page
/// and the viewer show. Values are raw URLs (query values percent-encoded); the pages escape
/// them into attributes.
extension WebPages {
    /// The gallery thumbnails' long sides in pixels: 1x and 2x of the gallery's cells (the
    /// library's `Thumbnailer.gallerySides`: PTKWeb does not see the library; a test keeps
    /// them equal).
    public static let gallerySides = [180, 360]
    /// A preview's longest side (the library's `Thumbnailer.previewSide`).
    public static let previewSide = 1440
    /// The largest original a page offers a browser beside its preview (a wide screen may take
    /// it): 24 megapixels, a phone camera's and then some.
    public static let originalPixelsInSrcset = 24_000_000

    /// `/photo/ID/thumbnail/SIDE?v=CONTENT`: the `v` names the photo's content, so a browser
    /// may keep what it got.
    public static func thumbnailURL(_ p: WebPhoto, side: Int) -> String {
        "/photo/\(p.id)/thumbnail/\(side)?v=\(p.version)"
    }

    /// `/photo/ID/preview?v=CONTENT`.
    public static func previewURL(_ p: WebPhoto) -> String { "/photo/\(p.id)/preview?v=\(p.version)" }

    /// The gallery's filters as a query ("sender=Anna%20B&rating=3"), "" for none.
    public static func filterQuery(sender: String?, minRating: Int?) -> String {
        var query: [String] = []
        if let sender { query.append("sender=" + percentEncode(sender)) }
        if let minRating { query.append("rating=\(minRating)") }
        return query.joined(separator: "&")
    }

    /// `/view/ID` with the gallery's filters (its previous and next follow them).
    public static func viewURL(_ p: WebPhoto, filters: String) -> String {
        "/view/\(p.id)" + (filters.isEmpty ? "" : "?" + filters)
    }

    /// What the photo page and the viewer show of a photo.
    public struct ShownImage: Sendable, Equatable {
        /// The img's `src`.
        public var src: String
        /// The img's `srcset` (w descriptors), nil when there is one image only.
        public var srcset: String?
        /// The photo's thumbnail stands in while its preview is being made (a HEIC).
        public var waiting: Bool
    }

    /// The preview, with the original beside it in `srcset` when browsers show that too (the
    /// browser takes the original on a screen wider than the preview); else the original when
    /// browsers show it (PNG, JPEG); else the 360 thumbnail while the preview is coming; nil when
    /// there is nothing to show.
    /// An original is shown only when it needs no preview (a PNG or JPEG of at most
    /// `previewSide` on its long side), or beside a preview when it has at most
    /// `originalPixelsInSrcset` pixels: a photo whose preview is coming or could not be made is
    /// never shown (nor preloaded by the viewer) as its original, which may be hundreds of
    /// megapixels to decode.
    public static func shownImage(_ p: WebPhoto) -> ShownImage? {
        let original = "/photo/\(p.id)/original"
        if p.hasPreview {
            var srcset: String?
            if p.browserShowsOriginal, let preview = p.fitted(in: previewSide), let full = p.displayedSize,
                full.width > preview.width,
                full.width * full.height <= originalPixelsInSrcset
            {
                srcset = "\(previewURL(p)) \(preview.width)w, \(original) \(full.width)w"
            }
            return ShownImage(src: previewURL(p), srcset: srcset, waiting: false)
        }
        if p.browserShowsOriginal, let size = p.displayedSize, max(size.width, size.height) <= previewSide {
            return ShownImage(src: original, srcset: nil, waiting: false)
        }
        if p.hasThumbnail { return ShownImage(src: thumbnailURL(p, side: gallerySides[1]), srcset: nil, waiting: true) }
        return nil
    }

    /// `<img id="photo" ...>` of `shown`, `sizes` saying how wide it is shown.
    static func imageTag(_ shown: ShownImage, alt: String, sizes: String) -> String {
        let h = escapeHTML
        let srcset = shown.srcset.map { " srcset=\"\(h($0))\" sizes=\"\(h(sizes))\"" } ?? ""
        return "<img id=\"photo\" src=\"\(h(shown.src))\"\(srcset) alt=\"\(h(alt))\">"
    }
}
