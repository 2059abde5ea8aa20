// How an observable model follows its source: one task hands each batch to it on the main actor.

import SimpleSourceCore

/// The subscription an observable model (``ObservedList``, ``ObservedWindow``) follows: a task that hands
/// each batch to the model on the main actor, and the version the model holds, for `reached(_:)`.
@MainActor
final class ModelFollowing {
  // Guard map: `task` is the main actor's; the task runs on the main actor and is the only one to apply
  // batches to the model and move `applied` past a batch (a lock of its own), which the subscription's
  // hub also holds through versions whose batch cancelled out.
  /// The newest version the model applied; finished when the subscription ends.
  let applied: HeldVersion
  /// The counter that numbers the subscription's versions, which waits are checked against.
  let counter: VersionCounter
  private var task: Task<Void, Never>?

  /// Starts handing `subscription`'s batches to `apply`, which answers `false` once the model is gone.
  init<Section: SectionType>(
    _ subscription: Subscription<Section>, apply: @escaping @MainActor (UpdateBatch<Section>) -> Bool
  ) {
    let applied = HeldVersion(subscription.version)
    // Versions whose batch cancelled out (G4) are held too: the model shows them already.
    subscription.onCancelledOut { applied.hold(through: $0) }
    let batches = subscription.batches
    self.applied = applied
    counter = subscription.counter
    task = Task.schedulable("following a source") { @MainActor in
      for await batch in batches {
        guard apply(batch) else { break }
        applied.hold(through: batch.to)
      }
      applied.finish()
    }
  }

  // A plain deinit, not `isolated deinit`, which crashes the compiler in optimised builds of generic
  // @MainActor classes (see ListViewDataSource): the Task is a Sendable value no other reference reaches.
  deinit {
    task?.cancel()
  }

  /// Ends the subscription; `reached(_:)` then answers `false` for a version never applied.
  func stop() {
    task?.cancel()
    task = nil
  }

  /// Returns `true` once the model holds `version` or a later one, `false` when it stops first or the
  /// waiting task is cancelled; throws at once for a version of another counter.
  func reached(_ version: Version) async throws(VersionError) -> Bool {
    try VersionError.check(version, against: counter)
    return await applied.reached(version.number)
  }

  /// Returns `true` once the model holds version `number` of its subscription's counter or a later one.
  func reached(_ number: Int) async -> Bool { await applied.reached(number) }
}
