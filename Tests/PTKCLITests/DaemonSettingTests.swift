import PTKCLI
import PTKTestTags
import PTKVocabulary
import Testing

@testable import PTKConfiguration

/// ptkd's settings by key (issue 55): each key declared once, and the one parser of each kind
/// of value (ports, switches, sizes, durations) answering every setting that takes one alike.
@Suite(.tags(.unit)) struct DaemonSettingTests {
    @Test("every setting key is declared once, in help order, and named as its flag")
    func everyKeyOnce() {
        let keys = DaemonOptions.settings.map(\.key)
        #expect(Set(keys) == Set(DaemonSetting.allCases) && keys.count == DaemonSetting.allCases.count)
        for key in DaemonSetting.allCases {
            #expect(DaemonOptions.option(key).name == key.rawValue)
        }
        #expect(
            DaemonSetting(rawValue: "dir") == .directory && DaemonSetting(rawValue: "localsend-pin") == .localSendPIN)
    }

    func apply(_ key: DaemonSetting, _ value: String) throws(UsageError) -> DaemonConfiguration {
        var c = DaemonConfiguration()
        try DaemonOptions.apply(key, value, to: &c)
        return c
    }

    func message(_ key: DaemonSetting, _ value: String) -> String {
        do {
            _ = try apply(key, value)
            return "accepted"
        } catch { return error.message }
    }

    @Test("ports: 0 to 65535, the same for the three doors")
    func ports() throws {
        for key in [DaemonSetting.port, .localSendPort, .webPort] {
            #expect(message(key, "65536").hasPrefix("invalid value '65536' for \(key.rawValue): expected "))
            #expect(message(key, "-1") != "accepted" && message(key, "x") != "accepted")
        }
        #expect(
            try apply(.port, "0").port == 0 && apply(.localSendPort, "65535").localSendPort == 65535
                && apply(.webPort, "8443").webPort == 8443)
        #expect(message(.webPort, "99999") == "invalid value '99999' for web-port: expected 0 to 65535")
        #expect(message(.port, "99999") == "invalid value '99999' for port: expected a port number 0-65535")
    }

    @Test("switches: on/yes/true and off/no/false in any case; mdns takes 1 and 0 too")
    func switches() throws {
        for key in [DaemonSetting.library, .localSend, .web] {
            for on in ["on", "YES", "True"] { #expect(message(key, on) == "accepted") }
            #expect(message(key, "1") == "invalid value '1' for \(key.rawValue): expected on or off")
        }
        #expect(try !apply(.library, "off").library && !apply(.web, "No").web && !apply(.localSend, "false").localSend)
        #expect(try apply(.mdns, "1").mdns && !apply(.mdns, "0").mdns && !apply(.mdns, "OFF").mdns)
        #expect(message(.mdns, "maybe") == "invalid value 'maybe' for mdns: expected yes or no")
    }

    @Test("sizes and durations: suffixes, bounds and messages")
    func sizesAndDurations() throws {
        #expect(try apply(.maxFileSize, "1G").maxFileSize == 1 << 30 && apply(.minFree, "0").minFree == 0)
        #expect(message(.maxFileSize, "7") == "invalid value '7' for max-file-size: expected a size such as 512M")
        #expect(message(.minFree, "lots") == "invalid value 'lots' for min-free: expected a size such as 100M")
        #expect(
            try apply(.partialMaxAge, "2d").partialMaxAge == .seconds(172_800)
                && apply(.idleTimeout, "45").idleTimeout == .seconds(45))
        #expect(
            try apply(.onSavedTimeout, "2m").onSavedTimeout == .seconds(120)
                && apply(.handshakeTimeout, "3").handshakeTimeout == .seconds(3))
        #expect(message(.idleTimeout, "0") == "invalid value '0' for idle-timeout: expected seconds, such as 30")
        #expect(
            message(.partialMaxAge, "soon")
                == "invalid value 'soon' for partial-max-age: expected a duration, such as 24h")
    }

    @Test("types: PhotoType values in their order, each once, whatever order and case they were given in")
    func types() throws {
        #expect(try apply(.types, "image/HEIF, image/png,,image/png").types == [.png, .heif])
        #expect(try apply(.localSendTypes, "image/jpeg").types == [.jpeg])
        #expect(DaemonConfiguration().types == PhotoType.allCases)
    }

    @Test("the LocalSend door's settings are the configuration's, as its settings give them")
    func localSendSettings() throws {
        var c = DaemonConfiguration()
        for (key, value) in [
            (DaemonSetting.name, "Den"), (.listen, "192.0.2.1"), (.localSendPort, "5300"), (.localSendPIN, "4711"),
            (.idleTimeout, "12"), (.maxFileSize, "2M"), (.types, "image/png,image/heic"), (.senders, "trusted"),
            (.stateDirectory, "/s"),
        ] {
            try DaemonOptions.apply(key, value, to: &c)
        }
        let s = LocalSendSettings(c)
        #expect(s.name == "Den" && s.listen == ["192.0.2.1"] && s.localSendPort == 5300 && s.localSendPIN == "4711")
        #expect(
            s.idleTimeout == .seconds(12) && s.maxFileSize == 2 << 20 && s.types == [.png, .heic]
                && s.senders == .trusted)
        #expect(s.localSendIdentityDirectory == "/s/localsend" && s.mediaTypes == ["image/heic", "image/png"])
    }

    @Test("the web door's settings are the configuration's, its directories in force included")
    func webSettings() throws {
        var c = DaemonConfiguration()
        for (key, value) in [
            (DaemonSetting.name, "Den"), (.listen, "192.0.2.1"), (.webPort, "8443"), (.library, "off"),
            (.idleTimeout, "12"),
            (.maxFileSize, "2M"), (.minFree, "1G"), (.types, "image/jpeg"), (.stateDirectory, "/s"),
        ] {
            try DaemonOptions.apply(key, value, to: &c)
        }
        let s = WebSettings(c)
        #expect(
            s.name == "Den" && s.listen == ["192.0.2.1"] && s.webPort == 8443 && !s.library
                && s.idleTimeout == .seconds(12))
        #expect(s.maxFileSize == 2 << 20 && s.minFree == 1 << 30 && s.types == [.jpeg])
        #expect(s.webDirectory == "/s/web" && s.effectiveDirectory == "/s/received")
        try DaemonOptions.apply(.directory, "/photos", to: &c)
        #expect(WebSettings(c).effectiveDirectory == "/photos")
    }
}
