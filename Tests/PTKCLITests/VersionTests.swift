import PTKCLI
import PTKTestSupport
import PTKTestTags
import Testing

@Suite("The version is set in one place", .tags(.unit))
struct VersionTests {
    @Test(
        "ptkVersion is debian/changelog's first version (scripts/version.sh --sync writes it; make runs that before every build)"
    )
    func fromChangelog() throws {
        let changelog = String(decoding: try #require(readFile(repositoryRoot() + "/debian/changelog")), as: UTF8.self)
        let first = try #require(changelog.split(separator: "\n").first)
        let version = try #require(first.split(separator: "(").dropFirst().first?.split(separator: ")").first)
        #expect(ptkVersion == String(version), "run scripts/version.sh --sync (make does)")
    }
}
