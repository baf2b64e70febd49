import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// Issue 54, second audit: root's ptk decided whom to act as from lstat and realpath of the
/// path, then opened the directory by that path again: the service user swapped a folder on the
/// way for a moment and the check saw only root's folders (or failed, which counted as "root
/// only"). `openWay` walks by descriptors; these tests swap folders in the middle of the walk
/// (its `afterEach` hook, at one exact step) and check that what the way says of its owners is
/// true of the directory it holds open.
@Suite(.tags(.unit)) struct WayTests {
    /// A fresh root-owned folder under /tmp: `top/state` (the service user's, 4242) holds
    /// `received` (4242's library) and `decoy` (4242's link to `top/roots`, a folder of root's);
    /// `top/photos` is root's link to `top/state/received`, as an administrator configures it.
    func withTree(_ body: (String) throws -> Void) throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        let top = makeTemporaryDirectory("ptk-way")
        defer { removeTree(top) }
        chmod(top, 0o755)
        #expect(mkdir(top + "/roots", 0o755) == 0)
        #expect(mkdir(top + "/state", 0o750) == 0 && chown(top + "/state", 4242, 4242) == 0)
        #expect(mkdir(top + "/state/received", 0o755) == 0 && chown(top + "/state/received", 4242, 4242) == 0)
        #expect(symlink(top + "/roots", top + "/state/decoy") == 0 && lchown(top + "/state/decoy", 4242, 4242) == 0)
        #expect(symlink(top + "/state/received", top + "/photos") == 0)
        try body(top)
    }

    func identity(_ fd: FileDescriptor) throws -> FileIdentity { FileIdentity(try fd.status()) }
    func identity(_ path: String) throws -> FileIdentity { FileIdentity(try fileStatus(path)) }

    @Test("the way through the service user's folder names that user, whatever it swaps once the walk is past it")
    func swappedAfterItsFolderWasOpened() throws {
        try withTree { top throws in
            // Swapped right after `state` is opened: the walk goes on into the link, and reaches
            // root's folder through the service user's. The check on paths saw only root's
            // folders here (the path as written is root's link; as resolved, root's folder).
            let way = try openWay(top + "/photos") { walked in
                if walked == top + "/state" { exchangeNames(top + "/state/received", top + "/state/decoy") }
            }
            let opened = try #require(way.directory)
            defer { opened.close() }
            #expect(try identity(opened) == identity(top + "/roots"))
            #expect(way.owners.map(\.user) == [4242], "\(way.steps)")
            #expect(way.steps.contains { $0.path == top + "/state/received" && $0.isSymlink && $0.owner == 4242 })
        }
    }

    @Test("swapped after the directory itself was opened, the way holds the directory it judged")
    func swappedAfterTheEnd() throws {
        try withTree { top throws in
            let way = try openWay(top + "/photos") { walked in
                if walked == top + "/state/received" { exchangeNames(top + "/state/received", top + "/state/decoy") }
            }
            let opened = try #require(way.directory)
            defer { opened.close() }
            // What was judged (the service user's library) is what is held, not what the path leads to now.
            #expect(try identity(opened) == identity(top + "/state/decoy"))
            #expect(try identity(opened) != identity(top + "/photos"))
            #expect(way.steps.last?.owner == 4242 && way.owners.map(\.user) == [4242])
        }
    }

    @Test(
        "a part of the way that is missing (a link the service user left dangling) is an error naming it, never a way of root's"
    )
    func aMissingPartIsAnError() throws {
        try withTree { top throws in
            #expect(unlink(top + "/state/decoy") == 0 && symlink("/nonexistent-ptk-decoy", top + "/state/decoy") == 0)
            var thrown: SystemError?
            do {
                _ = try openWay(top + "/photos") { walked in
                    if walked == top + "/state" { exchangeNames(top + "/state/received", top + "/state/decoy") }
                }
            } catch let error as SystemError { thrown = error }
            #expect(
                thrown?.code == .noSuchFile && thrown?.object == "/nonexistent-ptk-decoy",
                "\(String(describing: thrown))")
            // Allowed (an output folder that is made when missing), it ends the way there, with
            // the service user's folders and link on it.
            let partial = try openWay(top + "/photos", allowingMissing: true)
            #expect(partial.directory == nil && partial.missing == "/nonexistent-ptk-decoy")
            #expect(partial.owners.map(\.user) == [4242])
        }
    }

    @Test("a file where a folder is expected, and a loop of links, are errors")
    func notAFolderAndLoops() throws {
        try withTree { top throws in
            writeFile(top + "/file", [1])
            #expect(throws: SystemError.self) { _ = try openWay(top + "/file") }
            #expect(symlink(top + "/loop", top + "/loop") == 0)
            var thrown: SystemError?
            do { _ = try openWay(top + "/loop/x") } catch let error as SystemError { thrown = error }
            #expect(thrown?.code == .tooManySymlinks)
        }
    }

    @Test(
        "beneath: ptkd's folders inside the directory, their links followed and noted, a file noted where it ends, a missing one ending it"
    )
    func beneath() throws {
        try withTree { top throws in
            #expect(mkdir(top + "/roots/lib", 0o755) == 0)
            #expect(symlink(top + "/state/received", top + "/roots/lib/.ptk") == 0)
            writeFile(top + "/roots/lib/.incoming", [1])
            let way = try openWay(top + "/roots/lib")
            defer { way.directory?.close() }
            #expect(way.owners.isEmpty)
            // A link of root's to the service user's folder: its way counts that user.
            #expect(try way.beneath(".ptk/thumbnails").owners.map(\.user) == [4242])
            #expect(try way.beneath(".ptk/thumbnails").missing == top + "/state/received/thumbnails")
            let file = try way.beneath(".incoming")
            #expect(
                file.missing == nil && file.steps.last?.path == top + "/roots/lib/.incoming"
                    && file.steps.last?.isDirectory == false)
        }
    }

    @Test("entries: what a folder beneath the directory holds, each by its own owner, a link not followed to reach it")
    func entries() throws {
        try withTree { top throws in
            #expect(mkdir(top + "/roots/.ptk", 0o755) == 0)
            writeFile(top + "/roots/.ptk/index.sqlite", [1])
            #expect(chown(top + "/roots/.ptk/index.sqlite", 4242, 4242) == 0)
            #expect(symlink(top + "/state/received", top + "/roots/elsewhere") == 0)
            let way = try openWay(top + "/roots")
            defer { way.directory?.close() }
            let files = try #require(try way.entries(of: ".ptk"))
            #expect(files.map(\.path) == [top + "/roots/.ptk/index.sqlite"] && Way.owners(files).map(\.user) == [4242])
            #expect(try way.entries(of: "")?.map(\.path).sorted() == [top + "/roots/.ptk", top + "/roots/elsewhere"])
            #expect(try way.entries(of: "elsewhere") == nil, "a link is not followed to a folder")
            #expect(try way.entries(of: "missing") == nil)
        }
    }

    @Test("a folder with an access ACL granting a user write is found, and says it has one")
    func anAccessACLIsNoted() throws {
        try withTree { top throws in
            // ACL_USER_OBJ rwx, ACL_USER 4242 rwx, ACL_GROUP_OBJ r-x, ACL_MASK rwx, ACL_OTHER r-x (the xattr's layout).
            let script = """
                import os, struct
                e = lambda tag, perm, id=0xFFFFFFFF: struct.pack("<HHI", tag, perm, id)
                os.setxattr("\(top)/roots", "system.posix_acl_access", struct.pack("<I", 2) + e(1, 7) + e(2, 7, 4242) + e(4, 5) + e(0x10, 7) + e(0x20, 5))
                """
            let set = system("python3 -c '\(script)'")
            try #require(set == 0, "cannot set an ACL here (python3, or a file system without ACLs)")
            let way = try openWay(top + "/roots")
            way.directory?.close()
            let found = way.changeableFolder(trusting: nil)
            #expect(
                found == ChangeableFolder(path: top + "/roots", owner: 0, group: 0, mode: 0o775, hasAccessACL: true),
                "\(String(describing: found))")
        }
    }

    @Test(
        "changeableFile: a regular file others may write (mode bits, or an ACL granting write), not the trusted user's; links, folders and owner-only files pass"
    )
    func changeableFile() throws {
        try withTree { top throws in
            let ptk = top + "/roots/.ptk"
            let index = ptk + "/index.sqlite"
            #expect(mkdir(ptk, 0o755) == 0 && mkdir(ptk + "/shared", 0o777) == 0 && chmod(ptk + "/shared", 0o777) == 0)
            writeFile(index, [1])
            #expect(chmod(index, 0o644) == 0 && symlink("/etc/hostname", ptk + "/link") == 0)
            func found(trusting trusted: UInt32?) throws -> WayStep? {
                let way = try openWay(top + "/roots")
                defer { way.directory?.close() }
                return Way.changeableFile(try #require(try way.entries(of: ".ptk")), trusting: trusted)
            }
            #expect(try found(trusting: nil) == nil, "a 0644 file, a 0777 folder and a link")
            for mode: mode_t in [0o664, 0o646, 0o620] {
                #expect(chmod(index, mode) == 0)
                let file = try found(trusting: nil)
                #expect(
                    file?.path == index && file.map { $0.mode & 0o7777 } == UInt32(mode) && file?.hasAccessACL == false,
                    "\(String(mode, radix: 8)): \(String(describing: file))")
            }
            #expect(chown(index, 4242, 4242) == 0 && chmod(index, 0o664) == 0)
            #expect(try found(trusting: 4242) == nil, "the trusted user's own file")
            #expect(try found(trusting: 4343)?.path == index)
            // ACL_USER_OBJ rw-, ACL_USER 4343 rw-, ACL_GROUP_OBJ r--, ACL_MASK rw-, ACL_OTHER r--: the mask is the group bits.
            #expect(chown(index, 0, 0) == 0 && chmod(index, 0o644) == 0)
            let script = """
                import os, struct
                e = lambda tag, perm, id=0xFFFFFFFF: struct.pack("<HHI", tag, perm, id)
                os.setxattr("\(index)", "system.posix_acl_access", struct.pack("<I", 2) + e(1, 6) + e(2, 6, 4343) + e(4, 4) + e(0x10, 6) + e(0x20, 4))
                """
            try #require(
                system("python3 -c '\(script)'") == 0, "cannot set an ACL here (python3, or a file system without ACLs)"
            )
            let file = try found(trusting: nil)
            #expect(
                file?.path == index && file?.hasAccessACL == true && file.map { $0.mode & 0o7777 } == 0o664,
                "\(String(describing: file))")
        }
    }

    @Test("the identities of the files a process holds open tell a file opened since")
    func openFileIdentities() throws {
        let dir = makeTemporaryDirectory("ptk-ident")
        defer { removeTree(dir) }
        writeFile(dir + "/a", [1])
        let before = openRegularFileIdentities()
        let fd = try FileDescriptor.open(dir + "/a", flags: .readOnly)
        defer { fd.close() }
        #expect(openRegularFileIdentities().subtracting(before) == [FileIdentity(try fd.status())])
    }
}
