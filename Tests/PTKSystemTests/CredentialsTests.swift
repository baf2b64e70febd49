import Glibc
import PTKSystem
import PTKTestTags
import Testing

/// The users other than root who own the way to `path` (what exists of it), walked by descriptors.
func nonRootOwners(of path: String) throws -> [(user: UInt32, group: UInt32)] {
    let way = try openWay(path, allowingMissing: true)
    way.directory?.close()
    return way.owners
}

/// The first folder on the way to `path` (what exists of it) others than root and `trusted` may change.
func folderOthersMayChange(on path: String, trusting trusted: UInt32?) throws -> ChangeableFolder? {
    let way = try openWay(path, allowingMissing: true)
    way.directory?.close()
    return way.changeableFolder(trusting: trusted)
}

/// Who root's ptk must take on for a path: every non-root owner of a folder on the way, as
/// walked by descriptors, links followed by hand (RootBoundary in ptk).
@Suite(.tags(.unit)) struct CredentialsTests {
    /// A fresh root-owned folder under /tmp, removed afterwards.
    func withFolder(_ body: (String) throws -> Void) throws {
        var template = Array("/tmp/ptk-credentials-XXXXXX".utf8CString)
        let made = try #require(mkdtemp(&template))
        let root = String(cString: made)
        defer { _ = system("rm -rf '\(root)'") }
        try body(root)
    }

    @Test func rootsOwnFoldersHaveNobodyToTakeOn() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            #expect(mkdir(root + "/a", 0o755) == 0)
            #expect(try nonRootOwners(of: root + "/a").isEmpty)
            // What does not exist yet counts by what exists of its way.
            #expect(try nonRootOwners(of: root + "/a/missing/deeper").isEmpty)
        }
    }

    @Test func aFolderOnTheWayCountsWithTheGroupOfTheDeepestItOwns() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            #expect(mkdir(root + "/a", 0o755) == 0 && chown(root + "/a", 4242, 4300) == 0)
            #expect(mkdir(root + "/a/b", 0o755) == 0 && chown(root + "/a/b", 4242, 4301) == 0)
            #expect(mkdir(root + "/a/b/c", 0o755) == 0)
            let owners = try nonRootOwners(of: root + "/a/b/c")
            #expect(owners.count == 1)
            #expect(owners.first?.user == 4242)
            #expect(owners.first?.group == 4301)
        }
    }

    @Test func aLinkCountsByItsOwnOwnerAndByWhereItLeads() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            // state (4242) holds `received`, a link it planted to a folder of uid 4343.
            #expect(mkdir(root + "/state", 0o755) == 0 && chown(root + "/state", 4242, 4242) == 0)
            #expect(mkdir(root + "/other", 0o755) == 0 && chown(root + "/other", 4343, 4343) == 0)
            #expect(symlink(root + "/other", root + "/state/received") == 0)
            #expect(lchown(root + "/state/received", 4242, 4242) == 0)
            let users = Set(try nonRootOwners(of: root + "/state/received").map(\.user))
            #expect(users == [4242, 4343])
            // A link to root's own folder still counts its planter.
            #expect(mkdir(root + "/roots", 0o700) == 0)
            #expect(symlink(root + "/roots", root + "/state/elsewhere") == 0)
            #expect(lchown(root + "/state/elsewhere", 4242, 4242) == 0)
            #expect(try nonRootOwners(of: root + "/state/elsewhere").map(\.user) == [4242])
        }
    }

    @Test func relativePathsAreTakenFromTheWorkingDirectory() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            #expect(mkdir(root + "/a", 0o755) == 0 && chown(root + "/a", 4242, 4242) == 0)
            let saved = currentDirectory()
            defer { _ = chdir(saved) }
            #expect(chdir(root + "/a") == 0)
            #expect(try nonRootOwners(of: ".").map(\.user) == [4242])
            #expect(try nonRootOwners(of: "x/y").map(\.user) == [4242])
        }
    }

    // Issue 54: a folder through which a user other than root and the one trusted (the user
    // root's ptk takes on) could change what root reaches.

    @Test func aFolderOthersMayWriteIsFoundUnlessItIsTheTrustedUsers() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            #expect(mkdir(root + "/d", 0o755) == 0 && mkdir(root + "/d/.ptk", 0o755) == 0)
            #expect(try folderOthersMayChange(on: root + "/d/.ptk", trusting: nil) == nil)
            // Root's, writable by a group that is not root's: found, also with nobody to trust.
            #expect(chown(root + "/d", 0, 4300) == 0 && chmod(root + "/d", 0o775) == 0)
            #expect(
                try folderOthersMayChange(on: root + "/d/.ptk", trusting: nil)
                    == ChangeableFolder(path: root + "/d", owner: 0, group: 4300, mode: 0o775))
            #expect(try folderOthersMayChange(on: root + "/d/.ptk", trusting: 4242)?.path == root + "/d")
            // The trusted user's own: what it lets others do there is its business.
            #expect(chown(root + "/d", 4242, 4300) == 0)
            #expect(try folderOthersMayChange(on: root + "/d/.ptk", trusting: 4242) == nil)
            #expect(try folderOthersMayChange(on: root + "/d/.ptk", trusting: nil)?.owner == 4242)
        }
    }

    @Test func aStickyFolderProtectsOnlyTheNamesOfRootAndTheTrustedUser() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            #expect(mkdir(root + "/t", 0o1777) == 0 && chmod(root + "/t", 0o1777) == 0)
            #expect(
                mkdir(root + "/t/roots", 0o755) == 0 && mkdir(root + "/t/theirs", 0o755) == 0
                    && chown(root + "/t/theirs", 4242, 4242) == 0)
            // /tmp's way: a sticky folder whose next name is root's, or the trusted user's.
            #expect(try folderOthersMayChange(on: root + "/t/roots", trusting: nil) == nil)
            #expect(try folderOthersMayChange(on: root + "/t/theirs", trusting: 4242) == nil)
            // Another user's name there (it may rename it), or a missing one (anyone may make it).
            #expect(try folderOthersMayChange(on: root + "/t/theirs", trusting: nil)?.path == root + "/t")
            #expect(try folderOthersMayChange(on: root + "/t/missing/deeper", trusting: 4242)?.path == root + "/t")
            // The path itself sticky: what is made and found in it is not protected.
            #expect(
                try folderOthersMayChange(on: root + "/t", trusting: nil)
                    == ChangeableFolder(path: root + "/t", owner: 0, group: 0, mode: 0o1777))
            #expect(try folderOthersMayChange(on: root + "/t", trusting: 4242)?.path == root + "/t")
        }
    }

    @Test func aMissingPartBelowAFolderOthersMayWriteIsFound() throws {
        try #require(geteuid() == 0, "needs root to give folders away")
        try withFolder { root throws in
            #expect(mkdir(root + "/g", 0o775) == 0 && chmod(root + "/g", 0o775) == 0)
            #expect(try folderOthersMayChange(on: root + "/g/not/yet", trusting: nil)?.path == root + "/g")
            #expect(chmod(root + "/g", 0o755) == 0)
            #expect(try folderOthersMayChange(on: root + "/g/not/yet", trusting: nil) == nil)
        }
    }

    @Test func aUserWithoutAPasswordEntryKeepsTheFoldersGroup() {
        let unknown = Credentials.of(uid: 4_000_123, groupIfUnknown: 4_000_200)
        #expect(unknown == Credentials(user: 4_000_123, group: 4_000_200, name: nil))
        #expect(unknown.description == "uid 4000123")
        let root = Credentials.of(uid: 0, groupIfUnknown: 99)
        #expect(root.name == "root" && root.group == 0)
    }
}
