// The pure state machine of group commit: which writes form the next group, and when the loop runs.

/// What a ``GroupCommit`` decides while writers submit and its loop commits groups.
///
/// Plain synchronous code in the phases style: the machine is ``Phase/idle`` or ``Phase/committing(next:)``
/// a group, holding the writes that arrived meanwhile; each event returns one ``Action``. The storage
/// performs it outside its lock. `Write` is a submitted write (an id and a continuation in production, an
/// `Int` in tests).
@usableFromInline
struct GroupCommitStateMachine<Write> {
  @usableFromInline
  enum Phase {
    /// No group is committing; no write waits.
    case idle
    /// A group is committing; `next` holds the writes that arrived since, in arrival order: the next group.
    case committing(next: [Write])
  }

  @usableFromInline
  enum Action {
    /// Start the loop with this group (it was idle).
    case startGroup([Write])
    /// Commit this group next (the loop goes on).
    case nextGroup([Write])
    /// Nothing to do: the write joins the next group.
    case none
    /// The loop stops: nothing waits.
    case stop
  }

  @usableFromInline var phase = Phase.idle

  @inlinable init() {}

  /// A writer submits `write`: it forms a group of its own when none is committing, and joins the next
  /// group otherwise.
  @inlinable
  mutating func submit(_ write: Write) -> Action {
    switch phase {
    case .idle:
      phase = .committing(next: [])
      return .startGroup([write])
    case .committing(var next):
      phase = .idle  // no second reference to the array while it grows
      next.append(write)
      phase = .committing(next: next)
      return .none
    }
  }

  /// The committing group is answered: the writes that arrived meanwhile form the next group, or the loop
  /// stops.
  /// - Precondition: A group is committing.
  @inlinable
  mutating func groupCommitted() -> Action {
    guard case .committing(let next) = phase else {
      preconditionFailure("SimpleSource: a group committed with none committing (internal inconsistency)")
    }
    if next.isEmpty {
      phase = .idle
      return .stop
    }
    phase = .committing(next: [])
    return .nextGroup(next)
  }

  /// A writer waiting for the next group was cancelled: it leaves it.
  /// - Returns: Its write, to answer as cancelled; `nil` when it is in the committing group (which answers
  ///   it) or was answered already.
  @inlinable
  mutating func cancel(where matches: (Write) -> Bool) -> Write? {
    guard case .committing(var next) = phase, let index = next.firstIndex(where: matches) else { return nil }
    phase = .idle
    let write = next.remove(at: index)
    phase = .committing(next: next)
    return write
  }
}

extension GroupCommitStateMachine: Sendable where Write: Sendable {}
extension GroupCommitStateMachine.Phase: Sendable where Write: Sendable {}
extension GroupCommitStateMachine.Action: Sendable where Write: Sendable {}
