// What every source built on sources shares: following a parent's subscription, and publishing the next
// version.

extension Broadcaster {
  /// Publishes `change` as `next` (after the newest version), or as the version after the newest, for a
  /// source that is the only publisher.
  /// - Returns: Whether a batch was published (an empty change publishes nothing, G4).
  @usableFromInline
  @discardableResult
  func publishNext(_ change: Changeset<Section>, as next: Int? = nil) -> Bool {
    if change.isEmpty { return false }
    let version = self.version.number
    do {
      try publish(
        UpdateBatch(from: version, to: next ?? version + 1, changeset: change),
        refreshing: change.forcedRefreshes)
      return true
    } catch {
      // A single publisher, one batch at a time, from the newest version: only `finished` can happen,
      // once the source is gone and nobody listens.
      return false
    }
  }
}

/// Follows a parent's subscription in a task isolated to `follower`: hands each batch to `receive` on the
/// follower's actor, then records its version in `applied`, including versions whose composed batch
/// cancelled out; finishes `applied` when the stream ends (the task is cancelled, or the parent is gone).
///
/// The loop runs on the follower's actor, so a batch wakes one task there: receiving on another executor
/// and then hopping to the actor cost a second wake-up, about as much as the parent's own delivery.
/// The task holds `follower` until it ends: its owner cancels it. `held`, when given, is told each
/// version the follower holds between batches, including versions no batch carries (G13).
@usableFromInline
func followParent<Section: SectionType, Follower: Actor>(
  _ subscription: Subscription<Section>, applied: HeldVersion, on follower: Follower,
  held: (@Sendable (Int) -> Void)? = nil,
  receive: @escaping @Sendable (isolated Follower, UpdateBatch<Section>) -> Void
) -> Task<Void, Never> {
  subscription.observeCancelledOut? { version in
    applied.hold(through: version)
    held?(version)
  }
  let batches = subscription.batches
  return Task.schedulable("following a source") {
    await follow(batches, applied: applied, on: follower, receive: receive)
  }
}

/// The loop of ``followParent(_:applied:on:receive:)``, on the follower's actor.
@usableFromInline
func follow<Section: SectionType, Follower: Actor>(
  _ batches: AsyncStream<UpdateBatch<Section>>, applied: HeldVersion, on follower: isolated Follower,
  receive: @Sendable (isolated Follower, UpdateBatch<Section>) -> Void
) async {
  for await batch in batches {
    receive(follower, batch)
    applied.hold(through: batch.to)
  }
  applied.finish()
}

/// Settles `parent`, then waits until `applied` has reached every version it offered (G10 for a source
/// built on it).
@usableFromInline
func settle<Section: SectionType>(_ parent: any DataSourceType<Section>, applied: HeldVersion) async {
  await parent.settled()
  _ = await applied.reached(await parent.offeredVersion.number)
}
