import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

private let haveShells = ["/usr/bin/bash", "/usr/bin/fish"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: $0)
}

@Suite(
    "End to end: completion offers what the receiver really holds", .enabled(if: haveShells, "needs bash and fish"),
    .tags(.endToEnd))
struct CompletionValuesTests {
    /// The scripts as `make install` installs them, made by scripts/make-docs.sh from the built ptk-docs.
    private func scripts(_ root: String) throws -> String {
        let out = root + "/docs"
        let r = try run("/bin/sh", [repositoryRoot() + "/scripts/make-docs.sh", binDirectory, out], absolute: true)
        #expect(r.status == 0, "\(r.stderr)")
        return out
    }

    /// What bash offers for `words` with the real ptk and ptk-send first in PATH.
    private func bash(_ docs: String, _ words: [String], environment: [String: String] = [:]) throws -> [String] {
        let program = words[0]
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            source \(docs)/bash/\(program)
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMPREPLY=()
            _\(program.replacingOccurrences(of: "-", with: "_"))
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try run(
            "/usr/bin/bash", ["--norc", "-c", script], absolute: true,
            environment: ["PATH": binDirectory + ":/usr/bin:/bin"].merging(environment) { $1 })
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test(
        "photo names from the library, pending and trusted device IDs from the trust lists, receivers from known-receivers"
    )
    func realValues() throws {
        let d = try DaemonProcess()
        let docs = try scripts(d.root)
        #expect(
            try send(
                d, [photo(d.root, "beach day.png", size: 50_000), photo(d.root, "boat.png", size: 50_000, seed: 2)]
            ).status == 0)
        #expect(waitForIndexing(d))
        let at = ["--config", "/dev/null", "--dir", d.dir, "--state-dir", d.stateDir]
        // What the scripts ask ptk: every photo, one a line.
        let photos = try run("ptk", ["__complete", "photos"] + at)
        #expect(photos.status == 0 && photos.stdout == "beach day.png\nboat.png\n", "\(photos)")
        // `ptk sh<Tab>` is show; a photo name after it, its space escaped for the shell.
        #expect(try bash(docs, ["ptk"] + at + ["sh"]) == ["show"])
        #expect(try bash(docs, ["ptk"] + at + ["show", "b"]) == ["beach\\ day.png", "boat.png"])
        #expect(try bash(docs, ["ptk"] + at + ["rm", "boat.png", "be"]) == ["beach\\ day.png"])
        let fish = try run(
            "/usr/bin/fish",
            [
                "--no-config", "-c",
                "source \(docs)/fish/ptk.fish; complete -C 'ptk \(at.joined(separator: " ")) show bo'",
            ],
            absolute: true, environment: ["PATH": binDirectory + ":/usr/bin:/bin"])
        #expect(fish.stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] } == ["boat.png"], "\(fish)")
        // The receiver it sent to, as ptk-send remembers it.
        let receivers = try bash(docs, ["ptk-send", ""], environment: ["XDG_CONFIG_HOME": d.senderConfig])
        #expect(receivers == ["127.0.0.1:\(d.port)"])
        // No library where it is asked: nothing, and no error.
        let none = try run(
            "ptk",
            ["__complete", "photos", "--config", "/dev/null", "--dir", d.root + "/nowhere", "--state-dir", d.stateDir])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.isEmpty)
    }

    @Test("device IDs: a refused sender is offered to `trust allow`, a trusted one to `trust remove`")
    func devices() throws {
        let d = try DaemonProcess(["--senders", "trusted"])
        let docs = try scripts(d.root)
        #expect(try send(d, [photo(d.root, "x.png", size: 20_000)]).status != 0)
        let id = try senderID(config: d.senderConfig).description
        let at = ["--config", "/dev/null", "--state-dir", d.stateDir]
        #expect(try bash(docs, ["ptk"] + at + ["trust", "allow", ""]) == [id])
        #expect(try bash(docs, ["ptk"] + at + ["trust", "remove", ""]).isEmpty)
        #expect(try ptk(d, ["trust", "allow", id]).status == 0)
        #expect(try bash(docs, ["ptk"] + at + ["trust", "remove", ""]) == [id])
    }

    @Test("app password names are offered to `app-password remove`, and a removed one no longer")
    func appPasswords() throws {
        let d = try DaemonProcess.withWeb()
        let docs = try scripts(d.root)
        let at = ["--config", "/dev/null", "--state-dir", d.stateDir]
        #expect(try bash(docs, ["ptk"] + at + ["app-password", "remove", ""]).isEmpty)
        for name in ["phone", "photo-backup", "desk"] {
            #expect(try ptk(d, ["app-password", "add", name]).status == 0)
        }
        #expect(try bash(docs, ["ptk"] + at + ["app-password", "remove", "ph"]) == ["phone", "photo-backup"])
        #expect(try ptk(d, ["app-password", "remove", "phone"]).status == 0)
        #expect(try bash(docs, ["ptk"] + at + ["app-password", "remove", ""]).sorted() == ["desk", "photo-backup"])
    }
}
