import PTKTestSupport
import PTKTestTags
import Testing

/// The docs' generated parts match the tree: a change to Package.swift, a module's size or what a
/// program links fails here, with the diff and the command that rewrites the doc.
@Suite("Generated docs match the tree", .tags(.endToEnd))
struct GeneratedDocsTests {
    @Test("docs/ARCHITECTURE.md's module table is scripts/module-table.py's")
    func moduleTable() throws {
        let r = try run(
            repositoryRoot() + "/scripts/module-table.py", ["--check", repositoryRoot()], timeout: 120, absolute: true)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }

    @Test("docs/OPERATIONS.md's runtime packages are what ptkd, ptk and ptk-send link")
    func runtimePackages() throws {
        let r = try run(repositoryRoot() + "/scripts/runtime-packages.py", ["--check", binDirectory], absolute: true)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }
}

/// A room has one job: no Swift file in Sources grows past 500 lines unnoticed (issue 43).
@Suite("Rooms stay small", .tags(.endToEnd))
struct RoomSizeTests {
    @Test("no Swift file in Sources is over 500 lines")
    func sizes() throws {
        let r = try run(
            "/usr/bin/find", [repositoryRoot() + "/Sources", "-name", "*.swift", "-exec", "wc", "-l", "{}", "+"],
            absolute: true)
        #expect(r.status == 0, "\(r.stderr)")
        let counted = r.stdout.split(separator: "\n").compactMap { line -> (Int, String)? in
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, let n = Int(parts[0]), parts[1] != "total" else { return nil }
            return (n, String(parts[1]))
        }
        #expect(counted.count > 100, "\(r.stdout)")
        let large = counted.filter { $0.0 > 500 }.map { "\($0.1): \($0.0) lines" }
        #expect(large.isEmpty, "split by job: \(large)")
    }
}
