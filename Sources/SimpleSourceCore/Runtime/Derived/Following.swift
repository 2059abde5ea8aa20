// What every source built on sources shares: following a parent's subscription, and publishing the next
// version.

extension Broadcaster {
  /// Publishes `change` as the version after the newest, for a source that is the only publisher.
  /// - Returns: Whether a batch was published (an empty change publishes nothing, G4).
  @usableFromInline
  @discardableResult
  func publishNext(_ change: Changeset<Section>) -> Bool {
    if change.isEmpty { return false }
    let version = self.version
    do {
      try publish(
        UpdateBatch(from: version, to: version + 1, changeset: change), refreshing: change.forcedRefreshes)
      return true
    } catch {
      // A single publisher, one batch at a time, from the newest version: only `finished` can happen,
      // once the source is gone and nobody listens.
      return false
    }
  }
}

/// Follows a parent's subscription in a task: hands each batch to `receive`, then records its version in
/// `applied`, including versions whose composed batch cancelled out; finishes `applied` when the stream
/// ends.
@usableFromInline
func followParent<Section: SectionType>(
  _ subscription: Subscription<Section>, applied: AppliedVersion,
  receive: @escaping @Sendable (UpdateBatch<Section>) async -> Void
) -> Task<Void, Never> {
  subscription.observeCancelledOut? { applied.advance(to: $0) }
  let batches = subscription.batches
  return Task {
    for await batch in batches {
      await receive(batch)
      applied.advance(to: batch.to)
    }
    applied.finish()
  }
}

/// Settles `parent`, then waits until `applied` has reached every version it offered (G10 for a source
/// built on it).
@usableFromInline
func settle<Section: SectionType>(_ parent: any DataSourceType<Section>, applied: AppliedVersion) async {
  await parent.settled()
  _ = await applied.reached(await parent.offeredVersion)
}
