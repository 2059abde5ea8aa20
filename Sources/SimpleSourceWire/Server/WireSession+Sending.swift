// How a session sends its subscription: its start, then every batch, through the session's sink while
// the connection takes them and through `send` whenever it does not.

import Foundation
import SimpleSourceCore

/// What ``WireSession`` stops when its subscription is replaced or closed: the subscription its sending
/// task holds.
final class SendingControl<Section: SectionType>: Sendable {
  // Guard map: `state` (whether sending stopped, and the subscription the sending task reads) is read and
  // written only under its lock; the session's actor stops it, the sending task holds its subscription;
  // a subscription is cancelled after the lock is released.
  private let state = Locked<(stopped: Bool, subscription: Subscription<Section>?)>((false, nil))

  /// How many times the sending task parked with the session's sink (it then costs the server a call of
  /// the sink per batch, not a task): tests await it.
  let sinkParks = HeldVersion(0)

  /// Holds `subscription`, the one the sending task reads; `false` (and it is cancelled) once stopped.
  func hold(_ subscription: Subscription<Section>) -> Bool {
    let stopped = state.withLock { state in
      if !state.stopped { state.subscription = subscription }
      return state.stopped
    }
    if stopped { subscription.cancel() }
    return !stopped
  }

  /// Stops sending: the held subscription ends, and its sink is written to no more once this returns.
  func stop() {
    let subscription = state.withLock { state in
      state.stopped = true
      defer { state.subscription = nil }
      return state.subscription
    }
    subscription?.cancel()
  }
}

/// The sending task of one subscription of a ``WireSession``.
struct SessionSender<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  let send: @Sendable (Data) async throws -> Void
  /// `nil` when every batch goes through `send` (no sink, or paced).
  let sink: WireSink?
  let coder: WireCoder
  /// Reaches the subscription's version once its first message is sent; finishes when the subscription
  /// ends. After it, the subscription's own progress says what the client was sent (G13).
  let started: HeldVersion
  let control: SendingControl<Section>

  /// Sends `feed`'s start (a reset shared per view, version and format), then every batch. With a sink,
  /// the task parks with it between batches: the view's publisher writes each batch to it, encoded once
  /// for all the view's sessions in this format (``SharedEncodings``), and the task wakes only for a batch
  /// the sink refused (a full connection: sent through `send`, which waits) or a catch-up composed for
  /// it. The subscription's progress is what the client was sent: a batch the sink took (the publisher
  /// reports it), one sent through `send` (once the task asks for the next), and versions no batch
  /// carries (G13), with no bookkeeping of the session's own per batch.
  func run(_ feed: WireFeed<Section>, encodings: SharedEncodings) async {
    defer { started.finish() }
    let subscription = feed.subscription
    guard control.hold(subscription) else { return }
    do {
      switch feed.start {
      case .reset(_, let version, _):
        try await send(
          encodings.reset(version: version, format: coder.formatVersion) { coder.encode(feed.start) })
      case .resumed:
        try await send(coder.encode(feed.start))
      default:
        return
      }
      started.hold(through: subscription.version)
      var writeFrame: (@Sendable (UpdateBatch<Section>) -> Bool)?
      if let sink {
        let format = coder.formatVersion
        writeFrame = { [coder] batch in
          sink(encodings.frame(from: batch.from, to: batch.to, format: format) { coder.encode(batch) })
        }
      }
      var parked: (@Sendable () -> Void)?
      if writeFrame != nil {
        parked = { [control] in control.sinkParks.hold(through: control.sinkParks.current + 1) }
      }
      try await subscription.follow(sinkingInto: writeFrame, parked: parked) { event in
        // Not announcing: batches only, each held once the task asks for the next, right after.
        if case .batch(let batch) = event { try await send(coder.encode(batch)) }
        return true
      }
    } catch {
      // `send` threw: the client went away.
      control.stop()
    }
  }
}
