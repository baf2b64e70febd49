import PTKConfiguration

/// ptkd could not start.
public struct DaemonError: Error, CustomStringConvertible {
    /// What went wrong, for the one line ptkd prints before it exits.
    public var description: String
    /// The exit status: 73 when the directory is unusable, 71 for other system errors.
    public var exitCode: DaemonExitStatus

    package init(description: String, exitCode: DaemonExitStatus) {
        self.description = description
        self.exitCode = exitCode
    }
}
