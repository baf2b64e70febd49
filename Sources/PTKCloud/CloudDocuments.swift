/// The documents the Nextcloud-compatible door answers with, as pure values: what the clients
/// check before they upload (`status.php`, the capabilities, the user). Which fields are there
/// only because a client reads them is said in docs/OPERATIONS.md ("Phones backing up on
/// their own"); ptk calls itself ptk wherever a person reads it.
public enum CloudDocuments {
    /// The server version the door states: high enough that current apps neither refuse it
    /// (the Android app refuses below 20) nor warn that it is outdated (at or below 30), and one
    /// whose behaviour the clients know (chunked upload v2, login flow v2).
    public static let version = (major: Int64(31), minor: Int64(0), micro: Int64(5), build: Int64(1))
    /// `version` as `status.php`'s "version" ("31.0.5.1").
    public static var versionText: String { "\(version.major).\(version.minor).\(version.micro).\(version.build)" }
    /// `version` as people read it ("31.0.5").
    public static var versionString: String { "\(version.major).\(version.minor).\(version.micro)" }
    /// The product name shown where a client names the server: ptk's own.
    public static let productName = "ptk"
    /// Seconds between a client's looks for changes (`core.pollinterval`).
    public static let pollInterval: Int64 = 60

    /// `GET /status.php`.
    public static func status() -> OCSValue {
        .object([
            ("installed", .bool(true)), ("maintenance", .bool(false)), ("needsDbUpgrade", .bool(false)),
            ("version", .string(versionText)), ("versionstring", .string(versionString)), ("edition", .string("")),
            ("productname", .string(productName)), ("extendedSupport", .bool(false)),
        ])
    }

    /// `cloud/capabilities`: the DAV root, chunked upload v2 (`dav.chunking` "1.0"), SHA-1 as
    /// the checksum clients send (their default), an empty theming, and nothing it does not do
    /// (no sharing, versions, trash, end-to-end encryption, locking or notifications).
    public static func capabilities() -> OCSValue {
        .object([
            (
                "version",
                .object([
                    ("major", .int(version.major)), ("minor", .int(version.minor)), ("micro", .int(version.micro)),
                    ("string", .string(versionString)), ("edition", .string("")), ("extendedSupport", .bool(false)),
                ])
            ),
            (
                "capabilities",
                .object([
                    (
                        "core",
                        .object([
                            ("pollinterval", .int(pollInterval)), ("webdav-root", .string("remote.php/webdav")),
                            ("reference-api", .bool(false)),
                        ])
                    ),
                    // No `bulkupload` (a multipart POST of small files) and no `files.tus_support`: uploads are PUTs.
                    ("dav", .object([("chunking", .string("1.0")), ("invalidFilenameRegex", .string(""))])),
                    (
                        "files",
                        .object([
                            ("bigfilechunking", .bool(true)), ("undelete", .bool(false)), ("versioning", .bool(false)),
                            ("blacklisted_files", .array([.string(".htaccess")])),
                        ])
                    ),
                    (
                        "checksums",
                        .object([
                            ("supportedTypes", .array([.string("SHA1")])), ("preferredUploadType", .string("SHA1")),
                        ])
                    ),
                    ("theming", .object([])),
                ])
            ),
        ])
    }

    /// `cloud/user` (and `cloud/users/NAME` of oneself): the password's name as its user id
    /// and display name, and the room the receiver has as its quota (`free` bytes beyond
    /// `min-free`; `used` what it sent; no set quota, which Nextcloud writes as -3).
    public static func user(name: String, free: Int64?, used: Int64) -> OCSValue {
        let total = (free ?? 0) + used
        let relative = total > 0 ? Int64((Double(used) / Double(total) * 100).rounded()) : 0
        return .object([
            ("enabled", .bool(true)), ("id", .string(name)), ("display-name", .string(name)),
            ("displayname", .string(name)), ("email", .null),
            (
                "quota",
                .object([
                    ("free", .int(free ?? -2)), ("used", .int(used)), ("total", .int(total)),
                    ("relative", .int(relative)), ("quota", .int(-3)),
                ])
            ),
            ("groups", .array([])), ("language", .string("en")), ("locale", .string("")),
        ])
    }

    /// `config`: the API's version and this server's address as the client reached it.
    public static func config(host: String) -> OCSValue {
        .object([
            ("version", .string("1.7")), ("website", .string(productName)), ("host", .string(host)),
            ("contact", .string("")), ("ssl", .string("true")),
        ])
    }
}
