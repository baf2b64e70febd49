import PTKClient
import PTKCLI
import PTKSystem

/// The progress bar on standard error: file name, bytes, percent, rate, ETA. Redrawn at most
/// ten times a second, on a terminal only.
final class ProgressBar: @unchecked Sendable {
    // Drawn only when there is a single session, from that session's thread.
    private let files: [LocalFile]
    private var file = 0
    private var done: Int64 = 0
    private var startOffset: Int64 = 0
    private var started = Instant.now
    private var lastDraw = Instant(seconds: 0)
    private var drawn = false

    init(files: [LocalFile]) { self.files = files }

    func handle(_ event: SendProgress) {
        switch event {
        case .connected: break
        case .started(let f, let offset):
            file = f
            done = offset
            startOffset = offset
            started = .now
            draw(force: true)
        case .acknowledged(_, let bytes):
            done += Int64(bytes)
            draw(force: false)
        case .finished:
            clear()
        }
    }

    func clear() {
        if drawn { writeRaw("\r\u{1B}[K") }
        drawn = false
    }

    private func draw(force: Bool) {
        let now = Instant.now
        guard force || now - lastDraw >= 0.1 else { return }
        lastDraw = now
        let f = files[file]
        let fraction = f.size > 0 ? Double(done) / Double(f.size) : 1
        let elapsed = now - started
        let rate = elapsed > 0.05 ? Double(done - startOffset) / elapsed : 0
        var eta = "--:--"
        if rate > 0 {
            let left = Int(Double(f.size - done) / rate)
            eta = "\(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60)"
        }
        let name = f.name.count > 30 ? String(f.name.prefix(29)) + "…" : f.name
        let width = 20
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "\(name) [\(bar)] \(formatBytes(Double(done)))/\(formatBytes(Double(f.size))) \(Int(fraction * 100))% \(formatBytes(rate))/s ETA \(eta)"
        writeRaw("\r\u{1B}[K" + line)
        drawn = true
    }

    private func writeRaw(_ s: String) {
        try? FileDescriptor.standardError.writeAll(Array(s.utf8))
    }
}
