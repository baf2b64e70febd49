import PTKClient
import PTKSystem
import PTKCLI

/// Prints what the sessions report (Delivery serialises the calls) and draws the progress bar,
/// so a line about a file never lands in the middle of the bar.
public final class Report: @unchecked Sendable {
    // Touched only from Delivery's progress calls, which never overlap, and after `run` returns.
    private let files: [LocalFile]
    private let bar: ProgressBar?
    private var resumedAt: [Int: Int64] = [:]
    private let quiet: Bool
    /// The receiver as the user named it, and how long --wait lets the call wait.
    private let peer: String
    private let waitLimit: Duration
    /// Without a bar, waiting for a busy receiver is said once.
    private var saidWaiting = false

    /// `showBar`: draw the progress bar (on a terminal, unless --quiet).
    public init(files: [LocalFile], showBar: Bool, quiet: Bool, peer: String, waitLimit: Duration) {
        self.files = files
        self.bar = showBar ? ProgressBar(files: files) : nil
        self.quiet = quiet
        self.peer = peer
        self.waitLimit = waitLimit
    }

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
                print("\(f.path): already there as \"\(s.name)\"")
            case .saved(let s):
                let resumed = resumedAt[index].map { " (resumed at byte \($0))" } ?? ""
                print("\(f.path): saved as \"\(s.name)\"\(resumed)")
            case .rejected(let p): print("\(f.path): refused: \(p)")
            case .failed(let p): print("\(f.path): failed: \(p)")
            }
            bar?.redraw()
        case .connected:
            bar?.handle(event, file: 0)
        case .waiting(let ahead, _):
            if let bar {
                bar.showWaiting(for: peer, ahead: ahead)
            } else if !quiet && !saidWaiting {
                saidWaiting = true
                writeToStandardError("ptk-send: \(peer) is busy serving other senders; waiting for a turn (up to \(durationText(waitLimit)), --wait)")
            }
        }
    }

    public func clearBar() { bar?.clear() }
}

