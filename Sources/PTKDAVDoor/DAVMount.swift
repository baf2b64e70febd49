import PTKDAV
import PTKTrust
import PTKVocabulary

/// Where on the web port a WebDAV request was sent, and so how it is answered: ptk's own
/// `/dav`, or the paths the Nextcloud-compatible door serves the same view at
/// (`/remote.php/dav/files/NAME` and `/remote.php/webdav`, docs/OPERATIONS.md "Phones backing
/// up on their own"). One password sees one view whichever it uses: the same names, folders,
/// locks and photos. The compatible mounts add what those clients read and send (`cloud`).
struct DAVMount: Equatable {
    /// The prefix the mount's hrefs, Destination headers and lock roots are under, with no
    /// trailing "/": "/dav", "/remote.php/webdav", "/remote.php/dav/files/NAME".
    let prefix: String
    /// The Nextcloud-compatible dialect: `oc:` and `nc:` properties, `X-OC-Mtime`, `OC-FileId`
    /// and `OC-ETag` on answers, and names that stay listed as sent (`DAVNamed.sticky`).
    let cloud: Bool

    /// ptk's own mount.
    static let plain = DAVMount(prefix: DAVEndpoint.prefix, cloud: false)
    /// The compatible mount every password may use without naming itself (older clients).
    static let webdav = DAVMount(prefix: "/remote.php/webdav", cloud: true)
    /// Where the compatible files mounts start; the next segment names the password.
    static let filesRoot = "/remote.php/dav/files"
    /// Where the upload folders of chunked upload v2 start (`DAVEndpoint+Chunks`); the next
    /// segment names the password, as for `filesRoot`.
    static let uploadsRoot = "/remote.php/dav/uploads"
    /// The prefixes the door's routes take, each followed by the rest of the path.
    static let routePrefixes = [DAVEndpoint.prefix, webdav.prefix, filesRoot, uploadsRoot]

    /// The files mount of the password `name` (`AppPasswords.validName`: no byte that needs
    /// encoding in a path).
    static func files(_ name: String) -> DAVMount { DAVMount(prefix: filesRoot + "/" + name, cloud: true) }
    /// The upload folders of the password `name` (not a view of files: `DAVEndpoint+Chunks`).
    static func uploads(_ name: String) -> DAVMount { DAVMount(prefix: uploadsRoot + "/" + name, cloud: true) }
    /// Whether this is a password's upload folders.
    var isUploads: Bool { prefix.hasPrefix(Self.uploadsRoot + "/") }

    /// Whether a request target (as sent) is one of the door's: under a route prefix.
    /// Anything else below `/remote.php` is the door's too, so that a client asking there gets
    /// WebDAV's answer (401 with the challenge, or 404), never the web pages' login.
    static func isTarget(_ target: String) -> Bool {
        let path = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        return routePrefixes.contains { path == $0 || path.hasPrefix($0 + "/") } || path == "/remote.php"
            || path.hasPrefix("/remote.php/")
    }

    /// Whether a target (as sent) is under one of the Nextcloud-compatible prefixes.
    static func isCloudTarget(_ target: String) -> Bool {
        let path = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        return path == "/remote.php" || path.hasPrefix("/remote.php/")
    }

    /// Why a target names no mount of the password `account`.
    enum Refusal: Error, Equatable {
        /// Under `/remote.php/dav/files` or `/remote.php/dav/uploads` with no name, or another password's name (what another
        /// password sent is never visible: the answer is the one for a path that is not there).
        case otherUser
        /// Not under any mount (a table built wrong).
        case outside
    }

    /// The mount `target` (as sent) is under, for the password `account`, told by its first
    /// segments (the handlers parse the rest and refuse `..` and the like in their terms).
    static func of(_ target: String, account: AppPassword) -> Result<DAVMount, Refusal> {
        let path = target.parts(separatedBy: "?", maxSplits: 1).first ?? ""
        func under(_ prefix: String) -> Bool { path == prefix || path.hasPrefix(prefix + "/") }
        if under(plain.prefix) { return .success(plain) }
        if under(webdav.prefix) { return .success(webdav) }
        let root = under(uploadsRoot) ? uploadsRoot : filesRoot
        guard path.hasPrefix(root + "/") else { return .failure(under(root) ? .otherUser : .outside) }
        let segment =
            path.utf8.dropFirst(root.utf8.count + 1).split(
                separator: UInt8(ascii: "/"), maxSplits: 1, omittingEmptySubsequences: false
            ).first.map { Array($0) } ?? []
        // The name as sent may be percent-encoded: compared decoded, byte for byte.
        guard let name = percentDecoded(bytes: segment), name == Array(account.name.utf8) else {
            return .failure(.otherUser)
        }
        return .success(root == uploadsRoot ? uploads(account.name) : files(account.name))
    }
}
