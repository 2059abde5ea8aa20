// The log's doorbell: the notification a writer sends with its commit, and what a follower does on it.

import LiveBoard
import SimpleSource

/// A notification on the `board_log` channel: the stream and the version a commit made, and, when it fits
/// in a notification, that version's log entry, so that a follower one version behind makes it without
/// reading the log.
///
/// The payload is `stream:version` or `stream:version:entry` (the entry is the wire batch's JSON, as
/// `board_log` keeps it). PostgreSQL refuses a payload of 8,000 bytes or more: a larger entry is left out,
/// and the follower reads it from the log. The log stays the truth: an entry from a doorbell is checked as
/// one read from the log (``BasicDataSource/apply(logged:)``), and anything a follower cannot make from it
/// (a gap, a payload it cannot read) sends it to the log.
struct Doorbell: Equatable {
  /// The version the commit made.
  let version: Int
  /// The version's log entry, as JSON; `nil` when it did not fit.
  let entry: Substring?

  /// A doorbell for `version`, with its log entry or without.
  init(version: Int, entry: Substring?) {
    self.version = version
    self.entry = entry
  }

  /// The longest payload PostgreSQL takes, in bytes.
  static let payloadLimit = 7_999

  /// The payload for `version` of `stream`, with `entry` when the whole fits in ``payloadLimit``.
  /// - Complexity: O(*m*) in the entry's length.
  static func payload(stream: String, version: Int, entry: String) -> String {
    let bell = "\(stream):\(version)"
    guard bell.utf8.count + 1 + entry.utf8.count <= payloadLimit else { return bell }
    return bell + ":" + entry
  }

  /// Reads `payload` as a doorbell of `stream`; `nil` for anything else (another stream's, or not a
  /// doorbell), which a follower takes as a reason to read the log. A stream's name may hold colons: the
  /// version is what follows the name.
  init?(_ payload: String, stream: String) {
    let prefix = stream + ":"
    guard payload.hasPrefix(prefix) else { return nil }
    let rest = payload.dropFirst(prefix.count)
    let digits = rest.prefix { $0 != ":" }
    guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let version = Int(digits) else { return nil }
    self.version = version
    entry = digits.endIndex == rest.endIndex ? nil : rest[rest.index(after: digits.endIndex)...]
  }

  /// What a follower holding `held` does on a doorbell.
  enum Step {
    /// Nothing: it holds the version (its own write's, or one it caught up to).
    case skip
    /// Make the doorbell's entry, the version right after the one held; read the log if that fails.
    case make(WireBatch<Column>)
    /// Read the log after the version held.
    case readLog
  }

  /// What a follower holding version `held` does on `doorbell` (`nil`: a notification it could not read).
  /// - Complexity: O(*m*) to decode an entry of *m* bytes.
  static func step(on doorbell: Doorbell?, held: Int) -> Step {
    guard let doorbell else { return .readLog }
    if held >= doorbell.version { return .skip }
    guard doorbell.version == held + 1, let entry = doorbell.entry,
      let batch = try? ClusterBoard.decodeEntry(String(entry)), batch.from == held,
      batch.to == doorbell.version
    else { return .readLog }
    return .make(batch)
  }
}
