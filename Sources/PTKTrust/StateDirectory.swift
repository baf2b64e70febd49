import PTKSystem

/// A directory of files that the service user owns (the state directory, `STATE/web`), as
/// root's `ptk` and ptkd reach it (issue 42): the base is opened by its path, as configured;
/// each component below it is opened without following a symlink; and every file in it is
/// read, replaced, removed or locked relative to that descriptor (`FileDescriptor`'s
/// `*RefusingLinks` calls), never by path, so a link the service user planted is refused with
/// a `RefusedFileError` naming it, not followed.
struct StateDirectory: Sendable {
    /// The directory's path, for messages and the public `*File` properties.
    let path: String
    /// Opened by its path.
    let base: String
    /// Below `base`, each opened without following a symlink.
    let components: [String]
    /// How long `locked` waits for another holder of a lock file.
    var patience = LockPatience.lockFile

    /// `path` itself opened by path (the state directory: the administrator's choice).
    init(opening path: String) {
        self.path = path
        base = path
        components = []
    }

    /// `path`'s parent opened by path, and its last component without following a symlink
    /// (`STATE/web`: the service user could replace `web` with a link).
    init(below path: String) {
        var trimmed = path
        while trimmed.utf8.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
        // Split at the last "/" scalar, as the kernel does (not at a Character, which a mark can join).
        let scalars = trimmed.unicodeScalars
        let slash = scalars.lastIndex(of: "/")
        let name = String(slash.map { scalars[scalars.index(after: $0)...] } ?? scalars[...])
        if name.isEmpty || name == "." || name == ".." {
            base = trimmed
            components = []
        } else {
            base = slash.map { $0 == scalars.startIndex ? "/" : String(scalars[..<$0]) } ?? "."
            components = [name]
        }
    }

    /// The full path of `name` in this directory, for messages.
    func path(of name: String) -> String { path + "/" + name }

    /// Opens the directory; with `creating`, makes what is missing (the base with its parents,
    /// like `mkdir -p`; a component with `mode` and, run as root, its parent's owner, by descriptor).
    func open(creating mode: FileMode? = nil) throws -> FileDescriptor {
        var current: FileDescriptor
        switch Result(catching: { () throws(SystemError) in
            try FileDescriptor.open(base, flags: [.readOnly, .directory])
        }) {
        case .success(let fd): current = fd
        case .failure(let error):
            guard error.code == .noSuchFile, let mode else { throw error }
            try makeDirectories(base, mode: mode)
            current = try FileDescriptor.open(base, flags: [.readOnly, .directory])
        }
        var currentPath = base
        for component in components {
            currentPath += (currentPath.hasSuffix("/") ? "" : "/") + component
            let next: FileDescriptor
            do { next = try current.openDirectoryRefusingLinks(component, path: currentPath, creating: mode) } catch {
                current.close()
                throw error
            }
            current.close()
            current = next
        }
        return current
    }

    /// Runs `body` with the directory open (closed after).
    func with<R>(creating mode: FileMode? = nil, _ body: (FileDescriptor) throws -> R) throws -> R {
        let fd = try open(creating: mode)
        defer { fd.close() }
        return try body(fd)
    }

    /// Runs `body` with the directory open; nil when the directory does not exist (yet).
    func withExisting<R>(_ body: (FileDescriptor) throws -> R) throws -> R? {
        let fd: FileDescriptor
        do { fd = try open() } catch let error as SystemError where error.code == .noSuchFile { return nil }
        defer { fd.close() }
        return try body(fd)
    }

    /// The text of `name`, or nil when it does not exist (the directory included). A symlink
    /// there is refused.
    func readText(_ name: String) throws -> String? {
        try withExisting { dir in try readText(name, in: dir) } ?? nil
    }

    /// The text of `name` in the open directory `dir`, or nil when there is none. A symlink
    /// there is refused, never followed.
    func readText(_ name: String, in dir: FileDescriptor) throws -> String? {
        do {
            return String(decoding: try dir.readFileRefusingLinks(name, path: path(of: name)), as: UTF8.self)
        } catch let error as SystemError where error.code == .noSuchFile {
            return nil
        }
    }

    /// Replaces `name` with `bytes` (mode `mode`) at once, in the open directory `dir`.
    func replace(_ name: String, in dir: FileDescriptor, with bytes: [UInt8], mode: FileMode) throws {
        try dir.replaceFileRefusingLinks(name, path: path(of: name), with: bytes, mode: mode)
    }

    /// Runs `body` holding the lock file `name` (on `guards`, for the error when another
    /// process holds it past `patience`), with the directory open (made when missing with `creating`).
    func locked<R>(
        _ name: String, guarding guards: String, creating mode: FileMode? = nil, _ body: (FileDescriptor) throws -> R
    ) throws -> R {
        try with(creating: mode) { dir in
            try dir.withLockFileRefusingLinks(name, path: path(of: name), guards: guards, patience: patience) {
                try body(dir)
            }
        }
    }
}
