import PTKProtocol
import PTKSystem

/// What the command line's paths hold: the photos to send, in order, and what is left out.
public struct SendList: Sendable {
    /// The photos: files given, packages given, and the photos found in folders given.
    public var files: [LocalFile] = []
    /// Files found in folders that are not sent, with why ("not a photo", "a symbolic link").
    public var leftOut: [(path: String, reason: String)] = []

    public init() {}

    /// Collects `paths` in order: a file must be a photo and a `.ptk` package must be readable
    /// (else the error, before anything is sent); a folder that is no package is walked
    /// (`walk`).
    public static func collect(_ paths: [String], keepFolders: Bool, follow: Bool) throws(LocalFileError) -> SendList {
        var c = SendList()
        for path in paths {
            // A path that cannot be stat'ed is checked as a file, whose error names the problem.
            if let st = try? fileStatus(path), st.isDirectory, !LocalFile.isPackage(path) {
                var visited: Set<[UInt64]> = [[st.device, st.inode]]
                var root = path
                while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
                try c.walk(root, below: [], keepFolders: keepFolders, follow: follow, visited: &visited)
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
    /// With `keepFolders`, a photo's name is its path below the folder given.
    mutating func walk(_ folder: String, below: [String], keepFolders: Bool, follow: Bool, visited: inout Set<[UInt64]>) throws(LocalFileError) {
        let directory: FileDescriptor
        let names: [String]
        do {
            directory = try FileDescriptor.open(folder, flags: [.readOnly, .directory])
        } catch {
            leftOut.append((folder, "a folder that cannot be listed: \(error.reason.lowercasedFirst)"))
            return
        }
        defer { directory.close() }
        do { names = try directory.entries() } catch {
            leftOut.append((folder, "a folder that cannot be listed: \(error.reason.lowercasedFirst)"))
            return
        }
        for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) where !name.hasPrefix(".") {
            let path = folder + "/" + name
            var st: FileStatus
            do { st = try directory.status(of: name) } catch {
                leftOut.append((path, error.reason.lowercasedFirst))
                continue
            }
            if st.isSymlink {
                guard follow else {
                    leftOut.append((path, "a symbolic link (--follow sends what it points to)"))
                    continue
                }
                do { st = try fileStatus(path) } catch {
                    leftOut.append((path, "a symbolic link to nothing readable: \(error.reason.lowercasedFirst)"))
                    continue
                }
            }
            if st.isDirectory {
                if LocalFile.isPackage(path) {
                    files.append(try LocalFile.checkPackage(path))
                } else if below.count + 1 >= Self.maxDepth {
                    leftOut.append((path, "a folder more than \(Self.maxDepth) levels deep"))
                } else if visited.insert([st.device, st.inode]).inserted {
                    try walk(path, below: below + [name], keepFolders: keepFolders, follow: follow, visited: &visited)
                }
            } else if !st.isRegularFile {
                leftOut.append((path, "not a regular file"))
            } else {
                // A file that cannot be read is left out with the reason; the others still go.
                do {
                    guard var file = try LocalFile.checkFile(path, name: name) else {
                        leftOut.append((path, "not a photo"))
                        continue
                    }
                    if keepFolders && !below.isEmpty { file.name = (below + [file.name]).joined(separator: "/") }
                    files.append(file)
                } catch {
                    leftOut.append((path, error.reason))
                }
            }
        }
    }
}
