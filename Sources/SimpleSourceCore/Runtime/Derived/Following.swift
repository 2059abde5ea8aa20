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
        UpdateBatch(from: version, to: next ?? version + 1, of: hub.counter, changeset: change),
        refreshing: change.forcedRefreshes)
      return true
    } catch {
      // A single publisher, one batch at a time, from the newest version: only `finished` can happen,
      // once the source is gone and nobody listens.
      return false
    }
  }
}

/// Follows a parent's subscription in a task isolated to `follower`, in the lane `lane` gives
/// (``SubscriptionLane``): hands each batch to `receive` and each version held with no batch (its
/// mutations cancelled out, G4) to `held`, on the follower's actor, one event at a time. The follower's progress is the subscription's: it holds an event's version once
/// it asks for the next (G13), so `subscription.reached(_:)` waits for what the follower dealt with.
///
/// The loop runs on the follower's actor, so a batch wakes one task there: receiving on another executor
/// and then hopping to the actor cost a second wake-up, about as much as the parent's own delivery.
/// The task holds `follower` until it ends: its owner cancels it, which ends the subscription, as does
/// the parent's going away.
@usableFromInline
func followParent<Section: SectionType, Follower: Actor>(
  _ subscription: Subscription<Section>, on follower: Follower,
  lane: @escaping @Sendable () -> SubscriptionLane = { .first },
  held: @escaping @Sendable (isolated Follower, Int) -> Void = { _, _ in },
  receive: @escaping @Sendable (isolated Follower, UpdateBatch<Section>) -> Void
) -> Task<Void, Never> {
  Task.schedulable("following a source") {
    await follow(subscription, on: follower, lane: lane, held: held, receive: receive)
  }
}

/// The loop of ``followParent(_:on:lane:held:receive:)``, on the follower's actor.
@usableFromInline
func follow<Section: SectionType, Follower: Actor>(
  _ subscription: Subscription<Section>, on follower: isolated Follower,
  lane: @Sendable () -> SubscriptionLane = { .first },
  held: @Sendable (isolated Follower, Int) -> Void,
  receive: @Sendable (isolated Follower, UpdateBatch<Section>) -> Void
) async {
  await subscription.follow(announcingHeld: true, lane: lane) { event in
    switch event {
    case .batch(let batch): receive(follower, batch)
    case .held(let version): held(follower, version)
    }
    return true
  }
}

/// Settles `parent`, then waits until the follower of `subscription` holds every version it offered (G10
/// for a source built on it).
@usableFromInline
func settle<Section: SectionType>(
  _ parent: any DataSourceType<Section>, following subscription: Subscription<Section>
)
  async
{
  await parent.settled()
  _ = await subscription.progress.reached(await parent.offeredVersion.number)
}
