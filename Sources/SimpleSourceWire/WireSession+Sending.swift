// How a session sends its subscription: its start, then its own batches until it can join its view's
// broadcast, and again by itself whenever it leaves it.

import Foundation
import SimpleSourceCore

/// What ``WireSession`` stops when its subscription is replaced or closed: the subscription its sending
/// task holds, and the broadcast it follows.
final class SendingControl<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  private let state = Locked<
    (
      stopped: Bool, watched: Bool, subscription: Subscription<Section>?,
      broadcast: WireBroadcast<Section>?
    )
  >((false, false, nil, nil))

  /// The member id of the session in a broadcast.
  var id: ObjectIdentifier { ObjectIdentifier(self) }
  /// How many times the session became a member of a broadcast: tests await it.
  let joins = AppliedVersion(0)

  /// Whether ``stop()`` was called.
  var isStopped: Bool { state.withLock(\.stopped) }

  /// Whether ``watch()`` was called.
  var isWatched: Bool { state.withLock(\.watched) }

  /// Something waits on the session's sent version (``WireSession/settled()``, an edit's answer): from
  /// now on, the broadcasts it follows keep that version current on every batch (they do not for a
  /// session nothing waits on). Stays so for the session's life.
  func watch() {
    let broadcast = state.withLock { state in
      state.watched = true
      return state.broadcast
    }
    broadcast?.watch(id)
  }

  /// Holds `subscription`, the one the sending task reads; `false` (and it is cancelled) once stopped.
  func hold(_ subscription: Subscription<Section>) -> Bool {
    let stopped = state.withLock { state in
      if !state.stopped { state.subscription = subscription }
      return state.stopped
    }
    if stopped { subscription.cancel() }
    return !stopped
  }

  /// The sending task follows `broadcast` (`nil`: no longer); when it `founded` it, the broadcast owns
  /// the subscription held until now.
  func following(_ broadcast: WireBroadcast<Section>?, founded: Bool = false) {
    state.withLock { state in
      state.broadcast = broadcast
      if founded { state.subscription = nil }
    }
  }

  /// Stops sending: the held subscription ends, and the session leaves the broadcast it follows (nothing
  /// is written to it from there after this returns).
  func stop() {
    let (subscription, broadcast) = state.withLock { state in
      state.stopped = true
      defer { (state.subscription, state.broadcast) = (nil, nil) }
      return (state.subscription, state.broadcast)
    }
    subscription?.cancel()
    broadcast?.leave(id)
  }
}

/// The sending task of one subscription of a ``WireSession``.
struct SessionSender<Section: SectionType, Scope: Hashable & Sendable>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  let send: @Sendable (Data) async throws -> Void
  /// `nil` when the session never joins a broadcast (no sink, or paced).
  let sink: WireSink?
  let coder: WireCoder
  let sent: AppliedVersion
  let control: SendingControl<Section>
  let service: WireService<Section, Scope>
  /// The broadcast of the session's view and format.
  let broadcast: WireService<Section, Scope>.BroadcastKey
  /// The view (or the whole source) the session follows.
  let source: any DataSourceType<Section>
  let pacing: Pacing

  /// Sends `feed`'s start (a reset shared per view, version and format), then every batch: its own until
  /// it joins the broadcast, the broadcast's while a member, its own again from the version it holds
  /// when it leaves. `sent` finishes when the subscription ends.
  func run(_ feed: WireFeed<Section>, resets: ResetBytes) async {
    defer { sent.finish() }
    let stream: String
    var subscription = feed.subscription
    guard hold(subscription) else { return }
    do {
      switch feed.start {
      case .reset(let name, let version, _):
        stream = name
        try await send(
          resets.bytes(version: version, format: coder.formatVersion) { coder.encode(feed.start) })
      case .resumed(let name, _):
        stream = name
        try await send(coder.encode(feed.start))
      default:
        return
      }
      sent.advance(to: subscription.version)
      // Where the next batch of the subscription starts: what the session offers to a broadcast. (`sent`
      // may be ahead of it, by versions whose composed batch cancelled out.)
      var held = subscription.version
      var batches = subscription.batches.makeAsyncIterator()
      var mayJoin = sink != nil
      while true {
        if mayJoin, let sink {
          mayJoin = false
          switch await join(taking: subscription, at: held, sink: sink) {
          case .behind:
            break
          case .left(let version):
            guard let next = try await resume(stream, from: version) else { return }
            subscription = next
            held = next.version
            batches = next.batches.makeAsyncIterator()
          case .ended, .stopped:
            return
          }
        }
        guard let batch = await batches.next() else { return }
        try await send(coder.encode(batch))
        sent.advance(to: batch.to)
        held = batch.to
        // One batch sent by itself since the last offer: a session that left (its connection was full)
        // waits for `send` before it offers again.
        mayJoin = sink != nil
      }
    } catch {
      // `send` threw: the client went away.
      control.stop()
    }
  }

  /// Holds `subscription`, whose cancelled-out versions count as sent.
  private func hold(_ subscription: Subscription<Section>) -> Bool {
    // A version whose composed batch cancelled out is held once every batch before it is sent: the
    // observer runs when the loop asks for its next batch (without it, `settled()` and an edit's answer
    // would wait for a batch that never comes).
    subscription.onCancelledOut { [sent] in sent.advance(to: $0) }
    return control.hold(subscription)
  }

  /// Offers the session to its view's broadcast at `version`, where `subscription`'s next batch starts
  /// (founding the broadcast with `subscription` when there is none), and returns once it is not a member.
  private func join(taking subscription: Subscription<Section>, at version: Int, sink: @escaping WireSink)
    async -> WireBroadcast<Section>.Outcome
  {
    let (broadcast, founded) = await service.broadcast(broadcast, taking: subscription, at: version)
    control.following(broadcast, founded: founded)
    defer { control.following(nil) }
    return await broadcast.follow(
      control.id, at: version, own: founded ? nil : subscription, sent: sent, joins: control.joins,
      sink: sink, isStopped: { [control] in control.isStopped }, isWatched: { [control] in control.isWatched }
    )
  }

  /// A subscription from `version` after the session left its broadcast: resumed, or (when the source no
  /// longer retains it) a reset sent to the client; `nil` once stopped.
  private func resume(_ stream: String, from version: Int) async throws -> Subscription<Section>? {
    let subscription: Subscription<Section>
    switch await source.subscribe(from: version, pacing: pacing) {
    case .resumed(let resumed):
      subscription = resumed
    case .reset(let reset):
      subscription = reset
      try await send(
        coder.encode(WireMessage.reset(stream: stream, version: reset.version, snapshot: reset.snapshot)))
      sent.advance(to: reset.version)
    }
    return hold(subscription) ? subscription : nil
  }
}
