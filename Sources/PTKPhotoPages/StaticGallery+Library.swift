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
            let items = Photo.liveItems(contents.photos).map { item in
                var shown = WebPhoto(item.photo)
                shown.motionName = item.motion?.name
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
