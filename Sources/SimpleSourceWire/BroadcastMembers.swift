// Which sessions a view's broadcast writes to, which wait to join it, and how each one's membership ends.

/// The members of one broadcast: the sessions a view's batches are written to, encoded once, through
/// their synchronous sinks. A synchronous state machine, so that every order of offers, deliveries,
/// failed writes and leaves can be tested on its own; the broadcast keeps it under one lock.
///
/// The rule that keeps every client's stream exact: a session joins only at the version the broadcast
/// has delivered (it holds every batch before, and receives every batch after), and a session that
/// stops being a member is told the version it holds, from which it goes on by itself.
package struct BroadcastMembers<ID: Hashable, Member> {
  /// How a session's time with a broadcast ends.
  package typealias Outcome = BroadcastOutcome

  /// What an offer did.
  package enum Offered: Equatable {
    /// The session is a member from now on.
    case joined
    /// The session is ahead of the broadcast and joins when the broadcast reaches its version.
    case waiting
    /// The session is not a member, for this reason.
    case finished(Outcome)
  }

  /// What a step changed for the sessions.
  package struct Changes {
    /// Waiting sessions that became members: they give up their own subscriptions.
    package var joined: [Member] = []
    /// Sessions that are no longer members or waiting, and why.
    package var finished: [(member: Member, outcome: Outcome)] = []
    /// Whether the broadcast ended in this step: its subscription is cancelled.
    package var ended = false
  }

  /// The version every member holds: where the broadcast's subscription's next batch starts. (A
  /// composed batch that cancelled out does not move it: the subscription keeps its version, G1.)
  package private(set) var version: Int
  /// The sessions written to.
  package private(set) var members: [ID: Member] = [:]
  /// The sessions waiting to join, and the version each holds (above ``version``).
  package private(set) var waiting: [ID: (version: Int, member: Member)] = [:]
  /// Whether the broadcast ended; every later offer is refused with ``Outcome/ended``.
  package private(set) var isEnded = false

  /// A broadcast whose subscription holds `version`, with no member yet.
  package init(version: Int) { self.version = version }

  /// Session `id`, holding `version` of the broadcast's stream, asks to join.
  /// - Precondition: `id` is neither a member nor waiting.
  /// - Complexity: O(1).
  /// An ended broadcast answers ``Outcome/behind``: the session goes on by itself, and may found a new one.
  package mutating func offer(_ id: ID, at version: Int, _ member: Member) -> Offered {
    precondition(members[id] == nil && waiting[id] == nil, "SimpleSource: a session offered twice")
    guard !isEnded else { return .finished(.behind) }
    if version == self.version {
      members[id] = member
      return .joined
    }
    guard version > self.version else { return .finished(.behind) }
    waiting[id] = (version, member)
    return .waiting
  }

  /// Delivers the batch from `from` to `to`: every member is written to with `write` (a member for which
  /// it returns `false` leaves at `from`), then the broadcast holds `to`, the sessions waiting at `to`
  /// join, and those waiting below it are behind. (No session waits at `from`: a session waits only
  /// above the broadcast's version, and each advance joins those waiting at the version reached.)
  /// The broadcast ends when no session is left.
  ///
  /// A batch that does not start at ``version`` (a subscription that broke its chain, G1) is written to
  /// no one: the broadcast ends, members leave at ``version`` and waiting sessions are behind, so that
  /// each goes on by itself from what it holds.
  /// - Complexity: O(members + waiting), plus `write` per member.
  package mutating func deliver(from: Int, to: Int, write: (Member) -> Bool) -> Changes {
    var changes = Changes()
    guard !isEnded else { return changes }
    guard from == version, to > from else {
      assertionFailure("SimpleSource: a broadcast's subscription delivered \(from)→\(to) at \(version)")
      changes.finished =
        members.values.map { ($0, .left(at: version)) } + waiting.values.map { ($0.member, .behind) }
      members = [:]
      waiting = [:]
      isEnded = true
      changes.ended = true
      return changes
    }
    var failed: [ID] = []
    for (id, member) in members where !write(member) { failed.append(id) }
    for id in failed {
      changes.finished.append((members.removeValue(forKey: id)!, .left(at: from)))
    }
    advance(to: to, into: &changes)
    return changes
  }

  /// Session `id` leaves, if it is a member or waiting: it is told ``Outcome/stopped``, and no write
  /// reaches it after this returns.
  /// - Complexity: O(1).
  package mutating func leave(_ id: ID) -> Changes {
    var changes = Changes()
    if let member = members.removeValue(forKey: id) ?? waiting.removeValue(forKey: id)?.member {
      changes.finished.append((member, .stopped))
      endIfEmpty(&changes)
    }
    return changes
  }

  /// The broadcast's subscription ended: every session is told ``Outcome/ended``.
  /// - Complexity: O(members + waiting).
  package mutating func end() -> Changes {
    var changes = Changes()
    guard !isEnded else { return changes }
    changes.finished = (Array(members.values) + waiting.values.map(\.member)).map { ($0, .ended) }
    members = [:]
    waiting = [:]
    isEnded = true
    changes.ended = true
    return changes
  }

  /// Ends the broadcast if no session is a member or waiting (its founder stopped before joining).
  /// - Complexity: O(1).
  package mutating func endIfEmpty() -> Changes {
    var changes = Changes()
    if !isEnded { endIfEmpty(&changes) }
    return changes
  }

  // MARK: - Steps

  private mutating func advance(to: Int, into changes: inout Changes) {
    version = to
    join(at: to, into: &changes)
    for (id, entry) in waiting where entry.version < to {
      waiting[id] = nil
      changes.finished.append((entry.member, .behind))
    }
    endIfEmpty(&changes)
  }

  private mutating func join(at version: Int, into changes: inout Changes) {
    for (id, entry) in waiting where entry.version == version {
      waiting[id] = nil
      members[id] = entry.member
      changes.joined.append(entry.member)
    }
  }

  private mutating func endIfEmpty(_ changes: inout Changes) {
    guard members.isEmpty && waiting.isEmpty else { return }
    isEnded = true
    changes.ended = true
  }
}

extension BroadcastMembers: Sendable where ID: Sendable, Member: Sendable {}
extension BroadcastMembers.Changes: Sendable where ID: Sendable, Member: Sendable {}

/// How a session's time with a broadcast ends.
package enum BroadcastOutcome: Equatable, Sendable {
  /// The session is behind the broadcast, or the broadcast passed the version it waited at without
  /// stopping there: it goes on with its own subscription, which it still holds.
  case behind
  /// A write to the session failed at the batch that starts at `version`: it holds every batch
  /// through `version` and goes on by itself from there (its own subscription was given up on joining).
  case left(at: Int)
  /// The broadcast's subscription ended: its view or source went away, or every member left.
  case ended
  /// The session left (it stopped, or subscribed again).
  case stopped
}
