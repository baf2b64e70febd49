import PTKHTTP
import PTKLibrary
import PTKPhotoPages
import PTKWeb

/// The viewer (`/view/ID?sender=...&rating=...`): the photo full screen, its neighbours in the
/// gallery's order under the same filters.
extension WebDoor {
    func viewerPage(_ r: Request, _ c: SignedIn, _ photo: Photo) throws(HTTPError) -> Response {
        let (filter, filters) = galleryFilter(r)
        let neighbours: (previous: Photo?, next: Photo?)
        let partner: Photo?
        do {
            neighbours = try c.connection.library().neighbours(of: photo.id, filter)
            partner = try c.connection.library().livePartner(of: photo)
        } catch {
            throw libraryFailed(r, error)
        }
        var shown = WebPhoto(photo)
        shown.motionCodec = photo.motionID == nil ? nil : partner?.codec
        return html(
            .ok,
            pages.view(
                shown, details: Self.details(photo, livePartner: partner),
                previous: neighbours.previous.map(WebPhoto.init),
                next: neighbours.next.map(WebPhoto.init), filters: filters, viewer: c.viewer))
    }
}
