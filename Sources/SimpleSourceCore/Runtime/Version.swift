// A version and the counter that made it, so that a wait for another counter's version fails at once.

/// The identity of a version counter: a source's, or one a view shares with its parent.
///
/// Every ``BasicDataSource``, ``Broadcaster`` and derived source that numbers its own versions has a counter
/// of its own; a projection made with ``ProjectedVersions/parent`` counts with its parent's. Two counters
/// are equal only when they are the same counter, in this process.
public struct VersionCounter: Hashable, Sendable, CustomStringConvertible {
  /// Distinct for each counter made in this process.
  @usableFromInline let id: UInt64

  @usableFromInline static let made = Locked<UInt64>(0)

  /// A counter no other counter in this process equals.
  /// - Complexity: O(1).
  @inlinable package init() {
    id = Self.made.withLock { made in
      made += 1
      return made
    }
  }

  /// `counter 3`.
  public var description: String { "counter \(id)" }

  /// The version numbered `number` of this counter: a number kept outside the package (a database's
  /// column, a client's store, a message of the wire) made a version again, to wait for it.
  /// - Complexity: O(1).
  @inlinable public func version(_ number: Int) -> Version { Version(number, of: self) }
}

/// A version of a data source: its number, and the counter that made it.
///
/// Mutations return one, and ``DataSourceType/version`` is one: wait for it on anything that follows the
/// source (``Subscription/reached(_:)``, ``BasicDataSource/settled(through:)``, an
/// observed model's `reached(_:)`), and a follower numbered by another counter throws
/// ``VersionError/Code-swift.enum/otherCounter`` at once instead of waiting for a number that means
/// something else to it. Batches (``UpdateBatch/to``), subscriptions (``Subscription/version``,
/// ``Subscription/heldVersion``), prepared writes and groups hand out versions too; only the wire and
/// storage keep bare numbers, which ``VersionCounter/version(_:)`` makes versions again.
public struct Version: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
  /// The version's number: the `to` of the batch that carries it, for the counter's subscribers.
  public let number: Int
  /// The counter that made it.
  public let counter: VersionCounter

  /// A version `number` of `counter`.
  @inlinable package init(_ number: Int, of counter: VersionCounter) {
    self.number = number
    self.counter = counter
  }

  /// `7`: what a version reads as in text.
  public var description: String { "\(number)" }

  /// `7 (counter 3)`.
  public var debugDescription: String { "\(number) (\(counter))" }
}

/// A wait that cannot be answered; nothing waited.
public struct VersionError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What was wrong.
  public enum Code: String, Hashable, Sendable, CustomStringConvertible {
    /// The raw value.
    public var description: String { rawValue }

    /// The version was made by another counter than the one that numbers what was asked: waiting on a
    /// projection numbered by its own counter for its parent's version, for example.
    case otherCounter
  }

  /// What was wrong.
  public var code: Code
  /// The version that was asked for.
  public var version: Version
  /// The counter that numbers what was asked.
  public var expected: VersionCounter

  /// Creates an error.
  @usableFromInline package init(_ code: Code, version: Version, expected: VersionCounter) {
    self.code = code
    self.version = version
    self.expected = expected
  }

  /// `otherCounter: version 50 (counter 1), asked of counter 4`.
  public var description: String { "\(code): version \(version.debugDescription), asked of \(expected)" }

  /// Throws ``Code-swift.enum/otherCounter`` unless `version` was made by `counter`.
  /// - Complexity: O(1).
  @inlinable package static func check(_ version: Version, against counter: VersionCounter)
    throws(VersionError)
  {
    guard version.counter == counter else {
      throw VersionError(.otherCounter, version: version, expected: counter)
    }
  }
}
