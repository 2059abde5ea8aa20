// The pure state machine of group commit: which writes form a group, and which write leads it.

/// What a ``GroupCommit`` decides while writers submit and leaders take their groups.
///
/// Plain synchronous code: the machine holds the writes submitted and not yet taken, in arrival order.
/// The first of them is the **leader**: the write that found none waiting, whose own task goes to the
/// source and, in its turn there, takes every write waiting as its group (``take()``). Whoever submits
/// after that finds none waiting and leads the next group. So a group is every write that arrived before
/// its leader's turn came, and exactly one leader is on its way whenever a write waits. `Write` is a
/// submitted write (an id and a continuation in production, an `Int` in tests).
@usableFromInline
struct GroupCommitStateMachine<Write> {
  /// What a submitted write does next.
  @usableFromInline
  enum Role: Equatable, Sendable {
    /// None waited: it leads, and takes its group in its turn of the source.
    case lead
    /// It waits to be taken by the leader on its way (or to lead, if that leader leaves).
    case follow
  }

  /// The writes submitted and not yet taken, in arrival order; the first is the leader's.
  @usableFromInline private(set) var waiting: [Write] = []

  @inlinable init() {}

  /// A writer submits `write`: it leads when none waits, and follows the leader on its way otherwise.
  /// - Complexity: O(1) amortized.
  @inlinable
  mutating func submit(_ write: Write) -> Role {
    waiting.append(write)
    return waiting.count == 1 ? .lead : .follow
  }

  /// The leader, in its turn of the source: every write waiting forms its group, its own first.
  /// - Precondition: A write waits (the leader's own).
  /// - Complexity: O(1).
  @inlinable
  mutating func take() -> [Write] {
    precondition(!waiting.isEmpty, "SimpleSource: a group taken with no leader (internal inconsistency)")
    defer { waiting = [] }
    return waiting
  }

  /// The leader could not take its turn (its task was cancelled while it waited behind a prepared
  /// write): its write leaves, and the next write waiting, if any, leads.
  /// - Returns: The new leader, to resume so that it leads.
  /// - Precondition: A write waits (the leader's own).
  /// - Complexity: O(*w*) for *w* writes waiting.
  @inlinable
  mutating func leaderLeft() -> Write? {
    precondition(!waiting.isEmpty, "SimpleSource: a leader left with none waiting (internal inconsistency)")
    waiting.removeFirst()
    return waiting.first
  }

  /// A follower's task was cancelled: it leaves, if it still waits and does not lead.
  /// - Returns: Its write, to answer as cancelled; `nil` when it leads or was taken already (its group
  ///   answers it).
  /// - Complexity: O(*w*) for *w* writes waiting.
  @inlinable
  mutating func cancel(where matches: (Write) -> Bool) -> Write? {
    guard let index = waiting.firstIndex(where: matches), index > 0 else { return nil }
    return waiting.remove(at: index)
  }
}

extension GroupCommitStateMachine: Sendable where Write: Sendable {}
