// The storage that performs the subscription state machine's actions: a lock, continuations, composition.

/// Holds a data source's subscribers behind a lock and hands each consumer its next batch.
///
/// Publishing never waits for a consumer: it updates the state machine and resumes the consumers that
/// are already waiting. A consumer that fell behind composes its own catch-up batch in its own task,
/// off the main actor (G6, G7, G9).
@usableFromInline
final class SubscriptionHub<Section: SectionType>: Sendable {
  @usableFromInline typealias Machine = SubscriptionStateMachine<Section, UnsafeContinuation<SubscriptionDelivery<Section>, Never>>
  @usableFromInline typealias ItemID = Section.Item.ID

  @usableFromInline let state: Locked<Machine>

  @inlinable
  init(version: Int, snapshot: Snapshot<Section>) {
    state = Locked(Machine(version: version, snapshot: snapshot))
  }

  @inlinable
  var count: Int { state.withLock { $0.count } }

  @inlinable
  func register(version: Int, snapshot: Snapshot<Section>) -> Int? {
    state.withLock { $0.register(version: version, snapshot: snapshot) }
  }

  @inlinable
  func publish(_ batch: UpdateBatch<Section>, refreshing: Set<ItemID>) {
    let resumes = state.withLock { $0.publish(batch, refreshing: refreshing) }
    for (waiter, delivery) in resumes { waiter.resume(returning: delivery) }
  }

  /// Ends a subscription; idempotent, and safe before, during or after a wait.
  @inlinable
  func cancel(_ id: Int) {
    state.withLock { $0.cancel(id) }?.resume(returning: .end)
  }

  @inlinable
  func finish() {
    for waiter in state.withLock({ $0.finish() }) { waiter.resume(returning: .end) }
  }

  /// The next non-empty batch for subscriber `id`, or `nil` when the subscription has ended.
  ///
  /// Cancellation is handled by the caller: the subscription's stream cancels `id` when its consuming
  /// task is cancelled, which resumes this wait with `.end`. The state machine resumes every waiter
  /// exactly once (it hands each waiter out of its state exactly once), so an unsafe continuation is
  /// sound here and spares an allocation per delivery.
  @inlinable
  func next(_ id: Int) async -> UpdateBatch<Section>? {
    while true {
      let delivery = await withUnsafeContinuation { continuation in
        if let delivery = state.withLock({ $0.next(id, waiter: continuation) }) {
          continuation.resume(returning: delivery)
        }
      }
      switch delivery {
      case .end:
        return nil
      case .batch(let batch):
        return batch
      case .compose(let from, let fromVersion, let to, let toVersion, let refreshing):
        let changeset = await Self.compose(from: from, to: to, refreshing: refreshing)
        // An empty composition is not delivered (G4); the subscriber keeps its version (G1).
        if changeset.isEmpty { continue }
        state.withLock { $0.delivered(id, version: toVersion, snapshot: to) }
        return UpdateBatch(from: fromVersion, to: toVersion, changeset: changeset)
      }
    }
  }

  /// Diffs on the global concurrent executor, never on the caller's actor (G9).
  @inlinable
  @concurrent
  static func compose(from: Snapshot<Section>, to: Snapshot<Section>, refreshing: Set<ItemID>) async
    -> Changeset<Section>
  {
    Changeset(from: from, to: to, refreshing: refreshing)
  }
}
