import PTKProtocol
import PTKStore
import PTKTestTags
import Testing

@testable import PTKV1Door

@Suite("An OFFER as the store's request", .tags(.unit))
struct StoreRequestTests {
    @Test("name, size, hash, type and sender carry over")
    func carriesOver() throws {
        let hash = String(repeating: "ab", count: 32)
        let request = try StoreRequest.of(
            Offer(name: "IMG_1.jpg", size: 1234, sha256: hash, mediaType: "image/jpeg"), sender: "Anna's laptop"
        ).get()
        #expect(
            request == StoreRequest(name: "IMG_1.jpg", size: 1234, sha256: hash, type: .jpeg, sender: "Anna's laptop"))
        #expect(request.folder == "")
    }

    @Test("an offer of a type the store does not keep is refused not-png, naming the types it keeps")
    func unknownType() {
        guard
            case .failure(let failure) = StoreRequest.of(
                Offer(name: "a.gif", size: 100, sha256: "", mediaType: "image/gif"), sender: nil)
        else {
            Issue.record("a GIF became a request")
            return
        }
        #expect(
            Problem(failure)
                == Problem(
                    .notPNG,
                    "image/gif is not a type the store keeps (image/png, image/jpeg, image/heic, image/heif, video/mp4, video/quicktime)"
                ))
    }

    @Test(
        "the store's answer becomes SAVED and back: duplicate absent unless kept already (the wire bytes of a new photo unchanged)"
    )
    func savedOfStoredPhoto() {
        let hash = String(repeating: "cd", count: 32)
        let new = StoredPhoto(name: "alice/IMG_1.png", size: 9, sha256: hash)
        #expect(Saved(new) == Saved(name: "alice/IMG_1.png", size: 9, sha256: hash))
        #expect(Saved(new).duplicate == nil)
        let kept = StoredPhoto(name: "IMG_1.png", size: 9, sha256: hash, isDuplicate: true)
        #expect(Saved(kept) == Saved(name: "IMG_1.png", size: 9, sha256: hash, duplicate: true))
        #expect(StoredPhoto(Saved(kept)) == kept && StoredPhoto(Saved(new)) == new)
        #expect(!String(decoding: FrameEncoder.encode(.saved(Saved(new))), as: UTF8.self).contains("duplicate"))
    }
}
