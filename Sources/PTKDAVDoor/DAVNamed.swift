/// A name a WebDAV client PUT, and the kept photo it names (which may be called otherwise: the
/// store's naming rules, a photo kept already with these bytes).
struct DAVNamed: Sendable, Equatable {
    /// The photo's path relative to the received-photos directory.
    var kept: String
    var size: Int64
    /// The bytes the name is for: what the client sent (or, `shared`, the very bytes it sent,
    /// found kept already). The name names a file only while the file holds these bytes
    /// (`DAVView.check`); "" names nothing that can be checked, so nothing.
    var sha256: String
    /// When it was PUT, in seconds since the epoch.
    var modified: Int64
    /// The file last found to hold `sha256` at `kept`, when that finding may be trusted later
    /// (`DAVView.check`); nil: the next look hashes the file.
    var mark: DAVFileMark?
    /// The PUT found these bytes kept already (another sender's, or under another name): the
    /// name is this client's only, and removing or moving it never touches the kept photo.
    var shared: Bool
    /// Sent through the Nextcloud-compatible door by an `upload` password: the name stays
    /// listed with the facts it was sent with when the receiver moves or removes its photo, so
    /// a sync client never sees it go and never deletes the file on its side (`DAVView.resolve`).
    var sticky = false
}
