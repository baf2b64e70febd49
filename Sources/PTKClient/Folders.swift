import PTKProtocol
import PTKSystem
import PTKVocabulary

/// What the command line's paths hold: the photos to send, in order, and what is left out.
public struct SendList: Sendable {
    /// The photos: files given, packages given, and the photos found in folders given.
    public var files: [LocalFile] = []
    /// Files found in folders that are not sent, with why ("not a photo", "a symbolic link").
    public var leftOut: [(path: String, reason: String)] = []

    /// An empty list; `collect` makes a filled one.
    public init() {}

    /// Collects `paths` in order: a file must be a photo and a `.ptk` package must be readable
    /// (else the error, before anything is sent); a folder that is no package is walked
    /// (`walk`).
    public static func collect(_ paths: [String], keepFolders: Bool, follow: Bool) throws(LocalFileError) -> SendList {
        try collect(paths.map { BytePath($0) }, keepFolders: keepFolders, follow: follow)
    }

    /// `collect` for paths given as their bytes, which need not be UTF-8 (the command line's,
    /// `BytePath.commandLine`): such a file is sent all the same, its name offered with U+FFFD
    /// for the bytes that are not UTF-8 (`LocalFile.nameReplaced`); so is one found in a folder.
    public static func collect(_ paths: [BytePath], keepFolders: Bool, follow: Bool) throws(LocalFileError) -> SendList
    {
        var c = SendList()
        for path in paths {
            // A path that cannot be stat'ed is checked as a file, whose error names the problem.
            if let st = try? fileStatus(path), st.isDirectory, !LocalFile.isPackage(path) {
                var visited: Set<[UInt64]> = [[st.device, st.inode]]
                try c.walk(
                    path.droppingTrailingSlashes, below: [], keepFolders: keepFolders, follow: follow, visited: &visited
                )
            } else {
                c.files.append(try LocalFile.check(path))
            }
        }
        return c
    }

    /// Folders are walked at most this deep.
    public static let maxDepth = 64

    /// The photos under `folder`, in name order (byte order of the names), recursively: hidden
    /// files and folders (a name starting with ".") are skipped; a symbolic link is followed
    /// only with `follow` (a folder reached twice is walked once); a folder that is a `.ptk`
    /// package is sent as its photo; anything that is not a photo is left out, with the reason.
    /// With `keepFolders`, a photo's name is its path below the folder given. Names are taken
    /// as the folder's bytes: one that is not UTF-8 is opened all the same, and offered with
    /// U+FFFD for its bytes that are not.
    mutating func walk(
        _ folder: BytePath, below: [BytePath], keepFolders: Bool, follow: Bool, visited: inout Set<[UInt64]>
    ) throws(LocalFileError) {
        let directory: FileDescriptor
        let names: [BytePath]
        do {
            directory = try FileDescriptor.open(folder, flags: [.readOnly, .directory])
        } catch {
            leftOut.append((folder.description, "a folder that cannot be listed: \(error.reason.lowercasedFirst)"))
            return
        }
        defer { directory.close() }
        do { names = try directory.byteEntries() } catch {
            leftOut.append((folder.description, "a folder that cannot be listed: \(error.reason.lowercasedFirst)"))
            return
        }
        for name in names.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) })
        where name.bytes.first != UInt8(ascii: ".") {
            let path = folder.appending(name)
            var st: FileStatus
            do { st = try directory.status(of: name) } catch {
                leftOut.append((path.description, error.reason.lowercasedFirst))
                continue
            }
            if st.isSymlink {
                guard follow else {
                    leftOut.append((path.description, "a symbolic link (--follow sends what it points to)"))
                    continue
                }
                do { st = try fileStatus(path) } catch {
                    leftOut.append(
                        (path.description, "a symbolic link to nothing readable: \(error.reason.lowercasedFirst)"))
                    continue
                }
            }
            if st.isDirectory {
                if LocalFile.isPackage(path) {
                    files.append(try LocalFile.checkPackage(path))
                } else if below.count + 1 >= Self.maxDepth {
                    leftOut.append((path.description, "a folder more than \(Self.maxDepth) levels deep"))
                } else if visited.insert([st.device, st.inode]).inserted {
                    try walk(path, below: below + [name], keepFolders: keepFolders, follow: follow, visited: &visited)
                }
            } else if !st.isRegularFile {
                leftOut.append((path.description, "not a regular file"))
            } else {
                // A file that cannot be read is left out with the reason; the others still go.
                do {
                    guard var file = try LocalFile.checkFile(path, name: name.text, nameReplaced: !name.isUTF8) else {
                        leftOut.append((path.description, "not a photo"))
                        continue
                    }
                    if keepFolders && !below.isEmpty { offer(&file, below: below) }
                    files.append(file)
                } catch {
                    leftOut.append((path.description, error.reason))
                }
            }
        }
    }

    /// With --keep-folders: `file` offered with the folders it was found in before its name.
    private func offer(_ file: inout LocalFile, below: [BytePath]) {
        file.name = (below.map(\.text) + [file.name]).joined(separator: "/")
        if below.contains(where: { !$0.isUTF8 }) { file.nameReplaced = true }
    }
}
