import Foundation
import Glibc
import PTKDigest
import PTKSystem
import PTKTLS
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

// Faults at every step (docs/SECURITY.md, "Faults at every step"): the real ptkd runs with
// libptkfault.so preloaded (Sources/CFaultInjection/fault.c), which fails or crashes exactly one
// chosen call of the threads named for the part under test. A recording run lists the calls
// a part makes; then every one of them, in turn, fails with an I/O error or kills ptkd, and
// after each run the five invariants are checked.

/// The preload library, built beside the programs and never installed.
let faultLibrary = binDirectory + "/libptkfault.so"
let canInjectFaults = isRoot && FileManager.default.fileExists(atPath: faultLibrary)

/// A call the preload library counted: its number among all counted calls and among its kind's,
/// its kind and function, and its call site (return addresses as module+offset).
struct CountedCall: Sendable {
    var all: Int
    var ofKind: Int
    var kind: String
    var function: String
    var site: String

    /// The site with the library's own frame left out: where in ptkd or a library the call is made.
    var caller: String { site.split(separator: " ").dropFirst().joined(separator: " ") }
    /// Made by OpenSSL on the connection (TLS records), not by ptkd on a file.
    var onSocket: Bool {
        site.contains("libcrypto") || site.contains("libssl") || function.hasPrefix("recv")
            || function.hasPrefix("send")
    }
}

/// The calls recorded in `path` (lines "ALL OFKIND KIND FUNCTION FRAMES..."), and the fault
/// made, if one was.
func countedCalls(_ path: String) -> (calls: [CountedCall], fault: CountedCall?) {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    var calls: [CountedCall] = []
    var fault: CountedCall?
    for line in text.split(separator: "\n") {
        var fields = line.split(separator: " ").map(String.init)
        let isFault = fields.first == "fault"
        if isFault { fields.removeFirst() }
        guard fields.count >= 4, let all = Int(fields[0]), let ofKind = Int(fields[1]) else { continue }
        let call = CountedCall(
            all: all, ofKind: ofKind, kind: fields[2], function: fields[3],
            site: fields.dropFirst(4).joined(separator: " "))
        if isFault { fault = call } else { calls.append(call) }
    }
    return (calls, fault)
}

/// The errors a call of each kind fails with, taken in turn (issue 25: EIO, ENOSPC, EDQUOT and
/// EROFS for writes and flushes, EMFILE and ENFILE for opens).
let injectedErrors: [String: [String]] = [
    "write": ["EIO", "ENOSPC", "EDQUOT", "EROFS"], "flush": ["EIO", "ENOSPC", "EDQUOT", "EROFS"],
    "truncate": ["EIO", "ENOSPC", "EROFS"], "allocate": ["ENOSPC", "EIO", "EDQUOT"],
    "open": ["EMFILE", "ENFILE", "EIO"], "link": ["EIO", "ENOSPC", "EDQUOT", "EROFS"],
    "rename": ["EIO", "ENOSPC", "EROFS"], "mkdir": ["EIO", "ENOSPC", "EROFS"], "unlink": ["EIO", "EROFS"],
    "chmod": ["EIO", "EROFS"], "chown": ["EIO", "EROFS"], "utimes": ["EIO", "EROFS"], "read": ["EIO", "ECONNRESET"],
]

/// The LocalSend app's certificate: one app, which starts over after a lost answer.
let faultPhone = try? Identity.ephemeral(.rsa, commonName: "LocalSend User")

/// How photos reach ptkd in a run.
enum Route: String, Sendable {
    /// ptk-send over protocol v1 with TLS.
    case ptkSend
    /// The LocalSend HTTPS upload.
    case localSend
}

struct SentPhoto: Sendable {
    var name: String
    var bytes: [UInt8]
    var partName: String { "\(SHA256.hex(of: bytes))-\(bytes.count).part" }
}

/// One run of ptkd with one fault (or none, to record), and what it showed.
struct FaultRun: Sendable {
    var route: Route
    /// The prefixes of the names of the threads whose calls count (PTK_FAULT_THREADS).
    var threads: String
    /// PTK_FAULT, nil to only record.
    var fault: String?
    var photos: [SentPhoto]
    /// Bytes of the first photo already in .incoming when ptkd starts, to resume from.
    var partial = 0
    /// Every photo must be saved at the first try (the fault is one to retry: EINTR, EAGAIN).
    var mustSave = false
    /// The recorded call the fault is aimed at.
    var target: CountedCall? = nil

    var isKill: Bool { fault?.contains(":KILL:") == true }
    var label: String { "\(route.rawValue) \(threads) \(fault ?? "recording")" }
}

/// What a run showed: the invariants broken (none when it passed), the calls counted, the fault made.
struct FaultOutcome: Sendable {
    var problems: [String] = []
    var calls: [CountedCall] = []
    var fault: CountedCall?
}

/// The photo sent after the fault, to see that ptkd still serves (invariant 3).
let afterFaultPhoto = SentPhoto(name: "after.png", bytes: makePNG(size: 30_000, seed: 99))

/// Runs `spec`: ptkd with the fault, the photos sent, then the five invariants checked (issue 25):
/// 1. every file under a final name is a photo sent, byte for byte, and every photo the sender
///    was told is saved is there after a restart;
/// 2. a failure reaches the sender as FAILED io-error/no-space (HTTP 500/507) or a lost
///    connection, never as SAVED and never as a hang, and ptk-send names the photo;
/// 3. ptkd serves the next send, or has exited with a status systemd's Restart=on-failure covers;
/// 4. after a restart the library has exactly one entry per photo file, each indexed, and
///    PRAGMA integrity_check says ok;
/// 5. .incoming holds only partial uploads of photos sent, each a prefix of its photo, and
///    sending again resumes them and leaves .incoming empty.
func execute(_ spec: FaultRun) -> FaultOutcome {
    var outcome = FaultOutcome()
    func problem(_ text: String) { outcome.problems.append("\(spec.label): \(text)") }
    let root = makeTemporaryDirectory("ptk-fault")
    defer { removeTree(root) }
    mkdir(root + "/photos", 0o755)
    // Owned by another user, as the service user's directory is when ptkd or ptk runs as root:
    // each photo is then given to that owner (fchown), and root's `ptk list` takes on that user,
    // who must be able to reach the folder (mkdtemp made its parent 0700).
    chmod(root, 0o755)
    chown(root + "/photos", 65534, 65534)
    if spec.partial > 0, let first = spec.photos.first {
        mkdir(root + "/photos/.incoming", 0o700)
        writeFile(root + "/photos/.incoming/" + first.partName, Array(first.bytes.prefix(spec.partial)))
    }
    mkdir(root + "/src", 0o755)
    for p in spec.photos + [afterFaultPhoto] { writeFile(root + "/src/" + p.name, p.bytes) }
    let record = root + "/calls"
    var environment = ["LD_PRELOAD": faultLibrary, "PTK_FAULT_THREADS": spec.threads, "PTK_FAULT_RECORD": record]
    if let fault = spec.fault { environment["PTK_FAULT"] = fault }
    let flags =
        ["--idle-timeout", "5"] + (spec.route == .localSend ? ["--localsend", "on", "--localsend-port", "0"] : [])

    let d: DaemonProcess
    do { d = try DaemonProcess(flags, root: root, environment: environment) } catch {
        problem("ptkd did not start: \(error)")
        return outcome
    }
    // 1 and 2: send, and read what the sender was told.
    let started = Date()
    let first = deliver(spec.route, d, spec.photos, root: root, problem: problem)
    var saved = first.saved
    if Date().timeIntervalSince(started) > 25 {
        problem("the send took \(Int(Date().timeIntervalSince(started))) s: a hang")
    }
    if spec.mustSave && saved.count != spec.photos.count {
        problem(
            "saved \(saved.count) of \(spec.photos.count) photos; a fault to retry reached the sender: \(first.failures). ptkd's log:\n\(d.log)"
        )
    }
    // Indexing is done (or ptkd was killed) before the next send, so every run counts the same
    // calls: those of the photos sent, not of the next send's. (Under EAGAIN at every other call,
    // SQLite, which retries only EINTR, fails every try: indexing is checked after the restart.)
    let indexing: Double = spec.mustSave ? 2 : 20
    _ = eventually(indexing) { !d.process.isRunning || waitForIndexing(d, timeout: 0.1) }
    // The part under test is over: no more counting, and no fault if none was made.
    if d.process.isRunning {
        kill(d.process.processIdentifier, SIGUSR2)
        if !eventually(
            5,
            {
                (try? String(contentsOfFile: record, encoding: .utf8))?.contains("disarmed\n") == true
                    || !d.process.isRunning
            })
        {
            // A kill made just before the signal (the call came late, on a loaded machine: a
            // flush of the library's) is the fault under test, not a deaf library: the record
            // says the fault was made, and the process ends of it.
            let killedLate = spec.isKill && countedCalls(record).fault != nil && eventually(10) { !d.process.isRunning }
            if !killedLate { problem("the fault library did not take SIGUSR2") }
        }
    }
    (outcome.calls, outcome.fault) = countedCalls(record)
    // 3: still serving, or exited as systemd restarts.
    if d.process.isRunning {
        let next = deliver(spec.route, d, [afterFaultPhoto], root: root, problem: problem)
        if next.saved[afterFaultPhoto.name] != nil {
            saved[afterFaultPhoto.name] = next.saved[afterFaultPhoto.name]
        } else if !(spec.isKill && !d.process.isRunning) {
            problem("the next send after the fault failed: \(next.failures); ptkd's log:\n\(d.log)")
        }
        _ = eventually(indexing) { !d.process.isRunning || waitForIndexing(d, timeout: 0.1) }
        if d.process.isRunning {
            // A hang is a stop that never ends: 30 s tells one from a machine busy with the other
            // sweeps (a full run once needed more than 10 s to stop a healthy ptkd).
            let status = d.stop(timeout: 30)
            if status != 0 {
                problem("ptkd stopped with \(status.map(String.init) ?? "a hang") after the fault; its log:\n\(d.log)")
            }
        }
    }
    if !d.process.isRunning && !spec.isKill {
        let status = d.process.terminationStatus
        if status == 0 && d.process.terminationReason == .exit {
            // Stopped by the test.
        } else if d.process.terminationReason != .exit {
            problem("ptkd ended by signal \(status); its log:\n\(d.log)")
        }
    }
    // The error the sender was told matches the fault: no-space for ENOSPC and EDQUOT, else io-error.
    if let fault = outcome.fault, let error = spec.fault?.split(separator: ":")[1], !fault.onSocket, !spec.isKill,
        !spec.mustSave
    {
        let expected = error == "ENOSPC" || error == "EDQUOT" ? ["no-space", "HTTP 507"] : ["io-error", "HTTP 500"]
        for failure in first.failures where !expected.contains(where: failure.contains) {
            problem(
                "\(error) at \(fault.function) reached the sender as something else than \(expected[0]): \(failure)")
        }
    }
    // After a restart, with no fault.
    let again: DaemonProcess
    do { again = try DaemonProcess(flags, root: root) } catch {
        problem("ptkd did not start again: \(error)")
        return outcome
    }
    let sent = spec.photos + [afterFaultPhoto]
    let byBytes = Dictionary(sent.map { ($0.bytes, $0.name) }, uniquingKeysWith: { a, _ in a })
    // 1.
    for name in again.visible {
        guard let bytes = readFile(again.dir + "/" + name), byBytes[bytes] != nil else {
            problem("\"\(name)\" is under a final name but is not a photo that was sent")
            continue
        }
    }
    for (photo, name) in saved {
        let bytes = sent.first { $0.name == photo }!.bytes
        if readFile(again.dir + "/" + name) != bytes {
            problem("\(photo) was reported saved as \"\(name)\" but is not there after a restart")
        }
    }
    // 5.
    for part in again.incoming {
        guard let photo = sent.first(where: { $0.partName == part }) else {
            problem(".incoming holds \"\(part)\", which is no photo's partial upload")
            continue
        }
        let bytes = readFile(again.dir + "/.incoming/" + part) ?? []
        if bytes.count > photo.bytes.count || Array(photo.bytes.prefix(bytes.count)) != bytes {
            problem(".incoming/\(part) is not a prefix of \(photo.name)")
        }
    }
    let unsaved = spec.photos.filter { saved[$0.name] == nil }
    if !unsaved.isEmpty {
        let resent = deliver(spec.route, again, unsaved, root: root, problem: problem).saved
        for p in unsaved where resent[p.name] == nil {
            problem("\(p.name) was not saved when sent again after the restart")
        }
        for (photo, name) in resent
        where readFile(again.dir + "/" + name) != sent.first(where: { $0.name == photo })!.bytes {
            problem("\(photo), sent again, is not intact as \"\(name)\"")
        }
    }
    if !again.incoming.isEmpty { problem(".incoming still holds \(again.incoming) once every photo was sent") }
    // 4.
    let files = Set(again.visible)
    if !waitForIndex(again, files, timeout: 30) {
        let listedNames: String
        do { listedNames = "\(try listed(again).map { "\($0["Name"] ?? "?") indexed \($0["Indexed"] ?? "?")" })" } catch
        { listedNames = "unread (\(error))" }
        problem(
            "the library does not list each photo file once, indexed: files \(files.sorted()), library \(listedNames); log:\n\(again.log)"
        )
    }
    let check = try? run(
        "/usr/bin/python3",
        [
            "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
            again.dir + "/.ptk/index.sqlite",
        ], absolute: true)
    if check?.stdout != "ok\n" { problem("PRAGMA integrity_check: \(check?.stdout ?? "") \(check?.stderr ?? "")") }
    let status = again.stop(timeout: 30)  // as above: a hang, not a busy machine
    if status != 0 {
        problem("ptkd stopped with \(status.map(String.init) ?? "a hang") after the restart; its log:\n\(again.log)")
    }
    return outcome
}

/// What a sender was told: photo name -> saved name for those saved; the failures reported
/// ("failed: CODE: ..." lines of ptk-send, "HTTP STATUS" of an upload).
struct Delivered {
    var saved: [String: String] = [:]
    var failures: [String] = []
}

/// Sends `photos` to `d` by `route`, and checks invariant 2 on those not saved.
func deliver(
    _ route: Route, _ d: DaemonProcess, _ photos: [SentPhoto], root: String,
    problem: (String) -> Void
) -> Delivered {
    var delivered = Delivered()
    switch route {
    case .ptkSend:
        let paths = photos.map { root + "/src/" + $0.name }
        guard
            let r = try? run(
                "ptk-send", ["--timeout", "10", "127.0.0.1:\(d.port)"] + paths, timeout: 40,
                environment: ["XDG_CONFIG_HOME": d.senderConfig])
        else {
            problem("ptk-send did not run")
            return delivered
        }
        delivered.failures = r.stdout.split(separator: "\n").filter {
            $0.contains(": failed: ") || $0.contains(": refused: ")
        }.map(String.init)
        for line in r.stdout.split(separator: "\n") {
            // A photo the receiver kept already (saved before the fault cut the answer off) counts as saved.
            guard let range = line.range(of: ": saved as \"") ?? line.range(of: ": already there as \"") else {
                continue
            }
            let path = String(line[..<range.lowerBound])
            let rest = line[range.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { continue }
            delivered.saved[(path as NSString).lastPathComponent] = String(rest[..<end])
        }
        if r.status == 0 && delivered.saved.count != photos.count {
            problem("ptk-send exited 0 but reported \(delivered.saved.count) of \(photos.count) saved: \(r.stdout)")
        }
        if r.status != 0 {
            if ![1, 69, 76].contains(r.status) { problem("ptk-send exited \(r.status): \(r.stdout) \(r.stderr)") }
            for (photo, path) in zip(photos, paths) where delivered.saved[photo.name] == nil {
                let said = r.stdout.split(separator: "\n").contains { $0.hasPrefix(path + ": ") }
                if !said {
                    problem(
                        "ptk-send failed (\(r.status)) without saying what became of \(photo.name): \(r.stdout) \(r.stderr)"
                    )
                }
            }
        }
    case .localSend:
        guard let app = try? LocalSendApp(port: d.localSendPort, identity: faultPhone, alias: "Fault Phone") else {
            problem("no LocalSend app")
            return delivered
        }
        let files = photos.enumerated().map {
            (
                id: "f\($0.offset)", name: $0.element.name, bytes: $0.element.bytes, type: "image/png",
                hash: Optional(sha256Hex($0.element.bytes))
            )
        }
        // A connection lost (an error, or status 0: closed without a whole answer) told nothing.
        guard let (status, json) = try? app.prepare(files), status != 0 else { return delivered }
        // 204: the receiver keeps every one already (saved before the fault cut the answer off).
        if status == 204 {
            for f in files {
                if readFile(d.dir + "/" + f.name) != f.bytes {
                    problem("prepare-upload answered 204 but \(f.name) is not kept")
                }
                delivered.saved[f.name] = f.name
            }
            return delivered
        }
        guard status == 200 else {
            if ![500, 507].contains(status) { problem("prepare-upload answered \(status)") }
            delivered.failures.append("prepare-upload: HTTP \(status) \(json)")
            return delivered
        }
        let (session, fileTokens) = tokens(json)
        for f in files {
            guard let token = fileTokens[f.id] else {
                // Left out: kept already, under its own name (the fault cut off an earlier answer).
                if readFile(d.dir + "/" + f.name) != f.bytes {
                    problem("prepare-upload left out \(f.name), which is not kept")
                }
                delivered.saved[f.name] = f.name
                continue
            }
            guard let r = try? app.upload(session: session, fileID: f.id, token: token, bytes: f.bytes), r.status != 0
            else { continue }
            if r.status == 200 {
                delivered.saved[f.name] = f.name
            } else {
                if ![500, 507].contains(r.status) { problem("the upload of \(f.name) answered \(r.status) \(r.body)") }
                delivered.failures.append("\(f.name): HTTP \(r.status) \(r.body)")
            }
        }
    }
    return delivered
}

/// Runs `runs` on `workers` threads at once; returns their outcomes in order.
func executeAll(_ runs: [FaultRun], workers: Int = 4) -> [FaultOutcome] {
    let results = Locked<[Int: FaultOutcome]>([:])
    let next = Locked(0)
    let done = Semaphore()
    for _ in 0..<workers {
        try? startThread(name: "test") {
            while true {
                var i = 0
                next.mutate {
                    i = $0
                    $0 += 1
                }
                guard i < runs.count else { break }
                let outcome = execute(runs[i])
                results.mutate { $0[i] = outcome }
            }
            done.signal()
        }
    }
    for _ in 0..<workers { done.wait() }
    return (0..<runs.count).map { results.value[$0] ?? FaultOutcome(problems: ["\(runs[$0].label): not run"]) }
}

/// A run for each call that `threads` make (as a recording shows) and each error of its kind:
/// that call, and no other, fails with that error.
func errorRuns(_ route: Route, threads: String, photos: [SentPhoto], partial: Int = 0, calls: [CountedCall])
    -> [FaultRun]
{
    calls.flatMap { call in
        (injectedErrors[call.kind] ?? []).map {
            FaultRun(
                route: route, threads: threads, fault: "\(call.kind):\($0):\(call.ofKind)", photos: photos,
                partial: partial, target: call)
        }
    }
}

/// Whether `run` should have made its fault and did not: its target call was made (as many
/// calls of its kind, or as many calls in all for a KILL, as the recording counted) and is not
/// one of the connection's reads and writes, whose number varies with the kernel's timing.
/// A KILL counts every call, so it is also let off when a socket call came before its target.
func missedFault(_ run: FaultRun, _ outcome: FaultOutcome) -> Bool {
    guard outcome.fault == nil, let target = run.target, !target.onSocket else { return false }
    if run.isKill {
        let before = outcome.calls.prefix(target.all)
        return outcome.calls.count >= target.all && !before.contains(where: \.onSocket)
    }
    return outcome.calls.filter { $0.kind == target.kind }.count >= target.ofKind
}

/// The distinct call sites among `calls`, by kind and site.
func distinctSites(_ calls: [CountedCall]) -> Int { Set(calls.map { $0.kind + " " + $0.caller }).count }

@Suite(
    "End to end: faults at every step", .serialized,
    .enabled(if: canInjectFaults, "needs root and libptkfault.so (built by swift build)"), .tags(.endToEnd, .root))
struct FaultInjectionTests {
    static let onePhoto = [SentPhoto(name: "one.png", bytes: makePNG(size: 250_000, seed: 31))]
    static let threePhotos = [
        SentPhoto(name: "a.png", bytes: makePNG(size: 150_000, seed: 32)),
        SentPhoto(name: "b.png", bytes: makePNG(size: 120_000, seed: 33)),
        SentPhoto(name: "c.png", bytes: makePNG(size: 90_000, seed: 34)),
    ]

    /// Records the calls of `threads` on `route` (the recording run must itself pass), then
    /// runs `make` on them and checks every run; prints what was covered.
    func sweep(
        _ route: Route, threads: String, photos: [SentPhoto], partial: Int = 0, what: String,
        make: ([CountedCall]) -> [FaultRun]
    ) {
        let started = Date()
        let recording = execute(FaultRun(route: route, threads: threads, fault: nil, photos: photos, partial: partial))
        #expect(recording.problems.isEmpty, "\(recording.problems.joined(separator: "\n"))")
        let calls = recording.calls
        #expect(!calls.isEmpty, "the recording counted no calls of \(threads)")
        let runs = make(calls)
        let outcomes = executeAll(runs)
        let problems = outcomes.flatMap(\.problems)
        #expect(problems.isEmpty, "\(problems.count) invariant(s) broken:\n\(problems.joined(separator: "\n"))")
        let made = outcomes.compactMap(\.fault)
        // Each run makes its fault, except where the count of calls varies from run to run: the
        // reads and writes of TLS records on the connection, which the kernel's timing splits.
        let missed = zip(runs, outcomes).filter { missedFault($0.0, $0.1) }
        #expect(missed.isEmpty, "no fault was made in \(missed.map(\.0.label))")
        let kinds = Dictionary(grouping: calls, by: \.kind).mapValues(\.count).sorted { $0.key < $1.key }.map {
            "\($0.key) \($0.value)"
        }
        print(
            "faults: \(what): \(runs.count) runs over \(calls.count) calls (\(kinds.joined(separator: ", "))), \(distinctSites(calls)) distinct call sites, \(made.count) faults made, in \(Int(Date().timeIntervalSince(started))) s"
        )
    }

    @Test("an I/O error at each call of a protocol v1 session over TLS")
    func errorsInSession() {
        sweep(.ptkSend, threads: "session,flush", photos: Self.onePhoto, what: "v1 session errors") {
            errorRuns(.ptkSend, threads: "session,flush", photos: Self.onePhoto, calls: $0)
        }
    }

    @Test("an I/O error at each call of a LocalSend HTTPS upload")
    func errorsInLocalSend() {
        sweep(.localSend, threads: "localsend,flush", photos: Self.onePhoto, what: "LocalSend upload errors") {
            errorRuns(.localSend, threads: "localsend,flush", photos: Self.onePhoto, calls: $0)
        }
    }

    @Test(
        "an I/O error at each call of a session that resumes a partial upload (cut mid-chunk: truncated to its whole chunks)"
    )
    func errorsInResumedSession() {
        sweep(
            .ptkSend, threads: "session,flush", photos: Self.onePhoto, partial: 150_000,
            what: "v1 resumed session errors"
        ) {
            errorRuns(.ptkSend, threads: "session,flush", photos: Self.onePhoto, partial: 150_000, calls: $0)
        }
    }

    @Test(
        "an I/O error at each call of the flush rounds of three photos sent at once (issue 46): only the photos it may have lost fail"
    )
    func errorsInFlushRounds() {
        sweep(.ptkSend, threads: "flush", photos: Self.threePhotos, what: "flush round errors") {
            errorRuns(.ptkSend, threads: "flush", photos: Self.threePhotos, calls: $0)
        }
    }

    @Test("an I/O error at each call of the library's indexing (SQLite and thumbnails)")
    func errorsInIndexing() {
        sweep(.ptkSend, threads: "index", photos: Self.onePhoto, what: "indexing errors") {
            errorRuns(.ptkSend, threads: "index", photos: Self.onePhoto, calls: $0)
        }
    }

    @Test(
        "EINTR and EAGAIN on every other call of every thread are retried, never reach a sender",
        arguments: [Route.ptkSend, Route.localSend])
    func retried(route: Route) {
        sweep(route, threads: "*", photos: Self.threePhotos, what: "\(route.rawValue) EINTR and EAGAIN") { _ in
            ["EINTR", "EAGAIN"].flatMap { error in
                ["odd", "even"].map {
                    FaultRun(
                        route: route, threads: "*", fault: "any:\(error):\($0)", photos: Self.threePhotos,
                        mustSave: true)
                }
            }
        }
    }

    @Test("SIGKILL at each call of a session that receives three photos; restarted, the sender retries")
    func killsInSession() {
        sweep(.ptkSend, threads: "session,flush", photos: Self.threePhotos, what: "v1 session kills") { calls in
            calls.map {
                FaultRun(
                    route: .ptkSend, threads: "session,flush", fault: "any:KILL:\($0.all)", photos: Self.threePhotos,
                    target: $0)
            }
        }
    }

    @Test("SIGKILL at each call of a LocalSend upload of three photos; restarted, the app sends again")
    func killsInLocalSend() {
        sweep(.localSend, threads: "localsend,flush", photos: Self.threePhotos, what: "LocalSend upload kills") {
            calls in
            calls.map {
                FaultRun(
                    route: .localSend, threads: "localsend,flush", fault: "any:KILL:\($0.all)",
                    photos: Self.threePhotos, target: $0)
            }
        }
    }

    @Test("SIGKILL at each call of the library's indexing")
    func killsInIndexing() {
        sweep(.ptkSend, threads: "index", photos: Self.onePhoto, what: "indexing kills") { calls in
            calls.map {
                FaultRun(
                    route: .ptkSend, threads: "index", fault: "any:KILL:\($0.all)", photos: Self.onePhoto, target: $0)
            }
        }
    }
}
