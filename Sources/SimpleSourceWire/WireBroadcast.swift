// One view's batches, encoded once and written to every session that follows it through a synchronous
// sink: what makes a client cost the server a write, not a task.

public import Foundation
import SimpleSourceCore

/// One message's bytes as a broadcast hands them to every session's ``WireSink``: the same object for
/// every client of a batch, so a transport can recognise it (by identity) and make its own form of the
/// bytes (a framed buffer) once for all the clients it writes to.
public final class WireFrame: Sendable {
  /// The message's JSON bytes.
  public let bytes: Data

  /// A frame of `bytes`: a broadcast makes one per batch; a transport's tests make their own.
  public init(bytes: Data) { self.bytes = bytes }
}

/// Writes one message to a client without waiting: it queues the frame on the client's connection and
/// returns `true`, or returns `false` when the connection cannot take it now (its buffer is full, or it
/// closed). A session given one joins its view's broadcast; see ``WireService/session(scope:pacing:sink:send:)``.
///
/// It is called while the broadcast holds its lock: it must not wait, and must not call the session or
/// the service.
public typealias WireSink = @Sendable (WireFrame) -> Bool

/// A session in a broadcast. Not generic, so that the delivery loop over members is specialised in this
/// module whatever the source's section type is.
final class BroadcastMember: Sendable {
  /// Where its messages go.
  let sink: WireSink
  /// The versions it was sent, for ``WireSession/settled()`` and edits' answers: kept current on every
  /// batch only while the session is watched (something waits on it), and set to what it holds when it
  /// stops being a member.
  let sent: AppliedVersion
  /// Counts its joins.
  let joins: AppliedVersion
  /// Resumed once, when it stops being a member.
  let outcome: CheckedContinuation<BroadcastOutcome, Never>
  /// Ends its own subscription when it joins; `nil` for the session whose subscription the broadcast took.
  let cancelOwn: (@Sendable () -> Void)?

  init(
    sink: @escaping WireSink, sent: AppliedVersion, joins: AppliedVersion,
    outcome: CheckedContinuation<BroadcastOutcome, Never>, cancelOwn: (@Sendable () -> Void)?
  ) {
    self.sink = sink
    self.sent = sent
    self.joins = joins
    self.outcome = outcome
    self.cancelOwn = cancelOwn
  }

  /// It became a member: its own subscription ends.
  func joined() {
    cancelOwn?()
    joins.advance(to: joins.current + 1)
  }
}

/// The sessions that follow one view (or the whole source) in one format, written to from one
/// subscription.
///
/// A member's `sent` version is not advanced on every batch: that was a lock and two cold objects per
/// member per batch. It is advanced for the sessions that are *watched* (a task awaited their version:
/// ``WireSession/settled()``, an edit's answer), and set to what a session holds when it stops being a
/// member, so every wait on it is answered as before.
final class WireBroadcast<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  typealias Outcome = BroadcastOutcome
  typealias Member = BroadcastMember
  typealias Members = BroadcastMembers<ObjectIdentifier, Member>

  private struct Shared: Sendable {
    var members: Members
    /// The version every member holds, counting the versions whose composed batch cancelled out (the
    /// subscription keeps its version there, G1, so this can be above `members.version`).
    var sent: Int
    /// The sessions whose `sent` is advanced on every batch while they are members.
    var watched: Set<ObjectIdentifier> = []

    /// Sets `sent` to `version` (if higher) and returns the watched members' `sent` to bring to it (by
    /// the caller, outside the lock: advancing resumes waiting tasks); forgets the watched sessions
    /// that are neither members nor waiting.
    /// - Complexity: O(watched).
    mutating func advanceSent(to version: Int, into advances: inout SentAdvances) {
      sent = max(sent, version)
      for id in watched {
        if let member = members.members[id] {
          advances.append((member.sent, sent))
        } else if members.waiting[id] == nil {
          watched.remove(id)
        }
      }
    }
  }

  /// Sessions' `sent` versions to advance, and to what: decided under the lock, done after it, since
  /// advancing one resumes the tasks waiting on it and no continuation is resumed under a lock.
  typealias SentAdvances = [(sent: AppliedVersion, to: Int)]

  private let state: Locked<Shared>
  private let subscription: Subscription<Section>
  private let coder: WireCoder

  /// A broadcast of `subscription`'s batches in `coder`'s format; it starts sending when its first
  /// session joins.
  init(subscription: Subscription<Section>, version: Int, coder: WireCoder) {
    state = Locked(Shared(members: Members(version: version), sent: version))
    self.subscription = subscription
    self.coder = coder
  }

  /// Whether the broadcast ended: a session that finds it so makes a new one.
  var isEnded: Bool { state.withLock(\.members.isEnded) }

  /// Session `id`, holding `version`, joins when it holds what the broadcast delivered (at once, or once
  /// the broadcast reaches it); returns how its membership ended. `own` is its own subscription,
  /// cancelled when it joins; `nil` for the founder, the session whose subscription the broadcast took,
  /// whose offer starts the broadcast (it is at the broadcast's version, and nothing was delivered yet).
  ///
  /// `isStopped` is read under the broadcast's lock: a session that stopped before is not offered (it
  /// gets ``Outcome/stopped``), one that stops after leaves with ``leave(_:)``. So is `isWatched`: a
  /// session watched before is kept current from its offer, one watched after calls ``watch(_:)``. A
  /// founder that finds the broadcast ended (a session that joined first left) is told to leave at
  /// `version`: its subscription ended with the broadcast.
  func follow(
    _ id: ObjectIdentifier, at version: Int, own: Subscription<Section>?, sent: AppliedVersion,
    joins: AppliedVersion, sink: @escaping WireSink, isStopped: @Sendable () -> Bool,
    isWatched: @Sendable () -> Bool
  ) async -> Outcome {
    let cancelOwn: (@Sendable () -> Void)? = if let own { { own.cancel() } } else { nil }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      let member = Member(
        sink: sink, sent: sent, joins: joins, outcome: continuation, cancelOwn: cancelOwn)
      let founding = own == nil
      let (offered, changes, sentTo) = state.withLock { state in
        let offered: Members.Offered =
          isStopped() ? .finished(.stopped) : state.members.offer(id, at: version, member)
        var sentTo: Int?
        if offered == .joined || offered == .waiting, isWatched() {
          state.watched.insert(id)
          if offered == .joined { sentTo = state.sent }
        }
        // A founder that stopped leaves no one to write to.
        return (offered, founding && offered != .joined ? state.members.endIfEmpty() : .init(), sentTo)
      }
      if let sentTo { sent.advance(to: sentTo) }
      switch offered {
      case .joined: member.joined()
      case .waiting: break
      case .finished(.behind) where founding:
        // The broadcast ended before its founder offered (a session that joined it first left), and its
        // subscription, the founder's, with it: the founder goes on from what it holds.
        continuation.resume(returning: .left(at: version))
      case .finished(let outcome): continuation.resume(returning: outcome)
      }
      perform(changes)
      if founding && !changes.ended { send() }
    }
  }

  /// Session `id` is watched: while it is a member (now, or once it joins), its `sent` is kept current.
  /// - Complexity: O(1).
  func watch(_ id: ObjectIdentifier) {
    let advance = state.withLock { state in
      state.watched.insert(id)
      return state.members.members[id].map { ($0.sent, state.sent) }
    }
    if let (sent, version) = advance { sent.advance(to: version) }
  }

  /// Session `id` leaves: it is told ``Outcome/stopped`` (if it was a member or waiting), and nothing is
  /// written to it after this returns.
  func leave(_ id: ObjectIdentifier) {
    let (advances, changes) = state.withLock { state in
      let advances: SentAdvances = state.members.members[id].map { [($0.sent, state.sent)] } ?? []
      return (advances, state.members.leave(id))
    }
    perform(changes, advancing: advances)
  }

  /// Sends every batch of the subscription to the members, encoded once.
  private func send() {
    // A composed batch that cancelled out leaves the subscription's version as it was (G1), but members
    // then hold what the source shows at `version`: nothing is left to send them below it.
    subscription.onCancelledOut { [state] version in
      var advances: SentAdvances = []
      state.withLock { $0.advanceSent(to: version, into: &advances) }
      for (sent, version) in advances { sent.advance(to: version) }
    }
    Task { [self] in
      for await batch in subscription.batches {
        let frame = WireFrame(bytes: coder.encode(batch))
        let (from, to) = (batch.from, batch.to)
        let (changes, advances) = state.withLock { state in
          // What a member that fails this batch holds.
          let held = state.sent
          let changes = state.members.deliver(from: from, to: to) { $0.sink(frame) }
          var advances: SentAdvances = []
          for (member, outcome) in changes.finished {
            if case .left = outcome { advances.append((member.sent, held)) }
          }
          if !changes.ended { state.advanceSent(to: to, into: &advances) }
          return (changes, advances)
        }
        perform(changes, advancing: advances)
        if changes.ended { break }
      }
      let (advances, changes) = state.withLock { state in
        let advances: SentAdvances = state.members.members.values.map { ($0.sent, state.sent) }
        return (advances, state.members.end())
      }
      perform(changes, advancing: advances)
    }
  }

  /// Tells sessions what a step did to them, outside the lock: first the versions they were sent, then
  /// their joins and outcomes (a session told it left already holds what it was sent).
  private func perform(_ changes: Members.Changes, advancing advances: SentAdvances = []) {
    for (sent, version) in advances { sent.advance(to: version) }
    for member in changes.joined { member.joined() }
    for (member, outcome) in changes.finished { member.outcome.resume(returning: outcome) }
    if changes.ended { subscription.cancel() }
  }
}
