// The pure state machine behind subscriptions: who has seen which version, who waits, what to hand out.

/// What a data source's subscribers have received, and what each should get next.
///
/// Plain synchronous code: every event returns the action to perform, and the storage
/// (``SubscriptionHub``) performs it after releasing its lock. `Waiter` is the suspended consumer
/// (a continuation in production, anything in tests).
///
/// Memory is bounded per subscriber (G6): the machine keeps the newest published batch and, per
/// subscriber, the snapshot it last received and the ids it must still refresh; never a queue.
struct SubscriptionStateMachine<Section: SectionType, Waiter: Sendable>: Sendable {
  typealias ItemID = Section.Item.ID

  typealias Delivery = SubscriptionDelivery<Section>

  struct Subscriber: Sendable {
    /// The `to` of the last batch received (or the subscription's version): the next batch's `from`.
    var version: Int
    /// The snapshot at ``version``.
    var snapshot: Snapshot<Section>
    /// The newest version known to hold the same content as ``snapshot`` (≥ ``version``): a composed
    /// batch that turned out empty advances this, not ``version`` (G1, G4).
    var seen: Int
    /// Ids force-refreshed in published batches this subscriber has not received yet.
    var refreshing: Set<ItemID> = []
    var waiter: Waiter?
  }

  private(set) var subscribers: [Int: Subscriber] = [:]
  private var nextID = 0
  private var newest: UpdateBatch<Section>?
  private var newestVersion: Int
  private var newestSnapshot: Snapshot<Section>
  private(set) var isFinished = false

  init(version: Int, snapshot: Snapshot<Section>) {
    newestVersion = version
    newestSnapshot = snapshot
  }

  var count: Int { subscribers.count }

  /// Registers a subscriber that holds `snapshot` at `version`, which may be newer than the newest
  /// published batch when the source has mutations still being diffed. `nil` once finished.
  mutating func register(version: Int, snapshot: Snapshot<Section>) -> Int? {
    if isFinished { return nil }
    defer { nextID += 1 }
    subscribers[nextID] = Subscriber(version: version, snapshot: snapshot, seen: version)
    return nextID
  }

  /// A consumer asks for its next batch. Returns the delivery to hand over now, or `nil` after storing
  /// `waiter` to be resumed by a later ``publish(_:refreshing:)``, ``cancel(_:)`` or ``finish()``.
  mutating func next(_ id: Int, waiter: Waiter) -> Delivery? {
    guard var subscriber = subscribers[id] else { return .end }
    precondition(subscriber.waiter == nil, "SimpleSource: a subscription's stream has one consumer at a time")
    let delivery = pending(for: &subscriber)
    if delivery == nil { subscriber.waiter = waiter }
    subscribers[id] = subscriber
    return delivery
  }

  /// A consumer delivered a batch it composed; it now holds `snapshot` at `version`.
  mutating func delivered(_ id: Int, version: Int, snapshot: Snapshot<Section>) {
    guard var subscriber = subscribers[id], version > subscriber.version else { return }
    subscriber.version = version
    subscriber.snapshot = snapshot
    subscriber.seen = max(subscriber.seen, version)
    subscribers[id] = subscriber
  }

  /// A batch was published. Returns the waiters to resume, each with its delivery.
  mutating func publish(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID>) -> [(Waiter, Delivery)] {
    newest = batch
    newestVersion = batch.to
    newestSnapshot = batch.snapshot
    var resumes: [(Waiter, Delivery)] = []
    for (id, var subscriber) in subscribers where subscriber.seen < batch.to {
      // Kept in case the subscriber ends up composing (it may miss this batch too); receiving the shared
      // batch clears them, since that batch refreshes them itself.
      if !refreshing.isEmpty { subscriber.refreshing.formUnion(refreshing) }
      if let waiter = subscriber.waiter, let delivery = pending(for: &subscriber) {
        subscriber.waiter = nil
        resumes.append((waiter, delivery))
      }
      subscribers[id] = subscriber
    }
    return resumes
  }

  /// Ends one subscription; idempotent. Returns its waiter, to be resumed with ``Delivery/end``.
  mutating func cancel(_ id: Int) -> Waiter? {
    subscribers.removeValue(forKey: id)?.waiter
  }

  /// Ends every subscription: no new ones are accepted. Returns the waiters to resume with `.end`.
  mutating func finish() -> [Waiter] {
    isFinished = true
    defer { subscribers = [:] }
    return subscribers.values.compactMap(\.waiter)
  }

  /// What `subscriber` should get now; `nil` if it has seen the newest version.
  private func pending(for subscriber: inout Subscriber) -> Delivery? {
    guard subscriber.seen < newestVersion else { return nil }
    if let newest, newest.from == subscriber.version {
      subscriber.version = newest.to
      subscriber.snapshot = newest.snapshot
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
