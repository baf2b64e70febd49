import Foundation
import PTKSystem
import PTKTestSupport
import Testing

/// Debian's chromium and chromium-driver, and python3-selenium, are here: the browser suites
/// run (else they are skipped with `browserMissing`).
let browserAvailable =
    ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    && (try? run("/usr/bin/python3", ["-c", "import selenium"], absolute: true).status) == 0

/// Why a browser suite is skipped.
let browserMissing: Comment = "needs chromium, chromium-driver and python3-selenium (scripts/deps.sh --test)"

/// Runs the WebDriver script `Tests/Browser/NAME` with `arguments` and `--shots DIR` (the
/// screenshots' folder, .build/screenshots), up to `timeout` seconds; expects it to exit 0
/// (showing its output and `daemon`'s log when it does not) and prints its "figure:" lines.
@discardableResult
func runBrowserScript(_ name: String, _ arguments: [String], daemon: DaemonProcess, timeout: Double = 180) throws
    -> Finished
{
    let shots = repositoryRoot() + "/.build/screenshots"
    try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
    let r = try run(
        "/usr/bin/python3", [repositoryRoot() + "/Tests/Browser/" + name] + arguments + ["--shots", shots],
        timeout: timeout, absolute: true)
    #expect(r.status == 0, "\(r.stderr)\n\(r.stdout)\n\(daemon.log)")
    print(r.stdout.split(separator: "\n").filter { $0.hasPrefix("figure:") }.joined(separator: "\n"))
    return r
}
