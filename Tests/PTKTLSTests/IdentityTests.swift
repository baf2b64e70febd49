import Foundation
import Glibc
import PTKProtocol
import PTKSystem
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKTLS

let fixture = repositoryRoot() + "/Tests/Fixtures/identity"

@Suite("Device identities", .tags(.unit))
struct IdentityTests {
    @Test(
        "the device ID of a key made by the openssl command line is the one openssl's pipeline computes (protocol §6)")
    func matchesOpenSSL() throws {
        let expected = String(decoding: try #require(readFile(fixture + "/expected-id")), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let identity = try Identity.load(from: fixture)
        #expect(identity.deviceID.compact == expected)
    }

    @Test(
        "a fresh identity's ID is what openssl computes from its certificate",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/openssl")))
    func freshMatchesOpenSSL() throws {
        let dir = makeTemporaryDirectory("ptk-id")
        defer { removeTree(dir) }
        let identity = try Identity.loadOrCreate(in: dir + "/identity", commonName: "test")
        let script =
            "openssl x509 -in \(dir)/identity/cert.pem -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base32 -w0 | tr -d ="
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text == identity.deviceID.compact)
    }

    @Test(
        "made once (key 0600), then loaded with the same ID; a lost or damaged certificate is re-issued for the same key"
    )
    func persistent() throws {
        let dir = makeTemporaryDirectory("ptk-id")
        defer { removeTree(dir) }
        let first = try Identity.loadOrCreate(in: dir + "/identity", commonName: "a")
        #expect(try fileStatus(dir + "/identity/key.pem").permissions == 0o600)
        #expect(try fileStatus(dir + "/identity").permissions == 0o700)
        let key = readFile(dir + "/identity/key.pem")
        #expect(try Identity.loadOrCreate(in: dir + "/identity", commonName: "a").deviceID == first.deviceID)
        try removeFile(dir + "/identity/cert.pem")
        #expect(try Identity.loadOrCreate(in: dir + "/identity", commonName: "a").deviceID == first.deviceID)
        #expect(fileExists(dir + "/identity/cert.pem"))
        writeFile(dir + "/identity/cert.pem", Array("-----BEGIN CERTIFICATE-----\nnope\n".utf8))
        #expect(try Identity.loadOrCreate(in: dir + "/identity", commonName: "a").deviceID == first.deviceID)
        #expect(readFile(dir + "/identity/key.pem") == key)
        // A certificate of another key: re-issued too.
        writeFile(dir + "/identity/cert.pem", try #require(readFile(fixture + "/cert.pem")))
        #expect(try Identity.loadOrCreate(in: dir + "/identity", commonName: "a").deviceID == first.deviceID)
        #expect(readFile(dir + "/identity/cert.pem") != readFile(fixture + "/cert.pem"))
    }

    @Test("an expired certificate is re-issued for the same key; the ID does not change")
    func expired() throws {
        let dir = makeTemporaryDirectory("ptk-id")
        defer { removeTree(dir) }
        let first = try Identity.loadOrCreate(in: dir + "/identity", commonName: "a")
        // A certificate for the same key that ended yesterday, made by hand.
        let cert = try #require(
            withExtendedLifetime(first) {
                Identity.issueCertificate(for: first.key, commonName: "old", endingIn: -3600)
            })
        #expect(Identity.expiresSoon(cert))
        writeFile(dir + "/identity/cert.pem", Identity.pem(ofCertificate: cert))
        let again = try Identity.loadOrCreate(in: dir + "/identity", commonName: "a")
        #expect(again.deviceID == first.deviceID)
        #expect(!withExtendedLifetime(again) { Identity.expiresSoon(again.certificate) })
    }

    @Test(
        "a damaged, unreadable or foreign key is an error naming the file and the fix, never a new identity",
        arguments: ["damaged", "rsa", "unreadable"])
    func damagedKey(kind: String) throws {
        let dir = makeTemporaryDirectory("ptk-id")
        defer { removeTree(dir) }
        _ = try Identity.loadOrCreate(in: dir + "/identity", commonName: "a")
        let keyPath = dir + "/identity/key.pem"
        switch kind {
        case "damaged": writeFile(keyPath, Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8))
        // Through the object's own property: a bare `.key` of a temporary would outlive its owner.
        case "rsa": writeFile(keyPath, try Identity.ephemeral(.rsa).privateKeyPEM)
        default: chmod(keyPath, 0)
        }
        let before = readFile(keyPath)
        // Root reads any file: as root, the unreadable key is loaded with the file access of nobody.
        let loaded = try withFileAccess(giving: dir) {
            Result { () throws(IdentityError) in try Identity.loadOrCreate(in: dir + "/identity", commonName: "a") }
        }
        #expect(throws: IdentityError.self) { try loaded.get() }
        if case .failure(let error) = loaded {
            #expect(
                error.description.contains(keyPath) && error.description.contains("restore it from a backup"),
                "\(error)")
        }
        #expect(readFile(keyPath) == before)
    }

    @Test("`ptk id`'s read-only load of a directory without an identity says where it looked")
    func missing() throws {
        #expect {
            _ = try Identity.load(from: "/nonexistent/identity")
        } throws: { error in
            (error as? IdentityError)?.description.contains("/nonexistent/identity/key.pem does not exist") == true
        }
    }
}
