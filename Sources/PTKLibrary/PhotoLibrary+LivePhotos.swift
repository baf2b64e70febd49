import PTKVocabulary

/// What a Live Photo's still does to its motion (issue 58): removed with it, exported with it.
/// The pairing itself is `LivePhotos`.
extension PhotoLibrary {
    /// What `removeLivePhoto` did.
    public struct LiveRemoval: Sendable {
        /// The photo named, then its motion when that went with it.
        public var removed: [Photo]
        /// The still's motion, kept because it is another still's motion too (a HEIC and a
        /// JPEG of one Live Photo); nil otherwise.
        public var keptMotion: Photo?
        /// The still `keptMotion` stays with.
        public var keptFor: Photo?
        /// The still's motion when it could not be removed after the still was, and why.
        public var motionFailure: (motion: Photo, error: LibraryError)?
    }

    /// Removes a photo as `remove` does and, when it is a Live Photo's still, its motion too,
    /// unless that video is another still's motion as well (then it stays with that one).
    /// Removing a motion by its own name removes it alone: its still stays, a photo. A motion
    /// that cannot be removed once its still is gone is said in `motionFailure`, beside the
    /// still removed (not thrown: the still's removal is done and is reported).
    public func removeLivePhoto(_ name: String) throws(LibraryError) -> LiveRemoval {
        let photo = try find(name)
        var done = LiveRemoval(removed: [try remove(photo.name)])
        guard let motionID = photo.motionID, let motion = try self.photo(id: motionID) else { return done }
        if let other = motion.stillID, let still = try self.photo(id: other) {
            done.keptMotion = motion
            done.keptFor = still
        } else {
            do { done.removed.append(try remove(motion.name)) } catch { done.motionFailure = (motion, error) }
        }
        return done
    }

    /// The package name of a still's motion beside the still's own: the video's own
    /// ("clip.ptk"), or "IMG_0042 (motion).ptk" when that is the still's ("IMG_0042.ptk").
    public static func motionPackageName(still: String, motion: String) -> String {
        let own = Package.folderName(for: motion)
        guard own == Package.folderName(for: still) else { return own }
        return String(own.dropLast(4)) + " (motion).ptk"
    }

    /// The photo a Live Photo's still or motion is paired with (its motion, or its still), if any.
    public func livePartner(of photo: Photo) throws(LibraryError) -> Photo? {
        guard let id = photo.motionID ?? photo.stillID else { return nil }
        return try self.photo(id: id)
    }
}

extension Photo {
    /// `photos` as the listings show them (issue 58; `ptk list`, `ptk gallery`): each Live
    /// Photo once, as its still with its motion; a motion whose still is among `photos` is no
    /// item of its own, and one whose still is not stays one. The order is kept.
    public static func liveItems(_ photos: [Photo]) -> [(photo: Photo, motion: Photo?)] {
        let byID = Dictionary(photos.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return photos.filter { p in p.stillID.map { byID[$0] == nil } ?? true }.map { p in
            (p, p.motionID.flatMap { byID[$0] })
        }
    }
}
