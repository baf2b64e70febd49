import PTKDAV
import PTKHTTP
import PTKLibrary
import PTKStore
import PTKSystem
import PTKVocabulary

/// DELETE and MOVE. A `full` password removes as `ptk rm` does and renames and moves as
/// `ptk rename` does (files and library entries together, never replacing anything); an
/// `upload` password is backup, not sync: it may remove or rename only its placeholders and the
/// files operating systems write beside photos (403 otherwise).
extension DAVEndpoint {
    func delete(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let path = try target(r, c)
        guard !path.isRoot else { throw refusal(r, .forbidden, "the top folder cannot be deleted") }
        let view = view(c)
        let resource = view.resolve(path)
        guard resource.exists else { throw refusal(r, .notFound, "no such WebDAV resource") }
        try checkLocks(r, view, path, includingBelow: true)
        let id = c.account.id
        switch resource {
        case .placeholder:
            names.removePlaceholder(id, path)
        case .sidecar:
            sidecars.remove(id, path.string)
        case .remembered:
            // Only an upload password's names are remembered.
            throw refusal(
                r, .forbidden, "an upload password cannot delete: deleting on the device never deletes here")
        case .photo(let kept, _, _, _, _):
            guard c.full else {
                throw refusal(
                    r, .forbidden, "an upload password cannot delete: deleting on the device never deletes here")
            }
            if names.with(id, { $0.files[path]?.shared }) == true {
                // A name for bytes kept already (someone's photo): only the name goes.
                names.remove(id, path)
                r.log("forgot the name \(quotedForLog(path.string)) (\(quotedForLog(kept)) stays: it was kept before)")
                break
            }
            do throws(LibraryError) { try removeKept(kept, library: view.library) } catch {
                throw refusal(r, .internalServerError, "cannot delete \(path.string): \(error.description)")
            }
            names.remove(id, path)
            r.log("deleted \(quotedForLog(kept))", always: true)
        case .collection(let real, _):
            guard c.full else {
                throw refusal(
                    r, .forbidden, "an upload password cannot delete: deleting on the device never deletes here")
            }
            if real {
                do throws(LibraryError) { try removeTree(path.string, library: view.library) } catch {
                    throw refusal(r, .internalServerError, "cannot delete \(path.string): \(error.description)")
                }
            }
            names.remove(id, path)
            sidecars.removeAll(id, within: path.string)
            r.log("deleted the folder \(quotedForLog(path.string))", always: true)
        case .missing: break
        }
        withLocks(view.lockSpace) { $0.removeAll(within: path) }
        return answer(.noContent)
    }

    func move(_ r: Request, _ c: DAVCaller) throws(HTTPError) -> Response {
        let path = try target(r, c)
        guard let header = r.head.header("destination") else {
            throw refusal(r, .badRequest, "MOVE needs a Destination header")
        }
        let destination: DAVPath
        switch DAVPath.destination(header, prefix: c.prefix, host: r.head.header("host")) {
        case .success(let d): destination = d
        case .failure(.outside): throw refusal(r, HTTPStatus(502), "the Destination is not on this door")
        case .failure(let why): throw refusal(r, .badRequest, "the Destination is not a path this door takes (\(why))")
        }
        guard let overwrite = DAVOverwrite.parse(r.head.header("overwrite")) else {
            throw refusal(r, .badRequest, "Overwrite must be T or F")
        }
        guard !path.isRoot, !destination.isRoot else {
            throw refusal(r, .forbidden, "the top folder cannot be moved or replaced")
        }
        guard destination != path, !path.isAncestor(of: destination) else {
            throw refusal(r, .forbidden, "a resource cannot be moved onto or into itself")
        }
        guard !destination.components.contains(where: { DAVName.kind($0) == .hidden }) else {
            throw refusal(r, .forbidden, "names starting with a dot are the receiver's own")
        }
        let view = view(c)
        let resource = view.resolve(path)
        guard resource.exists else { throw refusal(r, .notFound, "no such WebDAV resource") }
        guard let parent = destination.parent, view.resolve(parent).isCollection else {
            throw refusal(r, .conflict, "the Destination's folder does not exist")
        }
        let target = view.resolve(destination)
        let id = c.account.id
        let sidecarMove = resource.isSidecar && DAVName.kind(destination.name!) == .sidecar
        if target.exists {
            guard overwrite else {
                throw refusal(r, .preconditionFailed, "\(destination.string) exists and Overwrite is F")
            }
            // Only what is not a photo or folder may be replaced: placeholders and sidecars.
            guard target.isPlaceholder || target.isSidecar else {
                throw refusal(
                    r, .forbidden,
                    "\(destination.string) exists; the receiver never replaces a photo or folder (delete it first)")
            }
        }
        try checkLocks(r, view, path, includingBelow: true)
        try checkLocks(r, view, destination, requestURI: path, includingBelow: true)
        switch resource {
        case .placeholder(let at):
            names.removePlaceholder(id, path)
            _ = names.setPlaceholder(id, destination, at: at)  // one held name for another: the count stays
        case .sidecar where sidecarMove:
            sidecars.move(id, path.string, to: destination.string)
        case .sidecar:
            throw refusal(r, .forbidden, "\(path.name!) cannot become a photo by a rename: PUT the photo")
        case .remembered:
            throw refusal(r, .forbidden, "an upload password cannot move or rename photos")
        case .photo(let kept, _, _, let sha, _):
            guard c.full else { throw refusal(r, .forbidden, "an upload password cannot move or rename photos") }
            guard DAVName.kind(destination.name!) == .ordinary else {
                throw refusal(
                    r, .forbidden,
                    "\(destination.name!) is a name operating systems use for their own files, not a photo's")
            }
            if let named = names.with(id, { $0.files[path] }), named.shared {
                // A name for bytes kept already: only the name moves.
                names.move(id, path, to: destination)
                r.log("moved the name \(quotedForLog(path.string)) to \(quotedForLog(destination.string))")
                break
            }
            let type = PhotoType(fileName: kept) ?? .png
            let leaf = PhotoStore.finalName(destination.name!, type: type)
            let newKept = (parent.isRoot ? "" : parent.string + "/") + leaf
            guard StoreRequest.isValidFolder(parent.string) else {
                throw refusal(r, .forbidden, "\(parent.string) is not a folder the receiver keeps")
            }
            do throws(LibraryError) { try renameKept(kept, to: newKept, library: view.library) } catch {
                throw refusal(r, error.kind == .refused ? .forbidden : .internalServerError, error.description)
            }
            names.remove(id, path)
            if newKept != destination.string {
                // The name is for the bytes that moved (hashed now if the library had no entry):
                // unreadable at once, a name that names nothing.
                let st = try? photos.statusBeneath(newKept)
                names.setFile(
                    id, destination,
                    DAVNamed(
                        kept: newKept, size: st?.size ?? 0, sha256: sha ?? hashOfKept(newKept) ?? "",
                        modified: Self.now, mark: nil, shared: false))
            }
            r.log("moved \(quotedForLog(kept)) to \(quotedForLog(newKept))", always: true)
        case .collection(let real, _):
            guard c.full else { throw refusal(r, .forbidden, "an upload password cannot move or rename folders") }
            guard StoreRequest.isValidFolder(destination.string),
                Array(PhotoStore.folderName(destination.name!).utf8) == Array(destination.name!.utf8)
            else {
                throw refusal(r, .forbidden, "\(destination.string) is not a folder name the receiver keeps")
            }
            if real {
                do throws(LibraryError) {
                    try renameKept(path.string, to: destination.string, library: view.library)
                } catch {
                    throw refusal(r, error.kind == .refused ? .forbidden : .internalServerError, error.description)
                }
            }
            let from = path.string + "/"
            let to = destination.string + "/"
            names.move(id, path, to: destination) { named in
                var n = named
                if n.kept.hasPrefix(from) { n.kept = to + n.kept.dropFirst(from.count) }
                return n
            }
            sidecars.move(id, path.string, to: destination.string)
            r.log("moved the folder \(quotedForLog(path.string)) to \(quotedForLog(destination.string))", always: true)
        case .missing: break
        }
        // What the destination held in its place (a placeholder) is replaced by what moved there.
        if target.isPlaceholder, !resource.isPlaceholder { names.removePlaceholder(id, destination) }
        withLocks(view.lockSpace) { $0.removeAll(within: path) }
        return answer(target.exists ? .noContent : .created)
    }

    // MARK: The directory, through the library when it is on

    private func removeKept(_ kept: String, library: PhotoLibrary?) throws(LibraryError) {
        if let library {
            try library.remove(exactly: kept)
            return
        }
        do throws(SystemError) {
            let place = try photos.parentBeneath(kept)
            defer { place.close() }
            try place.folder.unlink(place.name)
            try place.folder.sync()
        } catch {
            throw LibraryError(.io, "cannot remove '\(kept)': \(error)")
        }
    }

    private func renameKept(_ old: String, to new: String, library: PhotoLibrary?) throws(LibraryError) {
        if let library {
            try library.rename(exactly: old, to: new)
            return
        }
        do throws(SystemError) { try photos.moveBeneath(old, to: new) } catch {
            throw LibraryError(error.code == .exists ? .refused : .io, "cannot move '\(old)' to '\(new)': \(error)")
        }
    }

    /// Removes the real folder `key` and everything in it (never following a symlink: one is
    /// removed as the name it is).
    private func removeTree(_ key: String, library: PhotoLibrary?) throws(LibraryError) {
        let entries: [String]
        do throws(SystemError) {
            let place = try photos.parentBeneath(key)
            defer { place.close() }
            entries = try place.folder.openSubdirectory(place.name).entriesAndClose()
        } catch {
            throw LibraryError(.io, "cannot read '\(key)': \(error)")
        }
        for name in entries {
            let child = key + "/" + name
            // not a readable folder: removed as the name it is
            if let st = try? photos.statusBeneath(child), st.isDirectory {
                try removeTree(child, library: library)
            } else {
                try removeKept(child, library: library)
            }
        }
        do throws(SystemError) {
            let place = try photos.parentBeneath(key)
            defer { place.close() }
            try place.folder.removeDirectory(place.name)
            try place.folder.sync()
        } catch {
            throw LibraryError(.io, "cannot remove the folder '\(key)': \(error)")
        }
    }
}
