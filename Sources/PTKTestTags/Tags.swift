import Testing

/// The kinds of test, so a run can pick some (`scripts/tests-tagged.py`, `make check`). Every
/// suite is `.unit` or `.endToEnd` (checked by `scripts/tests-tagged.py --check`); `.root` and
/// `.slow` mark what a quick loop leaves out, `.alone` what runs by itself.
extension Tag {
    /// Pure code or one module's code with its files in a temporary directory: no `ptkd` process.
    @Tag public static var unit: Self
    /// Starts the real programs (`ptkd`, `ptk`, `ptk-send`) and drives them as users' clients do.
    @Tag public static var endToEnd: Self
    /// Runs only as root (it skips, saying so, otherwise): other users, namespaces, mounts, systemd.
    @Tag public static var root: Self
    /// Takes more than a few seconds on its own (external tools, fault sweeps, big inputs).
    @Tag public static var slow: Self
    /// Needs the machine to itself (gigabytes through TLS and the disk within a time bound):
    /// `scripts/run-tests.sh` runs these after all the others, by themselves.
    @Tag public static var alone: Self
}
