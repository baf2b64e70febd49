import PTKHTTP
import PTKLibrary
import PTKPhotoPages
import PTKWeb

/// The viewer (`/view/ID?sender=...&rating=...`): the photo full screen, its neighbours in the
/// gallery's order under the same filters.
extension WebEndpoint {
    func viewerPage(_ r: WebRequest, _ photo: Photo) throws(HTTPError) {
        let (filter, filters) = galleryFilter(r)
        let neighbours: (previous: Photo?, next: Photo?)
        do { neighbours = try r.context.connection.library().neighbours(of: photo.id, filter) } catch { return try libraryFailed(r, error) }
        try html(r, 200, pages.view(WebPhoto(photo), details: Self.details(photo), previous: neighbours.previous.map(WebPhoto.init),
                                    next: neighbours.next.map(WebPhoto.init), filters: filters, viewer: r.viewer!))
    }
}
