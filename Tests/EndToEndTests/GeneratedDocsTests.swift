import Testing
import PTKTestSupport

/// The docs' generated parts match the tree: a change to Package.swift, a module's size or what a
/// program links fails here, with the diff and the command that rewrites the doc.
@Suite("Generated docs match the tree")
struct GeneratedDocsTests {
    @Test("docs/ARCHITECTURE.md's module table is scripts/module-table.py's")
    func moduleTable() throws {
        let r = try run(repositoryRoot() + "/scripts/module-table.py", ["--check", repositoryRoot()], timeout: 120, absolute: true)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }

    @Test("docs/OPERATIONS.md's runtime packages are what ptkd, ptk and ptk-send link")
    func runtimePackages() throws {
        let r = try run(repositoryRoot() + "/scripts/runtime-packages.py", ["--check", binDirectory], absolute: true)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
    }
}
