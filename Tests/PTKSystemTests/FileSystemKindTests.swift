import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("The kind of a file system, for what inotify cannot see (issue 56)", .tags(.unit))
struct FileSystemKindTests {
    @Test(
        "statfs magic numbers (linux/magic.h): network file systems by name, FUSE, the rest local",
        arguments: [
            (Int64(0x6969), FileSystemKind.network("NFS")), (0x517B, .network("SMB")),
            (0xFF53_4D42, .network("SMB")), (0xFE53_4D42, .network("SMB")), (0x0102_1997, .network("9p")),
            (0x6573_5546, .fuse), (0xEF53, .local), (0x0102_1994, .local), (0x5846_5342, .local),
        ])
    func magic(_ magic: Int64, _ kind: FileSystemKind) {
        #expect(FileSystemKind(magic: magic) == kind)
    }

    @Test("a folder on this machine's test file system is local, as fstatfs reads it")
    func local() throws {
        let dir = makeTemporaryDirectory("ptk-fskind")
        defer { removeTree(dir) }
        let fd = try FileDescriptor.open(dir, flags: [.readOnly, .directory])
        defer { fd.close() }
        #expect(try fd.fileSystemKind() == .local)
    }
}
