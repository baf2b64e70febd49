import Glibc
import PTKSystem
import PTKTestSupport
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKCLI
@testable import PTKConfiguration

let specs = [
    OptionSpec("port", value: "N", help: "port"),
    OptionSpec("listen", value: "ADDR", help: "listen"),
    OptionSpec("quiet", short: "q", help: "quiet"),
    OptionSpec("help", short: "h", help: "help"),
]

@Suite("Argument parsing", .tags(.unit))
struct ArgumentTests {
    @Test("options with values, flags, positionals and -- parse in order")
    func parses() throws {
        let p = try parseArguments(
            ["--port", "1", "host", "-q", "--listen=::1", "--listen", "127.0.0.1", "a.png", "--", "--port"],
            options: specs)
        #expect(p.options.map(\.name) == ["port", "quiet", "listen", "listen"])
        #expect(p.options.map(\.value) == ["1", nil, "::1", "127.0.0.1"])
        #expect(p.positionals == ["host", "a.png", "--port"])
        #expect(p.last("listen") == "127.0.0.1")
        #expect(p.has("quiet"))
        #expect(!p.has("help"))
    }

    @Test("a lone dash is a positional (standard input by convention)")
    func loneDash() throws {
        #expect(try parseArguments(["-"], options: specs).positionals == ["-"])
    }

    @Test(
        "mistakes are usage errors that name the option",
        arguments: [
            (["--bogus"], "unknown option '--bogus'"),
            (["-x"], "unknown option '-x'"),
            (["-qq"], "unknown option '-qq'"),
            (["--port"], "option '--port' needs a value (N)"),
            (["--quiet=yes"], "option '--quiet' takes no value"),
        ])
    func errors(args: [String], message: String) {
        #expect(throws: UsageError(message)) { try parseArguments(args, options: specs) }
    }

    @Test("help lines are aligned and list every option")
    func help() {
        let text = helpLines(for: specs)
        #expect(text.split(separator: "\n").count == 4)
        #expect(text.contains("-q, --quiet"))
        #expect(text.contains("    --port N"))
    }

    @Test(
        "sizes take K, M, G, T suffixes",
        arguments: [
            ("4096", Optional(Int64(4096))), ("512M", 512 << 20), ("512m", 512 << 20), ("100MB", 100 << 20),
            ("2GiB", 2 << 30),
            ("1K", 1024), ("0", 0), ("1T", 1 << 40), (" 8 ", 8),
            ("", nil), ("M", nil), ("-1", nil), ("1.5G", nil), ("12X", nil), ("99999999999999999999", nil),
            ("9999999999T", nil),
        ])
    func sizes(text: String, value: Int64?) {
        #expect(parseSize(text) == value)
    }

    @Test(
        "durations take s, m, h, d suffixes",
        arguments: [
            ("30", Optional(30.0)), ("1.5", 1.5), ("90s", 90), ("10m", 600), ("24h", 86_400), ("2d", 172_800),
            ("", nil), ("h", nil), ("-1", nil), ("abc", nil), ("inf", nil), ("0.0004", 0), ("1e300", nil),
        ])
    func durations(text: String, value: Double?) {
        #expect(parseDuration(text) == value.map { Duration.seconds($0) })
    }
}

@Suite("Daemon configuration", .tags(.unit))
struct ConfigurationTests {
    @Test("flags set every setting")
    func flags() throws {
        var c = DaemonConfiguration()
        for (k, v) in [
            ("dir", "/srv/p"), ("port", "0"), ("listen", "::1"), ("listen", "127.0.0.1"), ("name", "livingroom"),
            ("window", "64"), ("max-file-size", "1G"), ("max-sessions", "3"), ("min-free", "1M"),
            ("idle-timeout", "5"), ("partial-max-age", "2h"),
        ] {
            try DaemonOptions.apply(k, v, to: &c)
        }
        try DaemonOptions.apply("no-mdns", nil, to: &c)
        #expect(c.directory == "/srv/p")
        #expect(c.port == 0)
        #expect(c.listen == ["::1", "127.0.0.1"])
        #expect(c.name == "livingroom")
        #expect(c.window == 64)
        #expect(c.maxFileSize == 1 << 30)
        #expect(c.maxSessions == 3)
        #expect(c.minFree == 1 << 20)
        #expect(c.idleTimeout == .seconds(5))
        #expect(c.partialMaxAge == .seconds(7200))
        #expect(c.mdns == false)
    }

    @Test("defaults are the documented ones")
    func defaults() {
        let c = DaemonConfiguration()
        #expect(c.port == 47850)
        #expect(c.window == 64)
        #expect(c.maxFileSize == 16 << 30)
        #expect(c.maxSessions == 64)
        #expect(c.minFree == 100 << 20)
        #expect(c.idleTimeout == .seconds(30))
        #expect(c.partialMaxAge == .seconds(86_400))
        #expect(c.listen.isEmpty)
        #expect(c.mdns)
    }

    @Test(
        "bad values are refused with the setting named",
        arguments: [
            ("port", "65536"), ("port", "x"), ("window", "0"), ("window", "65"), ("max-file-size", "7"),
            ("max-sessions", "0"), ("idle-timeout", "0"), ("name", ""), ("mdns", "maybe"), ("dir", ""),
        ])
    func badValues(key: String, value: String) {
        var c = DaemonConfiguration()
        #expect(throws: UsageError.self) { try DaemonOptions.apply(key, value, to: &c) }
        do { try DaemonOptions.apply(key, value, to: &c) } catch { #expect(error.message.contains(key)) }
    }

    @Test("a configuration file written with CRLF line ends (edited on Windows) reads the same")
    func crlf() throws {
        var c = DaemonConfiguration()
        try DaemonOptions.apply(
            configFile: "port = 48000\r\nname = Living Room\r\n# note\r\n", path: "ptkd.conf", to: &c)
        #expect(c.port == 48000 && c.name == "Living Room")
    }

    @Test("a configuration file sets values; comments and blank lines are skipped")
    func file() throws {
        var c = DaemonConfiguration()
        try DaemonOptions.apply(
            configFile: """
                # ptkd settings
                dir = /var/lib/photos

                  port=48000
                name = "Living Room"
                listen = 127.0.0.1
                mdns = no
                """, path: "/etc/ptk/ptkd.conf", to: &c)
        #expect(c.directory == "/var/lib/photos")
        #expect(c.port == 48000)
        #expect(c.name == "Living Room")
        #expect(c.listen == ["127.0.0.1"])
        #expect(!c.mdns)
    }

    @Test("the shipped etc/ptkd.conf parses, and uncommented it states exactly the defaults")
    func shippedConfig() throws {
        let text = String(decoding: try #require(readFile(repositoryRoot() + "/etc/ptkd.conf")), as: UTF8.self)
        var commented = DaemonConfiguration()
        try DaemonOptions.apply(configFile: text, path: "ptkd.conf", to: &commented)
        #expect(commented == DaemonConfiguration())
        // Uncomment every setting line (not the prose): the values must be the defaults.
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") && line.dropFirst().first?.isLetter == true && line.contains(" = ")
                ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        var explicit = DaemonConfiguration()
        try DaemonOptions.apply(configFile: uncommented, path: "ptkd.conf", to: &explicit)
        var expected = DaemonConfiguration()
        expected.directory = "/var/lib/ptk/received"
        expected.stateDirectory = "/var/lib/ptk"
        expected.listen = ["::", "0.0.0.0"]
        expected.name = "livingroom"
        expected.localSendPIN = "1234"
        expected.localSendPINFile = "/etc/ptk/localsend-pin"
        expected.onSaved = ["/usr/local/bin/copy-to-nas", "--quiet"]
        expected.inboxes = ["/srv/ptk/inbox"]
        expected.dropFolders = ["/srv/ptk/drop"]
        #expect(explicit == expected)
        for option in DaemonOptions.settings where option.inConfigFile {
            #expect(uncommented.contains("\n\(option.name) = "), "\(option.name) is not in etc/ptkd.conf")
        }
    }

    @Test(
        "a bad line names the file and the line",
        arguments: [
            ("port = 1\nbogus = 2", "/etc/ptk/ptkd.conf:2: unknown key 'bogus'"),
            ("\n\njust words", "/etc/ptk/ptkd.conf:3: expected 'key = value', got 'just words'"),
            ("window = 100", "/etc/ptk/ptkd.conf:1: invalid value '100' for window: expected 1 to 64"),
            ("config = /x", "/etc/ptk/ptkd.conf:1: unknown key 'config'"),
        ])
    func badFile(text: String, message: String) {
        var c = DaemonConfiguration()
        #expect(throws: UsageError(message)) {
            try DaemonOptions.apply(configFile: text, path: "/etc/ptk/ptkd.conf", to: &c)
        }
    }

    @Test("the default directory follows STATE_DIRECTORY, then root, then the home directory")
    func defaultDirectory() {
        setenv("STATE_DIRECTORY", "/var/lib/ptk:/other", 1)
        #expect(DaemonConfiguration.defaultDirectory() == "/var/lib/ptk/received")
        unsetenv("STATE_DIRECTORY")
        let d = DaemonConfiguration.defaultDirectory()
        #expect(d.hasSuffix("/received"))
    }
}

@Suite("Peer parsing", .tags(.unit))
struct PeerTests {
    @Test(
        "peers are host, host:port, IPv4, [IPv6]:port or bare IPv6",
        arguments: [
            ("livingroom", Optional("livingroom"), UInt16(47850)),
            ("livingroom:5000", "livingroom", 5000),
            ("192.0.2.7", "192.0.2.7", 47850),
            ("192.0.2.7:1", "192.0.2.7", 1),
            ("[::1]:6000", "::1", 6000),
            ("[fe80::1%eth0]", "fe80::1%eth0", 47850),
            ("2001:db8::5", "2001:db8::5", 47850),
            ("", nil, 0), ("host:", nil, 0), (":80", nil, 0), ("host:0", nil, 0), ("host:65536", nil, 0),
            ("[::1", nil, 0), ("[]:80", nil, 0), ("[::1]x", nil, 0), ("[::1]:", nil, 0),
        ])
    func peers(text: String, host: String?, port: UInt16) {
        let p = parsePeer(text, defaultPort: 47850)
        #expect(p?.host == host)
        if host != nil { #expect(p?.port == port) }
    }
}

@Suite("Formatting", .tags(.unit))
struct FormatTests {
    @Test(
        "byte counts and decimals read well",
        arguments: [
            (0.0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (1_234_567, "1.2 MB"), (512_000_000_000, "512 GB"),
        ])
    func bytes(n: Double, text: String) {
        #expect(formatBytes(n) == text)
    }
}

@Suite("LocalSend settings", .tags(.unit))
struct LocalSendSettingsTests {
    func configuration(_ args: [String: String]) throws(UsageError) -> DaemonConfiguration {
        var c = DaemonConfiguration()
        for (k, v) in args.sorted(by: { $0.key < $1.key }) { try DaemonOptions.apply(k, v, to: &c) }
        return c
    }

    @Test("defaults: on, port 53317, no PIN, PNG, JPEG, HEIC, HEIF, MP4 and MOV")
    func defaults() {
        let c = DaemonConfiguration()
        #expect(c.localSend && c.localSendPort == 53317 && c.localSendPIN == nil)
        #expect(
            c.types == [.png, .jpeg, .heic, .heif, .mp4, .mov]
                && c.mediaTypes == [
                    "image/heic", "image/heif", "image/jpeg", "image/png", "video/mp4", "video/quicktime",
                ])
    }

    @Test("values are parsed and checked")
    func values() throws {
        let c = try configuration([
            "localsend": "off", "localsend-port": "0", "localsend-pin": "4711",
            "localsend-types": "IMAGE/PNG, image/png",
        ])
        #expect(!c.localSend && c.localSendPort == 0 && c.localSendPIN == "4711" && c.types == [.png])
        #expect(throws: UsageError.self) { try configuration(["localsend": "maybe"]) }
        #expect(throws: UsageError.self) { try configuration(["localsend-port": "70000"]) }
        #expect(throws: UsageError.self) { try configuration(["localsend-pin": "with space"]) }
        #expect(throws: UsageError.self) { try configuration(["localsend-pin": ""]) }
        #expect(throws: UsageError.self) { try configuration(["localsend-types": "image/gif"]) }
        #expect(throws: UsageError.self) { try configuration(["localsend-types": ","]) }
        #expect(throws: UsageError.self) { try configuration(["localsend-types": "image/png,image/jpg"]) }
        let both = try configuration(["localsend-types": "image/jpeg, image/png,IMAGE/JPEG"])
        #expect(both.types == [.png, .jpeg])
        #expect(try configuration(["localsend-types": "image/HEIC"]).types == [.heic])
        #expect(throws: UsageError.self) { try configuration(["localsend-types": "image/avif"]) }
        // `types` is the key now; the old one is still read, for the same setting.
        #expect(try configuration(["types": "image/png, image/heif"]).types == [.png, .heif])
        #expect(try configuration(["types": "image/png, image/heif"]).mediaTypes == ["image/heif", "image/png"])
        #expect(try configuration(["types": "image/png"]).types == [.png])
        #expect(throws: UsageError.self) { try configuration(["types": "text/plain"]) }
    }
}
