// The pure state machine of one subscriber: what it has received, whether it waits, what it gets next.

/// The versions a subscriber knows of, and their order: what it received, took and holds, and what the
/// source has published, reached with no batch, or cancelled out.
///
/// One value, so that their order is kept in one place: `received` ≤ `taken`, each ≤ ``heldVersion``;
/// `progress` and `announced` never pass what the consumer holds.
@usableFromInline
struct SubscriberVersions: Sendable {
  /// The `to` of the last batch received (or the subscription's version): the next batch's `from`.
  @usableFromInline var received: Int
  /// The newest version known to hold the same content as the subscriber's state (≥ ``received``): a
  /// composed batch that turned out empty advances this, not ``received`` (G1, G4).
  @usableFromInline var taken: Int
  /// The newest version of the source: published, or cancelled out to.
  @usableFromInline var newest: Int
  /// The newest version whose state is the newest published one, reached by mutations that cancelled out
  /// with no subscriber between them (no batch, G4); ≤ ``newest`` when there was none since.
  @usableFromInline var unbatched: Int
  /// The newest cancelled-out version: version `to` holds the state of the published version `since`, so
  /// a subscriber at `to` follows the batches from `since` by their ids.
  @usableFromInline var cancelledOut: (since: Int, to: Int)?
  /// The newest held version reported to the subscription's progress (G13).
  @usableFromInline var progress: Int
  /// Whether the consumer is told, as a delivery (``SubscriptionDelivery/announce(_:)``), each version it
  /// comes to hold with no batch, before its progress holds it: a follower that republishes such versions
  /// (a projection numbered by its parent). Set by the consumer's first request that asks for it.
  @usableFromInline var announces = false
  /// The newest version announced to the consumer (``announces``).
  @usableFromInline var announced: Int

  @inlinable
  init(received: Int, newest: Int, unbatched: Int) {
    self.received = received
    taken = received
    self.newest = newest
    self.unbatched = unbatched
    progress = received
    announced = received
  }

  /// The newest version the consumer holds when it asks for a batch (G13): what it took, and, once that
  /// is the newest published state, the versions after it whose mutations cancelled out.
  @inlinable @inline(__always)
  var held: Int { taken >= newest ? max(taken, unbatched) : taken }

  /// The newest version the consumer's progress may hold: ``held``, except that a consumer told of
  /// versions held with no batch (``announces``) holds one only once it was announced and asked again.
  @inlinable @inline(__always)
  var progressCeiling: Int { announces ? min(held, max(received, announced)) : held }

  /// Whether the subscriber's state is that of `version`: the newest version with its state (``taken``),
  /// or the version a cancelling out to ``taken`` came from.
  @inlinable @inline(__always)
  func holdsState(of version: Int) -> Bool {
    version == taken || (cancelledOut.map { $0.to == taken && $0.since == version } ?? false)
  }

  /// The subscriber took a batch, or was handed its composition, ending at `version`.
  @inlinable @inline(__always)
  mutating func took(through version: Int) {
    received = version
    taken = max(taken, version)
  }
}

/// One subscriber's view of its data source: what it received last, whether its consumer waits, and what
/// to hand over next.
///
/// Plain synchronous code: every event returns the action to perform, and the storage
/// (``SubscriberMailbox``) performs it after releasing its lock. `Waiter` is the suspended consumer
/// (a continuation in production, anything in tests).
///
/// A consumer may park with a *sink* (see ``SubscriptionSink``): while it is parked, each shared batch that
/// starts at the version it holds is written to the sink by a writer of the hub, *outside every lock*
/// (``startWrite()``, then ``wrote(took:)``), and the consumer holds it at once without waking; the first
/// batch the sink refuses (or one the consumer must compose) wakes the consumer instead, which hands it
/// over by itself and parks with its sink again. While a write is out (``Consumer/writing``) every
/// other event is only recorded: the writer, done, hands the consumer what came meanwhile, so the sink is
/// never written by two at once and the consumer never runs beside it. A socket writer is thus a
/// subscriber like any other, costing a call per batch rather than a task.
///
/// Memory is bounded (G6): the newest published batch and the subscriber's last state; never a queue.
@usableFromInline
struct SubscriberStateMachine<Section: SectionType, Waiter: Sendable>: Sendable {
  @usableFromInline typealias ItemID = Section.Item.ID
  @usableFromInline typealias Delivery = SubscriptionDelivery<Section>
  @usableFromInline typealias Sink = SubscriptionSink<Section>

  /// What the subscriber holds of its state: its initial snapshot, or the last shared batch (one
  /// reference to retain, where a snapshot is several).
  @usableFromInline
  enum Held: Sendable {
    case snapshot(Snapshot<Section>)
    case batch(UpdateBatch<Section>)
  }

  /// Where the consumer is. Its waiter (``waiter``) is held only while it is parked, and handed out once;
  /// its sink (``sink``) while it is parked with one.
  ///
  /// The waiter and the sink are kept beside the phase, not in it: a batch written to a sink moves the
  /// consumer through three phases (queued, writing, parked again), and a phase with them as payloads
  /// would retain and release both at each step.
  @usableFromInline
  enum Consumer: Sendable, Equatable {
    /// Running: taking what it was handed, or about to ask. No waiter, no sink.
    case running
    /// Parked without a sink: woken for its next delivery. A waiter, no sink.
    case waiting
    /// Parked with a sink: a shared batch that starts at the version it holds is written to the sink.
    /// `queued` once it was handed to the hub's writers (``queueWrite()``), until one starts the write.
    /// A waiter and a sink.
    case parked(queued: Bool)
    /// Parked, with the batch it holds (``held``) being written to its sink outside the lock: events
    /// are recorded, and ``wrote(took:)`` acts on them. A waiter and a sink.
    case writing
    /// Ended while a write was out: the writer resumes the waiter with ``SubscriptionDelivery/end``. A
    /// waiter, no sink.
    case endedWhileWriting
    /// The subscription ended. No waiter, no sink.
    case ended

    /// Whether the phase holds a waiter.
    @inlinable
    var holdsWaiter: Bool {
      switch self {
      case .running, .ended: false
      case .waiting, .parked, .writing, .endedWhileWriting: true
      }
    }

    /// Whether the phase holds a sink.
    @inlinable
    var holdsSink: Bool {
      switch self {
      case .parked, .writing: true
      case .running, .waiting, .endedWhileWriting, .ended: false
      }
    }
  }

  @usableFromInline var consumer = Consumer.running
  /// The parked consumer's waiter, while ``consumer`` holds one (``Consumer/holdsWaiter``).
  @usableFromInline var waiter: Waiter?
  /// The parked consumer's sink, while ``consumer`` holds one (``Consumer/holdsSink``).
  @usableFromInline var sink: Sink?
  @usableFromInline var versions: SubscriberVersions
  @usableFromInline var held: Held
  /// Ids force-refreshed in published batches this subscriber has not received yet.
  @usableFromInline var refreshing: Set<ItemID> = []
  /// When the subscriber missed batches: the version whose state it holds (or will hold once a catch-up
  /// being composed is delivered) when it started missing them, and the ids they touched (see
  /// ``UpdateBatch/touchedIDs``), `nil` once one of them could not say. With these a catch-up batch is
  /// derived from the touched ids instead of a full diff, whatever the timing of diffs and deliveries: a
  /// composition starts a new record at the version it composes to, so batches published while it is
  /// diffed are remembered from there.
  @usableFromInline var missed: (from: Int, touched: Set<ItemID>?)?
  /// The newest published batch.
  @usableFromInline var newest: UpdateBatch<Section>?
  /// The newest snapshot of the source when no published batch carries it (the subscription's start, or
  /// mutations that cancelled out); `nil` when it is ``newest``'s, so that a publish stores one reference
  /// per subscriber, not two. Read through ``newestSnapshot``.
  @usableFromInline var newestWithoutBatch: Snapshot<Section>?
  /// Where the subscriber stands in a publish's order, its consumer woken or its sink written
  /// (``SubscriptionLane``): kept here, under the subscriber's lock, for the hub; the machine never reads it.
  @usableFromInline var lane = SubscriptionLane.first

  /// A subscriber holding `snapshot` at `version`, which may be newer than the newest published batch
  /// when the source has mutations still being diffed, or older when it resumes (G11): then
  /// `missedTouched` holds the ids changed since `version`, when known, and `missedRefreshing` the ids the
  /// batches since force-refreshed.
  @inlinable
  init(
    version: Int, snapshot: Snapshot<Section>, newest: UpdateBatch<Section>?, newestVersion: Int,
    newestSnapshot: Snapshot<Section>, unbatchedVersion: Int = 0, missedTouched: Set<ItemID>? = nil,
    missedRefreshing: Set<ItemID> = []
  ) {
    versions = SubscriberVersions(received: version, newest: newestVersion, unbatched: unbatchedVersion)
    self.held = .snapshot(snapshot)
    self.newest = newest
    newestWithoutBatch = newestSnapshot
    if version < newestVersion {
      missed = (version, missedTouched)
      refreshing = missedRefreshing
    }
  }

  /// The `to` of the last batch received (or the subscription's version).
  @inlinable
  var version: Int { versions.received }

  /// The newest snapshot of the source.
  @inlinable
  var newestSnapshot: Snapshot<Section> {
    if let newestWithoutBatch { return newestWithoutBatch }
    guard let newest else { preconditionFailure("SimpleSource: a subscriber with no newest snapshot") }
    return newest.snapshot
  }

  /// See ``SubscriberVersions/held``.
  @inlinable
  var heldVersion: Int { versions.held }

  /// Whether the subscription ended (a write may still be out).
  @inlinable
  var isEnded: Bool {
    switch consumer {
    case .ended, .endedWhileWriting: true
    default: false
    }
  }

  /// The snapshot at ``version``.
  @inlinable
  var snapshot: Snapshot<Section> {
    switch held {
    case .snapshot(let snapshot): snapshot
    case .batch(let batch): batch.snapshot
    }
  }

  /// Whether the consumer is parked, with a sink or without, and no write holds it.
  @inlinable @inline(__always)
  var isParked: Bool {
    switch consumer {
    case .waiting, .parked: true
    default: false
    }
  }

  /// Wakes the parked consumer: it runs again, its waiter handed out (to be resumed by the caller,
  /// outside the lock) and its sink dropped.
  @inlinable @inline(__always)
  mutating func wakeConsumer() -> Waiter {
    consumer = .running
    sink = nil
    return handOutWaiter()
  }

  /// The consumer's waiter, handed out once: ``waiter`` is `nil` after.
  @inlinable @inline(__always)
  mutating func handOutWaiter() -> Waiter {
    guard let waiter = waiter.take() else {
      preconditionFailure("SimpleSource: a parked consumer with no waiter")
    }
    return waiter
  }

  /// The version the consumer holds, when it is newer than the last one reported: the caller reports it
  /// (outside the lock). `nil` when nothing is new, the subscription ended, or a write is out.
  @inlinable @inline(__always)
  mutating func newlyHeld() -> Int? {
    switch consumer {
    case .ended, .endedWhileWriting, .writing: return nil
    default: break
    }
    let held = versions.progressCeiling
    guard held > versions.progress else { return nil }
    versions.progress = held
    return held
  }

  /// The consumer asks for its next batch: the version it now holds, when newer than the last one
  /// reported (see ``newlyHeld()``). With `announcing`, it is told of versions held with no batch from now
  /// on (``SubscriberVersions/announces``), and holds one only once it was announced.
  @inlinable @inline(__always)
  mutating func asks(announcing: Bool) -> Int? {
    if announcing { versions.announces = true }
    return newlyHeld()
  }

  /// For a consumer told of versions held with no batch (``SubscriberVersions/announces``): the newest
  /// such version, when it has not been announced; `nil` otherwise.
  @inlinable @inline(__always)
  mutating func announcement() -> Int? {
    guard versions.announces, !isEnded else { return nil }
    let held = versions.held
    guard held > max(versions.received, versions.announced) else { return nil }
    versions.announced = held
    return held
  }

  /// What a version reached with no batch asks of the caller, outside the lock.
  @usableFromInline
  enum Reached {
    /// The parked consumer holds this version: report it to its progress, without waking it.
    case report(Int)
    /// Wake the parked consumer with this delivery (an ``SubscriptionDelivery/announce(_:)``).
    case resume(Waiter, Delivery)
  }

  /// Mutations after the newest published version cancelled out with no subscriber between them: the
  /// source is at `version` with the state ``newestSnapshot``. When the consumer is parked (it has taken
  /// everything), it holds `version`: reported without waking it, or, when it is told of such versions
  /// (``SubscriberVersions/announces``), woken with the announcement. `nil` when there is nothing to do
  /// (a write that is out reports it when it is done).
  @inlinable
  mutating func reachedWithoutBatch(to version: Int) -> Reached? {
    guard version > versions.unbatched else { return nil }
    versions.unbatched = version
    guard isParked else { return nil }
    if let announced = announcement() { return .resume(wakeConsumer(), .announce(announced)) }
    return newlyHeld().map { .report($0) }
  }

  /// The consumer asks for its next batch. Returns the delivery to hand over now, or `nil` after storing
  /// `waiter` to be resumed by a later ``publish(_:refreshing:)``, ``reachedWithoutBatch(to:)``,
  /// ``wrote(took:)`` or ``end()``. With a `sink`, shared batches are written to it while the consumer
  /// stays parked (see ``startWrite()``). A version held with no batch is announced first
  /// (``SubscriberVersions/announces``); the caller reports what ``newlyHeld()`` says before it asks,
  /// under the same lock.
  @inlinable
  mutating func next(waiter: Waiter, sink: Sink? = nil) -> Delivery? {
    if isEnded { return .end }
    guard case .running = consumer else {
      preconditionFailure("SimpleSource: a subscription's stream has one consumer at a time")
    }
    if let announced = announcement() { return .announce(announced) }
    let delivery = pending()
    if delivery == nil {
      self.waiter = waiter
      self.sink = sink
      consumer = sink == nil ? .waiting : .parked(queued: false)
    }
    return delivery
  }

  /// Whether a writer should call ``startWrite()``: the consumer is parked with a sink, and the newest
  /// batch starts at the version it holds and is not taken.
  @inlinable @inline(__always)
  var isWriteDue: Bool {
    guard case .parked = consumer, let newest else { return false }
    return versions.taken < versions.newest && newest.fromNumber == versions.received
  }

  /// Whether the caller hands the subscriber to the hub's writers, after a publish: a write is due
  /// (``isWriteDue``) and the subscriber is not queued already. It is queued until a writer claims it.
  @inlinable @inline(__always)
  mutating func queueWrite() -> Bool {
    guard isWriteDue, consumer == .parked(queued: false) else { return false }
    consumer = .parked(queued: true)
    return true
  }

  /// A writer takes the write that is due (``isWriteDue``): the consumer takes the newest batch, returned,
  /// which the caller writes to `sink` *after releasing the lock*, then reports with ``wrote(took:)``.
  /// `nil` when no write is due (another writer made it, or the consumer was woken).
  ///
  /// Returns no tuple: the writers run unspecialized (a source is generic over its section), where a
  /// tuple of generic types costs a metadata lookup per call.
  @inlinable @inline(__always)
  mutating func startWrite(sink: inout Sink?) -> UpdateBatch<Section>? {
    guard isWriteDue, let newest else { return nil }
    takeShared(newest)
    consumer = .writing
    sink = self.sink
    return newest
  }

  /// ``startWrite(sink:)``, as a pair.
  @inlinable
  mutating func startWrite() -> (Sink, UpdateBatch<Section>)? {
    var sink: Sink?
    guard let batch = startWrite(sink: &sink), let sink else { return nil }
    return (sink, batch)
  }

  /// A batch published to a consumer parked with a sink that holds the batch's `from`: it becomes the
  /// newest, and the subscriber is queued for a writer (what ``publish(_:refreshing:)`` then
  /// ``queueWrite()`` do, in the case a sink's subscriber is in almost always). `false`, changing nothing,
  /// otherwise.
  @inlinable @inline(__always)
  mutating func publishToSink(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID>) -> Bool {
    guard consumer == .parked(queued: false), batch.fromNumber == versions.received,
      versions.taken < batch.toNumber
    else { return false }
    newest = batch
    versions.newest = batch.toNumber
    newestWithoutBatch = nil
    // Kept in case the write is overtaken by a catch-up; taking the batch clears them.
    if !refreshing.isEmpty { self.refreshing.formUnion(refreshing) }
    consumer = .parked(queued: true)
    return true
  }

  /// What a writer does once its write is done, outside the lock, in this order. No tuples (see
  /// ``startWrite(sink:)``).
  @usableFromInline
  struct Wrote {
    /// The version the consumer now holds, to report to its progress.
    @usableFromInline var held: Int?
    /// The consumer to wake, and its delivery.
    @usableFromInline var waiter: Waiter?
    @usableFromInline var delivery: Delivery?
    /// The next write, when a newer batch was published meanwhile and is due, and its sink.
    @usableFromInline var next: UpdateBatch<Section>?
    @usableFromInline var sink: Sink?

    @inlinable
    init(held: Int? = nil) { self.held = held }

    @inlinable
    init(waking waiter: Waiter, with delivery: Delivery) { (self.waiter, self.delivery) = (waiter, delivery) }

    /// The consumer to wake, with its delivery.
    @inlinable
    var resume: (Waiter, Delivery)? { waiter.flatMap { waiter in delivery.map { (waiter, $0) } } }
  }

  /// The write started by ``startWrite(sink:)`` is done: the sink took the batch (the consumer holds it,
  /// G13, and stays parked) or refused it (the consumer wakes with it and hands it over by itself).
  /// Whatever arrived meanwhile is acted on now: an end wakes the consumer with it, a newer shared batch is
  /// the next write, a catch-up or an announcement wakes it.
  @inlinable @inline(__always)
  mutating func wrote(took: Bool) -> Wrote {
    switch consumer {
    case .endedWhileWriting:
      consumer = .ended
      return Wrote(waking: handOutWaiter(), with: .end)
    case .writing:
      guard took else {
        guard case .batch(let batch) = held else { preconditionFailure("a write of no batch") }
        return Wrote(waking: wakeConsumer(), with: .batch(batch))
      }
      consumer = .parked(queued: false)
      var outcome = Wrote(held: newlyHeld())
      // Almost always nothing came meanwhile: the consumer stays parked.
      guard versions.taken < versions.newest || versions.announces else { return outcome }
      if let announced = announcement() {
        (outcome.waiter, outcome.delivery) = (wakeConsumer(), .announce(announced))
      } else if let next = startWrite(sink: &outcome.sink) {
        outcome.next = next
      } else if let delivery = pending() {
        (outcome.waiter, outcome.delivery) = (wakeConsumer(), delivery)
      }
      return outcome
    default:
      preconditionFailure("SimpleSource: a write reported with none out")
    }
  }

  /// The consumer delivered a batch it composed; it now holds `snapshot` at `version`.
  @inlinable
  mutating func delivered(version: Int, snapshot: Snapshot<Section>) {
    guard !isEnded, version > versions.received else { return }
    versions.took(through: version)
    held = .snapshot(snapshot)
    // The record started by the composition holds what was published since; with nothing published, the
    // next batch starts at `version` and is shared.
    if versions.newest == version { missed = nil }
  }

  /// A batch was published. Returns the waiter to resume, with its delivery, if the consumer waits
  /// without a sink, or parks with one and the batch is not its next shared one; when that batch is due
  /// to its sink, nothing: the caller hands the subscriber to a writer (``isWriteDue``).
  @inlinable
  mutating func publish(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID>) -> (Waiter, Delivery)? {
    let previous = newest
    newest = batch
    versions.newest = batch.toNumber
    newestWithoutBatch = nil
    guard !isEnded, versions.taken < batch.toNumber else { return nil }
    if batch.fromNumber != versions.received {
      // It will compose. A subscriber whose state is that of the `from` of the first batch it missed is
      // caught up from the batches' ids: that is `taken`, the newest version with its state (after a
      // composition that turned out empty, newer than `received`). One that holds a snapshot no batch
      // started from (newer than the published batches) gets a full diff.
      let start =
        missed
        ?? (
          versions.taken,
          versions.holdsState(of: batch.fromNumber)
            ? []
            : previous.flatMap {
              versions.holdsState(of: $0.fromNumber) && $0.toNumber == batch.fromNumber ? $0.touchedIDs : nil
            }
        )
      missed = Self.missed(start, adding: batch.touchedIDs, itemCount: batch.snapshot.itemCount)
    } else if let start = missed {
      // Its next shared batch, while a catch-up is due too (mutations cancelled out after a subscriber
      // started between them): should a newer batch come before this one is taken, the catch-up composes
      // past it, so it must know this batch's ids as well.
      missed = Self.missed(start, adding: batch.touchedIDs, itemCount: batch.snapshot.itemCount)
    }
    // Kept in case the subscriber ends up composing (it may miss this batch too); receiving the shared
    // batch clears them, since that batch refreshes them itself.
    if !refreshing.isEmpty { self.refreshing.formUnion(refreshing) }
    return wake()
  }

  /// The parked consumer's waiter with its delivery, when there is one to hand over and no write is due.
  @inlinable @inline(__always)
  mutating func wake() -> (Waiter, Delivery)? {
    guard isParked, !isWriteDue, let delivery = pending() else { return nil }
    return (wakeConsumer(), delivery)
  }

  /// The source reached `version` by mutations that cancelled out since the published version `since`:
  /// no batch is published (G4), yet a subscriber that started from a state between the two holds
  /// something else, and must reach `snapshot` too. Returns the waiter to resume, with its delivery.
  ///
  /// Every subscriber that has not taken `version` composes its way there; one that holds `since` (or a
  /// batch still to come that ends there) usually finds its composition empty, which is not delivered but
  /// advances the version it holds (G13). `touched` holds the
  /// ids changed from `since` to `version`, when known: a subscriber at `since` then derives the
  /// composition from them.
  @inlinable
  mutating func cancelledOut(
    to version: Int, snapshot: Snapshot<Section>, since: Int, touched: Set<ItemID>?
  ) -> (Waiter, Delivery)? {
    guard version > versions.newest else { return nil }
    versions.newest = version
    newestWithoutBatch = snapshot
    versions.cancelledOut = (since, version)
    guard !isEnded, versions.taken < version else { return nil }
    // The shared batch, if it is this subscriber's next, still goes first; the catch-up after it starts
    // at `since`, where the ids are known.
    if let start = missed ?? (versions.holdsState(of: since) ? (since, []) : nil) {
      missed = Self.missed(start, adding: touched, itemCount: snapshot.itemCount)
    }
    guard isParked, let delivery = pending() else { return nil }
    return (wakeConsumer(), delivery)
  }

  /// The missed batches from `start` extended by ids `touched` later, `nil` when either is unknown.
  /// Bounded (G6): past a sixteenth of the list's `itemCount` items a full diff is as cheap, and the ids
  /// are dropped.
  @inlinable
  static func missed(
    _ start: (from: Int, touched: Set<ItemID>?), adding touched: Set<ItemID>?, itemCount: Int
  ) -> (from: Int, touched: Set<ItemID>?) {
    let union = start.touched.flatMap { before in touched.map { before.union($0) } }
    return (
      start.from, union.flatMap { UpdateBatch<Section>.isWorthLogging($0.count, of: itemCount) ? $0 : nil }
    )
  }

  /// Ends the subscription; idempotent. Returns its waiter, to be resumed with ``Delivery/end``; while a
  /// write is out, `nil`: the writer resumes it once the write is done (``wrote(took:)``).
  @inlinable
  mutating func end() -> Waiter? {
    let handed: Waiter?
    switch consumer {
    case .waiting, .parked: (handed, consumer) = (wakeConsumer(), .ended)
    case .writing: (handed, consumer, sink) = (nil, .endedWhileWriting, nil)
    case .running: (handed, consumer) = (nil, .ended)
    case .ended, .endedWhileWriting: return nil
    }
    // An ended subscription may still be held (a `Subscription` kept after `cancel()`): it keeps no data.
    let empty = Snapshot<Section>(trusted: [])
    held = .snapshot(empty)
    newest = nil
    newestWithoutBatch = empty
    refreshing = []
    missed = nil
    return handed
  }

  /// The consumer takes the shared `batch`, which starts at the version it holds.
  @inlinable @inline(__always)
  mutating func takeShared(_ batch: UpdateBatch<Section>) {
    versions.took(through: batch.toNumber)
    held = .batch(batch)
    refreshing = []
    missed = nil
  }

  /// What the subscriber should get now; `nil` if it has taken the newest version.
  @inlinable
  mutating func pending() -> Delivery? {
    guard versions.taken < versions.newest else { return nil }
    if let newest, newest.fromNumber == versions.received {
      takeShared(newest)
      return .batch(newest)
    }
    defer {
      versions.taken = versions.newest
      refreshing = []
      // What is published while the catch-up is diffed is remembered from the version it composes to.
      missed = (versions.newest, [])
    }
    return .compose(
      from: snapshot, fromVersion: versions.received, to: newestSnapshot, toVersion: versions.newest,
      refreshing: refreshing, touched: missed.flatMap { $0.from == versions.taken ? $0.touched : nil })
  }
}

/// Writes a shared batch to a consumer without waiting, from one of the hub's writers (never under a lock
/// of the hub or the subscription), or from the consumer's own task for a batch that was waiting when it
/// asked; never from both at once. It should not wait: a sink that blocks holds the hub's writer, and the
/// sinks queued behind it wait until the next publish (which starts a second writer, or wakes their
/// consumers to catch up by themselves); the publisher and consumers that wait without a sink never wait
/// for it. It may cancel its subscription or subscribe again.
/// Returns `false` when it cannot take the batch now (a full connection): the consumer then wakes and
/// hands it over by itself.
@usableFromInline
package typealias SubscriptionSink<Section: SectionType> = @Sendable (UpdateBatch<Section>) -> Bool

/// Where a subscriber stands in the order a publish serves its subscribers: every waiting consumer of a
/// lower lane is resumed, and every sink of a lower lane handed to the hub's writers, before any of a
/// higher one; within a lane, in the order the hub keeps its subscribers. A follower whose batches cost
/// more to deal with takes a later lane (the wire's sessions that show several views: a projection step
/// and a part of the message per view; a scope's state whose sessions show many), so that it pays for
/// its own cost, and the subscribers that cost a write each are not queued behind it. A consumer's lane
/// is the one it gave when it last asked for a batch.
@usableFromInline
package struct SubscriptionLane: Comparable, Hashable, Sendable {
  @usableFromInline let rank: Int

  /// The lane of `rank`: 0 first (the default), higher later; a negative rank is 0.
  @inlinable
  package init(_ rank: Int) { self.rank = max(0, rank) }

  /// The first lane, every subscriber's unless its follower chose another.
  @inlinable
  package static var first: Self { Self(0) }

  @inlinable
  package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

/// What a consumer gets when it asks for its next batch.
@usableFromInline
enum SubscriptionDelivery<Section: SectionType>: Sendable {
  /// The shared, newest batch: the consumer held exactly its `from` version.
  case batch(UpdateBatch<Section>)
  /// The consumer missed batches: diff its last snapshot against the newest, off the lock, then
  /// report a non-empty result with ``SubscriberStateMachine/delivered(version:snapshot:)``.
  /// `touched`, when known, holds every item id the missed batches changed: the catch-up batch is then
  /// derived from them (``Changeset/init(from:to:logged:refreshing:)``).
  case compose(
    from: Snapshot<Section>, fromVersion: Int, to: Snapshot<Section>, toVersion: Int,
    refreshing: Set<Section.Item.ID>, touched: Set<Section.Item.ID>?)
  /// The subscription ended (cancelled, dropped, or the source finished).
  case end
  /// Not a batch: the consumer holds a newer version (G13), which arrived while it asked; it reports
  /// the version and asks again. (Nothing may run after a consumer is parked, so a version is reported
  /// before parking, never after.)
  case held(Int)
  /// Not a batch, for a consumer told of versions held with no batch (``SubscriberVersions/announces``):
  /// it holds this version, which no batch carries (its mutations cancelled out, G4); it deals with it
  /// (a projection numbered by its parent holds it too), and its progress holds it once it asks again.
  case announce(Int)
}
