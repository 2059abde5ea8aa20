// How an observable model follows its source: one task hands each batch to it on the main actor.

import SimpleSourceCore

/// The subscription an observable model (``ObservedList``, ``ObservedWindow``) follows: a task that hands
/// each batch to the model on the main actor. The model's progress is the subscription's: it holds a
/// batch once it asks for the next, and a version no batch carries (G4) as soon as it has taken what
/// precedes it (G13).
@MainActor
final class ModelFollowing {
  // Guard map: `task` is the main actor's; the task runs on the main actor and is the only one to apply
  // batches to the model; the subscription's progress is behind the subscription's own locks.
  /// The subscription followed, whose progress is the model's.
  private let subscription: any FollowedSubscription
  private var task: Task<Void, Never>?

  /// Starts handing `subscription`'s batches to `apply`, which answers `false` once the model is gone.
  init<Section: SectionType>(
    _ subscription: Subscription<Section>, apply: @escaping @MainActor (UpdateBatch<Section>) -> Bool
  ) {
    self.subscription = subscription
    // Once the model is gone, or the source, the subscription ends, and waits for what the model never
    // applied answer `false`.
    task = Task.schedulable("following a source") { @MainActor in
      await subscription.follow { event in
        guard case .batch(let batch) = event else { return true }
        return apply(batch)
      }
    }
  }

  // A plain deinit, not `isolated deinit`, which crashes the compiler in optimised builds of generic
  // @MainActor classes (see ListViewDataSource): the Task and the subscription are Sendable values no other
  // reference reaches.
  deinit {
    task?.cancel()
    subscription.cancel()
  }

  /// Ends the subscription; `reached(_:)` then answers `false` for a version never applied.
  func stop() {
    task?.cancel()
    task = nil
    subscription.cancel()
  }

  /// Returns `true` once the model holds `version` or a later one, `false` when it stops first or the
  /// waiting task is cancelled; throws at once for a version of another counter.
  func reached(_ version: Version) async throws(VersionError) -> Bool {
    try await subscription.reached(version)
  }

  /// Returns `true` once the model holds version `number` of its subscription's counter or a later one.
  func reached(_ number: Int) async -> Bool {
    (try? await subscription.reached(Version(number, of: subscription.counter))) ?? false
  }
}

/// A subscription whatever its section type: what ``ModelFollowing`` asks of it.
private protocol FollowedSubscription: Sendable {
  var counter: VersionCounter { get }
  func reached(_ version: Version) async throws(VersionError) -> Bool
  func cancel()
}

extension Subscription: FollowedSubscription {}
