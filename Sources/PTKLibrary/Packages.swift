import CArchive
import FoundationEssentials
import PTKDigest
import PTKStore
import PTKSystem
import PTKVocabulary

extension PhotoMetadata {
    /// A package's photo.metadata, its Version checked (`Package.readMetadata`).
    public static func read(package packagePath: String) throws(LibraryError) -> PhotoMetadata {
        let bytes: [UInt8]
        do { bytes = try Package.readMetadata(packagePath) } catch { throw LibraryError(.badInput, error.description) }
        return try decode(bytes, package: packagePath)
    }

    /// A package's photo.metadata from its bytes, its Version checked (`Package.decodeMetadata`).
    static func decode(_ bytes: [UInt8], package packagePath: String) throws(LibraryError) -> PhotoMetadata {
        do { return try Package.decodeMetadata(bytes, package: packagePath) } catch {
            throw LibraryError(.badInput, error.description)
        }
    }
}

/// A package's two files, opened (as root, before ptk takes on the service user) without following links.
public struct PackageFiles {
    /// The package folder as named, without trailing slashes.
    public let path: String
    /// photo.metadata: a regular file of one link, at most `metadataLimit` bytes.
    public let metadata: FileDescriptor
    /// photo.data: a regular file of one link, at most `dataLimit` bytes.
    public let data: FileDescriptor
    /// Closes both files.
    public func close() {
        metadata.close()
        data.close()
    }
}

extension PackageFiles {
    /// The largest photo.metadata taken (`Package.metadataLimit`, 32 MiB: it holds a thumbnail in base64).
    public static let metadataLimit = Int64(Package.metadataLimit)
    /// The largest photo.data taken: 4 GiB. The store has no limit of its own (ptkd's
    /// `max-file-size` is a receiver's setting, 512 MiB by default, and ptk does not read it).
    public static let dataLimit: Int64 = 4 << 30

    /// Opens the package `path` for `importPackage`: the folder itself without following a
    /// symlink (a trailing slash, which would make the kernel follow one, is dropped first;
    /// a symlink in a folder above it is followed only where `openDirectory(_:followingLinks:)`
    /// trusts it), then photo.metadata and photo.data in it, each without following a symlink
    /// or waiting on a FIFO (O_NOFOLLOW | O_NONBLOCK), and each only a regular file that no
    /// other name shares (a hard link planted to a file the planter could not read) and not
    /// over its limit. Each refusal says which file and why.
    public static func open(_ packagePath: String) throws(LibraryError) -> PackageFiles {
        let path = droppingTrailingSlashes(packagePath)
        let folder: FileDescriptor
        do { folder = try openDirectory(path, followingLinks: false) } catch {
            if error.code == .tooManySymlinks {
                throw LibraryError(
                    .badInput, "\(error.object ?? path): is a symbolic link; ptk import does not follow links")
            }
            throw LibraryError(.badInput, "\(path) is not a package (a NAME.ptk folder): \(error)")
        }
        defer { folder.close() }
        let metadata = try member(
            Package.metadataName, in: folder, path: path, limit: metadataLimit,
            tooLarge: "a package's metadata is at most \(metadataLimit >> 20) MiB")
        do {
            let data = try member(
                Package.dataName, in: folder, path: path, limit: dataLimit,
                tooLarge: "ptk import takes photos of up to \(dataLimit >> 30) GiB")
            return PackageFiles(path: path, metadata: metadata, data: data)
        } catch {
            metadata.close()
            throw error
        }
    }

    /// Opens the file `name` of the package open as `folder` (`path`), as `open` says.
    private static func member(_ name: String, in folder: FileDescriptor, path: String, limit: Int64, tooLarge: String)
        throws(LibraryError) -> FileDescriptor
    {
        let shown = path + "/" + name
        let fd: FileDescriptor
        do { fd = try folder.openBeneath(name, flags: [.readOnly, .nonBlocking]) } catch {
            if error.code == .tooManySymlinks {
                throw LibraryError(.badInput, "\(shown): is a symbolic link; ptk import does not follow links")
            }
            throw LibraryError(
                .badInput, "cannot read \(shown): \(SystemError(call: error.call, object: shown, errno: error.errno))")
        }
        do throws(LibraryError) {
            let found: (status: FileStatus, links: Int, kind: String)
            do { found = try fd.statusWithLinks() } catch {
                throw LibraryError(.io, "cannot read the status of \(shown): \(error)")
            }
            guard found.status.isRegularFile else {
                throw LibraryError(
                    .badInput, "\(shown): is not a regular file (\(found.kind)); ptk import reads only regular files")
            }
            guard found.links == 1 else {
                throw LibraryError(
                    .badInput,
                    "\(shown): has \(found.links) hard links; ptk import takes only a file no other name shares")
            }
            guard found.status.size <= limit else {
                throw LibraryError(.badInput, "\(shown): is \(found.status.size) bytes; \(tooLarge)")
            }
            return fd
        } catch {
            fd.close()
            throw error
        }
    }
}

extension PhotoLibrary {
    /// Writes `NAME.ptk/` for a photo into `outputDirectory`: assembled in a hidden folder and
    /// renamed into place, never replacing one that is there. Returns the package's path.
    /// `packageName` names the package ("IMG_0042 (motion).ptk"), else the photo's name does.
    public func export(_ name: String, to outputDirectory: String, packageName: String? = nil) throws(LibraryError)
        -> String
    {
        var photo = try find(name)
        let folder = packageName ?? Package.folderName(for: photo.name)
        if !photo.indexed {
            try index(id: photo.id)
            photo = try self.photo(id: photo.id) ?? photo
        }
        let target = outputDirectory + "/" + folder
        // Anything there (even unreadable) means the name is taken.
        if (try? fileStatus(target)) != nil {
            throw LibraryError(.refused, "\(target) exists; ptk export never replaces a package")
        }
        // A staging folder of a name nobody can guess, made new (mkdir fails on anything planted
        // there, a symlink included, instead of writing through it: a root `ptk export` into a
        // folder others may write); only its owner may enter it until it is renamed into place.
        var staging = ""
        var made = false
        for _ in 0..<8 where !made {
            var g = SystemRandomNumberGenerator()
            staging =
                outputDirectory + "/." + folder + ".tmp-\(processID())-"
                + String(g.next() as UInt64, radix: 16)
            do {
                try makeNewDirectory(staging, mode: 0o700)
                made = true
            } catch  where error.code == .exists {
                continue
            } catch {
                throw LibraryError(.io, "cannot create \(staging): \(error)")
            }
        }
        guard made else {
            throw LibraryError(.io, "cannot create a staging folder in \(outputDirectory): every name tried was taken")
        }
        do throws(LibraryError) {
            let source = try openPhoto(photo)
            defer { source.close() }
            let (size, sha256) = try copyPhoto(photo, from: source, to: staging + "/" + Package.dataName)
            var metadata = PhotoMetadata(photo)
            metadata.version = Package.version
            metadata.size = size
            metadata.sha256 = sha256
            metadata.problem = photo.hasThumbnail ? nil : photo.problem
            // PhotoKeeper's format: the thumbnail is a PNG of at most 256 pixels, base64; the
            // listings' paths of the library's own files are not part of a package.
            metadata.thumbnail = try packageThumbnail(of: photo, from: source).map { Data($0).base64EncodedString() }
            metadata.preview = nil
            let path = staging + "/" + Package.metadataName
            do { try writeFileAtomically(path, Array((metadata.json() + "\n").utf8), mode: 0o644) } catch {
                throw LibraryError(.io, "cannot write \(path): \(error)")
            }
            do {
                // Opened without following a symlink: the folder made above, 0755 as packages are.
                let folder = try FileDescriptor.open(staging, flags: [.readOnly, .directory, .noFollow])
                defer { folder.close() }
                try folder.setPermissions(0o755)
            } catch {
                throw LibraryError(.io, "cannot set the mode of \(staging): \(error)")
            }
            do { try renameWithoutReplacing(staging, to: target) } catch {
                throw LibraryError(
                    error.code == .exists ? .refused : .io,
                    error.code == .exists
                        ? "\(target) exists; ptk export never replaces a package" : "cannot create \(target): \(error)")
            }
        } catch {
            // Clean-up after the error being thrown; what cannot be removed is left as a staging folder.
            try? removeFile(staging + "/" + Package.dataName)
            try? removeFile(staging + "/" + Package.metadataName)  // as above
            try? removeDirectory(staging)  // as above
            throw error
        }
        return target
    }

    /// The PNG thumbnail a package of `photo` carries, made afresh from the photo (its open
    /// `source`, read from the start: the file copied, not another put at its name since), at
    /// most `Thumbnailer.maxSide`, 256, on its long side; nil when the photo has no thumbnail
    /// (it cannot be decoded, or has too many pixels: `Problem` says why).
    func packageThumbnail(of photo: Photo, from source: FileDescriptor) throws(LibraryError) -> [UInt8]? {
        guard photo.hasThumbnail else { return nil }
        do { _ = try source.seek(to: 0) } catch { throw LibraryError(.io, "cannot read '\(photo.name)': \(error)") }
        // From the whole image, a JPEG at twice the size (every pixel matters more than time here).
        let t = Thumbnailer.make(from: source, type: photo.type, maxSide: Thumbnailer.maxSide, pixelLimit: pixelLimit)
        guard t.outcome == .made, !t.png.isEmpty else { return nil }
        return t.png
    }

    /// `photo`'s file, opened to be exported: beneath the directory, following no symlink,
    /// without waiting for a FIFO's writer (O_NONBLOCK), and only a regular file; the service
    /// user may have put anything at its name (root's `ptk` exports as that user).
    func openPhoto(_ photo: Photo) throws(LibraryError) -> FileDescriptor {
        let fd: FileDescriptor
        do { fd = try photos.openBeneath(photo.name, flags: [.readOnly, .nonBlocking]) } catch {
            throw LibraryError(.io, "cannot open '\(photo.name)': \(error)")
        }
        let status: FileStatus
        do { status = try fd.status() } catch {
            fd.close()
            throw LibraryError(.io, "cannot read the status of '\(photo.name)': \(error)")
        }
        guard status.isRegularFile else {
            fd.close()
            throw LibraryError(
                .badInput,
                "'\(photo.name)' is not a regular file (a FIFO, a device or a folder is never exported); nothing exported"
            )
        }
        return fd
    }

    /// Copies the open photo `source` into a new file `path` as the index knows it: its size
    /// and SHA-256. Reading stops as soon as the file has more than the index's size (a file
    /// put in its place, however large, costs at most that much), and a copy of another size
    /// or hash is an error (the caller removes it). The index's size must be within
    /// `maxFileSize` (ptkd's `max-file-size`: no photo it received is larger), and every
    /// piece passes the store's structural check for the photo's type (`StructureCheck`, as
    /// ptkd checks what it receives) before it is written: a file that is no photo of the kept
    /// types stops the copy at its first piece that cannot be one. Returns the size and the
    /// SHA-256.
    private func copyPhoto(_ photo: Photo, from source: FileDescriptor, to path: String) throws(LibraryError) -> (
        Int64, String
    ) {
        guard let indexed = photo.sha256, photo.size >= 0 else {
            throw LibraryError(
                .badInput,
                "'\(photo.name)' has no SHA-256 in the index (\(photo.problem ?? "it could not be read")); nothing exported"
            )
        }
        if let maxFileSize, photo.size > maxFileSize {
            throw LibraryError(
                .badInput,
                "'\(photo.name)' is \(photo.size) bytes as the index says, more than max-file-size (\(maxFileSize) bytes): "
                    + "no photo ptkd receives is that large; nothing exported")
        }
        guard let type = PhotoType(fileName: photo.name) else {
            throw LibraryError(
                .badInput,
                "'\(photo.name)' is not named as a photo or video of a kept type (PNG, JPEG, HEIC, HEIF, MP4 or MOV); nothing exported"
            )
        }
        var structure = StructureCheck(type: type, totalSize: photo.size)
        let changed = "'\(photo.name)' is not the photo the index holds (it changed since it was indexed"
        let onDisk: Int64
        do { onDisk = try source.status().size } catch {
            throw LibraryError(.io, "cannot read the status of '\(photo.name)': \(error)")
        }
        guard onDisk == photo.size else {
            throw LibraryError(
                .badInput, "\(changed): \(onDisk) bytes, the index says \(photo.size)); nothing exported")
        }
        let out: FileDescriptor
        do { out = try .open(path, flags: [.writeOnly, .create, .exclusive, .noFollow], mode: 0o644) } catch {
            throw LibraryError(.io, "cannot create \(path): \(error)")
        }
        defer { out.close() }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var size: Int64 = 0
        // Why the bytes are no photo of their type, once a piece fails the check.
        var notAPhoto: FormatError?
        do throws(SystemError) {
            // One byte more than the index's size is asked for: it tells a file that grew.
            while size <= photo.size {
                let want = Int(min(Int64(buffer.count), photo.size - size + 1))
                let n = try buffer.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in
                        try source.read(
                            fromAbsoluteOffset: size, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
                    }
                }.get()
                if n == 0 { break }
                size += Int64(n)
                if size > photo.size { break }
                let checked = buffer.withUnsafeBytes { b in
                    Result { () throws(FormatError) in try structure.feed(UnsafeRawBufferPointer(rebasing: b[..<n])) }
                }
                if case .failure(let error) = checked {
                    notAPhoto = error
                    break
                }
                try buffer.withUnsafeBytes { b in
                    Result { () throws(SystemError) in try out.writeAll(UnsafeRawBufferPointer(rebasing: b[..<n])) }
                }.get()
                buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            }
            if notAPhoto == nil && size == photo.size {
                if case .failure(let error) = Result(catching: { () throws(FormatError) in try structure.finish() }) {
                    notAPhoto = error
                }
            }
            if notAPhoto == nil && size == photo.size { try out.sync() }
        } catch {
            throw LibraryError(.io, "cannot copy '\(photo.name)' to \(path): \(error)")
        }
        if let notAPhoto {
            throw LibraryError(
                .badInput,
                "'\(photo.name)' is not a well-formed \(type.displayName) (\(notAPhoto)), as every photo ptkd keeps is: "
                    + "it is not the photo the index holds, or not one ptkd received; nothing exported")
        }
        guard size == photo.size else {
            throw LibraryError(
                .badInput,
                "\(changed): \(size > photo.size ? "more" : "fewer") than the \(photo.size) bytes it has there); nothing exported"
            )
        }
        let sha256 = hasher.finalizeHex()
        guard sha256 == indexed else {
            throw LibraryError(.badInput, "\(changed): its SHA-256 is not the index's); nothing exported")
        }
        return (size, sha256)
    }

    /// Adds a package's photo to the library: the PNG goes through the same checks as a
    /// received photo, gets a unique name from the package's, and keeps the package's metadata
    /// (received time, sender, note, rating); its thumbnail is made afresh from the photo.
    /// Opens the package with `PackageFiles.open`, so no link in it is followed.
    public func importPackage(_ packagePath: String) throws(LibraryError) -> Photo {
        let files = try PackageFiles.open(packagePath)
        defer { files.close() }
        return try importPackage(files)
    }

    /// As `importPackage(_:)`, from a package opened already: its two files are read only
    /// through their descriptors (ptk opens them as root, then works on the library as the
    /// directory's owner).
    public func importPackage(_ files: PackageFiles) throws(LibraryError) -> Photo {
        let path = files.path
        let metadataPath = path + "/" + Package.metadataName
        let metadataBytes: [UInt8]
        do {
            _ = try files.metadata.seek(to: 0)
            metadataBytes = try files.metadata.readAll(limit: Package.metadataLimit, name: metadataPath)
        } catch {
            throw LibraryError(.badInput, "cannot read \(metadataPath): \(error)")
        }
        let metadata = try PhotoMetadata.decode(metadataBytes, package: path)
        let dataPath = path + "/" + Package.dataName
        let data = files.data
        // A photo.data that cannot be stat'ed is reported by the message below.
        guard let dataStatus = try? data.status(), dataStatus.isRegularFile else {
            throw LibraryError(.badInput, "\(dataPath) is not a regular file")
        }
        // The type is what the bytes say (the store then checks the whole file for it): a
        // package holds a PNG, a JPEG or a HEIC/HEIF (its ftyp brand), and its name does not say which.
        var head = [UInt8](repeating: 0, count: 12)
        // A header that cannot be read sniffs as none of them: refused below.
        let headCount = head.withUnsafeMutableBytes { b in (try? data.read(fromAbsoluteOffset: 0, into: b)) ?? 0 }
        let type = PhotoType.sniff(head[..<headCount]) ?? .png
        let sha256: String
        switch hashFile(data) {
        case .success(let digest): sha256 = digest
        case .failure(let error): throw LibraryError(.io, "cannot read \(dataPath): \(error)")
        }
        if let expected = metadata.sha256, expected.lowercased() != sha256 {
            throw LibraryError(.badInput, "\(dataPath) does not match its SHA256 in photo.metadata (it is \(sha256))")
        }
        // The type the package says must be the one its bytes say (HEIC and HEIF being one format).
        if let said = metadata.mediaType {
            guard let declared = PhotoType(mediaType: said) else {
                throw LibraryError(.badInput, "photo.metadata says the photo is \(said), a type ptk does not keep")
            }
            if declared != type && !(declared.isHEIF && type.isHEIF) {
                throw LibraryError(
                    .badInput, "\(dataPath) is a \(type.displayName); photo.metadata says \(declared.mediaType)")
            }
        }
        if let expected = metadata.size, expected != dataStatus.size {
            throw LibraryError(.badInput, "\(dataPath) has \(dataStatus.size) bytes; photo.metadata says \(expected)")
        }
        let store: PhotoStore
        do { store = try PhotoStore(settings: StoreSettings(directory: directory), opened: photos) } catch {
            throw LibraryError(.io, error.description)
        }
        let name: String
        do {
            name = try store.add(
                from: data, size: dataStatus.size, sha256: sha256,
                name: Package.photoName(forPackage: path, type: type), type: type,
                modified: metadata.modified.flatMap { WallTime(iso8601: $0) })
        } catch {
            throw LibraryError(error.badInput ? .badInput : .io, "\(dataPath): \(error.description)")
        }
        let rating = metadata.rating.flatMap { (0...5).contains($0) ? $0 : nil }
        let received = metadata.received.flatMap { WallTime(iso8601: $0) } ?? .now
        let id = try database.writeTransaction { () throws(LibraryError) -> Int64 in
            try database.prepare(
                """
                INSERT INTO photos(name, size, sha256, received, sender_name, sender_address, sender_id, note, rating) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, received = excluded.received,
                    sender_name = excluded.sender_name, sender_address = excluded.sender_address, sender_id = excluded.sender_id,
                    note = excluded.note, rating = excluded.rating, indexed = 0, problem = NULL
                """
            ).bind(
                name, dataStatus.size, sha256, received.milliseconds, metadata.senderName, metadata.senderAddress,
                metadata.senderID,
                metadata.note, rating
            ).run()
            let s = try database.prepare("SELECT id FROM photos WHERE name = ?").bind(name)
            return try s.step() ? s.int(0) ?? 0 : 0
        }
        try index(id: id)
        guard let photo = try photo(id: id) else { throw LibraryError(.io, "'\(name)' vanished while importing it") }
        return photo
    }

    /// The SHA-256 of the file's bytes; gives up when `cancel` becomes nonzero (read before every MiB).
    func hashFile(_ fd: FileDescriptor, cancel: UnsafePointer<Int32>? = nil) -> Result<String, FileHashFailure> {
        Self.hashFile(fd, buffer: hashBuffer, cancel: cancel)
    }

    /// The SHA-256 of the file's bytes, read through `buffer` (`SHA256.hex(ofFile:)`); gives up
    /// when `cancel` becomes nonzero.
    static func hashFile(_ fd: FileDescriptor, buffer: UnsafeMutableRawBufferPointer, cancel: UnsafePointer<Int32>?)
        -> Result<String, FileHashFailure>
    {
        SHA256.hex(ofFile: fd, buffer: buffer, cancelled: { cancel.map { $0.pointee != 0 } ?? false })
    }
}

extension PhotoLibrary {
    /// Writes the package folder `folder` (NAME.ptk, as `export` makes it) as a zip archive at
    /// `path`: the folder and its two files, stored uncompressed (a photo is compressed
    /// already), so that unzipping gives back a package `ptk import` takes. Returns `path`.
    /// The corresponding C functions are libarchive's `archive_write_*`.
    public func archive(package folder: String, to path: String) throws(LibraryError) -> String {
        let packageName = folder.parts(separatedBy: "/", omittingEmpty: true).last ?? folder
        guard let a = archive_write_new() else { throw LibraryError(.io, "libarchive: out of memory") }
        defer { archive_write_free(a) }
        func failure(_ what: String) -> LibraryError {
            LibraryError(
                .io,
                "cannot write \(path) (\(what)): "
                    + (archive_error_string(a).map { String(cString: $0) } ?? "libarchive failed"))
        }
        guard archive_write_set_format_zip(a) == ptk_archive_ok(),
            archive_write_set_options(a, "zip:compression=store") == ptk_archive_ok(),
            archive_write_open_filename(a, path) == ptk_archive_ok()
        else { throw failure("opening") }
        func entry(_ name: String, size: Int64, directory: Bool) throws(LibraryError) {
            guard let e = archive_entry_new() else { throw LibraryError(.io, "libarchive: out of memory") }
            defer { archive_entry_free(e) }
            archive_entry_set_pathname(e, name)
            archive_entry_set_filetype(e, directory ? ptk_ae_ifdir() : ptk_ae_ifreg())
            archive_entry_set_perm(e, directory ? 0o755 : 0o644)
            archive_entry_set_size(e, size)
            archive_entry_set_mtime(e, Int(WallTime.now.seconds), 0)
            guard archive_write_header(a, e) == ptk_archive_ok() else { throw failure(name) }
        }
        try entry(packageName + "/", size: 0, directory: true)
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        for file in [Package.dataName, Package.metadataName] {
            let source = folder + "/" + file
            let fd: FileDescriptor
            let size: Int64
            do {
                fd = try FileDescriptor.open(source, flags: [.readOnly, .noFollow])
                size = try fd.status().size
            } catch { throw LibraryError(.io, "cannot read \(source): \(error)") }
            defer { fd.close() }
            try entry(packageName + "/" + file, size: size, directory: false)
            var done: Int64 = 0
            while done < size {
                let n: Int
                do { n = try buffer.withUnsafeMutableBytes { b throws(SystemError) in try fd.read(into: b) } } catch {
                    throw LibraryError(.io, "cannot read \(source): \(error)")
                }
                if n == 0 { throw LibraryError(.io, "\(source) became shorter while being archived") }
                let written = buffer.withUnsafeBytes { archive_write_data(a, $0.baseAddress, min(n, Int(size - done))) }
                guard written >= 0 else { throw failure(file) }
                done += Int64(n)
            }
        }
        guard archive_write_close(a) == ptk_archive_ok() else { throw failure("closing") }
        return path
    }
}
