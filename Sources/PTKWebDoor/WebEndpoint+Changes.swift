import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKVocabulary
import PTKWeb

/// Changes to a photo from its page: rename, note, rate, delete.
extension WebDoor {
    // MARK: Changes

    func change(_ r: Request, _ c: SignedIn, _ photo: Photo, _ change: PhotoChange) throws(HTTPError) -> Response {
        let form = c.form
        let library: PhotoLibrary
        do { library = try c.connection.library() } catch { throw libraryFailed(r, error) }
        // The library's answer first (a name taken, a photo gone), then the page.
        let done = Result { () throws(LibraryError) -> String? in
            switch change {
            case .rename:
                let new = (form["name"] ?? "").trimmingSpaces
                guard !new.isEmpty else { throw LibraryError(.refused, "a name cannot be empty") }
                let renamed = try library.rename(photo.name, to: new)
                r.log("renamed \(quotedForTerminal(photo.name)) to \(quotedForTerminal(renamed.name))", always: true)
            case .note:
                let note = form["note"] ?? ""
                _ = try library.setNote(photo.name, note)
                r.log(
                    note.isEmpty
                        ? "cleared the note of \(quotedForTerminal(photo.name))"
                        : "noted \(quotedForTerminal(photo.name))", always: true)
            case .rate:
                let text = form["rating"] ?? ""
                var rating: Int? = nil
                if text != "none" && !text.isEmpty {
                    guard let value = Int(text), (0...5).contains(value) else {
                        throw LibraryError(.refused, "a rating is 0 to 5, or none")
                    }
                    rating = value
                }
                _ = try library.setRating(photo.name, rating)
                r.log(
                    rating.map { "rated \(quotedForTerminal(photo.name)) \($0)/5" }
                        ?? "cleared the rating of \(quotedForTerminal(photo.name))", always: true)
            case .delete:
                // A Live Photo's still takes its video with it (issue 58).
                let done = try library.removeLivePhoto(photo.name)
                for p in done.removed { r.log("deleted \(quotedForTerminal(p.name))", always: true) }
                if let (motion, error) = done.motionFailure {
                    r.log(
                        "deleted \(quotedForTerminal(photo.name)) but not its Live Photo video \(quotedForTerminal(motion.name)): \(error)",
                        always: true)
                }
                return "/"
            }
            return "/photo/\(photo.id)"
        }
        switch done {
        case .success(let location):
            return redirect(location ?? "/")
        case .failure(let error):
            r.log("\(change.rawValue) of \(quotedForTerminal(photo.name)) refused: \(error)")
            if case .refused = error.kind { return photoPage(c, photo, message: error.description, status: .conflict) }
            throw libraryFailed(r, error)
        }
    }
}
