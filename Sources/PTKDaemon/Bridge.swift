import PTKDoor
import PTKLog

// The web and WebDAV doors are still PTKDaemon's files (issue 55 moves them into modules of
// their own): they reach what moved below PTKDaemon through these names, so that their files
// need no edit while they are being converted. Once each imports the modules itself, this
// file goes.

/// ptkd's log (PTKLog).
typealias Log = PTKLog.Log
/// ptkd's shutdown signal (PTKDoor).
typealias ShutdownSignal = PTKDoor.ShutdownSignal
/// What happens around each photo (PTKDoor).
typealias Arrivals = PTKDoor.Arrivals
/// Who sent a photo (PTKDoor).
typealias Sender = PTKDoor.Sender
/// The connection slots (PTKDoor).
typealias ConnectionTable = PTKDoor.ConnectionTable
/// The receiver's budget of wrong guesses (PTKDoor).
typealias Guesses = PTKDoor.Guesses
/// The budget of large request bodies (PTKDoor).
typealias LargeBodies = PTKDoor.LargeBodies
/// Wrong passwords per address (PTKDoor).
typealias PasswordThrottle = PTKDoor.PasswordThrottle
