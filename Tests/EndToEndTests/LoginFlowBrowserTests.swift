import Foundation
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

/// A phone app's login flow with the person's side in headless Chromium
/// (Tests/Browser/login_flow_test.py through WebDriver), against the real ptkd.
@Suite(
    "End to end: a phone app's login flow approved in a real browser (issue 57)", .serialized,
    .enabled(if: browserAvailable, browserMissing),
    .tags(.endToEnd))
struct LoginFlowBrowserTests {
    @Test(
        "the flow's page without a session is the login page; logging in comes back to it; Approve, and the app's poll gets the password; a second flow denied"
    )
    func approveInBrowser() throws {
        let d = try DaemonProcess.withWeb()
        #expect(eventually { fileExists(d.stateDir + "/listening") })
        try d.setWebPassword("right horse battery")
        try runBrowserScript(
            "login_flow_test.py",
            [
                "--port", String(d.webPort), "--cafile", d.stateDir + "/web/tls/cert.pem", "--password",
                "right horse battery",
            ], daemon: d)
        let list = try library(d, ["app-password", "list", "--json"])
        #expect(list.stdout.contains("\"name\": \"annas-phone\", \"access\": \"upload\""), "\(list.stdout)")
        d.stop()
        #expect(d.log.contains("denied the login flow of"), "\(d.log)")
    }
}
