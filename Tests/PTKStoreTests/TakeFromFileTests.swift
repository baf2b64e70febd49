import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKStore

/// `PhotoStore.take(_:from:)`, the inbox door's way in (issue 56): a source written while it
/// is read is not published.
@Suite("The store: taking an open file", .tags(.unit))
struct TakeFromFileTests {
    @Test(
        "a source written in place while it is read is not published (the bytes read may mix old and new, and a JPEG's data has no checksum)"
    )
    func sourceWrittenWhileRead() throws {
        let f = try StoreFixture()
        let bytes = makePNG(size: 3 << 20, seed: 5)
        let path = f.root + "/source.png"
        writeFile(path, bytes)
        let source = try FileDescriptor.open(path, flags: [.readOnly])
        defer { source.close() }
        var asked = 0
        let request = StoreRequest(name: "a.png", size: Int64(bytes.count), sha256: "", type: .png)
        let result = f.store.take(request, from: source) {
            asked += 1
            if asked == 2 {
                // A writer rewrites the file in place after the first MiB was read (the same
                // bytes: only the times tell, as they would for different bytes of equal length).
                usleep(20_000)  // a later change time than the open's, whatever the clock's tick
                let writer = try? FileDescriptor.open(path, flags: [.writeOnly])
                try? writer?.writeAll(bytes)
                writer?.close()
            }
            return false
        }
        guard case .failure(let failure) = result else {
            Issue.record("published a source written while it was read: \(result)")
            return
        }
        #expect(failure.kind == .sizeMismatch)
        #expect(failure.message.contains("changed while it was read"), "\(failure.message)")
        #expect(f.visible.isEmpty, "\(f.visible)")
        #expect(f.incoming.isEmpty, "\(f.incoming)")
    }

    @Test("a source left alone while it is read is published, identical")
    func sourceLeftAlone() throws {
        let f = try StoreFixture()
        let bytes = makePNG(size: 3 << 20, seed: 6)
        let path = f.root + "/source.png"
        writeFile(path, bytes)
        let source = try FileDescriptor.open(path, flags: [.readOnly])
        defer { source.close() }
        let request = StoreRequest(name: "a.png", size: Int64(bytes.count), sha256: "", type: .png)
        guard case .success(let saved) = f.store.take(request, from: source) else {
            Issue.record("not published")
            return
        }
        #expect(readFile(f.dir + "/" + saved.name) == bytes)
    }
}
