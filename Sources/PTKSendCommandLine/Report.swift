import FoundationEssentials
import PTKCLI
import PTKClient
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// How each file ended, as `--json` names it.
public enum FileStatusWord: String, Sendable, CaseIterable {
    case saved
    /// The receiver kept these bytes already (duplicates = skip).
    case alreadyThere = "already-there"
    case refused
    case failed
    /// The receiver does not keep its type (WELCOME.types).
    case notKept = "not-kept"
    /// Found in a folder, not a photo (or a symbolic link, an unreadable file): never sent.
    case leftOut = "left-out"
    /// Not sent because the session ended first.
    case notSent = "not-sent"
}

/// One line of `--json`: a file and how it ended.
struct FileLine: Encodable {
    var path: String
    /// The name the receiver saved it as (or already kept it as).
    var name: String?
    var status: String
    var reason: String?
    var size: Int64?
}

/// The last line of `--json`.
struct SummaryLine: Encodable {
    struct Counts: Encodable {
        var saved = 0, alreadyThere = 0, refused = 0, failed = 0, notKept = 0, leftOut = 0, notSent = 0
        var bytes: Int64 = 0
        var seconds = 0.0
        var receiver: String?
        /// The types the receiver said it keeps (nil before its WELCOME).
        var receiverTypes: [String]?
    }
    var summary: Counts
}

/// Prints what the sessions report (Delivery serialises the calls) and draws the progress bar,
/// so a line about a file never lands in the middle of the bar; at the end, the files left out
/// and a summary. With `json`, standard output carries one JSON object per file as it ends and
/// a summary object last, for scripts.
public final class Report: @unchecked Sendable {
    // Touched only from Delivery's progress calls, which never overlap, and after `run` returns.
    private let files: [LocalFile]
    private let bar: ProgressBar?
    private var resumedAt: [Int: Int64] = [:]
    private let quiet: Bool
    private let json: Bool
    /// The receiver as the user named it, and how long --wait lets the call wait.
    private let peer: String
    private let waitLimit: Duration
    /// Without a bar, waiting for a busy receiver is said once.
    private var saidWaiting = false
    private var counts = SummaryLine.Counts()
    private let started = Instant.now
    /// The types the receiver keeps, once a file of another type was not offered.
    private var keptTypes: [PhotoType]?

    /// Whether the summary goes to standard error at the end (on a terminal, unless --quiet).
    private let showSummary: Bool

    /// `showBar`: draw the progress bar and print the summary (on a terminal, unless --quiet).
    public init(files: [LocalFile], showBar: Bool, quiet: Bool, json: Bool = false, peer: String, waitLimit: Duration) {
        self.files = files
        self.bar = showBar ? ProgressBar(files: files) : nil
        self.showSummary = showBar
        self.quiet = quiet
        self.json = json
        self.peer = peer
        self.waitLimit = waitLimit
    }

    /// "PNG and JPEG", "PNG, JPEG and HEIC".
    static func typeList(_ types: [PhotoType]) -> String {
        let names = types.map(\.displayName)
        guard names.count > 1 else { return names.first ?? "nothing" }
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    private func emit(
        path: String, name: String? = nil, _ status: FileStatusWord, reason: String? = nil, size: Int64? = nil,
        text: String
    ) {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // Strings and integers always encode.
            let line =
                (try? encoder.encode(
                    FileLine(path: path, name: name, status: status.rawValue, reason: reason, size: size))) ?? Data()
            print(escapingTerminalControlsInJSON(String(decoding: line, as: UTF8.self)))
        } else {
            // The receiver's name, saved name and messages, and names found in folders, are
            // another's text: nothing in them acts on the terminal.
            print(escapedForTerminal(text))
        }
    }

    /// Updates the bar and prints a line for each finished file; called under the delivery's lock, one call at a time.
    public func handle(_ event: SendProgress) {
        switch event {
        case .started(let index, let offset):
            bar?.handle(event, file: index)
            if offset > 0 { resumedAt[index] = offset }
        case .acknowledged(let index, _):
            bar?.handle(event, file: index)
        case .finished(let index, let outcome):
            bar?.handle(event, file: index)
            let f = files[index]
            bar?.clear()
            switch outcome {
            case .saved(let s) where s.isDuplicate:
                counts.alreadyThere += 1
                emit(
                    path: f.path, name: s.name, .alreadyThere, size: f.size,
                    text: "\(f.path): already there as \(quotedForTerminal(s.name))")
            case .saved(let s):
                counts.saved += 1
                counts.bytes += f.size - (resumedAt[index] ?? 0)
                let resumed = resumedAt[index].map { " (resumed at byte \($0))" } ?? ""
                emit(
                    path: f.path, name: s.name, .saved, size: f.size,
                    text: "\(f.path): saved as \(quotedForTerminal(s.name))\(resumed)")
            case .rejected(let p):
                counts.refused += 1
                emit(path: f.path, .refused, reason: p.description, size: f.size, text: "\(f.path): refused: \(p)")
            case .failed(let p):
                counts.failed += 1
                emit(path: f.path, .failed, reason: p.description, size: f.size, text: "\(f.path): failed: \(p)")
            case .notKept(let kept):
                counts.notKept += 1
                keptTypes = kept
                let why =
                    "\(counts.receiver ?? peer) keeps \(Self.typeList(kept)); this is \(f.type.isVideo ? "an" : "a") \(f.type.displayName)"
                emit(path: f.path, .notKept, reason: why, size: f.size, text: "\(f.path): not sent: \(why)")
            }
            bar?.redraw()
        case .connected(_, let receiverName):
            counts.receiver = receiverName
            bar?.handle(event, file: 0)
        case .waiting(let ahead, _):
            if let bar {
                bar.showWaiting(for: peer, ahead: ahead)
            } else if !quiet && !saidWaiting {
                saidWaiting = true
                writeToStandardError(
                    escapedForTerminal(
                        "ptk-send: \(peer) is busy serving other senders; waiting for a turn (up to \(durationText(waitLimit)), --wait)"
                    ))
            }
        }
    }

    /// Takes the bar off the terminal, before something else is printed.
    public func clearBar() { bar?.clear() }

    /// After the sessions: the files a failed session left unsent, the files found in folders
    /// that are no photos, and the summary (on standard error when it is a terminal, unless
    /// --quiet: a script reads the lines, or --json; with --json, as the last object on
    /// standard output).
    public func finish(unsent: [Int], leftOut: [(path: String, reason: String)]) {
        bar?.clear()
        for i in unsent {
            counts.notSent += 1
            emit(
                path: files[i].path, .notSent, reason: "the session ended first", size: files[i].size,
                text: "\(files[i].path): not sent")
        }
        for (path, reason) in leftOut {
            counts.leftOut += 1
            emit(path: path, .leftOut, reason: reason, text: "\(path): left out: \(reason)")
        }
        counts.seconds = max(0, (Instant.now - started).seconds)
        counts.receiverTypes = keptTypes?.map(\.mediaType)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // Strings and numbers always encode.
            print(
                escapingTerminalControlsInJSON(
                    String(decoding: (try? encoder.encode(SummaryLine(summary: counts))) ?? Data(), as: UTF8.self)))
        } else if showSummary {
            writeToStandardError(escapedForTerminal("ptk-send: " + summaryText))
        }
    }

    /// "3 saved, 1 already there, 2 not kept by livingroom (it keeps PNG and JPEG), 4 left out;
    /// 12.5 MB in 2.1 s (6.0 MB/s)": the counts that are not zero.
    var summaryText: String {
        var parts: [String] = []
        func add(_ n: Int, _ words: String) { if n > 0 { parts.append("\(n) \(words)") } }
        add(counts.saved, "saved")
        add(counts.alreadyThere, "already there")
        add(counts.refused, "refused")
        add(counts.failed, "failed")
        if counts.notKept > 0 {
            parts.append(
                "\(counts.notKept) not kept by \(counts.receiver ?? peer) (it keeps \(Self.typeList(keptTypes ?? [])))")
        }
        add(counts.leftOut, "left out (not photos)")
        add(counts.notSent, "not sent")
        if parts.isEmpty { parts.append("nothing sent") }
        let rate = counts.seconds > 0 ? " (\(formatBytes(Double(counts.bytes) / counts.seconds))/s)" : ""
        return parts.joined(separator: ", ")
            + "; \(formatBytes(Double(counts.bytes))) in \(formatDecimal(counts.seconds)) s\(rate)"
    }
}
