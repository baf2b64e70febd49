import PTKInbox
import PTKTestTags
import Testing

@Suite("Inbox names: what is a candidate, what is never taken", .tags(.unit))
struct InboxNameTests {
    /// A relative path as components.
    private func verdict(_ path: String) -> InboxName.Verdict {
        InboxName.verdict(path.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    @Test(
        "photos at any level below the root are candidates, control characters and combining marks included",
        arguments: [
            "x.jpg", "anna-phone/DCIM/Camera/IMG_0001.HEIC", "a/b/c/d/e/f/g/photo.png", "x.part.jpg",
            "photo\u{1}.jpg", "e\u{301}te\u{301}.jpg", "syncthing.tmp", "part", "my.partial", "Thumbs.db.jpg",
            "~x.jpg", "desktop.ini.png",
        ])
    func candidates(_ path: String) {
        #expect(verdict(path) == .candidate)
    }

    @Test(
        "the writers' temporary names are never taken",
        arguments: [
            (".syncthing.IMG_1.jpg.tmp", InboxName.Reason.syncthingTemporary(".syncthing.IMG_1.jpg.tmp")),
            ("~syncthing~IMG_1.jpg.tmp", .syncthingTemporary("~syncthing~IMG_1.jpg.tmp")),
            ("anna/DCIM/~syncthing~x.jpg.tmp", .syncthingTemporary("~syncthing~x.jpg.tmp")),
            (".IMG_1.jpg.Xa9bQ2", .hidden(".IMG_1.jpg.Xa9bQ2")),
            ("IMG_1.jpg.tacitpart", .partialTransfer("IMG_1.jpg.tacitpart")),
            ("IMG_1.jpg.part", .partialTransfer("IMG_1.jpg.part")),
            ("IMG_1.JPG.PART", .partialTransfer("IMG_1.JPG.PART")),
            ("Unconfirmed 1.crdownload", .partialTransfer("Unconfirmed 1.crdownload")),
            ("x/y.jpg.CrDownload", .partialTransfer("y.jpg.CrDownload")),
        ])
    func temporaries(_ path: String, _ reason: InboxName.Reason) {
        #expect(verdict(path) == .ignored(reason))
    }

    @Test(
        "file managers' litter and Syncthing's markers are never taken; the Windows names in any case",
        arguments: [
            ("._IMG_1.jpg", InboxName.Reason.litter("._IMG_1.jpg")),
            (".DS_Store", .litter(".DS_Store")),
            ("sub/.ds_store", .litter(".ds_store")),
            ("Thumbs.db", .litter("Thumbs.db")),
            ("THUMBS.DB", .litter("THUMBS.DB")),
            ("anna/desktop.ini", .litter("desktop.ini")),
            ("Desktop.INI", .litter("Desktop.INI")),
            (".stfolder", .syncthingMarker(".stfolder")),
            (".stignore", .syncthingMarker(".stignore")),
            ("anna/.stignore", .syncthingMarker(".stignore")),
        ])
    func litter(_ path: String, _ reason: InboxName.Reason) {
        #expect(verdict(path) == .ignored(reason))
    }

    @Test("Unicode case mapping is not Windows's: a Kelvin sign is no K, so the name is a candidate")
    func asciiCaseOnly() {
        #expect(verdict("DES\u{212A}TOP.INI") == .candidate)
        #expect(verdict("thumbs.db\u{301}") == .candidate)
    }

    @Test(
        "any dot file or dot folder, at any level, even when a combining mark follows the dot",
        arguments: [
            (".hidden.jpg", InboxName.Reason.hidden(".hidden.jpg")),
            (".\u{301}x.jpg", .hidden(".\u{301}x.jpg")),
            ("anna/.git/x.jpg", .hidden(".git")),
            ("anna/DCIM/.thumbnails/x.jpg", .hidden(".thumbnails")),
            (".trash/anna/x.jpg", .hidden(".trash")),
            ("anna/.stversions/x~20240101.jpg", .syncthingMarker(".stversions")),
            (".stfolder/x.jpg", .syncthingMarker(".stfolder")),
            (".ptk/thumbs/x.jpg", .ptkOwn(".ptk")),
            ("anna/.incoming/x.jpg", .ptkOwn(".incoming")),
            (".ptk", .ptkOwn(".ptk")),
            (".incoming", .ptkOwn(".incoming")),
        ])
    func dotNames(_ path: String, _ reason: InboxName.Reason) {
        #expect(verdict(path) == .ignored(reason))
    }

    @Test(
        "what no directory entry is called: nothing, empty, '.', '..', a '/' or NUL inside",
        arguments: [
            [], [""], ["a", "", "x.jpg"], ["."], ["a", "..", "x.jpg"], ["a/b.jpg"], ["x\0.jpg"], ["..", "x"],
        ])
    func notNames(_ components: [String]) {
        #expect(InboxName.verdict(components) == .ignored(.notAName))
    }

    @Test("32 components are taken, 33 are too deep; a component of 255 bytes is taken, 256 is too long")
    func bounds() {
        let deepest = Array(repeating: "d", count: InboxName.maxDepth - 1) + ["x.jpg"]
        #expect(InboxName.verdict(deepest) == .candidate)
        #expect(InboxName.verdict(["d"] + deepest) == .ignored(.tooDeep(33)))
        #expect(InboxName.verdict(Array(repeating: "d", count: 1000) + ["x.jpg"]) == .ignored(.tooDeep(1001)))
        let longest = String(repeating: "é", count: 125) + "x.jpg"  // 250 + 5 bytes
        #expect(longest.utf8.count == 255)
        #expect(InboxName.verdict([longest]) == .candidate)
        #expect(InboxName.verdict(["y" + longest]) == .ignored(.componentTooLong(256)))
        #expect(InboxName.verdict(["a" + longest, "x.jpg"]) == .ignored(.componentTooLong(256)))
    }

    @Test("folders: the root and ordinary folders are entered; dot folders, ptk's and Syncthing's are not")
    func folders() {
        #expect(InboxName.folderVerdict([]) == .enter)
        #expect(InboxName.folderVerdict(["anna-phone", "DCIM"]) == .enter)
        #expect(InboxName.folderVerdict(["x.part"]) == .enter, "a folder's name is no transfer")
        #expect(InboxName.folderVerdict(["Thumbs.db"]) == .enter)
        #expect(InboxName.folderVerdict([".git"]) == .skip(.hidden(".git")))
        #expect(InboxName.folderVerdict(["anna", ".\u{301}x"]) == .skip(.hidden(".\u{301}x")))
        #expect(InboxName.folderVerdict(["anna", ".stversions"]) == .skip(.syncthingMarker(".stversions")))
        #expect(InboxName.folderVerdict([".ptk"]) == .skip(.ptkOwn(".ptk")))
        #expect(InboxName.folderVerdict(["a", ".incoming"]) == .skip(.ptkOwn(".incoming")))
        #expect(InboxName.folderVerdict(["a", ".."]) == .skip(.notAName))
    }

    @Test("a folder is entered only while a file in it could still be taken: 31 levels, not 32")
    func folderDepth() {
        #expect(InboxName.folderVerdict(Array(repeating: "d", count: InboxName.maxDepth - 1)) == .enter)
        #expect(InboxName.folderVerdict(Array(repeating: "d", count: InboxName.maxDepth)) == .skip(.tooDeep(33)))
    }

    @Test("every reason reads as a sentence naming the file")
    func descriptions() {
        #expect(InboxName.Reason.tooDeep(33).description == "33 folders deep, more than 32")
        #expect(InboxName.Reason.componentTooLong(300).description == "a name of 300 bytes, more than 255")
        #expect(InboxName.Reason.partialTransfer("a.part").description == "a.part is a transfer not finished")
        #expect(InboxName.Reason.hidden(".x").description == ".x is hidden (it begins with a dot)")
        #expect(InboxName.Reason.notAName.description == "not a file name")
    }
}

@Suite("Inbox sources: the first level names the sender", .tags(.unit))
struct InboxSourceTests {
    @Test("a file below a sender's folder: that sender, the folders between, the name")
    func senderFolder() {
        let source = InboxSource(inbox: "inbox", components: ["anna-phone", "DCIM", "Camera", "x.jpg"])
        #expect(source == InboxSource(sender: "anna-phone", folders: ["DCIM", "Camera"], name: "x.jpg"))
        #expect(source?.relativePath == "DCIM/Camera/x.jpg")
    }

    @Test("a file directly in a sender's folder has no folders")
    func senderOnly() {
        let source = InboxSource(inbox: "inbox", components: ["anna-phone", "x.jpg"])
        #expect(source == InboxSource(sender: "anna-phone", folders: [], name: "x.jpg"))
        #expect(source?.relativePath == "x.jpg")
    }

    @Test("a file in the root is the inbox's own")
    func rootFile() {
        #expect(
            InboxSource(inbox: "scanner", components: ["x.jpg"])
                == InboxSource(sender: "scanner", folders: [], name: "x.jpg"))
    }

    @Test("no components is no file; the text is kept as it is, for the store's rules")
    func plainText() {
        #expect(InboxSource(inbox: "inbox", components: []) == nil)
        let odd = InboxSource(inbox: "inbox", components: ["an\u{1}na", "e\u{301}", "x\u{7f}.jpg"])
        #expect(odd == InboxSource(sender: "an\u{1}na", folders: ["e\u{301}"], name: "x\u{7f}.jpg"))
    }

    @Test(
        "an inbox's name is its root's last component",
        arguments: [
            ("/srv/inbox", "inbox"), ("/srv/inbox/", "inbox"), ("/srv/inbox//", "inbox"), ("inbox", "inbox"),
            ("/", ""), ("", ""), ("/srv/Anna's phone", "Anna's phone"),
        ])
    func inboxName(_ root: String, _ name: String) {
        #expect(InboxSource.inboxName(root: root) == name)
    }
}
