import Foundation
import PTKDigest
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("End to end: ptk app-password add, list, remove against a real state directory", .serialized, .tags(.endToEnd))
struct AppPasswordTests {
    /// A generated password: six groups of five lower-case letters.
    static let passwordShape = #"^[a-z]{5}(-[a-z]{5}){5}$"#

    @Test(
        "add prints url, user, password and the certificate's SHA-256, one a line; only the hash is kept, mode 0600; list shows it; remove ends it"
    )
    func addListRemove() throws {
        let d = try DaemonProcess.withWeb()
        #expect(eventually { fileExists(d.stateDir + "/listening") })
        let r = try library(d, ["app-password", "add", "annas-phone", "--host", "127.0.0.1"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 5 && lines[4].isEmpty, "\(r.stdout)")
        #expect(lines[0] == "url: https://127.0.0.1:\(d.webPort)/dav/")
        #expect(lines[1] == "user: annas-phone")
        let password = String(lines[2].dropFirst("password: ".count))
        #expect(
            lines[2].hasPrefix("password: ")
                && password.range(of: Self.passwordShape, options: .regularExpression) != nil, "\(lines[2])")
        // The fingerprint is the certificate's, as ptkd logs it.
        let fingerprint = String(lines[3].dropFirst("certificate SHA-256: ".count))
        #expect(
            lines[3].hasPrefix("certificate SHA-256: ") && fingerprint.count == 95
                && d.log.contains("certificate SHA-256 \(fingerprint)"), "\(lines[3])")
        #expect(
            r.stderr
                == "The password is shown only now: ptkd keeps just its SHA-256. Access upload: adding photos (phones, backup apps).\n",
            "\(r.stderr)")

        // Stored: its SHA-256, never the password; mode 0600.
        let file = d.stateDir + "/web/app-passwords"
        let text = try readTextFile(file)
        #expect(
            !text.contains(password)
                && text.contains("\tannas-phone\tupload\t\(SHA256.hex(of: Array(password.utf8)))\t"), "\(text)")
        #expect(try fileStatus(file).permissions & 0o777 == 0o600)

        // --json: one object.
        let j = try library(d, ["app-password", "add", "desk", "--access", "full", "--json", "--host", "::1"])
        #expect(j.status == 0, "\(j.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any], "\(j.stdout)")
        #expect(object["url"] as? String == "https://[::1]:\(d.webPort)/dav/" && object["user"] as? String == "desk")
        #expect(object["access"] as? String == "full" && object["certificate"] as? String == fingerprint)
        let second = try #require(object["password"] as? String)
        #expect(second.range(of: Self.passwordShape, options: .regularExpression) != nil && second != password)
        #expect(j.stdout.split(separator: "\n").count == 1)

        // list: a table, never used yet; --json the same.
        let list = try library(d, ["app-password", "list"])
        let rows = list.stdout.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        }
        #expect(list.status == 0 && rows.count == 3, "\(list.stdout)")
        #expect(rows.first == ["NAME", "ACCESS", "CREATED", "(UTC)", "LAST", "USED", "(UTC)", "ADDRESS"])
        #expect(
            rows.dropFirst().map { [$0[0], $0[1], $0[4], $0[5]] } == [
                ["annas-phone", "upload", "never", "-"], ["desk", "full", "never", "-"],
            ], "\(list.stdout)")
        let listed = try library(d, ["app-password", "list", "--json"])
        let array = try #require(
            try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stdout)")
        #expect(
            array.map { $0["name"] as? String } == ["annas-phone", "desk"]
                && array.allSatisfy { $0["lastUsed"] is NSNull })
        #expect(
            array.allSatisfy {
                ($0["id"] as? String)?.count == 16 && ($0["created"] as? String)?.hasSuffix("Z") == true
            })

        // Completion offers the names.
        let offered = try run(
            "ptk", ["__complete", "app-passwords", "--config", "/dev/null", "--state-dir", d.stateDir])
        #expect(offered.status == 0 && offered.stdout == "annas-phone\ndesk\n", "\(offered)")

        // remove: said, and gone; a second time an error.
        let removed = try library(d, ["app-password", "remove", "desk"])
        #expect(
            removed.status == 0 && removed.stdout == "removed the app password \"desk\": it no longer logs in\n",
            "\(removed)")
        #expect(!(try readTextFile(file)).contains("\tdesk\t"))
        let again = try library(d, ["app-password", "remove", "desk"])
        #expect(again.status == 1 && again.stdout.isEmpty)
        #expect(
            again.stderr == "ptk: no app password is named 'desk' (`ptk app-password list` lists them)\n",
            "\(again.stderr)")
    }

    @Test(
        "errors: a name in use (1), a name that is not valid or an access that does not exist (64); nothing is written")
    func errors() throws {
        let d = try DaemonProcess.withWeb()
        #expect(try library(d, ["app-password", "add", "phone"]).status == 0)
        let before = try readTextFile(d.stateDir + "/web/app-passwords")
        let taken = try library(d, ["app-password", "add", "phone", "--access", "full"])
        #expect(taken.status == 1 && taken.stdout.isEmpty)
        #expect(
            taken.stderr
                == "ptk: an app password named 'phone' exists already: choose another name, or remove it first (ptk app-password remove phone)\n",
            "\(taken.stderr)")
        for bad in [".phone", "-x", "a:b", "Anna's phone", "", String(repeating: "a", count: 65)] {
            let r = try library(d, ["app-password", "add", "--", bad])
            #expect(r.status == 64 && r.stdout.isEmpty, "\(bad): \(r.status) \(r.stderr)")
        }
        let invalid = try library(d, ["app-password", "add", "a:b"])
        #expect(
            invalid.stderr.hasPrefix(
                "ptk: \"a:b\" is not a valid app password name: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -\n"
            ), "\(invalid.stderr)")
        let access = try library(d, ["app-password", "add", "x", "--access", "read"])
        #expect(
            access.status == 64
                && access.stderr.hasPrefix("ptk: invalid value 'read' for --access: expected upload or full\n"))
        #expect(try readTextFile(d.stateDir + "/web/app-passwords") == before)
    }

    @Test(
        "with no ptkd running and no certificate yet: the configuration's port, said so, and no certificate line; list with none says so"
    )
    func noDaemon() throws {
        let root = makeTemporaryDirectory("ptk-app-e2e")
        defer { removeTree(root) }
        let at = ["--config", "/dev/null", "--state-dir", root + "/state", "--dir", root + "/photos"]
        // Root's ptk refuses a state directory it cannot open (issue 54: it decides whom to act as
        // from the folders it opens); ptkd never ran here, but its directory is made (as the
        // package's systemd unit makes it).
        let missing = try run("ptk", at + ["app-password", "list"])
        #expect(
            missing.status == 64
                && missing.stderr.hasPrefix(
                    "ptk: the state directory \"\(root)/state\" does not exist (has ptkd run on this host?"),
            "\(missing.stderr)")
        mkdir(root + "/state", 0o700)
        let empty = try run("ptk", at + ["app-password", "list"])
        #expect(empty.status == 0 && empty.stdout.isEmpty)
        #expect(
            empty.stderr
                == "No app passwords (\(root)/state/web/app-passwords); `ptk app-password add NAME` makes one.\n",
            "\(empty.stderr)")
        #expect(try run("ptk", at + ["app-password", "list", "--json"]).stdout == "[]\n")
        let r = try run("ptk", at + ["app-password", "add", "backup", "--host", "nas.local"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.count == 3 && lines[0] == "url: https://nas.local:47851/dav/" && lines[1] == "user: backup",
            "\(r.stdout)")
        #expect(
            r.stderr.contains("ptk: ptkd is not running here; the URL uses web-port from the configuration (47851)\n"),
            "\(r.stderr)")
        // web = off in the configuration: a warning, as web-link gives.
        let conf = root + "/ptkd.conf"
        writeFile(conf, Array("web = off\n".utf8))
        let off = try run("ptk", ["--config", conf] + at.dropFirst(2) + ["app-password", "add", "other"])
        #expect(
            off.status == 0
                && off.stderr.contains(
                    "ptk: warning: web = off in ptkd's configuration: the password works once ptkd serves the web interface (web = on)"
                ),
            "\(off.stderr)")
    }
}
