// swift-tools-version:6.0
// The dependency lists below are the layering: a module can import only what it names here.
// The Makefile checks it before every build: scripts/check-imports.py refuses an import of a
// target that is not listed here (SwiftPM's --explicit-target-dependency-import-check, also on,
// lets through any target reached through another).
import PackageDescription

let package = Package(
    name: "ptk",
    products: [
        .executable(name: "ptkd", targets: ["ptkd"]),
        .executable(name: "ptk-send", targets: ["ptk-send"]),
        .executable(name: "ptk", targets: ["ptk"]),
        // The fault tests' preload library (Sources/CFaultInjection/fault.c): built for the
        // tests, never linked into the programs, installed or packaged.
        .library(name: "ptkfault", type: .dynamic, targets: ["CFaultInjection"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages. Each is imported by exactly one Swift module.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CTLS", pkgConfig: "libssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CAvahi", pkgConfig: "avahi-client", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        // CRC-32 with carry-less multiplication (several GB/s; zlib's is a table walk).
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // HTTP/1.1 requests and responses for every HTTP door, in PTKHTTP (Node's http-parser; no pkg-config file).
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        // XML request bodies of the WebDAV door, in PTKDAV alone (expat; DTDs and entities refused).
        .systemLibrary(name: "CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
        // JPEG decoding and encoding: libjpeg-turbo.
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        // Colour: ICC profiles, gAMA/cHRM and nclx turned into sRGB (Little CMS 2).
        .systemLibrary(name: "CLCMS", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // HEIF and HEIC: opening, checking and decoding (libheif).
        .systemLibrary(name: "CHEIF", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libavutil-dev"])]),
        // Zip archives of .ptk packages, for the web interface's downloads (libarchive).
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        // QR codes of the web interface's login links, for the terminal (libqrencode).
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // Thumbnails with libpng, libjpeg-turbo and libheif, and video posters with FFmpeg, in C
        // (libpng's and libjpeg's errors longjmp, which must not cross Swift frames), averaged
        // in linear light.
        .target(
            name: "CPNGThumb", dependencies: ["CPNG", "CJPEG", "CExif", "CLCMS", "CHEIF", "CHEIFOpen", "CFFmpeg"],
            // CFFmpeg's pkg-config names libavformat; the C code calls the three beside it too.
            linkerSettings: [.linkedLibrary("avcodec"), .linkedLibrary("swscale"), .linkedLibrary("avutil")]),
        // A HEIF file opened by libheif from a descriptor: the store's check before a HEIF is kept.
        .target(name: "CHEIFOpen", dependencies: ["CHEIF"]),
        // What only the tests need of libpng, libjpeg and libheif: an independent whole-image PNG
        // decode, a JPEG encoder and HDR HEIFs with an nclx box (linked by PTKTestSupport and the
        // tests, never by the programs).
        .target(name: "CTestImages", dependencies: ["CPNG", "CJPEG", "CHEIF"]),
        // Fails or crashes one chosen system call of a program it is preloaded into (the fault tests).
        .target(name: "CFaultInjection", linkerSettings: [.linkedLibrary("dl")]),
        // Linux calls glibc declares only under _GNU_SOURCE (accept4).
        .systemLibrary(name: "CLinux"),

        // Time as pure values: a point on the monotonic clock (`Instant`), a date (`WallTime`, ISO
        // 8601) and the calendar's arithmetic (`CivilDate`). The clocks are read in PTKSystem.
        .target(name: "PTKTime"),
        // The words every layer shares, below all of them: photo types and sniffing, file-name
        // rules, the text escapers (HTML, URL, JSON, the terminal's) and the percent-decoder, text
        // split by scalars, numbers and durations for people, sort orders, the .ptk package
        // format and the store's failures. Pure values; no I/O, no C library.
        .target(name: "PTKVocabulary"),
        // Pure protocol core: frames, codec, limits, state machines. No I/O.
        .target(name: "PTKProtocol", dependencies: ["PTKTime", "PTKVocabulary"]),
        // Thin syscall layer: errors, descriptors, files, sockets, addresses, the clocks, threads, inotify.
        .target(name: "PTKSystem", dependencies: ["CLinux", "PTKTime", "PTKVocabulary"]),
        // SHA-256 (OpenSSL) and CRC-32 (libdeflate).
        .target(name: "PTKDigest", dependencies: ["COpenSSL", "CDeflate", "PTKSystem"]),
        // Byte streams, listeners, framed connections with deadlines.
        .target(name: "PTKTransport", dependencies: ["PTKSystem", "PTKProtocol"]),
        // TLS 1.3 streams and device identities (protocol §6), through OpenSSL's libssl.
        .target(name: "PTKTLS", dependencies: ["CTLS", "PTKProtocol", "PTKSystem", "PTKTransport"]),
        // The receiver's trust list and pending senders: files in the state directory.
        // ... and who may use the web interface (password, one-time links, sessions) and its WebDAV door (app passwords).
        .target(name: "PTKTrust", dependencies: ["PTKProtocol", "PTKSystem", "PTKDigest", "PTKVocabulary"]),
        // The received-photos directory: names, temp files, PNG check, atomic publish.
        .target(name: "PTKStore", dependencies: ["PTKSystem", "PTKDigest", "PTKVocabulary", "CHEIFOpen"]),
        // The sending side: drives the sender state machine over a connection. Never the store
        // (ptk-send links no libheif): types, names and packages come from PTKVocabulary.
        .target(
            name: "PTKClient",
            dependencies: ["PTKTransport", "PTKProtocol", "PTKDigest", "PTKSystem", "PTKTLS", "PTKVocabulary"]),
        // The photo library: the SQLite index and thumbnails in .ptk/ beside the photos. It
        // imports the store (names, adding photos), never the protocol nor the pages: it writes
        // the static gallery's files, whose page its caller renders (PTKPhotoPages).
        .target(
            name: "PTKLibrary",
            dependencies: ["CSQLite", "CPNGThumb", "CArchive", "PTKStore", "PTKSystem", "PTKDigest", "PTKVocabulary"]),
        // The web interface's pages (issue 29; its routes are PTKWebDoor's, on PTKHTTP): HTML, the
        // stylesheet and script; and ptk's static gallery page. No I/O: it renders its own plain
        // values (`WebPhoto`); it never imports the library.
        .target(name: "PTKWeb", dependencies: ["PTKTime", "PTKVocabulary"]),
        // A library photo as the pages show it (issue 55), above both PTKLibrary and PTKWeb so
        // that neither imports the other: `WebPhoto` and the details (`ptk show`, the photo page)
        // of a `Photo`, and ptk's static gallery (`PhotoLibrary.gallery`) rendered by PTKWeb.
        .target(name: "PTKPhotoPages", dependencies: ["PTKLibrary", "PTKWeb", "PTKSystem", "PTKVocabulary"]),
        // WebDAV (RFC 4918 class 1 and 2, RFC 4331 quota): request bodies parsed by expat, headers
        // (Depth, If, Destination, Timeout), paths, multistatus XML and the lock table. No I/O.
        .target(name: "PTKDAV", dependencies: ["PTKVocabulary", "PTKTime", "CExpat"]),
        // What the Nextcloud-compatible door answers, as pure values (issue 57): status.php, the
        // OCS envelope in JSON and XML, capabilities, the user. No I/O.
        .target(name: "PTKCloud", dependencies: ["PTKVocabulary"]),
        // LocalSend v2 (issue 14): the JSON messages and the sessions' decisions. No I/O.
        .target(name: "PTKLocalSend", dependencies: ["PTKProtocol", "PTKTime", "PTKVocabulary"]),
        // Watched inbox folders' decisions (issue 56): which names are taken, who a file is from,
        // when a file is whole (`SettleTracker`), inotify's records parsed, when to scan. No I/O.
        .target(name: "PTKInbox", dependencies: ["PTKVocabulary", "PTKTime"]),
        // The one HTTP layer every HTTP door stands on (issue 43): requests parsed by
        // http-parser, connections with keep-alive, deadlines and chunked bodies, the HTTPS
        // server, responses as values, route tables and middleware. Never the store or the
        // protocol (issue 55): it links no libheif.
        .target(
            name: "PTKHTTP",
            dependencies: [
                "CHTTPParser", "PTKTime", "PTKDigest", "PTKSystem", "PTKTransport", "PTKTLS", "PTKVocabulary",
            ]),
        // A photo arriving as an HTTP request body, the same way through every HTTP door
        // (`StoreUpload`): the store's checks, the body streamed into it, one table from the
        // store's failures to HTTP statuses. Above PTKHTTP and PTKStore.
        .target(
            name: "PTKUpload",
            dependencies: ["PTKHTTP", "PTKStore", "PTKProtocol", "PTKSystem", "PTKTime", "PTKVocabulary"]),
        // ptkd's log: one line per event on standard error, through a writer thread (a journal
        // that stops reading costs lines, never a stalled session); every line escaped.
        .target(name: "PTKLog", dependencies: ["PTKSystem", "PTKVocabulary"]),
        // The `on-saved` hook: the queue file (replayed at start) and the thread that runs one
        // hook at a time, in arrival order.
        .target(name: "PTKHooks", dependencies: ["PTKLog", "PTKSystem", "PTKVocabulary"]),
        // What every door shares, and no door in particular (issue 55): the `Door` protocol, the
        // one accept loop over every door, the connection slots and turns (`Admission`), the
        // shutdown signal, what happens around each photo saved (`Arrivals`), and why ptkd
        // cannot start (`DaemonError`).
        .target(
            name: "PTKDoor",
            dependencies: [
                "PTKLog", "PTKHooks", "PTKConfiguration", "PTKHTTP", "PTKLocalSend", "PTKProtocol", "PTKLibrary",
                "PTKStore", "PTKTrust", "PTKTransport", "PTKSystem", "PTKVocabulary",
            ]),
        // Protocol v1's door: a connection's first byte, its TLS handshake, its turn, and the
        // session (`ReceiverDriver`) that feeds the pure `ReceiverSession` and saves into the store.
        .target(
            name: "PTKV1Door",
            dependencies: [
                "PTKDoor", "PTKLog", "PTKProtocol", "PTKStore", "PTKSystem", "PTKTLS", "PTKTransport", "PTKTrust",
                "PTKVocabulary",
            ]),
        // LocalSend's multicast discovery: announcements and answers on every interface allowed,
        // the register calls over HTTPS (the decisions are PTKLocalSend's DiscoveryScheduler).
        .target(
            name: "PTKLocalSendDiscovery",
            dependencies: ["PTKDoor", "PTKLog", "PTKHTTP", "PTKLocalSend", "PTKSystem", "PTKTLS", "PTKTransport"]),
        // The door of photos that arrive on their own (issue 56): watched inboxes (the sources left
        // as they are) and drop folders (moved in), by inotify and scans, each file taken once
        // settled, through the store's checks, and remembered in the library. Decisions are PTKInbox's.
        .target(
            name: "PTKInboxDoor",
            dependencies: [
                "PTKDoor", "PTKInbox", "PTKLog", "PTKConfiguration", "PTKDigest", "PTKLibrary", "PTKStore",
                "PTKSystem", "PTKVocabulary",
            ]),
        // The WebDAV door (RFC 4918 class 1 and 2, issue 55): its route table over PTKHTTP at /dav/ on
        // the web interface's port, the app passwords' check, and its saved state (the names each
        // client used, sidecars, locks, chunked uploads' folders). The pure WebDAV core is PTKDAV.
        .target(
            name: "PTKDAVDoor",
            dependencies: [
                "PTKDoor", "PTKLog", "PTKDAV", "PTKConfiguration", "PTKDigest", "PTKHTTP", "PTKLibrary", "PTKProtocol",
                "PTKStore", "PTKSystem", "PTKTrust", "PTKUpload", "PTKVocabulary",
            ]),
        // The Nextcloud-compatible door (issue 57): status.php, the connectivity check and the OCS
        // API the apps read at start, on the web interface's port; the files are the WebDAV
        // door's (/remote.php/dav), logging in the web door's. The documents are PTKCloud's.
        .target(name: "PTKCloudDoor", dependencies: ["PTKCloud", "PTKHTTP", "PTKLog", "PTKTrust", "PTKVocabulary"]),
        // The web interface's door (issue 29): its port, certificate and route table (the gallery,
        // a photo's page, uploads, logins), with the WebDAV and Nextcloud-compatible doors served on
        // the same port (the doors that stand on another).
        .target(
            name: "PTKWebDoor",
            dependencies: [
                "PTKCloudDoor", "PTKDAVDoor", "PTKDoor", "PTKLog", "PTKConfiguration", "PTKDigest", "PTKHTTP",
                "PTKLibrary", "PTKPhotoPages", "PTKProtocol", "PTKStore", "PTKSystem", "PTKTLS", "PTKTransport",
                "PTKTrust",
                "PTKUpload", "PTKVocabulary", "PTKWeb",
            ]),
        // LocalSend v2's door (issue 14): its port, RSA identity and route table (info, register,
        // prepare-upload, upload, cancel) over PTKHTTP; the decisions are PTKLocalSend's.
        .target(
            name: "PTKLocalSendDoor",
            dependencies: [
                "PTKDoor", "PTKLog", "PTKConfiguration", "PTKHTTP", "PTKLibrary", "PTKLocalSend", "PTKProtocol",
                "PTKStore", "PTKSystem", "PTKTLS", "PTKTransport", "PTKTrust", "PTKUpload", "PTKVocabulary",
            ]),
        // ptkd's composition root: the store, identity, trust list, library and hooks opened in
        // order, the doors made over them (one line each) and served by one accept loop, and the
        // stop. No door's code: each door is a module of its own.
        .target(
            name: "PTKDaemon",
            dependencies: [
                "PTKLog", "PTKHooks", "PTKDoor", "PTKV1Door", "PTKLocalSendDoor", "PTKWebDoor", "PTKInboxDoor",
                "PTKLocalSendDiscovery",
                "PTKConfiguration", "PTKTransport", "PTKStore", "PTKLibrary", "PTKProtocol", "PTKSystem",
                "PTKDiscovery", "PTKNotify", "PTKTLS", "PTKTrust", "PTKVocabulary",
            ]),
        // ptkd's configuration and its settings, each declared once: flags, configuration file,
        // defaults, help. Below the daemon, so ptk finds ptkd's directories without linking it.
        .target(name: "PTKConfiguration", dependencies: ["PTKCLI", "PTKProtocol", "PTKSystem", "PTKVocabulary"]),
        // mDNS/DNS-SD through Avahi: advertise, browse, resolve.
        .target(name: "PTKDiscovery", dependencies: ["CAvahi", "PTKSystem"]),
        // sd_notify for systemd's Type=notify.
        .target(name: "PTKNotify", dependencies: ["CSystemd"]),
        // Command tables (commands, arguments, options, exit statuses, examples) and the parsing,
        // usage and help that come from them; shared by the executables. Never the protocol.
        .target(name: "PTKCLI", dependencies: ["PTKSystem", "PTKVocabulary"]),
        // ptk's command table, importable by tests and by the man page and completion generators.
        // Never the library: ptk-docs links no image or database library.
        .target(name: "PTKAdminCommandLine", dependencies: ["PTKCLI", "PTKConfiguration", "PTKVocabulary"]),
        // ptk-send's command table, and what it prints: the report of each file, the progress
        // bar, the list of receivers.
        .target(
            name: "PTKSendCommandLine",
            dependencies: ["PTKCLI", "PTKClient", "PTKProtocol", "PTKSystem", "PTKVocabulary"]),

        // The tests' tags (unit, endToEnd, root, slow, alone), which `make check` picks by (and
        // run-tests.sh runs alone ones by themselves).
        .target(name: "PTKTestTags"),
        // Helpers shared by the test targets: PNG generation, temporary directories.
        .target(
            name: "PTKTestSupport",
            dependencies: [
                "CLinux", "CZlib", "CTestImages", "PTKDigest", "PTKSystem", "PTKProtocol", "PTKTransport", "PTKHTTP",
                "PTKTime",
            ]),

        // Fuzz targets: the entry points, libFuzzer executables and a corpus replayer.
        .target(
            name: "PTKFuzz",
            dependencies: [
                "PTKHTTP", "PTKProtocol", "PTKStore", "PTKLibrary", "PTKLocalSend", "PTKTrust", "PTKConfiguration",
                "PTKDAV", "PTKSystem", "PTKWeb", "PTKVocabulary",
            ]),
        .target(name: "PTKFuzzReplay", dependencies: ["PTKSystem"]),
        // Every target in one executable, chosen by PTK_FUZZ_TARGET (libFuzzer calls one entry point).
        .executableTarget(name: "Fuzz", dependencies: ["PTKFuzz", "PTKFuzzReplay", "PTKSystem"]),

        .executableTarget(
            name: "ptkd", dependencies: ["PTKDaemon", "PTKLog", "PTKConfiguration", "PTKCLI", "PTKSystem"]),
        .executableTarget(
            name: "ptk",
            dependencies: [
                "PTKAdminCommandLine", "PTKLibrary", "PTKPhotoPages", "PTKConfiguration", "PTKCLI", "PTKProtocol",
                "PTKSystem", "PTKTLS", "PTKTrust", "PTKVocabulary", "CQREncode",
            ]),
        // Man pages and completion scripts from the three command tables (a build tool, not installed).
        .executableTarget(
            name: "ptk-docs",
            dependencies: ["PTKAdminCommandLine", "PTKSendCommandLine", "PTKConfiguration", "PTKCLI", "PTKSystem"]),
        .executableTarget(
            name: "ptk-send",
            dependencies: [
                "PTKSendCommandLine", "PTKClient", "PTKCLI", "PTKSystem", "PTKDiscovery", "PTKProtocol", "PTKTLS",
                "PTKVocabulary",
            ]),

        .testTarget(name: "PTKVocabularyTests", dependencies: ["PTKTestTags", "PTKVocabulary"]),
        .testTarget(
            name: "PTKProtocolTests", dependencies: ["PTKTestTags", "PTKProtocol", "PTKTime", "PTKVocabulary"]),
        .testTarget(
            name: "PTKSystemTests", dependencies: ["PTKTestTags", "PTKSystem", "PTKVocabulary", "PTKTestSupport"]),
        .testTarget(
            name: "PTKDigestTests", dependencies: ["PTKTestTags", "PTKDigest", "CZlib", "PTKSystem", "PTKTestSupport"]),
        .testTarget(
            name: "PTKStoreTests",
            dependencies: [
                "PTKTestTags", "PTKStore", "PTKDigest", "PTKSystem", "PTKProtocol", "PTKVocabulary", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKCLITests",
            dependencies: [
                "PTKTestTags", "PTKCLI", "PTKProtocol", "PTKConfiguration", "PTKAdminCommandLine", "PTKSendCommandLine",
                "PTKClient", "PTKSystem", "PTKVocabulary", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKTLSTests",
            dependencies: ["PTKTestTags", "PTKTLS", "PTKProtocol", "PTKSystem", "PTKTransport", "PTKTestSupport"]),
        .testTarget(
            name: "PTKLibraryTests",
            dependencies: [
                "PTKTestTags", "PTKLibrary", "PTKPhotoPages", "CTestImages", "PTKStore", "PTKSystem", "PTKDigest",
                "PTKVocabulary", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKHTTPTests",
            dependencies: [
                "PTKTestTags", "PTKHTTP", "PTKStore", "PTKProtocol", "PTKSystem", "PTKTransport", "PTKDigest",
                "PTKTime", "PTKVocabulary", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKUploadTests",
            dependencies: [
                "PTKTestTags", "PTKUpload", "PTKHTTP", "PTKStore", "PTKProtocol", "PTKSystem", "PTKTransport",
                "PTKDigest", "PTKTime", "PTKVocabulary", "PTKTestSupport",
            ]),
        .testTarget(name: "PTKDAVTests", dependencies: ["PTKTestTags", "PTKDAV", "PTKVocabulary"]),
        .testTarget(name: "PTKCloudTests", dependencies: ["PTKTestTags", "PTKCloud"]),
        .testTarget(name: "PTKLocalSendTests", dependencies: ["PTKTestTags", "PTKLocalSend", "PTKTime"]),
        .testTarget(name: "PTKInboxTests", dependencies: ["PTKTestTags", "PTKInbox", "PTKTime"]),
        .testTarget(
            name: "PTKTrustTests",
            dependencies: [
                "PTKTestTags", "PTKTrust", "PTKProtocol", "PTKSystem", "PTKDigest", "PTKVocabulary", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKWebTests",
            dependencies: [
                "PTKTestTags", "PTKWeb", "PTKHTTP", "PTKLibrary", "PTKPhotoPages", "PTKProtocol", "PTKSystem",
                "PTKVocabulary",
            ]),
        .testTarget(
            name: "PTKTransportTests",
            dependencies: ["PTKTestTags", "PTKTestSupport", "PTKTransport", "PTKProtocol", "PTKSystem"]),
        .testTarget(
            name: "PTKClientTests",
            dependencies: [
                "PTKTestTags", "PTKClient", "PTKDigest", "PTKProtocol", "PTKSystem", "PTKTransport", "PTKVocabulary",
                "PTKTestSupport",
            ]),
        // What needs the daemon's composition (the held index, indexer and hooks it wires), and STATE/listening.
        .testTarget(
            name: "PTKDaemonTests",
            dependencies: [
                "PTKTestTags", "PTKDaemon", "PTKV1Door", "PTKDoor", "PTKConfiguration", "PTKLibrary", "PTKProtocol",
                "PTKSystem", "PTKTransport", "PTKDigest", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKLocalSendDoorTests",
            dependencies: [
                "PTKTestTags", "PTKLocalSendDoor", "PTKDoor", "PTKLocalSend", "PTKHTTP", "PTKConfiguration", "PTKStore",
                "PTKTrust", "PTKSystem", "PTKDigest", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKWebDoorTests",
            dependencies: [
                "PTKTestTags", "PTKWebDoor", "PTKDAVDoor", "PTKDoor", "PTKWeb", "PTKHTTP", "PTKConfiguration",
                "PTKLibrary", "PTKStore", "PTKTrust", "PTKSystem", "PTKDigest", "PTKVocabulary", "PTKTestSupport",
            ]),
        // The WebDAV door's routes alone (DAVDoorTests), and as clients reach it on the web port
        // (DoorFixture: the web port's door built alone, without a daemon).
        .testTarget(
            name: "PTKDAVDoorTests",
            dependencies: [
                "PTKTestTags", "PTKCloudDoor", "PTKDAVDoor", "PTKWebDoor", "PTKDoor", "PTKDAV", "PTKHTTP",
                "PTKConfiguration",
                "PTKLibrary", "PTKStore", "PTKTrust", "PTKSystem", "PTKTransport", "PTKDigest", "PTKVocabulary",
                "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKDoorTests",
            dependencies: ["PTKTestTags", "PTKDoor", "PTKSystem", "PTKTransport", "PTKTestSupport"]),
        .testTarget(
            name: "PTKV1DoorTests",
            dependencies: [
                "PTKTestTags", "PTKV1Door", "PTKDoor", "PTKConfiguration", "PTKProtocol", "PTKStore", "PTKSystem",
                "PTKTLS", "PTKTransport", "PTKTrust", "PTKDigest", "PTKTestSupport",
            ]),
        .testTarget(
            name: "PTKInboxDoorTests",
            dependencies: ["PTKTestTags", "PTKInboxDoor", "PTKInbox", "PTKSystem", "PTKTestSupport"]),
        .testTarget(name: "PTKHooksTests", dependencies: ["PTKTestTags", "PTKHooks", "PTKSystem", "PTKTestSupport"]),
        .testTarget(
            name: "FuzzReplayTests", dependencies: ["PTKTestTags", "PTKFuzz", "PTKFuzzReplay", "PTKTestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "PTKTestTags", "ptkd", "ptk-send", "ptk", "PTKLibrary", "PTKProtocol", "PTKDigest", "PTKSystem",
                "PTKTransport", "PTKTLS", "PTKTestSupport", "PTKLocalSend", "PTKHTTP", "PTKVocabulary",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
