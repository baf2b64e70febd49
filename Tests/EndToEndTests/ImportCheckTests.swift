import Foundation
import PTKTestSupport
import PTKTestTags
import Testing

/// A throwaway package: App depends on Mid, Mid on Base; App's files import `appImports`.
private func makePackage(appImports: [String]) -> String {
    let dir = makeTemporaryDirectory("ptk-imports")
    for t in ["App", "Mid", "Base"] {
        try? FileManager.default.createDirectory(atPath: "\(dir)/Sources/\(t)", withIntermediateDirectories: true)
    }
    writeFile(
        dir + "/Package.swift",
        Array(
            """
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(name: "fixture", targets: [
                .target(name: "Base"),
                .target(name: "Mid", dependencies: ["Base"]),
                .executableTarget(name: "App", dependencies: ["Mid"]),
            ])

            """.utf8))
    writeFile(dir + "/Sources/Base/b.swift", Array("public let base = 1\n".utf8))
    writeFile(dir + "/Sources/Mid/m.swift", Array("import Base\npublic let mid = base\n".utf8))
    writeFile(
        dir + "/Sources/App/main.swift", Array((appImports.map { "import \($0)\n" }.joined() + "print(1)\n").utf8))
    return dir
}

@Suite("scripts/check-imports.py: Package.swift lists every import", .tags(.endToEnd))
struct ImportCheckTests {
    @Test("an import reached only through another target is reported, with the file and the target")
    func transitiveImportRefused() throws {
        let dir = makePackage(appImports: ["Dispatch", "Mid", "Base"])
        defer { removeTree(dir) }
        let r = try run(repositoryRoot() + "/scripts/check-imports.py", [dir], absolute: true)
        #expect(r.status == 1)
        #expect(
            r.stderr == """
                Sources/App/main.swift: imports Base, which Package.swift does not list for App
                check-imports: 1 undeclared or forbidden import(s); add them to the target in Package.swift (unless forbidden) or drop them

                """)
    }

    @Test(
        "a forbidden arrow is refused even when Package.swift lists it; a door imports no other door (but the web door the WebDAV door), nor the daemon, and PTKDoor no door"
    )
    func forbiddenArrows() throws {
        let dir = makeTemporaryDirectory("ptk-forbidden")
        defer { removeTree(dir) }
        let targets = [
            "PTKLibrary", "PTKWeb", "PTKLocalSend", "PTKLocalSendDoor", "PTKDoor", "PTKDaemon", "PTKDAVDoor",
            "PTKWebDoor",
        ]
        for t in targets {
            try FileManager.default.createDirectory(atPath: "\(dir)/Sources/\(t)", withIntermediateDirectories: true)
        }
        writeFile(
            dir + "/Package.swift",
            Array(
                """
                // swift-tools-version:6.0
                import PackageDescription
                let package = Package(name: "fixture", targets: [
                    .target(name: "PTKLibrary"),
                    .target(name: "PTKLocalSend"),
                    .target(name: "PTKWeb", dependencies: ["PTKLibrary"]),
                    .target(name: "PTKLocalSendDoor", dependencies: ["PTKLocalSend"]),
                    .target(name: "PTKDoor", dependencies: ["PTKLocalSendDoor"]),
                    .target(name: "PTKDaemon", dependencies: ["PTKLocalSendDoor"]),
                    .target(name: "PTKDAVDoor", dependencies: ["PTKDaemon", "PTKLocalSendDoor"]),
                    .target(name: "PTKWebDoor", dependencies: ["PTKLocalSend", "PTKWeb", "PTKDAVDoor"]),
                ])

                """.utf8))
        writeFile(dir + "/Sources/PTKLibrary/l.swift", Array("public let l = 1\n".utf8))
        writeFile(dir + "/Sources/PTKLocalSend/s.swift", Array("public let s = 1\n".utf8))
        writeFile(dir + "/Sources/PTKWeb/w.swift", Array("import PTKLibrary\npublic let w = l\n".utf8))
        writeFile(
            dir + "/Sources/PTKLocalSendDoor/LocalSendEndpoint.swift",
            Array("import PTKLocalSend\npublic let a = s\n".utf8))
        writeFile(dir + "/Sources/PTKDoor/d.swift", Array("import PTKLocalSendDoor\nlet d = a\n".utf8))
        writeFile(
            dir + "/Sources/PTKDaemon/Daemon.swift", Array("import PTKLocalSendDoor\npublic let daemon = a\n".utf8))
        writeFile(
            dir + "/Sources/PTKDAVDoor/DAVEndpoint.swift",
            Array("import PTKDaemon\nimport PTKLocalSendDoor\npublic let dav = daemon + a\n".utf8))
        writeFile(
            dir + "/Sources/PTKWebDoor/WebEndpoint+Upload.swift",
            Array("import PTKLocalSend\nimport PTKWeb\nimport PTKDAVDoor\nlet b = s + w + dav\n".utf8))
        let r = try run(repositoryRoot() + "/scripts/check-imports.py", [dir], absolute: true)
        #expect(r.status == 1)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("Package.swift: PTKWeb lists PTKLibrary, a forbidden arrow") }, "\(r.stderr)")
        #expect(
            lines.contains { $0.hasPrefix("Sources/PTKWeb/w.swift: imports PTKLibrary, a forbidden arrow") },
            "\(r.stderr)")
        #expect(
            lines.contains {
                $0.hasPrefix("Sources/PTKWebDoor/WebEndpoint+Upload.swift: imports PTKLocalSend, a forbidden arrow")
            }, "\(r.stderr)")
        #expect(
            lines.contains { $0.hasPrefix("Package.swift: PTKDoor lists PTKLocalSendDoor, a forbidden arrow") },
            "\(r.stderr)")
        #expect(
            lines.contains { $0.hasPrefix("Sources/PTKDoor/d.swift: imports PTKLocalSendDoor, a forbidden arrow") },
            "\(r.stderr)")
        #expect(
            lines.contains { $0.hasPrefix("Package.swift: PTKDAVDoor lists PTKDaemon, a forbidden arrow") },
            "\(r.stderr)")
        #expect(
            lines.contains {
                $0.hasPrefix("Sources/PTKDAVDoor/DAVEndpoint.swift: imports PTKLocalSendDoor, a forbidden arrow")
            }, "\(r.stderr)")
        #expect(
            !r.stderr.contains("LocalSendEndpoint.swift"), "the LocalSend door's own files may import it: \(r.stderr)")
        #expect(!r.stderr.contains("PTKDaemon/"), "the daemon may import every door: \(r.stderr)")
        #expect(
            !r.stderr.contains("PTKWebDoor lists PTKDAVDoor") && !r.stderr.contains("imports PTKDAVDoor"),
            "the web door serves the WebDAV door on its port: \(r.stderr)")
    }

    @Test("declared imports and system modules pass")
    func declaredImportsPass() throws {
        let dir = makePackage(appImports: ["Dispatch", "Mid"])
        defer { removeTree(dir) }
        let r = try run(repositoryRoot() + "/scripts/check-imports.py", [dir], absolute: true)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "check-imports: every import of 3 targets is declared in Package.swift\n")
    }

    @Test("Glibc outside PTKSystem (and test code) is refused: the syscall layer keeps it")
    func glibcRefused() throws {
        let dir = makePackage(appImports: ["Glibc", "Mid"])
        defer { removeTree(dir) }
        let r = try run(repositoryRoot() + "/scripts/check-imports.py", [dir], absolute: true)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Sources/App/main.swift: imports Glibc; outside PTKSystem use its typed wrappers\n"))
    }
}

@Suite("What each program links", .tags(.endToEnd))
struct LinkTests {
    /// The shared libraries `ldd` lists for a built program, by their names.
    private func libraries(_ program: String) throws -> [String] {
        let r = try run("/usr/bin/ldd", [binDirectory + "/" + program], absolute: true)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
        }
    }

    @Test("the test images' encoder and decoder are in no program", arguments: ["ptkd", "ptk", "ptk-send"])
    func noTestImageCode(program: String) throws {
        let r = try run("/usr/bin/nm", [binDirectory + "/" + program], absolute: true)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains("ptk_png_thumbnail") == (program != "ptk-send"), "the thumbnailer is where it is needed")
        // The thumbnailer encodes JPEG thumbnails and previews (issue 45): libjpeg's compressor
        // is linked where it is, through ptk_jpeg_encode, never the tests' own encoder.
        #expect(
            r.stdout.contains("ptk_jpeg_encode") == (program != "ptk-send"),
            "the renditions' encoder is where it is needed")
        for symbol in ["ptk_test_png_decode_rgba", "ptk_test_jpeg_encode", "ptk_test_jpeg_decode_rgba"] {
            #expect(!r.stdout.contains(symbol), "\(program) links \(symbol)")
        }
    }

    @Test("ptk reads ptkd's configuration without linking the daemon: no Avahi, no libsystemd, no HTTP parser")
    func ptkLinksNoDaemon() throws {
        let libs = try libraries("ptk")
        #expect(libs.contains { $0.hasPrefix("libsqlite3") }, "\(libs)")
        for unwanted in ["libavahi", "libsystemd", "libhttp_parser"] {
            #expect(!libs.contains { $0.hasPrefix(unwanted) }, "ptk links \(unwanted): \(libs)")
        }
    }
}

@Suite("scripts/check-try.py: every try? says why its error does not matter", .tags(.endToEnd))
struct TryCheckTests {
    @Test("the sources pass")
    func sourcesPass() throws {
        let r = try run(repositoryRoot() + "/scripts/check-try.py", [repositoryRoot()], absolute: true)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("a try? without a comment is reported with its file and line; one with a comment above or beside passes")
    func unexplainedReported() throws {
        let dir = makeTemporaryDirectory("ptk-try")
        defer { removeTree(dir) }
        try FileManager.default.createDirectory(atPath: dir + "/Sources/A", withIntermediateDirectories: true)
        writeFile(
            dir + "/Sources/A/a.swift",
            Array(
                """
                // Why: nothing to do when it fails.
                let x = try? f()
                let y = try? g()  // beside
                let z = try? h()

                """.utf8))
        let r = try run(repositoryRoot() + "/scripts/check-try.py", [dir], absolute: true)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Sources/A/a.swift:4: try? without a comment"), "\(r.stderr)")
        #expect(r.stderr.contains("1 of 3 try? unexplained"), "\(r.stderr)")
    }

    @Test(
        "a try? in a statement the formatter broke over lines is explained by a comment on any of its lines, not by one on another statement"
    )
    func brokenStatements() throws {
        let dir = makeTemporaryDirectory("ptk-try")
        defer { removeTree(dir) }
        try FileManager.default.createDirectory(atPath: dir + "/Sources/A", withIntermediateDirectories: true)
        writeFile(
            dir + "/Sources/A/a.swift",
            Array(
                """
                let a = f(
                    1, try? g(),
                    3)  // unreadable: nil
                // Why: the call is only a hint.
                guard
                    let b = try? h(
                        2)
                else { return }
                let c = [
                    try? i()
                ]
                let d = 4  // another statement's comment

                """.utf8))
        let r = try run(repositoryRoot() + "/scripts/check-try.py", [dir], absolute: true)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Sources/A/a.swift:10: try? without a comment"), "\(r.stderr)")
        #expect(r.stderr.contains("1 of 3 try? unexplained"), "\(r.stderr)")
    }
}
