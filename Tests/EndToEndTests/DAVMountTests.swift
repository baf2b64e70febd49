import Foundation
import Glibc
import PTKTestSupport
import PTKTestTags
import Testing

/// davfs2 needs root (mount) and the FUSE device; the kernel side is checked by the test itself,
/// which says so plainly when the kernel refuses the mount.
let canMountDavfs = geteuid() == 0 && haveProgram("/usr/sbin/mount.davfs") && access("/dev/fuse", R_OK | W_OK) == 0

@Suite(
    "End to end: WebDAV door mounted with davfs2 (issue 44)", .serialized,
    .enabled(if: canMountDavfs || davClientsRequired, "needs root, /dev/fuse and davfs2 (mount.davfs)"),
    .tags(.endToEnd, .root))
struct DAVMountTests {
    @Test(
        "mount -t davfs (locks on, the door's certificate trusted): a folder of mixed photos copied in is listed, and after umount the photos directory holds them byte-identical"
    )
    func copyIntoMount() throws {
        let d = try DaemonProcess.withDAV()
        let pw = try d.appPassword("davfs", access: "upload")
        let work = makeTemporaryDirectory("ptk-davfs")
        defer { removeTree(work) }
        // mount.davfs reads the certificate and uses its cache as its own user (davfs2): the
        // folder is 0755, the certificate a copy it may read, the cache root's with group davfs2
        // and 0775 (what davfs2 asks of a cache when root mounts).
        chmod(work, 0o755)
        let mountPoint = work + "/mnt"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work + "/cache", withIntermediateDirectories: true)
        #expect(try run("/bin/chown", ["root:davfs2", work + "/cache"], absolute: true).status == 0)
        chmod(work + "/cache", 0o775)
        writeFile(work + "/cert.pem", readFile(d.webCertificate) ?? [])
        chmod(work + "/cert.pem", 0o644)
        // davfs2's own files, none of the machine's: secrets (0600), the certificate to trust,
        // locks on, uploads at once on close, no questions.
        writeFile(work + "/secrets", Array("\(d.davURL) \(pw.user) \"\(pw.password)\"\n".utf8))
        chmod(work + "/secrets", 0o600)
        writeFile(
            work + "/davfs2.conf",
            Array(
                """
                secrets \(work)/secrets
                trust_server_cert \(work)/cert.pem
                use_locks 1
                delay_upload 0
                ask_auth 0
                cache_dir \(work)/cache
                use_expect100 0

                """.utf8))
        let mount = try run(
            "/bin/mount", ["-t", "davfs", "-o", "conf=\(work)/davfs2.conf,uid=0,gid=0", d.davURL, mountPoint],
            timeout: 30, absolute: true)
        guard mount.status == 0 else {
            let kernel =
                mount.stderr.contains("fuse") || mount.stderr.contains("coda") || mount.stderr.contains("kernel")
            Issue.record(
                """
                davfs2 could not mount the door (exit \(mount.status)): \(mount.stderr.trimmingCharacters(in: .whitespacesAndNewlines))
                \(kernel ? "THE KERNEL REFUSED THE MOUNT (no usable fuse/coda device in this sandbox?): this is not a fault of the door." : "")
                ptkd log: \(d.log.suffix(2000))
                """)
            return
        }
        var mounted = true
        defer { if mounted { _ = try? run("/bin/umount", ["-l", mountPoint], timeout: 30, absolute: true) } }

        let tree = davPhotoTree(seed: 3)
        writeTree(tree, in: work + "/Pictures")
        let copy = try run("/bin/cp", ["-R", work + "/Pictures/.", mountPoint + "/"], timeout: 60, absolute: true)
        #expect(copy.status == 0, "\(copy.stderr)")
        // Listed through the mount, as the door answers PROPFIND (davfs2's lost+found is its own).
        // On the kernel this was written on (6.18), listing a davfs2 1.6.1 mount failed with
        // EINVAL, an empty share's too, while lookups, reads and writes worked: the readdir reply
        // davfs2 writes to /dev/fuse is refused. Each name is still looked up below.
        let ls = try run("/bin/ls", ["-R", mountPoint], timeout: 30, absolute: true)
        if ls.status != 0 && ls.stderr.contains("Invalid argument") {
            withKnownIssue("davfs2 1.6.1's readdir reply refused by this kernel (EINVAL): \(ls.stderr)") {
                #expect(ls.status == 0)
            }
        } else {
            #expect(ls.status == 0, "\(ls.stderr)")
            for path in tree.keys {
                #expect(ls.stdout.contains(String(path.split(separator: "/").last!)), "\(path) not in \(ls.stdout)")
            }
        }
        for path in tree.keys {
            let st = try run("/usr/bin/stat", ["-c", "%s", mountPoint + "/" + path], timeout: 30, absolute: true)
            #expect(
                st.status == 0 && st.stdout == "\(tree[path]!.count)\n",
                "stat \(path) through the mount: \(st.stdout) \(st.stderr)")
        }
        for (path, bytes) in tree {
            #expect(readFile(mountPoint + "/" + path) == bytes, "\(path) read back through the mount")
        }
        let umount = try run("/bin/umount", [mountPoint], timeout: 60, absolute: true)
        #expect(umount.status == 0, "\(umount.stderr)")
        mounted = umount.status != 0
        // umount returns once davfs2 has written back everything it held.
        #expect(d.photoFiles == tree, "\(d.photoFiles.keys.sorted()) \(d.log.suffix(3000))")
        #expect(d.stop() == 0)
    }
}
