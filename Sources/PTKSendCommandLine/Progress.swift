import PTKCLI
import PTKClient
import PTKSystem
import PTKVocabulary

/// The progress bar on standard error, for all sessions together: the file last started,
/// files finished, bytes, percent, rate, ETA. Redrawn at most ten times a second, on a
/// terminal only. Not thread-safe: `Report` calls it under its lock.
final class ProgressBar {
    private let files: [LocalFile]
    private let total: Int64
    /// Bytes acknowledged (or held by the receiver already) per file.
    private var done: [Int: Int64] = [:]
    private var doneTotal: Int64 = 0
    /// Bytes the receiver already held when files resumed: not part of the rate.
    private var resumedTotal: Int64 = 0
    private var finishedCount = 0
    private var current = 0
    private let started = Instant.now
    private var lastDraw = Instant(seconds: 0)
    private var drawn = false

    init(files: [LocalFile]) {
        self.files = files
        self.total = files.reduce(0) { $0 + $1.size }
    }

    /// Set while the receiver is busy: the line shown in place of the bar.
    private var waitingLine: String?

    func handle(_ event: SendProgress, file index: Int) {
        switch event {
        case .connected:
            // A turn came: the bar again.
            if waitingLine != nil {
                waitingLine = nil
                draw(force: true)
            }
            return
        case .waiting: return
        case .started(_, let offset):
            current = index
            add(offset, to: index)
            resumedTotal += offset
        case .acknowledged(_, let bytes):
            add(Int64(bytes), to: index)
        case .finished:
            // A refused or failed file counts as dealt with, so the bar still reaches the end.
            add(files[index].size - done[index, default: 0], to: index)
            finishedCount += 1
        }
        draw(force: false)
    }

    private func add(_ bytes: Int64, to index: Int) {
        done[index, default: 0] += bytes
        doneTotal += bytes
    }

    func redraw() { draw(force: true) }

    /// "waiting for livingroom (busy, 3 senders ahead)" in place of the bar, until a session is welcomed.
    func showWaiting(for peer: String, ahead: Int?) {
        var text = "waiting for \(escapedForTerminal(peer)) (busy"
        if let ahead {
            text += ahead == 0 ? ", next in line" : ", \(ahead) sender\(ahead == 1 ? "" : "s") ahead"
        }
        waitingLine = text + ")"
        draw(force: true)
    }

    func clear() {
        if drawn { writeRaw("\r\u{1B}[K") }
        drawn = false
    }

    private func draw(force: Bool) {
        let now = Instant.now
        guard force || now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        if let waitingLine {
            writeRaw("\r\u{1B}[K" + waitingLine)
            drawn = true
            return
        }
        let fraction = total > 0 ? Double(doneTotal) / Double(total) : 1
        let elapsed = (now - started).seconds
        let rate = elapsed > 0.05 ? Double(doneTotal - resumedTotal) / elapsed : 0
        var eta = "--:--"
        if rate > 0 {
            let left = Int(Double(total - doneTotal) / rate)
            eta = "\(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60)"
        }
        let f = files[current]
        // A name found in a folder may hold controls: escaped before it is cut, so that a cut
        // shortens only visible text.
        let shown = escapedForTerminal(f.name)
        var name = shown.count > 30 ? String(shown.prefix(29)) + "…" : shown
        if files.count > 1 { name += " (\(finishedCount)/\(files.count) done)" }
        let width = 20
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        writeRaw(
            "\r\u{1B}[K\(name) [\(bar)] \(formatBytes(Double(doneTotal)))/\(formatBytes(Double(total))) \(Int(fraction * 100))% \(formatBytes(rate))/s ETA \(eta)"
        )
        drawn = true
    }

    private func writeRaw(_ s: String) {
        // The bar is decoration: a terminal that cannot be written to loses only it.
        try? FileDescriptor.standardError.writeAll(Array(s.utf8))
    }
}
