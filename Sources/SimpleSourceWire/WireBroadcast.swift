// One view's batches, encoded once and written to every session that follows it through a synchronous
// sink: what makes a client cost the server a write, not a task.

public import Foundation
import SimpleSourceCore

/// One message's bytes as a broadcast hands them to every session's ``WireSink``: the same object for
/// every client of a batch, so a transport makes its own form of the bytes (a framed buffer) once.
public final class WireFrame: Sendable {
  /// The message's JSON bytes.
  public let bytes: Data
  private let made = Locked<(any Sendable)?>(nil)

  /// A frame of `bytes`: a broadcast makes one per batch; a transport's tests make their own.
  public init(bytes: Data) { self.bytes = bytes }

  /// The transport's form of ``bytes``, made by `make` the first time it is asked for and shared after.
  /// A transport asks for one form; a second type made from the same frame is made again each time.
  /// - Complexity: O(1) after the first call; `make` once.
  public func form<Form: Sendable>(_ make: (Data) -> Form) -> Form {
    made.withLock { held in
      if let form = held as? Form { return form }
      let form = make(bytes)
      held = form
      return form
    }
  }
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
  /// The versions it was sent, for ``WireSession/settled()`` and edits' answers.
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
final class WireBroadcast<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  typealias Outcome = BroadcastOutcome
  typealias Member = BroadcastMember

  private let state: Locked<BroadcastMembers<ObjectIdentifier, Member>>
  private let subscription: Subscription<Section>
  private let coder: WireCoder

  /// A broadcast of `subscription`'s batches in `coder`'s format; it starts sending when its first
  /// session joins.
  init(subscription: Subscription<Section>, version: Int, coder: WireCoder) {
    state = Locked(BroadcastMembers(version: version))
    self.subscription = subscription
    self.coder = coder
  }

  /// Whether the broadcast ended: a session that finds it so makes a new one.
  var isEnded: Bool { state.withLock(\.isEnded) }

  /// Session `id`, holding `version`, joins when it holds what the broadcast delivered (at once, or once
  /// the broadcast reaches it); returns how its membership ended. `own` is its own subscription,
  /// cancelled when it joins; `nil` for the founder, the session whose subscription the broadcast took,
  /// whose offer starts the broadcast (it is at the broadcast's version, and nothing was delivered yet).
  ///
  /// `isStopped` is read under the broadcast's lock: a session that stopped before is not offered (it
  /// gets ``Outcome/stopped``), one that stops after leaves with ``leave(_:)``. A founder that finds the
  /// broadcast ended (a session that joined first left) is told to leave at `version`: its subscription
  /// ended with the broadcast.
  func follow(
    _ id: ObjectIdentifier, at version: Int, own: Subscription<Section>?, sent: AppliedVersion,
    joins: AppliedVersion, sink: @escaping WireSink, isStopped: @Sendable () -> Bool
  ) async -> Outcome {
    let cancelOwn: (@Sendable () -> Void)? = if let own { { own.cancel() } } else { nil }
    return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
      let member = Member(
        sink: sink, sent: sent, joins: joins, outcome: continuation, cancelOwn: cancelOwn)
      let founding = own == nil
      let (offered, changes) = state.withLock { state in
        let offered: BroadcastMembers<ObjectIdentifier, Member>.Offered =
          isStopped() ? .finished(.stopped) : state.offer(id, at: version, member)
        // A founder that stopped leaves no one to write to.
        return (offered, founding && offered != .joined ? state.endIfEmpty() : .init())
      }
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

  /// Session `id` leaves: it is told ``Outcome/stopped`` (if it was a member or waiting), and nothing is
  /// written to it after this returns.
  func leave(_ id: ObjectIdentifier) {
    perform(state.withLock { $0.leave(id) })
  }

  /// Sends every batch of the subscription to the members, encoded once.
  private func send() {
    // A composed batch that cancelled out leaves the subscription's version as it was (G1), but members
    // then hold what the source shows at `version`: nothing is left to send them below it.
    subscription.onCancelledOut { [state] version in
      state.withLock { state in
        for member in state.members.values { member.sent.advance(to: version) }
      }
    }
    Task { [self] in
      for await batch in subscription.batches {
        let frame = WireFrame(bytes: coder.encode(batch))
        let (from, to) = (batch.from, batch.to)
        let changes = state.withLock { state in
          state.deliver(from: from, to: to) { member in
            guard member.sink(frame) else { return false }
            member.sent.advance(to: to)
            return true
          }
        }
        perform(changes)
        if changes.ended { break }
      }
      perform(state.withLock { $0.end() })
    }
  }

  /// Tells sessions what a step did to them, outside the lock.
  private func perform(_ changes: BroadcastMembers<ObjectIdentifier, Member>.Changes) {
    for member in changes.joined { member.joined() }
    for (member, outcome) in changes.finished { member.outcome.resume(returning: outcome) }
    if changes.ended { subscription.cancel() }
  }
}
