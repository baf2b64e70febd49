import PTKLibrary
import PTKWeb

extension WebPhoto {
    /// The photo as the pages show it: what the web interface and the static gallery render
    /// of the library's `Photo`.
    public init(_ photo: Photo) {
        self.init(
            id: photo.id, name: photo.name, sha256: photo.sha256,
            displayedWidth: photo.displayedSize?.width, displayedHeight: photo.displayedSize?.height,
            received: photo.received, takenMinutes: photo.takenMinutes, day: photo.day,
            senderName: photo.senderName, note: photo.note, rating: photo.rating,
            indexed: photo.indexed, hasThumbnail: photo.hasThumbnail, problem: photo.problem)
        thumbnailType = photo.thumbnailType
        hasPreview = photo.preview == .made
        oldThumbnail = photo.hasOldThumbnail
        hasAlpha = photo.hasAlpha
        duration = photo.duration
        codec = photo.codec
        motionID = photo.motionID
    }
}
