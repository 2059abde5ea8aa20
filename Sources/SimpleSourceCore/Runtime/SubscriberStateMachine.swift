// The pure state machine of one subscriber: what it has received, whether it waits, what it gets next.

/// One subscriber's view of its data source: what it received last, whether its consumer waits, and what
/// to hand over next.
///
/// Plain synchronous code: every event returns the action to perform, and the storage
/// (``SubscriberMailbox``) performs it after releasing its lock. `Waiter` is the suspended consumer
/// (a continuation in production, anything in tests).
///
/// A consumer may park with a *sink* (see ``SubscriptionSink``): while it is parked, each shared batch that
/// starts at the version it holds is written to the sink under the lock, at publish, and the consumer
/// holds it at once without waking; the first batch the sink refuses (or one the consumer must compose)
/// wakes the consumer instead, which hands it over by itself and parks with its sink again. A socket
/// writer is thus a subscriber like any other, costing a call per batch rather than a task.
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

  /// The `to` of the last batch received (or the subscription's version): the next batch's `from`.
  @usableFromInline var version: Int
  @usableFromInline var held: Held
  /// The newest version known to hold the same content as ``held`` (≥ ``version``): a composed batch
  /// that turned out empty advances this, not ``version`` (G1, G4).
  @usableFromInline var takenVersion: Int
  /// Ids force-refreshed in published batches this subscriber has not received yet.
  @usableFromInline var refreshing: Set<ItemID> = []
  /// When the subscriber missed batches: the version whose state it holds (or will hold once a catch-up
  /// being composed is delivered) when it started missing them, and the ids they touched (see
  /// ``UpdateBatch/touchedIDs``), `nil` once one of them could not say. With these a catch-up batch is
  /// derived from the touched ids instead of a full diff, whatever the timing of diffs and deliveries: a
  /// composition starts a new record at the version it composes to, so batches published while it is
  /// diffed are remembered from there.
  @usableFromInline var missed: (from: Int, touched: Set<ItemID>?)?
  @usableFromInline var waiter: Waiter?
  /// The parked consumer's sink: set only while ``waiter`` is.
  @usableFromInline var sink: Sink?
  @usableFromInline var isEnded = false
  /// The newest published batch, and the newest version and snapshot of the source.
  @usableFromInline var newest: UpdateBatch<Section>?
  @usableFromInline var newestVersion: Int
  @usableFromInline var newestSnapshot: Snapshot<Section>
  /// The newest version whose state is ``newestSnapshot``, reached by mutations that cancelled out with no
  /// subscriber between them (no batch, G4); ≤ ``newestVersion`` when there was none since.
  @usableFromInline var unbatchedVersion: Int
  /// The newest cancelled-out version (``cancelledOut(to:snapshot:since:touched:)``): version `to` holds the state of the
  /// published version `since`, so a subscriber at `to` follows the batches from `since` by their ids.
  @usableFromInline var cancelledOut: (since: Int, to: Int)?
  /// The newest held version reported to the subscription's progress (G13).
  @usableFromInline var progressVersion: Int
  /// Whether the consumer is told, as a delivery (``SubscriptionDelivery/announce(_:)``), each version it
  /// comes to hold with no batch, before its progress holds it: a follower that republishes such versions
  /// (a projection numbered by its parent). Set by the consumer's first request that asks for it.
  @usableFromInline var announcesHeld = false
  /// The newest version announced to the consumer (``announcesHeld``).
  @usableFromInline var announcedVersion: Int

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
    self.version = version
    self.held = .snapshot(snapshot)
    self.takenVersion = version
    self.newest = newest
    self.newestVersion = newestVersion
    self.newestSnapshot = newestSnapshot
    self.unbatchedVersion = unbatchedVersion
    self.progressVersion = version
    self.announcedVersion = version
    if version < newestVersion {
      missed = (version, missedTouched)
      refreshing = missedRefreshing
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

  /// The newest version the consumer holds when it asks for a batch (G13): what it took, and, once that
  /// is the newest published state, the versions after it whose mutations cancelled out.
  @inlinable @inline(__always)
  var heldVersion: Int { takenVersion >= newestVersion ? max(takenVersion, unbatchedVersion) : takenVersion }

  /// The newest version the consumer's progress may hold: ``heldVersion``, except that a consumer told of
  /// versions held with no batch (``announcesHeld``) holds one only once it was announced and the consumer
  /// asked again.
  @inlinable @inline(__always)
  var progressCeiling: Int {
    announcesHeld ? min(heldVersion, max(version, announcedVersion)) : heldVersion
  }

  /// The version the consumer holds, when it is newer than the last one reported: the caller reports it
  /// (outside the lock). `nil` when nothing is new or the subscription ended.
  @inlinable @inline(__always)
  mutating func newlyHeld() -> Int? {
    guard !isEnded else { return nil }
    let held = progressCeiling
    guard held > progressVersion else { return nil }
    progressVersion = held
    return held
  }

  /// The consumer asks for its next batch: the version it now holds, when newer than the last one
  /// reported (see ``newlyHeld()``). With `announcing`, it is told of versions held with no batch from now
  /// on (``announcesHeld``), and holds one only once it was announced.
  @inlinable @inline(__always)
  mutating func asks(announcing: Bool) -> Int? {
    if announcing { announcesHeld = true }
    return newlyHeld()
  }

  /// For a consumer told of versions held with no batch (``announcesHeld``): the newest such version, when
  /// it has not been announced; `nil` otherwise.
  @inlinable @inline(__always)
  mutating func announcement() -> Int? {
    guard announcesHeld, !isEnded else { return nil }
    let held = heldVersion
    guard held > max(version, announcedVersion) else { return nil }
    announcedVersion = held
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
  /// (``announcesHeld``), woken with the announcement. `nil` when there is nothing to do.
  @inlinable
  mutating func reachedWithoutBatch(to version: Int) -> Reached? {
    guard version > unbatchedVersion else { return nil }
    unbatchedVersion = version
    guard let waiter else { return nil }
    if let announced = announcement() {
      (self.waiter, sink) = (nil, nil)
      return .resume(waiter, .announce(announced))
    }
    return newlyHeld().map { .report($0) }
  }

  /// The consumer asks for its next batch. Returns the delivery to hand over now, or `nil` after storing
  /// `waiter` to be resumed by a later ``publish(_:refreshing:)``, ``reachedWithoutBatch(to:)`` or
  /// ``end()``. With a `sink`, shared batches are written to it while the consumer stays parked (see
  /// ``sink(for:)``). A version held with no batch is announced first (``announcesHeld``); the caller
  /// reports what ``newlyHeld()`` says before it asks, under the same lock.
  @inlinable
  mutating func next(waiter: Waiter, sink: Sink? = nil) -> Delivery? {
    if isEnded { return .end }
    precondition(self.waiter == nil, "SimpleSource: a subscription's stream has one consumer at a time")
    if let announced = announcement() { return .announce(announced) }
    let delivery = pending()
    if delivery == nil { (self.waiter, self.sink) = (waiter, sink) }
    return delivery
  }

  /// The sink to write `batch` to, before it is published to this subscriber: the consumer is parked with
  /// one, holds the batch's `from` and has not taken its `to`. The caller writes it under the same lock,
  /// then reports with ``sinkTook(_:)`` (it took the batch) or ``sinkRefused()`` before ``publish(_:refreshing:)``.
  @inlinable @inline(__always)
  func sink(for batch: UpdateBatch<Section>) -> Sink? {
    guard let sink, waiter != nil, !isEnded, batch.from == version, takenVersion < batch.to else {
      return nil
    }
    return sink
  }

  /// The sink took `batch`, which is now the newest: the consumer holds it (G13) and stays parked.
  /// Returns the version to report held (outside the lock).
  @inlinable @inline(__always)
  mutating func sinkTook(_ batch: UpdateBatch<Section>) -> Int? {
    newest = batch
    newestVersion = batch.to
    newestSnapshot = batch.snapshot
    version = batch.to
    held = .batch(batch)
    takenVersion = batch.to
    refreshing = []
    missed = nil
    return newlyHeld()
  }

  /// The sink refused the batch (its connection is full or closed): it is detached, and the batch is
  /// published as to any parked consumer, which wakes and hands it over by itself.
  @inlinable @inline(__always)
  mutating func sinkRefused() { sink = nil }

  /// The consumer delivered a batch it composed; it now holds `snapshot` at `version`.
  @inlinable
  mutating func delivered(version: Int, snapshot: Snapshot<Section>) {
    guard !isEnded, version > self.version else { return }
    self.version = version
    held = .snapshot(snapshot)
    takenVersion = max(takenVersion, version)
    // The record started by the composition holds what was published since; with nothing published, the
    // next batch starts at `version` and is shared.
    if newestVersion == version { missed = nil }
  }

  /// A batch was published. Returns the waiter to resume, with its delivery, if the consumer waits.
  @inlinable
  mutating func publish(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID>) -> (Waiter, Delivery)? {
    let previous = newest
    newest = batch
    newestVersion = batch.to
    newestSnapshot = batch.snapshot
    guard !isEnded, takenVersion < batch.to else { return nil }
    if batch.from != version {
      // It will compose. A subscriber whose state is that of the `from` of the first batch it missed is
      // caught up from the batches' ids: that is `takenVersion`, the newest version with its state (after a
      // composition that turned out empty, newer than `version`). One that holds a snapshot no batch
      // started from (newer than the published batches) gets a full diff.
      let start =
        missed
        ?? (
          takenVersion,
          holdsState(of: batch.from)
            ? [] : previous.flatMap { holdsState(of: $0.from) && $0.to == batch.from ? $0.touchedIDs : nil }
        )
      missed = Self.missed(start, adding: batch.touchedIDs, itemCount: batch.snapshot.itemCount)
    }
    // Kept in case the subscriber ends up composing (it may miss this batch too); receiving the shared
    // batch clears them, since that batch refreshes them itself.
    if !refreshing.isEmpty { self.refreshing.formUnion(refreshing) }
    guard let waiter, let delivery = pending() else { return nil }
    (self.waiter, sink) = (nil, nil)
    return (waiter, delivery)
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
    guard version > newestVersion else { return nil }
    newestVersion = version
    newestSnapshot = snapshot
    cancelledOut = (since, version)
    guard !isEnded, takenVersion < version else { return nil }
    // The shared batch, if it is this subscriber's next, still goes first; the catch-up after it starts
    // at `since`, where the ids are known.
    if let start = missed ?? (holdsState(of: since) ? (since, []) : nil) {
      missed = Self.missed(start, adding: touched, itemCount: snapshot.itemCount)
    }
    guard let waiter, let delivery = pending() else { return nil }
    (self.waiter, sink) = (nil, nil)
    return (waiter, delivery)
  }

  /// Whether the subscriber's state is that of `version`: the newest version with its state (``takenVersion``), or
  /// the version a cancelling out to ``takenVersion`` came from.
  @inlinable @inline(__always)
  func holdsState(of version: Int) -> Bool {
    version == takenVersion || (cancelledOut.map { $0.to == takenVersion && $0.since == version } ?? false)
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

  /// Ends the subscription; idempotent. Returns its waiter, to be resumed with ``Delivery/end``.
  @inlinable
  mutating func end() -> Waiter? {
    isEnded = true
    // An ended subscription may still be held (a `Subscription` kept after `cancel()`): it keeps no data.
    let empty = Snapshot<Section>(trusted: [])
    held = .snapshot(empty)
    newest = nil
    newestSnapshot = empty
    refreshing = []
    missed = nil
    sink = nil
    defer { waiter = nil }
    return waiter
  }

  /// What the subscriber should get now; `nil` if it has taken the newest version.
  @inlinable
  mutating func pending() -> Delivery? {
    guard takenVersion < newestVersion else { return nil }
    if let newest, newest.from == version {
      version = newest.to
      held = .batch(newest)
      takenVersion = newest.to
      refreshing = []
      missed = nil
      return .batch(newest)
    }
    defer {
      takenVersion = newestVersion
      refreshing = []
      // What is published while the catch-up is diffed is remembered from the version it composes to.
      missed = (newestVersion, [])
    }
    return .compose(
      from: snapshot, fromVersion: version, to: newestSnapshot, toVersion: newestVersion,
      refreshing: refreshing, touched: missed.flatMap { $0.from == takenVersion ? $0.touched : nil })
  }
}

/// Writes a shared batch to a consumer without waiting, from the publisher's task and under the
/// subscriber's lock: it must not wait, and must not call back into the subscription or its source.
/// Returns `false` when it cannot take the batch now (a full connection): the consumer then wakes and
/// hands it over by itself.
@usableFromInline
package typealias SubscriptionSink<Section: SectionType> = @Sendable (UpdateBatch<Section>) -> Bool

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
  /// Not a batch, for a consumer told of versions held with no batch (``SubscriberStateMachine/announcesHeld``):
  /// it holds this version, which no batch carries (its mutations cancelled out, G4); it deals with it
  /// (a projection numbered by its parent holds it too), and its progress holds it once it asks again.
  case announce(Int)
}
