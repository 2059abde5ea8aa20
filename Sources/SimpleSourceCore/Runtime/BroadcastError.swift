// Why a Broadcaster refused a batch.

/// A batch a ``Broadcaster`` refused; nothing was published.
public struct BroadcastError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What was wrong.
  public enum Code: String, Hashable, Sendable, CustomStringConvertible {
    /// The raw value.
    public var description: String { rawValue }

    /// The batch's `from` is not the newest accepted version (another publisher got there first).
    case staleBatch
    /// The new version is not after the newest accepted one.
    case versionNotAfter
    /// The batch changes nothing (G4).
    case emptyBatch
    /// The broadcaster has finished.
    case finished
  }

  /// What was wrong.
  public var code: Code
  /// The offending version: the batch's `from` for ``Code-swift.enum/staleBatch``, its new version
  /// otherwise.
  public var version: Int
  /// The version that was expected, where one was.
  public var expected: Int?

  /// Creates an error.
  @usableFromInline package init(_ code: Code, version: Int, expected: Int? = nil) {
    self.code = code
    self.version = version
    self.expected = expected
  }

  /// `staleBatch: version 3, expected 5`.
  public var description: String {
    "\(code): version \(version)" + (expected.map { ", expected \($0)" } ?? "")
  }
}
