// What subscribing returns: the current snapshot and the stream of batches that starts right after it.

/// A subscription to a data source: its snapshot at subscription time and every change after it.
///
/// What is promised, in the manner of GRDB's `ValueObservation`:
///
/// - **Initial value.** ``snapshot`` is the source's state at ``version``, and ``batches`` begins
///   exactly after it: no change is missed and none is repeated, whatever writers do meanwhile (G5).
/// - **Order.** Batches arrive in version order; each batch's `from` is the previous batch's `to`, the
///   first one's is ``version`` (G1). Applying a batch to the previous state gives its snapshot (G2).
/// - **Coalescing.** Mutations made while a batch is prepared are composed into the next one; a
///   subscriber that does not keep up holds at most one pending batch, composed from what it last
///   received to the newest state when it asks (G6). A batch is never empty (G4).
/// - **Actor.** Batches are produced off the main actor (G9); the consumer receives them on whatever
///   actor iterates the stream.
/// - **Progress.** ``heldVersion`` is the newest version the consumer holds, and ``reached(_:)`` waits
///   for one (G13). The consumer holds a batch's `to` once it asks for the next batch (for a `for await`
///   loop: once the loop's body for that batch has run), and holds a version whose mutations cancelled
///   out (no batch carries it, G4) as soon as it has taken every batch before it. So waiting for any
///   version the source made, with the version a mutation returned, returns once the consumer has dealt
///   with it, and never hangs while the consumer keeps reading.
/// - **Ending.** The stream finishes, _exactly_ once, in any of these ways:
///   - ``cancel()`` is called (from any task, any number of times);
///   - the consuming task is cancelled;
///   - the subscription, its stream and its iterator are all dropped;
///   - the source is deallocated.
///
///   Ending releases everything the subscription held, and changes nothing for other subscribers or
///   writers (G7).
///
/// - Important: Breaking out of `for await batch in subscription.batches` does **not** end the
///   subscription while the `Subscription` value (or its ``batches``) is still held, for example in a
///   property: the source keeps it registered and composes for it. Call ``cancel()`` when you stop
///   reading.
///
/// One task consumes ``batches``: it is an `AsyncStream`, which supports a single iterator.
public struct Subscription<Section: SectionType>: Sendable {
  /// The source's state when subscribing.
  public let snapshot: Snapshot<Section>
  /// The version of ``snapshot``: the `from` of the first batch.
  public let version: Version
  /// The counter that numbers ``version``, the batches and ``heldVersion``: the source's, or the one it
  /// shares with its parent (``ProjectedVersions/parent``).
  public let counter: VersionCounter
  /// The batches after ``snapshot``.
  public let batches: AsyncStream<UpdateBatch<Section>>
  /// The newest version the consumer holds, for ``reached(_:)``.
  @usableFromInline let progress: HeldVersion
  @usableFromInline let onCancel: (@Sendable () -> Void)?
  /// Where a follower takes its next event from, instead of from ``batches``: the subscriber's mailbox in
  /// its hub. `nil` for a paced subscription or one not made by a hub.
  @usableFromInline let mailbox: SubscriberMailbox<Section>?

  /// Follows the subscription: hands each event to `handle` on the caller's isolation, one at a time, and
  /// asks for the next once `handle` returned `true`. Derived sources, observed models, view data sources
  /// and the wire's senders follow their subscriptions this way.
  ///
  /// - The follower's progress is the subscription's (G13): it holds an event's version once it asks for
  ///   the next, so ``reached(_:)`` waits for what `handle` dealt with, with no bookkeeping of
  ///   its own.
  /// - With `announcingHeld`, a version the follower comes to hold with no batch (its mutations cancelled
  ///   out, G4) is an event too, `.held(version)`, in order with the batches and held once dealt with: a
  ///   projection numbered by its parent holds it too. Otherwise such a version is held without an event.
  /// - With a `sink` (a subscription of the fan-out engine, not paced), the follower parks with it between
  ///   events: each shared batch that follows what it holds is written to the sink by one of the hub's
  ///   writers, outside every lock, and held at once, without waking it (one already waiting when it asks is written to the sink by its own
  ///   task); `handle` gets only a batch the sink refused or one composed for it.
  ///   `parked` is called each time it parks so.
  /// - `lane` places the follower in each publish's order (``SubscriptionLane``), read each time it asks
  ///   for an event: a follower whose batches cost more than a write takes a later one.
  /// - It ends, and ends the subscription, when `handle` returns `false` or throws, when the task is
  ///   cancelled, or when the subscription ends. A paced subscription, or one not made by the fan-out
  ///   engine, hands over its batches only.
  /// - Complexity: O(1) per event besides `handle` and a catch-up's composition, which runs off the
  ///   caller's actor.
  package func follow(
    isolation: isolated (any Actor)? = #isolation, announcingHeld: Bool = false,
    sinkingInto sink: SubscriptionSink<Section>? = nil, lane: () -> SubscriptionLane = { .first },
    parked: (@Sendable () -> Void)? = nil, _ handle: (SubscriptionEvent<Section>) async throws -> Bool
  ) async rethrows {
    defer { cancel() }
    // One handler for the whole loop, not one per event: registering one per event cost 6 µs a follower
    // (the wire's senders on this loop, tried: `queries-1000-clients` 14.1 ms for 1,000 sessions, 7.9
    // without it).
    try await withTaskCancellationHandler {
      while let event = await nextEvent(
        announcingHeld: announcingHeld, sinkingInto: sink, lane: lane(), parked: parked)
      {
        guard try await handle(event) else { return }
      }
    } onCancel: {
      cancel()
    }
  }

  /// The follower's next event, or `nil` when the subscription ends; see
  /// ``follow(isolation:announcingHeld:sinkingInto:lane:parked:_:)``, which ends the subscription when its task
  /// is cancelled.
  @usableFromInline
  func nextEvent(
    announcingHeld: Bool, sinkingInto sink: SubscriptionSink<Section>?, lane: SubscriptionLane = .first,
    parked: (@Sendable () -> Void)?
  ) async -> SubscriptionEvent<Section>? {
    guard let mailbox else {
      var iterator = batches.makeAsyncIterator()
      return await iterator.next().map { .batch($0) }
    }
    return await mailbox.nextEvent(sink: sink, lane: lane, parkedWithSink: parked, announcing: announcingHeld)
  }

  /// Follows the subscription as ``follow(isolation:announcingHeld:sinkingInto:lane:parked:_:)`` does with
  /// a sink, but with no task while parked: the caller's task follows until the follower first parks, and
  /// returns then; a later delivery for it (a batch the sink refused, a catch-up, the end) starts a task
  /// that handles it and follows on until it parks again. A server that holds many idle followers holds
  /// their sinks and state only.
  ///
  /// `handle` runs in those tasks, one event at a time, never two at once. `ended` is called once, when the
  /// following ends: `handle` returned `false` or threw, or the subscription ended. A paced subscription,
  /// or one not made by the fan-out engine, is followed in the caller's task throughout, its batches handed
  /// to `handle`, and this returns when it ends.
  /// - Complexity: O(1) per event besides `handle` and a catch-up's composition, which runs off the
  ///   caller's actor; a task started per wake, none per batch the sink takes.
  package func follow(
    parkingWith sink: @escaping SubscriptionSink<Section>,
    lane: @escaping @Sendable () -> SubscriptionLane = { .first }, parked: (@Sendable () -> Void)? = nil,
    _ handle: @escaping @Sendable (SubscriptionEvent<Section>) async throws -> Bool,
    ended: @escaping @Sendable () -> Void
  ) async {
    guard let mailbox else {
      _ = try? await follow { try await handle($0) }
      ended()
      return
    }
    await ParkingFollower(
      subscription: self, mailbox: mailbox, sink: sink, lane: lane, parked: parked, handle: handle,
      ended: ended
    ).follow(from: nil)
  }

  /// A subscription from parts that keep none of the promises above by themselves: for tests that
  /// model a wrong source. Its progress stays at `version` until ``cancel()``. Every other subscription
  /// comes from the package's fan-out engine, which every source, and a user's own through
  /// ``Broadcaster``, publishes through.
  @inlinable
  package init(
    snapshot: Snapshot<Section>, version: Int, counter: VersionCounter = VersionCounter(),
    batches: AsyncStream<UpdateBatch<Section>>, onCancel: (@Sendable () -> Void)? = nil
  ) {
    let progress = HeldVersion(version)
    self.snapshot = snapshot
    self.version = Version(version, of: counter)
    self.counter = counter
    self.batches = batches
    self.progress = progress
    self.onCancel = {
      onCancel?()
      progress.finish()
    }
    self.mailbox = nil
  }

  @inlinable
  init(
    snapshot: Snapshot<Section>, version: Int, counter: VersionCounter,
    batches: AsyncStream<UpdateBatch<Section>>, progress: HeldVersion,
    onCancel: @escaping @Sendable () -> Void, mailbox: SubscriberMailbox<Section>?
  ) {
    self.snapshot = snapshot
    self.version = Version(version, of: counter)
    self.counter = counter
    self.batches = batches
    self.progress = progress
    self.onCancel = onCancel
    self.mailbox = mailbox
  }

  /// The newest version the consumer holds: ``version`` at first, then the `to` of each batch once the
  /// consumer asks for the one after it, and versions that cancelled out once it has taken what precedes
  /// them (G13).
  /// - Complexity: O(1).
  public var heldVersion: Version { Version(progress.current, of: counter) }

  /// Returns once the consumer holds `version` or a later one (see ``heldVersion``): for the version a
  /// mutation returned, once the consumer has taken every batch through it, also when that version's
  /// changes cancelled out and no batch carries it (G13).
  ///
  /// ```swift
  /// let version = try await source.appendItems([order], toSection: "open")
  /// if try await subscription.reached(version) { /* the consumer's loop has handled the order */ }
  /// ```
  ///
  /// - Returns: `true` once `version` is held; `false` when the subscription ends first (``cancel()``,
  ///   the consumer stopped, the source is gone) or the waiting task is cancelled.
  /// - Throws: ``VersionError/Code-swift.enum/otherCounter``, at once and without waiting, when another
  ///   counter than ``counter`` made `version`: a parent's version asked of a projection that numbers its
  ///   own, for example.
  /// - Important: Do not wait from the consumer's own loop for a version after the batch it is handling:
  ///   the consumer holds that batch only once it asks for the next.
  /// - Complexity: O(1) when `version` is held; otherwise O(*w*) to register, for *w* waiting tasks.
  public func reached(_ version: Version) async throws(VersionError) -> Bool {
    try VersionError.check(version, against: counter)
    return await progress.reached(version.number)
  }

  /// Ends the subscription: ``batches`` finishes (a waiting `for await` loop ends) and the source
  /// releases the subscriber.
  ///
  /// Idempotent, safe from any task, before, during or after iteration; other subscribers and writers
  /// are not affected (G7).
  ///
  /// - Complexity: O(1) expected, whatever the number of the source's subscribers.
  public func cancel() { onCancel?() }
}

/// Ends a subscription when its stream is dropped: the stream's closures own the token.
@usableFromInline
final class SubscriptionToken<Section: SectionType>: Sendable {
  @usableFromInline let hub: SubscriptionHub<Section>
  @usableFromInline let mailbox: SubscriberMailbox<Section>

  @inlinable
  init(hub: SubscriptionHub<Section>, mailbox: SubscriberMailbox<Section>) {
    self.hub = hub
    self.mailbox = mailbox
  }

  deinit { hub.cancel(mailbox) }
}

extension SubscriptionHub {
  /// Registers a subscriber that holds `start`, or the newest published state when `start` is `nil`, and
  /// returns its subscription.
  @inlinable
  func subscribe(at start: (version: Int, snapshot: Snapshot<Section>)?, pacing: Pacing)
    -> Subscription<Section>
  {
    let subscription = subscribe(
      start.map { .at(version: $0.version, snapshot: $0.snapshot) } ?? .newest, pacing: pacing)
    if let subscription { return subscription }
    let (version, snapshot) = start ?? newest
    // The hub has finished: an ended subscription, whose progress is over too.
    let ended = Subscription(
      snapshot: snapshot, version: version, counter: counter, batches: AsyncStream { $0.finish() })
    ended.cancel()
    return ended
  }

  /// Resumes a subscriber that holds `version` when the history retains it (G11); otherwise registers
  /// it at the newest published state, as a reset.
  /// - Complexity: O(log *v*) for *v* retained versions, O(*k*) for the ids changed since, O(*s*).
  @inlinable
  func resume(from version: Int, pacing: Pacing) -> Resumption<Section> {
    if let subscription = subscribe(.resuming(from: version), pacing: pacing) {
      return .resumed(subscription)
    }
    return .reset(subscribe(at: nil, pacing: pacing))
  }

  /// Resumes a subscriber that holds `version`, older than the history, whose state `snapshot` the source
  /// derived again: its first batch is a full diff to the newest. A reset when the hub has finished.
  /// - Complexity: O(*s*); the first batch is a full diff, off the caller's actor.
  @inlinable
  func resume(from version: Int, derived snapshot: Snapshot<Section>, pacing: Pacing) -> Resumption<Section> {
    if let subscription = subscribe(.derived(version: version, snapshot: snapshot), pacing: pacing) {
      return .resumed(subscription)
    }
    return .reset(subscribe(at: nil, pacing: pacing))
  }

  /// The subscription of a subscriber registered from `start`; `nil` when it was not registered.
  @inlinable
  func subscribe(_ start: Start, pacing: Pacing) -> Subscription<Section>? {
    guard let (mailbox, version, snapshot) = register(start) else { return nil }
    let token = SubscriptionToken(hub: self, mailbox: mailbox)
    let gate = pacing.makeGate?()
    let batches = AsyncStream<UpdateBatch<Section>>(
      unfolding: {
        if let gate {
          // Asking for the next batch: the consumer holds what it took (G13), also while the gate waits.
          token.mailbox.asked()
          await gate.wait()
        }
        let batch = await token.mailbox.next()
        if batch != nil { gate?.delivered() }
        return batch
      },
      onCancel: { token.hub.cancel(token.mailbox) })
    // The hub and mailbox, not the token: a held Subscription must not keep its stream alive. A paced
    // subscription's follower reads its stream, through the gate.
    return Subscription(
      snapshot: snapshot, version: version, counter: counter, batches: batches, progress: mailbox.progress,
      onCancel: { [hub = self] in hub.cancel(mailbox) }, mailbox: gate == nil ? mailbox : nil)
  }
}

/// A follower of a subscription that holds no task while parked with its sink
/// (``Subscription/follow(parkingWith:lane:parked:_:ended:)``): each wake starts a task that runs
/// ``follow(from:)``.
struct ParkingFollower<Section: SectionType>: Sendable {
  let subscription: Subscription<Section>
  let mailbox: SubscriberMailbox<Section>
  let sink: SubscriptionSink<Section>
  let lane: @Sendable () -> SubscriptionLane
  let parked: (@Sendable () -> Void)?
  let handle: @Sendable (SubscriptionEvent<Section>) async throws -> Bool
  let ended: @Sendable () -> Void

  /// Handles `woken` (a delivery handed over while parked), then asks for events and handles them until
  /// the follower parks (it returns then, and its task ends) or the following ends.
  func follow(from woken: SubscriptionDelivery<Section>?) async {
    // A delivery handed over later was offered to the sink first (and refused); one waiting when the
    // follower asks was not.
    var next = woken.map { (delivery: $0, waiting: false) }
    while true {
      if next == nil {
        let delivery = mailbox.park(sink: sink, lane: lane(), parkedWithSink: parked) { delivery in
          Task.schedulable("following a subscription") { await follow(from: delivery) }
        }
        // Parked: the wake's task goes on from here.
        guard let delivery else { return }
        next = (delivery, true)
      }
      guard let (delivery, waiting) = next else { return }
      next = nil
      switch await mailbox.event(of: delivery, waiting: waiting, sink: sink) {
      case .again:
        continue
      case .end:
        break
      case .event(let event):
        if (try? await handle(event)) == true { continue }
      }
      subscription.cancel()
      ended()
      return
    }
  }
}

/// What a follower's loop receives from its subscription (``Subscription/follow(isolation:announcingHeld:sinkingInto:lane:parked:_:)``).
@usableFromInline
package enum SubscriptionEvent<Section: SectionType>: Sendable {
  /// The next batch, from the version the follower holds (G1).
  case batch(UpdateBatch<Section>)
  /// The follower holds this version, which no batch carries: its mutations cancelled out (G4), and its
  /// state is the one the follower shows.
  case held(Int)
}
