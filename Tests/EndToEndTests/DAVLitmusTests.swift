import Foundation
import PTKTestSupport
import Testing

/// What scripts/litmus.sh printed: per suite (run, passed, failed, skipped), and the failed tests.
struct LitmusReport {
    struct Suite: Equatable { var run, passed, failed, skipped: Int }
    var suites: [String: Suite] = [:]
    var notRun: [String] = []
    /// "suite/test" -> litmus's reason.
    var failures: [String: String] = [:]

    init(_ text: String) {
        for line in text.split(separator: "\n").map(String.init) {
            let words = line.split(separator: " ").map(String.init)
            if line.hasPrefix("  FAIL "), let colon = line.range(of: ": ") {
                failures[String(line[line.index(line.startIndex, offsetBy: 7)..<colon.lowerBound])] = String(line[colon.upperBound...])
            } else if words.count == 9, words[2] == "run", let run = Int(words[1]), let passed = Int(words[3]),
                      let failed = Int(words[5]), let skipped = Int(words[7]) {
                suites[words[0]] = Suite(run: run, passed: passed, failed: failed, skipped: skipped)
            } else if line.hasSuffix(" did not run") {
                notRun.append(words[0])
            }
        }
    }
}

@Suite("End to end: WebDAV door under litmus (issue 44)", .serialized,
       .enabled(if: haveProgram("litmus") || davClientsRequired, "needs litmus"))
struct DAVLitmusTests {
    /// litmus's tests that fail against a photo receiver by design, each with why. litmus PUTs
    /// plain text ("This is\na test file.\n" and the like) and a photo receiver keeps photos only
    /// (415), so every test that first PUTs a text resource fails at that PUT; COPY is refused
    /// (403) because a photo is kept once. docs/WEBDAV-CLIENTS.md carries the same list.
    static let expectedFailures: [String: String] = [
        "basic/put_get": "PUTs a text file: 415",
        "basic/put_get_utf8_segment": "PUTs a text file: 415",
        "basic/put_no_parent": "PUTs a text file into a missing folder: 415 before 409",
        "basic/mkcol_over_plain": "needs the text file put_get could not make",
        "basic/delete": "PUTs a text file: 415",
        "basic/delete_fragment": "PUTs a text file: 415",
        "basic/mkcol_again": "depends on the text files",
        "basic/delete_coll": "depends on the text files",
        "copymove/copy_init": "PUTs text files: 415",
        "copymove/copy_simple": "COPY is 403: a photo is kept once",
        "copymove/copy_overwrite": "COPY is 403",
        "copymove/copy_nodestcoll": "COPY is 403",
        "copymove/copy_cleanup": "depends on copy_init",
        "copymove/copy_coll": "COPY is 403",
        "copymove/copy_shallow": "COPY is 403",
        "copymove/move": "PUTs text files: 415",
        "copymove/move_coll": "PUTs text files: 415",
        "copymove/move_cleanup": "depends on move",
        "props/propinit": "PUTs a text file: 415",
        "props/propset": "dead properties are not kept (PROPPATCH answers, keeps nothing)",
        "props/propget": "dead properties are not kept",
        "props/propextended": "dead properties are not kept",
        "props/propmove": "PUTs text files / MOVE of what propinit could not make",
        "props/propget2": "dead properties are not kept",
        "props/propdeletes": "dead properties are not kept",
        "props/propget3": "dead properties are not kept",
        "props/propreplace": "dead properties are not kept",
        "props/propget4": "dead properties are not kept",
        "props/propnullns": "dead properties are not kept",
        "props/propget5": "dead properties are not kept",
        "props/prophighunicode": "dead properties are not kept",
        "props/propget6": "dead properties are not kept",
        "props/propremoveset": "dead properties are not kept",
        "props/propget7": "dead properties are not kept",
        "props/propsetremove": "dead properties are not kept",
        "props/propget8": "dead properties are not kept",
        "props/propvalnspace": "dead properties are not kept",
        "props/propwformed": "dead properties are not kept",
        "props/propinit2": "PUTs a text file: 415",
        "props/propmanyns": "dead properties are not kept",
        "props/propget9": "dead properties are not kept",
        "props/propcleanup": "depends on propinit",
        "locks/put": "PUTs a text file: 415",
        "locks/lock_excl": "locks the text file put could not make",
        "locks/owner_modify": "PUTs a text file: 415",
        "locks/notowner_modify": "PUTs a text file: 415",
        "locks/refresh": "depends on lock_excl",
        "locks/notowner_lock": "depends on lock_excl",
        "locks/unlock": "depends on lock_excl",
        "locks/lock_shared": "locks the text file put could not make",
        "locks/notowner_modify_shared": "PUTs a text file: 415",
        "locks/notowner_lock_shared": "depends on lock_shared",
        "locks/double_sharedlock": "depends on lock_shared",
        "locks/notowner_modify_2": "PUTs a text file: 415",
        "locks/cond_put": "PUTs a text file: 415",
        "locks/fail_cond_put": "PUTs a text file: 415",
        "locks/cond_put_with_not": "PUTs a text file: 415",
        "locks/cond_put_corrupt_token": "PUTs a text file: 415",
        "locks/complex_cond_put": "PUTs a text file: 415",
        "locks/fail_complex_cond_put": "PUTs a text file: 415",
        "locks/unlock_on_no_lock": "PUTs a text file: 415",
        "locks/unmapped_lock": "PUTs a text file into the lock-null resource: 415",
        "locks/prep_collection": "depends on the text files",
        "locks/lock_collection": "depends on prep_collection",
        "locks/owner_modify_in_collection": "PUTs a text file: 415",
        "locks/notowner_modify_in_collection": "PUTs a text file: 415",
        "locks/refresh_collection": "depends on lock_collection",
        "locks/fail_cond_put_unlocked": "PUTs a text file: 415",
        "http/expect100": "PUTs a text file with Expect: 100-continue: 415",
    ]

    @Test("litmus runs every suite (basic, copymove, props, locks, http) with a full password; no test fails but those that PUT text, copy or keep dead properties")
    func conformance() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("litmus", access: "full")
        let keep = makeTemporaryDirectory("ptk-litmus-keep")
        defer { removeTree(keep) }
        let r = try run("/bin/sh", [repositoryRoot() + "/scripts/litmus.sh", d.davURL, pw.user, pw.password], timeout: 180, absolute: true,
                        environment: ["LITMUS_KEEP": keep])
        // The report, whole, in the test's output: the closing note quotes it.
        print(r.stdout)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let report = LitmusReport(r.stdout)
        #expect(Set(report.suites.keys) == ["basic", "copymove", "props", "locks", "http"], "\(r.stdout)")
        #expect(report.notRun.isEmpty, "\(report.notRun)")
        for (name, suite) in report.suites {
            #expect(suite.run > 0 && suite.passed + suite.failed == suite.run, "\(name): \(suite)")
        }
        let unexpected = report.failures.filter { Self.expectedFailures[$0.key] == nil }
        #expect(unexpected.isEmpty, "failures not on the documented list: \(unexpected.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n"))")
        // litmus sends text only: the photos directory holds none of it (its folders at most).
        #expect(d.photoFiles.isEmpty, "\(d.photoFiles.keys.sorted())")
        #expect(d.stop() == 0)
    }
}
