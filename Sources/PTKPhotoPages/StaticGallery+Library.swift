import PTKLibrary
import PTKWeb

extension PhotoLibrary {
    /// Writes ptk's static gallery (`ptk gallery`): `StaticGallery.page` of every photo, newest
    /// first (name, sender, time, rating, note; each links to the full photo), written as
    /// `writeGallery` writes it (`index.html` in `outputDirectory`, default `.ptk/gallery/`,
    /// with the thumbnails beside it outside the library folder).
    public func gallery(
        to outputDirectory: String? = nil, linkingFrom finalDirectory: String? = nil,
        leavingOut: (String) -> Void = { _ in }
    ) throws(LibraryError) -> (path: String, photos: Int) {
        try writeGallery(to: outputDirectory, linkingFrom: finalDirectory, leavingOut: leavingOut) { contents in
            // A Live Photo is one item (issue 58): its still, linking its video.
            let names = Dictionary(contents.photos.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
            let items = contents.photos.filter { p in p.stillID.map { names[$0] == nil } ?? true }.map { p in
                var shown = WebPhoto(p)
                shown.motionName = p.motionID.flatMap { names[$0] }
                if shown.motionName == nil { shown.motionID = nil }
                return shown
            }
            return StaticGallery.page(
                directory: directory, photos: items,
                photosLink: contents.photosLink, thumbnailsLink: contents.thumbnailsLink,
                thumbnailSide: contents.thumbnailSide, thumbnailFiles: contents.oldThumbnails)
        }
    }
}
