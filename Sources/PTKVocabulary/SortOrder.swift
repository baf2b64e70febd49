/// The orders a list of photos is shown in (`ptk list --sort`): by name, by time received, by
/// time taken (else received), by size. Here, below the library, so that ptk's command table
/// offers them without linking the library.
public enum SortOrder: String, Sendable, CaseIterable {
    case name, time, taken, size
}
