import PTKConfiguration
import PTKDoor
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKUpload
import PTKVocabulary
import PTKWeb

extension WebDoor {
    // MARK: Uploads

    /// POST /upload?name=NAME with the photo as the body: the store's checks, names and
    /// durability as for every other path; answered `{"name", "duplicate"}` or `{"message"}`.
    /// A refusal before the body's end closes the connection (the rest of the body is not read);
    /// a browser gone mid-body is not answered.
    func upload(_ r: Request, _ c: SignedIn) throws(HTTPError) -> Response {
        let session = c.session
        let name = r.query["name"] ?? ""
        func refuse(_ status: HTTPStatus, _ why: String) -> Response {
            r.log("refused the upload of \"\(clean(name))\": \(why); answered \(status)")
            return json(status, UploadAnswer(message: why)).closing()
        }
        guard !name.isEmpty else { return refuse(.badRequest, "the upload has no name (?name=)") }
        // A chunked body that does not say its length (curl -T -, scripts) is spooled first.
        let size = StoreUpload.announcedSize(r.head)
        guard size != nil || r.head.chunked else {
            return refuse(.lengthRequired, "the upload must give its Content-Length, or send its body chunked")
        }
        if let size, size > configuration.maxFileSize {
            return refuse(
                .contentTooLarge,
                "it is \(formatBytes(Double(size))), over this receiver's limit of \(formatBytes(Double(configuration.maxFileSize)))"
            )
        }
        let kept = configuration.types
        // The type the page read from the file's first bytes (X-Photo-Type), else the name's
        // ending. A claim the bytes belie is refused by the store's check of that type.
        let claimed = r.head.header("x-photo-type").flatMap { PhotoType(mediaType: $0) }
        guard let type = claimed ?? PhotoType(fileName: name), kept.contains(type) else {
            return refuse(
                .unsupportedMediaType,
                "not a type this receiver keeps (it keeps \(kept.map(\.displayName).joined(separator: ", ")))")
        }
        let sender = Sender(announcedName: "web: \(session.name)", id: nil, address: r.peer.description)
        let modified = r.head.header("x-last-modified").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        // Named as ptk-send names what it sends: "holiday.png" holding a JPEG is "holiday.jpg".
        let request = StoreRequest(
            name: type.fittedName(name), size: size ?? 0, sha256: "", type: type, sender: sender.announcedName,
            modified: modified, folder: arrivals.folder(for: sender))
        let shutdown = self.shutdown
        let stop = { shutdown.isRequested ? (503, "the receiver is shutting down") : nil }
        let outcome =
            size == nil
            ? StoreUpload.receive(
                undeclared: request, into: store, from: r.body, limit: configuration.maxFileSize, stop: stop)
            : StoreUpload.receive(request, into: store, from: r.body, stop: stop)
        switch outcome {
        case .saved(let saved, let seconds):
            r.log(
                saved.isDuplicate
                    ? "\"\(clean(name))\" is already kept as \(quotedForTerminal(saved.name))"
                    : "saved \(quotedForTerminal(saved.name)), \(formatBytes(Double(saved.size))) in \(formatDecimal(seconds)) s",
                always: !saved.isDuplicate)
            arrivals.saved(saved, type: type, from: sender, deviceID: "web session \(session.id)")
            return json(.ok, UploadAnswer(name: saved.name, duplicate: saved.isDuplicate))
        case .failed(let failure) where failure.keepsConnection:
            r.log("refused \"\(clean(name))\": \(failure.detail); answered \(failure.status)")
            return json(HTTPStatus(failure.status), UploadAnswer(message: failure.reason))
        case .failed(let failure):
            return refuse(HTTPStatus(failure.status), failure.reason)
        case .gone(let received):
            let of = size.map(String.init) ?? "an undeclared number of"
            r.log("the upload of \"\(clean(name))\" ended after \(received) of \(of) bytes: the browser went away")
            throw .gone
        }
    }
}
