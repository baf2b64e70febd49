import PTKConfiguration
import PTKHTTP
import PTKLibrary
import PTKProtocol
import PTKStore
import PTKSystem
import PTKTrust
import PTKUpload
import PTKVocabulary
import PTKWeb

extension WebEndpoint {
    // MARK: Uploads

    /// POST /upload?name=NAME with the photo as the body: the store's checks, names and
    /// durability as for every other path; answered `{"name", "duplicate"}` or `{"message"}`.
    func upload(_ r: WebRequest) throws(HTTPError) -> Bool {
        let session = r.context.session!
        let name = r.head.query["name"] ?? ""
        func refuse(_ status: Int, _ why: String) throws(HTTPError) -> Bool {
            r.log("refused the upload of \"\(clean(name))\": \(why); answered \(status)")
            // The body is not read: the connection closes after the answer.
            try json(r, status, UploadAnswer(message: why), close: true)
            return false
        }
        guard !name.isEmpty else { return try refuse(400, "the upload has no name (?name=)") }
        guard let size = StoreUpload.announcedSize(r.head) else {
            return try refuse(411, "the upload must give its Content-Length (or X-Expected-Entity-Length with a chunked body)")
        }
        guard size <= configuration.maxFileSize else {
            return try refuse(413, "it is \(formatBytes(Double(size))), over this receiver's limit of \(formatBytes(Double(configuration.maxFileSize)))")
        }
        let kept = configuration.types
        // The type the page read from the file's first bytes (X-Photo-Type), else the name's
        // ending. A claim the bytes belie is refused by the store's check of that type.
        let claimed = r.head.header("x-photo-type").flatMap { PhotoType(mediaType: $0) }
        guard let type = claimed ?? PhotoType(fileName: name), kept.contains(type) else {
            return try refuse(415, "not a type this receiver keeps (it keeps \(kept.map(\.displayName).joined(separator: ", ")))")
        }
        let sender = Sender(announcedName: "web: \(session.name)", id: nil, address: r.peer.description)
        let modified = r.head.header("x-last-modified").flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        // Named as ptk-send names what it sends: "holiday.png" holding a JPEG is "holiday.jpg".
        let request = StoreRequest(name: type.fittedName(name), size: size, sha256: "", type: type, sender: sender.announcedName,
                                   modified: modified, folder: arrivals.folder(for: sender))
        let outcome = StoreUpload.receive(request, into: store, from: r.http.requestBody) {
            shutdown.isRequested ? (503, "the receiver is shutting down") : nil
        }
        switch outcome {
        case .saved(let saved, let seconds):
            r.log(saved.isDuplicate ? "\"\(clean(name))\" is already kept as \(quotedForTerminal(saved.name))"
                                    : "saved \(quotedForTerminal(saved.name)), \(formatBytes(Double(saved.size))) in \(formatDecimal(seconds)) s",
                  always: !saved.isDuplicate)
            arrivals.saved(saved, type: type, from: sender, deviceID: "web session \(session.id)")
            try json(r, 200, UploadAnswer(name: saved.name, duplicate: saved.isDuplicate))
            return true
        case .failed(let failure) where failure.keepsConnection:
            r.log("refused \"\(clean(name))\": \(failure.detail); answered \(failure.status)")
            try json(r, failure.status, UploadAnswer(message: failure.reason))
            return true
        case .failed(let failure):
            return try refuse(failure.status, failure.reason)
        case .gone(let received):
            r.log("the upload of \"\(clean(name))\" ended after \(received) of \(size) bytes: the browser went away")
            return false
        }
    }
}
