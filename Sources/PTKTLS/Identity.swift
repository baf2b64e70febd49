import CTLS
import PTKProtocol
import PTKSystem

/// Why a device identity could not be loaded or made.
public struct IdentityError: Error, CustomStringConvertible {
    /// What went wrong, naming the file or directory where there is one.
    public var description: String
}

/// A long-lived Ed25519 key pair and a self-signed certificate for it (protocol §6), kept as
/// `key.pem` (mode 0600) and `cert.pem` in one directory. The device ID hashes the key, so a
/// certificate that is re-issued (expired, damaged, missing) keeps the ID; the key is never
/// replaced silently.
public final class Identity: @unchecked Sendable {
    // Immutable after init; OpenSSL's key and certificate objects are safe to share read-only.
    let key: OpaquePointer
    let certificate: OpaquePointer
    /// The ID peers know this device by: the SHA-256 of its public key (protocol §6), so it stays
    /// the same when the certificate is re-issued.
    public let deviceID: DeviceID
    /// The directory holding the files.
    public let directory: String

    /// The private key's path (mode 0600), for messages.
    public var keyFile: String { directory + "/key.pem" }
    /// The certificate's path, for messages.
    public var certificateFile: String { directory + "/cert.pem" }

    /// Certificates are issued for this long, and re-issued when less than a month is left.
    static let validityDays = 3650
    static let renewalSeconds: Int64 = 30 * 86_400

    private init(key: OpaquePointer, certificate: OpaquePointer, directory: String) {
        self.key = key
        self.certificate = certificate
        self.directory = directory
        let identity = PTKTLS.deviceID(ofKey: key)
        self.deviceID = identity.deviceID ?? DeviceID(sha256: sha256(subjectPublicKeyInfo(key)))
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// The identity in `directory`, made (key and certificate) when there is none yet. A key
    /// file that exists but cannot be read or parsed is an error naming the file and the fix.
    /// Run as root, what it creates gets the owner of `directory`'s parent.
    /// `keyType` other than Ed25519 makes a certificate that is not a ptk identity (the
    /// LocalSend endpoint's RSA certificate, which the apps' TLS stacks all accept).
    /// `subjectAltNames` (host names and addresses) go into certificates it issues (the web
    /// interface's, which browsers check names against).
    /// The directory is opened without following a symlink, and its files are read, written
    /// and locked relative to it (`openDirectory`): a link planted there is an error naming it.
    public static func loadOrCreate(
        in directory: String, commonName: String, keyType: KeyType = .ed25519,
        subjectAltNames: [String] = []
    ) throws(IdentityError) -> Identity {
        let dir: FileDescriptor
        do {
            dir = try openDirectory(directory, creating: true)
        } catch {
            throw IdentityError(description: "cannot create the identity directory: \(error)")
        }
        defer { dir.close() }
        let lockResult = Result { () throws -> Identity in
            try dir.withLockFileRefusingLinks(".lock", path: directory + "/.lock", guards: "the identity") {
                () throws -> Identity in
                let keyPath = directory + "/key.pem"
                // Anything at the name (a symlink included) is left to `load`, which says what it is.
                if (try? dir.status(of: "key.pem")) == nil {
                    let key = try generateKey(type: keyType.openSSL)
                    do {
                        try dir.replaceFileRefusingLinks(
                            "key.pem", path: keyPath, with: pem(of: key, privateKey: true), mode: 0o600)
                    } catch {
                        EVP_PKEY_free(key)
                        throw IdentityError(description: "cannot save the new identity key: \(error)")
                    }
                    EVP_PKEY_free(key)
                }
                return try load(
                    from: dir, directory: directory, commonName: commonName, keyType: keyType,
                    subjectAltNames: subjectAltNames)
            }
        }
        switch lockResult {
        case .success(let identity): return identity
        case .failure(let error as IdentityError): throw error
        case .failure(let error): throw IdentityError(description: "cannot lock the identity directory: \(error)")
        }
    }

    /// The identity in `directory`, which must exist. With `commonName`, a certificate that is
    /// missing, damaged, for another key or near its end is re-issued (and saved when possible);
    /// without, it is only read. The directory is opened as `loadOrCreate` opens it.
    public static func load(
        from directory: String, commonName: String? = nil, keyType: KeyType = .ed25519,
        subjectAltNames: [String] = []
    ) throws(IdentityError) -> Identity {
        let dir: FileDescriptor
        do {
            dir = try openDirectory(directory, creating: false)
        } catch let error as SystemError where error.code == .noSuchFile {
            throw IdentityError(
                description:
                    "no identity in \(directory): \(directory)/key.pem does not exist (ptkd and ptk-send make it on first start)"
            )
        } catch {
            throw IdentityError(description: "cannot open the identity directory: \(error)")
        }
        defer { dir.close() }
        return try load(
            from: dir, directory: directory, commonName: commonName, keyType: keyType, subjectAltNames: subjectAltNames)
    }

    /// `load(from:)` with the directory open.
    private static func load(
        from dir: FileDescriptor, directory: String, commonName: String?, keyType: KeyType,
        subjectAltNames: [String]
    ) throws(IdentityError) -> Identity {
        let keyPath = directory + "/key.pem"
        let fix =
            "restore it from a backup, or move it away (and cert.pem) to make a new identity; senders that know this device must then accept its new ID"
        let bytes: [UInt8]
        do { bytes = try dir.readFileRefusingLinks("key.pem", path: keyPath, limit: 64 << 10) } catch let error
            as SystemError
        {
            if error.code == .noSuchFile {
                throw IdentityError(
                    description:
                        "no identity in \(directory): \(keyPath) does not exist (ptkd and ptk-send make it on first start)"
                )
            }
            throw IdentityError(
                description:
                    "cannot read the identity key \(keyPath): \(error.reason); check its owner and mode (0600, owned by the user that runs ptk), or \(fix)"
            )
        } catch {
            throw IdentityError(description: "cannot read the identity key: \(error)")
        }
        guard let key = parsePrivateKey(bytes) else {
            throw IdentityError(description: "the identity key \(keyPath) is damaged: \(openSSLErrors()); \(fix)")
        }
        guard EVP_PKEY_get_id(key) == keyType.openSSL else {
            let type = keyTypeName(key)
            EVP_PKEY_free(key)
            throw IdentityError(
                description: "the identity key \(keyPath) is a \(type) key, not \(keyType.name); \(fix)")
        }
        let certPath = directory + "/cert.pem"
        var certificate: OpaquePointer? = nil
        do {
            certificate = parseCertificate(try dir.readFileRefusingLinks("cert.pem", path: certPath, limit: 64 << 10))
        } catch let refused as RefusedFileError {
            EVP_PKEY_free(key)
            throw IdentityError(description: "cannot read the certificate: \(refused)")
        } catch {
            // No readable certificate: a new one is made for the same key just below.
        }
        if let c = certificate, X509_check_private_key(c, key) != 1 || expiresSoon(c) {
            X509_free(c)
            certificate = nil
        }
        ERR_clear_error()
        if certificate == nil {
            guard let commonName else {
                EVP_PKEY_free(key)
                throw IdentityError(
                    description:
                        "the certificate \(certPath) is missing or out of date; the next start of ptkd or ptk-send re-issues it for the same key"
                )
            }
            guard let fresh = issueCertificate(for: key, commonName: commonName, subjectAltNames: subjectAltNames)
            else {
                EVP_PKEY_free(key)
                throw IdentityError(description: "cannot issue a certificate: \(openSSLErrors())")
            }
            certificate = fresh
            // A read-only directory still works: the certificate is made again next time.
            try? dir.replaceFileRefusingLinks("cert.pem", path: certPath, with: pem(ofCertificate: fresh), mode: 0o644)
        }
        return Identity(key: key, certificate: certificate!, directory: directory)
    }

    /// Opens the identity directory `directory` (issue 42: under ptkd's state directory, which
    /// the service user owns). The directory itself is opened without following a symlink
    /// (made when missing with `creating`: mode 0700 and, run as root, its parent's owner, by
    /// descriptor). Its parent is opened by path, except that a symlink at the parent's own
    /// name (`STATE/web` for `STATE/web/tls`) is followed only when it and the directory
    /// holding it belong to root or to this user; one the service user planted there is
    /// refused to root. Above that, the path is the configuration's. With `creating`, missing
    /// parents are made (mode 0700) as `mkdir -p` makes them.
    static func openDirectory(_ directory: String, creating: Bool) throws -> FileDescriptor {
        var trimmed = directory
        while trimmed.utf8.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let (parentPath, name) = split(trimmed)
        guard let name else { return try FileDescriptor.open(trimmed, flags: [.readOnly, .directory]) }
        if creating { try makeDirectories(parentPath, mode: 0o700) }
        let parent = try openParent(parentPath)
        defer { parent.close() }
        return try parent.openDirectoryRefusingLinks(name, path: trimmed, creating: creating ? 0o700 : nil)
    }

    /// The directory `path` (`openDirectory`'s rule for a symlink at its own name).
    private static func openParent(_ path: String) throws -> FileDescriptor {
        let (above, name) = split(path)
        guard let name else { return try FileDescriptor.open(path, flags: [.readOnly, .directory]) }
        let holder = try FileDescriptor.open(above, flags: [.readOnly, .directory])
        defer { holder.close() }
        let refused: SystemError
        do { return try holder.openSubdirectory(name) } catch { refused = error }
        // Not a symlink (or gone): the open's own error, naming the path.
        guard let link = try? holder.status(of: name), link.isSymlink else {
            throw SystemError(call: refused.call, object: path, errno: refused.errno)
        }
        let me = geteuidValue()
        let holderOwner = try holder.status().owner
        guard link.owner == 0 || link.owner == me, holderOwner == 0 || holderOwner == me else {
            throw RefusedFileError(path: path, reason: .symbolicLink)
        }
        return try FileDescriptor.open(name, relativeTo: holder, flags: [.readOnly, .directory])
    }

    /// `path` split at its last "/" scalar: the directory holding it, and the last component
    /// (nil when there is none to open on its own: "/", ".", "..").
    private static func split(_ path: String) -> (String, String?) {
        let scalars = path.unicodeScalars
        let slash = scalars.lastIndex(of: "/")
        let name = String(slash.map { scalars[scalars.index(after: $0)...] } ?? scalars[...])
        if name.isEmpty || name == "." || name == ".." { return (path, nil) }
        return (slash.map { $0 == scalars.startIndex ? "/" : String(scalars[..<$0]) } ?? ".", name)
    }

    /// The SHA-256 of the certificate's DER encoding in 64 upper-case hex digits: how LocalSend
    /// apps know a device (its "fingerprint").
    public var certificateFingerprint: String { PTKTLS.certificateFingerprint(certificate) }

    /// The private key as PEM (PKCS#8), as `key.pem` holds it.
    var privateKeyPEM: [UInt8] { Self.pem(of: key, privateKey: true) }

    // MARK: OpenSSL

    static func generateKey(type: Int32 = EVP_PKEY_ED25519, rsaBits: Int32 = 2048) throws(IdentityError)
        -> OpaquePointer
    {
        guard let ctx = EVP_PKEY_CTX_new_id(type, nil) else {
            throw IdentityError(description: "cannot make a key: \(openSSLErrors())")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(ctx) == 1,
            type != EVP_PKEY_RSA || EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, rsaBits) == 1,
            type != EVP_PKEY_EC || EVP_PKEY_CTX_set_group_name(ctx, "prime256v1") == 1,
            EVP_PKEY_keygen(ctx, &key) == 1, let key
        else {
            throw IdentityError(description: "cannot make a key: \(openSSLErrors())")
        }
        return key
    }

    /// A self-signed X.509 v3 certificate for `key`, valid from a day ago for `validityDays`
    /// (or, for tests, until `endingIn` seconds from now).
    /// `subjectAltNames` holds host names and IPv4/IPv6 addresses; with any, the certificate is
    /// a TLS server's (basic constraints CA:FALSE, server authentication), as browsers want.
    static func issueCertificate(
        for key: OpaquePointer, commonName: String, endingIn seconds: Int? = nil,
        subjectAltNames: [String] = []
    ) -> OpaquePointer? {
        guard let x = X509_new() else { return nil }
        var serial = [UInt8](repeating: 0, count: 8)
        _ = RAND_bytes(&serial, 8)
        serial[0] &= 0x7F
        let serialValue = serial.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let ok =
            X509_set_version(x, 2) == 1
            && ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serialValue) == 1
            && X509_gmtime_adj(X509_getm_notBefore(x), -86_400) != nil
            && (seconds.map { X509_gmtime_adj(X509_getm_notAfter(x), $0) }
                ?? X509_time_adj_ex(X509_getm_notAfter(x), Int32(validityDays), 0, nil)) != nil
            && X509_set_pubkey(x, key) == 1
            && X509_NAME_add_entry_by_txt(
                X509_get_subject_name(x), "CN", MBSTRING_ASC, String(commonName.prefix(64)), -1, -1, 0) == 1
            && X509_set_issuer_name(x, X509_get_subject_name(x)) == 1
            && (subjectAltNames.isEmpty || addServerExtensions(x, names: subjectAltNames))
            // Ed25519 signs without a separate digest; RSA and EC with SHA-256.
            && X509_sign(x, key, EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 ? nil : EVP_sha256()) > 0
        if !ok {
            X509_free(x)
            return nil
        }
        return x
    }

    /// Adds the subject alternative names (`DNS:` or `IP:` each) and marks the certificate as
    /// a TLS server's that is no CA.
    private static func addServerExtensions(_ x: OpaquePointer, names: [String]) -> Bool {
        let entries = names.compactMap { name -> String? in
            // Only what OpenSSL's configuration syntax cannot misread: host names and addresses.
            let allowed = name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || $0.properties.numericType != nil
                        || ".-:".unicodeScalars.contains($0))
            }
            guard !name.isEmpty, name.utf8.count <= 253, allowed else { return nil }
            let isAddress =
                name.contains(":")
                || name.split(separator: ".").count == 4 && name.allSatisfy { $0.isNumber || $0 == "." }
            return (isAddress ? "IP:" : "DNS:") + name
        }
        guard !entries.isEmpty else { return true }
        return ptk_add_extension(x, ptk_nid_subject_alt_name(), entries.joined(separator: ",")) == 1
            && ptk_add_extension(x, ptk_nid_basic_constraints(), "critical,CA:FALSE") == 1
            && ptk_add_extension(x, ptk_nid_key_usage(), "critical,digitalSignature") == 1
            && ptk_add_extension(x, ptk_nid_ext_key_usage(), "serverAuth") == 1
    }

    static func expiresSoon(_ certificate: OpaquePointer) -> Bool {
        var limit = time_t(WallTime.now.seconds + renewalSeconds)
        return X509_cmp_time(X509_get0_notAfter(certificate), &limit) <= 0
    }

    static func parsePrivateKey(_ pem: [UInt8]) -> OpaquePointer? {
        pem.withUnsafeBytes { b -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(b.baseAddress, Int32(b.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
    }

    static func parseCertificate(_ pem: [UInt8]) -> OpaquePointer? {
        pem.withUnsafeBytes { b -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(b.baseAddress, Int32(b.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
    }

    static func pem(of key: OpaquePointer, privateKey: Bool) -> [UInt8] {
        memoryBIO { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }

    static func pem(ofCertificate certificate: OpaquePointer) -> [UInt8] {
        memoryBIO { bio in PEM_write_bio_X509(bio, certificate) }
    }

    private static func memoryBIO(_ write: (OpaquePointer) -> Int32) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { return [] }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return [] }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = ptk_bio_get_mem_data(bio, &data)
        guard length > 0, let data else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }

    /// Key types for `ephemeral`.
    public enum KeyType: Sendable {
        case ed25519, rsa, ecP256
        var openSSL: Int32 {
            switch self {
            case .ed25519: return EVP_PKEY_ED25519
            case .rsa: return EVP_PKEY_RSA
            case .ecP256: return EVP_PKEY_EC
            }
        }
        var name: String {
            switch self {
            case .ed25519: return "Ed25519"
            case .rsa: return "RSA"
            case .ecP256: return "EC P-256"
            }
        }
    }

    /// An identity held only in memory, saved nowhere: for tests (and for peers that are not
    /// ptk devices, such as a test's relay). Other key types than Ed25519 make certificates
    /// that are not ptk identities.
    public static func ephemeral(_ keyType: KeyType = .ed25519, commonName: String = "test") throws(IdentityError)
        -> Identity
    {
        let key = try generateKey(type: keyType.openSSL)
        guard let certificate = issueCertificate(for: key, commonName: commonName) else {
            EVP_PKEY_free(key)
            throw IdentityError(description: "cannot issue a certificate: \(openSSLErrors())")
        }
        return Identity(key: key, certificate: certificate, directory: "")
    }
}
