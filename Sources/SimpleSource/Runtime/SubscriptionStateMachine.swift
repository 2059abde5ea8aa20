// The pure state machine behind subscriptions: who has seen which version, who waits, what to hand out.

/// What a data source's subscribers have received, and what each should get next.
///
/// Plain synchronous code: every event returns the action to perform, and the storage
/// (``SubscriptionHub``) performs it after releasing its lock. `Waiter` is the suspended consumer
/// (a continuation in production, anything in tests).
///
/// Memory is bounded per subscriber (G6): the machine keeps the newest published batch and, per
/// subscriber, the snapshot it last received and the ids it must still refresh; never a queue.
@usableFromInline
struct SubscriptionStateMachine<Section: SectionType, Waiter: Sendable>: Sendable {
  @usableFromInline typealias ItemID = Section.Item.ID

  @usableFromInline typealias Delivery = SubscriptionDelivery<Section>

  @usableFromInline
  struct Subscriber: Sendable {
    /// The `to` of the last batch received (or the subscription's version): the next batch's `from`.
    @usableFromInline var version: Int
    /// The state at ``version``: the subscription's snapshot, or the last batch received (one reference
    /// to retain, where a snapshot is several).
    @usableFromInline var held: Held
    /// The newest version known to hold the same content as ``snapshot`` (≥ ``version``): a composed
    /// batch that turned out empty advances this, not ``version`` (G1, G4).
    @usableFromInline var seen: Int
    /// Ids force-refreshed in published batches this subscriber has not received yet.
    @usableFromInline var refreshing: Set<ItemID> = []
    @usableFromInline var waiter: Waiter?

    @inlinable
    init(version: Int, snapshot: Snapshot<Section>, seen: Int) {
      self.version = version
      self.held = .snapshot(snapshot)
      self.seen = seen
    }

    /// The snapshot at ``version``.
    @inlinable
    var snapshot: Snapshot<Section> {
      switch held {
      case .snapshot(let snapshot): snapshot
      case .batch(let batch): batch.snapshot
      }
    }
  }

  /// What a subscriber holds of its state.
  @usableFromInline
  enum Held: Sendable {
    case snapshot(Snapshot<Section>)
    case batch(UpdateBatch<Section>)
  }

  @usableFromInline var subscribers: [Int: Subscriber] = [:]
  @usableFromInline var nextID = 0
  @usableFromInline var newest: UpdateBatch<Section>?
  @usableFromInline var newestVersion: Int
  @usableFromInline var newestSnapshot: Snapshot<Section>
  @usableFromInline var isFinished = false

  @inlinable
  init(version: Int, snapshot: Snapshot<Section>) {
    newestVersion = version
    newestSnapshot = snapshot
  }

  @inlinable
  var count: Int { subscribers.count }

  /// Registers a subscriber that holds `snapshot` at `version`, which may be newer than the newest
  /// published batch when the source has mutations still being diffed. `nil` once finished.
  @inlinable
  mutating func register(version: Int, snapshot: Snapshot<Section>) -> Int? {
    if isFinished { return nil }
    defer { nextID += 1 }
    subscribers[nextID] = Subscriber(version: version, snapshot: snapshot, seen: version)
    return nextID
  }

  /// A consumer asks for its next batch. Returns the delivery to hand over now, or `nil` after storing
  /// `waiter` to be resumed by a later ``publish(_:refreshing:)``, ``cancel(_:)`` or ``finish()``.
  @inlinable
  mutating func next(_ id: Int, waiter: Waiter) -> Delivery? {
    guard var subscriber = subscribers[id] else { return .end }
    precondition(subscriber.waiter == nil, "SimpleSource: a subscription's stream has one consumer at a time")
    let delivery = pending(for: &subscriber)
    if delivery == nil { subscriber.waiter = waiter }
    subscribers[id] = subscriber
    return delivery
  }

  /// A consumer delivered a batch it composed; it now holds `snapshot` at `version`.
  @inlinable
  mutating func delivered(_ id: Int, version: Int, snapshot: Snapshot<Section>) {
    guard var subscriber = subscribers[id], version > subscriber.version else { return }
    subscriber.version = version
    subscriber.held = .snapshot(snapshot)
    subscriber.seen = max(subscriber.seen, version)
    subscribers[id] = subscriber
  }

  /// A batch was published. Returns the waiters to resume, each with its delivery.
  @inlinable
  mutating func publish(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID>) -> [(Waiter, Delivery)] {
    newest = batch
    newestVersion = batch.to
    newestSnapshot = batch.snapshot
    let (newest, newestVersion, newestSnapshot) = (batch, batch.to, batch.snapshot)
    var resumes: [(Waiter, Delivery)] = []
    // Entries are changed in place, never copied out and back: publishing to many subscribers is the
    // fan-out hot path.
    for id in Array(subscribers.keys) {
      guard let seen = subscribers[id]?.seen, seen < batch.to else { continue }
      // Kept in case the subscriber ends up composing (it may miss this batch too); receiving the shared
      // batch clears them, since that batch refreshes them itself.
      if !refreshing.isEmpty { subscribers[id]?.refreshing.formUnion(refreshing) }
      guard let waiter = subscribers[id]?.waiter,
        let delivery = Self.pending(
          for: &subscribers[id]!, newest: newest, newestVersion: newestVersion, newestSnapshot: newestSnapshot)
      else { continue }
      subscribers[id]?.waiter = nil
      resumes.append((waiter, delivery))
    }
    return resumes
  }

  /// Ends one subscription; idempotent. Returns its waiter, to be resumed with ``Delivery/end``.
  @inlinable
  mutating func cancel(_ id: Int) -> Waiter? {
    subscribers.removeValue(forKey: id)?.waiter
  }

  /// Ends every subscription: no new ones are accepted. Returns the waiters to resume with `.end`.
  @inlinable
  mutating func finish() -> [Waiter] {
    isFinished = true
    defer { subscribers = [:] }
    return subscribers.values.compactMap(\.waiter)
  }

  /// What `subscriber` should get now; `nil` if it has seen the newest version.
  @inlinable
  func pending(for subscriber: inout Subscriber) -> Delivery? {
    Self.pending(for: &subscriber, newest: newest, newestVersion: newestVersion, newestSnapshot: newestSnapshot)
  }

  /// ``pending(for:)`` without access to `self`, so that a subscriber can be updated in place inside
  /// ``subscribers`` (a method on `self` would make Swift copy the whole machine to keep access exclusive).
  @inlinable
  static func pending(
    for subscriber: inout Subscriber, newest: UpdateBatch<Section>?, newestVersion: Int,
    newestSnapshot: Snapshot<Section>
  ) -> Delivery? {
    guard subscriber.seen < newestVersion else { return nil }
    if let newest, newest.from == subscriber.version {
      subscriber.version = newest.to
      subscriber.held = .batch(newest)
      subscriber.seen = newest.to
      subscriber.refreshing = []
      return .batch(newest)
    }
    defer {
      subscriber.seen = newestVersion
      subscriber.refreshing = []
    }
    return .compose(
      from: subscriber.snapshot, fromVersion: subscriber.version, to: newestSnapshot, toVersion: newestVersion,
      refreshing: subscriber.refreshing)
  }
}

/// What a consumer gets when it asks for its next batch.
@usableFromInline
enum SubscriptionDelivery<Section: SectionType>: Sendable {
  /// The shared, newest batch: the consumer held exactly its `from` version.
  case batch(UpdateBatch<Section>)
  /// The consumer missed batches: diff its last snapshot against the newest, off the lock, then
  /// report a non-empty result with ``SubscriptionStateMachine/delivered(_:version:snapshot:)``.
  case compose(
    from: Snapshot<Section>, fromVersion: Int, to: Snapshot<Section>, toVersion: Int, refreshing: Set<Section.Item.ID>)
  /// The subscription ended (cancelled, dropped, or the source finished).
  case end
}
