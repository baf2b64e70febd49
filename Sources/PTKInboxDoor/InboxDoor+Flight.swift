import PTKInbox
import PTKStore
import PTKSystem
import PTKVocabulary

/// What `InboxDoor.take` answers: the outcome for the file's tracker now, or a photo read whole
/// and checked whose flush round runs while the door reads the next file (`landed` gives the
/// outcome once it is concluded, and does what follows a saved photo).
enum Taking {
    /// The outcome, known now (nil: the store cannot take it now; tried again later).
    case over(SettleTracker.Outcome?)
    /// In its flush round.
    case inFlight(FinishingPhoto, landed: Landing)

    /// What follows a photo's round, given its result: the outcome for its tracker.
    typealias Landing = (Result<StoredPhoto, StoreFailure>, inout TrackedFile) -> SettleTracker.Outcome?
}

/// A file whose photo is in a flush round: the source stays open until it is concluded (its
/// device and inode name it while a drop folder's source is removed).
struct Flight {
    var key: FileKey
    var fd: FileDescriptor
    /// Its status when it was read.
    var status: FileStatus
    var label: String
    var photo: FinishingPhoto
    var landed: Taking.Landing
}

extension InboxDoor {
    /// Most photos in flush rounds at once while the door reads the next file (as many as
    /// ptk-send's sessions, twice): enough to keep the flusher busy, few open files.
    static let maxInFlight = 8

    /// Concludes the photos in flight, oldest first: those whose rounds are over, and then
    /// more, waiting for their rounds, until at most `keeping` are left in flight.
    func land(keeping: Int) {
        while let first = flying.first, first.photo.isOver || flying.count > keeping {
            flying.removeFirst()
            land(first)
        }
    }

    /// Concludes `flight` (waiting for its round if it is not over) and does what follows, once:
    /// the arrival, the library's record, the log line, a drop folder's source removed, and
    /// what its tracker decides. A change seen while it was in flight (an event, a scan) makes
    /// the file looked at again at once, as one seen after a take always did.
    func land(_ flight: Flight) {
        defer { flight.fd.close() }
        let result = flight.photo.conclude()
        // Forgotten meanwhile only when its folder was replaced (`retire`): what follows its
        // photo is done all the same, and nothing is kept of it under the key.
        let forgotten = files[flight.key] == nil
        var file = files[flight.key] ?? TrackedFile(tracker: SettleTracker(settle: settings.settle))
        let changed = file.due != nil
        file.inFlight = false
        let outcome = flight.landed(result, &file)
        if let decision = checked(outcome, flight.fd, flight.status, &file) {
            follow(decision, flight.key, flight.label, &file)
        } else {
            files[flight.key] = file
        }
        if forgotten {
            files[flight.key] = nil
        } else if changed {
            files[flight.key]?.due = .now
        }
    }

    /// The name of the photo with these bytes that is in flight, once its round has saved it
    /// (waiting for it); nil when none is, or its round failed. Asked by the store as it checks
    /// a photo for duplicates: the same bytes under two names in flight at once are stored once.
    func heldInFlight(sha256: String, size: Int64) -> String? {
        for flight in flying where flight.photo.sha256 == sha256 {
            if case .success(let saved) = flight.photo.waitForRound(), saved.size == size { return saved.name }
        }
        return nil
    }
}
