// Written by scripts/version.sh from debian/changelog, the one place the version is set.
/// The version of ptkd, ptk and ptk-send.
public let ptkVersion = "0.1.0"
