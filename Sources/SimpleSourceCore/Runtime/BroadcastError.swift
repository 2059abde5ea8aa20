// Why a Broadcaster refused a batch.

/// A batch a ``Broadcaster`` refused; nothing was published.
public struct BroadcastError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What was wrong. New codes may be added.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// A stable, readable name of the code, such as `"staleBatch"`.
    public let rawValue: String
    /// Creates a code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { rawValue }

    /// The batch's `from` is not the newest accepted version (another publisher got there first).
    public static let staleBatch = Code(rawValue: "staleBatch")
    /// The new version is not after the newest accepted one.
    public static let versionNotAfter = Code(rawValue: "versionNotAfter")
    /// The batch changes nothing (G4).
    public static let emptyBatch = Code(rawValue: "emptyBatch")
    /// The broadcaster has finished.
    public static let finished = Code(rawValue: "finished")
  }

  /// What was wrong.
  public var code: Code
  /// The offending version: the batch's `from` for ``Code-swift.struct/staleBatch``, its new version
  /// otherwise.
  public var version: Int
  /// The version that was expected, where one was.
  public var expected: Int?

  /// Creates an error.
  public init(_ code: Code, version: Int, expected: Int? = nil) {
    self.code = code
    self.version = version
    self.expected = expected
  }

  /// `staleBatch: version 3, expected 5`.
  public var description: String {
    "\(code): version \(version)" + (expected.map { ", expected \($0)" } ?? "")
  }
}
