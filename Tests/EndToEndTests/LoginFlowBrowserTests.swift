import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// A phone app's login flow with the person's side in headless Chromium
/// (Tests/Browser/login_flow_test.py through WebDriver), against the real ptkd.
@Suite(
    "End to end: a phone app's login flow approved in a real browser (issue 57)", .serialized,
    .enabled(
        if: ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        } && (try? run("/usr/bin/python3", ["-c", "import selenium"], absolute: true).status) == 0,
        "needs chromium, chromium-driver and python3-selenium (scripts/deps.sh --test)"),
    .tags(.endToEnd))
struct LoginFlowBrowserTests {
    @Test(
        "the flow's page without a session is the login page; logging in comes back to it; Approve, and the app's poll gets the password; a second flow denied"
    )
    func approveInBrowser() throws {
        let d = try DaemonProcess.withWeb()
        #expect(eventually { fileExists(d.stateDir + "/listening") })
        let set = try run(
            "/bin/sh",
            [
                "-c",
                "printf 'right horse battery\\n' | \"$0\" --config /dev/null --dir \"$1\" --state-dir \"$2\" web-password",
                binDirectory + "/ptk", d.dir, d.stateDir,
            ], absolute: true)
        #expect(set.status == 0, "\(set.stderr)")
        let shots = repositoryRoot() + "/.build/screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try run(
            "/usr/bin/python3",
            [
                repositoryRoot() + "/Tests/Browser/login_flow_test.py", "--port", String(d.webPort), "--cafile",
                d.stateDir + "/web/tls/cert.pem", "--password", "right horse battery", "--shots", shots,
            ], timeout: 180, absolute: true)
        #expect(r.status == 0, "\(r.stderr)\n\(r.stdout)\n\(d.log)")
        let list = try library(d, ["app-password", "list", "--json"])
        #expect(list.stdout.contains("\"name\": \"annas-phone\", \"access\": \"upload\""), "\(list.stdout)")
        d.stop()
        #expect(d.log.contains("denied the login flow of"), "\(d.log)")
    }
}
