// How a session sends its subscription: its start, then every batch, through the session's sink while
// the connection takes them and through `send` whenever it does not.

import Foundation
import SimpleSourceCore

/// What ``WireSession`` stops when its subscription is replaced or closed (the subscription its sending
/// task holds), and how far the sending has come (``SendingProgress``): what the session waits on instead
/// of its sending tasks.
final class SendingControl<Section: SectionType>: Sendable {
  // Guard map: `state` (whether sending stopped, the subscription the sending task reads, and the sending's
  // progress with the session's waits on it) is read and written only under its lock; the session's actor
  // stops it and waits, the sending tasks hold its subscription and report their progress; a subscription
  // is cancelled, and a wait resumed, after the lock is released.
  private struct State: Sendable {
    var stopped = false
    var subscription: Subscription<Section>?
    var progress = SendingProgress<CheckedContinuation<Bool, Never>>()
  }
  private let state = Locked(State())

  /// How many times the sending task parked (with its sink, or stepping its views through the publisher):
  /// between parks it costs the server a call per batch, not a task. Tests await counts of it.
  private let parks = Locked<(count: Int, waiters: ParkedWaiters<Int, CheckedContinuation<Void, Never>>)>(
    (0, ParkedWaiters()))

  /// What the sending task calls each time it parks: it counts, and resumes the tests that waited for the
  /// count.
  /// - Complexity: O(*w*) for *w* waiting tests.
  @Sendable func didPark() {
    let due = parks.withLock { parks in
      parks.count += 1
      let count = parks.count
      return parks.waiters.take { $0 <= count }
    }
    for waiter in due { waiter.resume() }
  }

  /// How many batches woke the sending task after its first message (a batch its sink took, or one that
  /// changed nothing it shows, does not): final for the versions the session settled.
  let wakes = Locked(0)

  /// How many times the sending task parked so far.
  var parkCount: Int { parks.withLock(\.count) }

  /// Returns once the sending task parked `count` times in all.
  func parked(times count: Int) async {
    await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
      let reached = parks.withLock { parks in
        guard parks.count < count else { return true }
        _ = parks.waiters.park(waiter, until: count)
        return false
      }
      if reached { waiter.resume() }
    }
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

  /// Stops sending: the held subscription ends, and its sink is written to no more once this returns.
  func stop() {
    let subscription = state.withLock { state in
      state.stopped = true
      defer { state.subscription = nil }
      return state.subscription
    }
    subscription?.cancel()
  }

  /// What the task sending the first message reports: it was sent (`sent`), or could not be and nothing
  /// more is written. Resumes the session's waits on it.
  /// - Complexity: O(*w*) for *w* waits.
  func firstMessage(sent: Bool) {
    let (first, ended) = state.withLock { $0.progress.firstMessage(sent: sent) }
    for waiter in first { waiter.resume(returning: sent) }
    for waiter in ended { waiter.resume(returning: true) }
  }

  /// What the task sending the batches after the first message reports when it ends: nothing more is
  /// written. Resumes the session's waits for the end.
  /// - Complexity: O(*w*) for *w* waits.
  func finished() {
    for waiter in state.withLock({ $0.progress.finished() }) { waiter.resume(returning: true) }
  }

  /// Returns, once it is known, whether the first message was sent.
  func firstMessageSent() async -> Bool {
    await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
      if let sent = state.withLock({ $0.progress.awaitFirst(waiter) }) { waiter.resume(returning: sent) }
    }
  }

  /// Returns once nothing more of the subscription is written: its first message could not be sent, or
  /// the batches after it were followed to the end.
  func ended() async {
    _ = await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
      if state.withLock({ $0.progress.awaitEnd(waiter) }) { waiter.resume(returning: true) }
    }
  }
}

/// What a subscription shows its client of its scope's state.
enum Shown<Section: SectionType>: Sendable {
  /// The scope's state as it is (a `subscribe` with no query): its batches, sent as they are.
  case scope
  /// A query of it (a `subscribe` naming one, format 2): one view, sent as `reset` and `batch` messages.
  case query(SharedViewSteps<Section>)
  /// Several views (a `subscribeViews`, format 3), sent as `views` and `viewBatches` messages, the views'
  /// batches of one version in one message.
  case views([String: SharedViewSteps<Section>])
}

/// The sending of one subscription of a ``WireSession``, whatever it shows: its start (a reset, the
/// views' states, or a resume), then every batch of its scope's state, as it is or as the batches of the
/// views it changed.
///
/// With a sink, it parks with it between batches, holding no task (a task is started for what wakes it,
/// and ends when it parks again). Parked, the scope's publisher writes each batch's message
/// to the sink of every session parked with one, encoded once per message and format for all of them
/// (``SharedEncodings``, ``ViewsOfBatch``), and a view's step is made once per batch for every session in
/// step with it. The publisher hands the sinks to its writers in the order of what they cost: the sessions
/// that follow the scope as it is first, then those that show views, fewest views first
/// (``SubscriptionLane``), so that a session's many views delay that session, not the others. It
/// wakes only for a batch the sink refused (a full connection: sent through
/// `send`, which waits), a catch-up composed for it, a resumed subscription's first batch (whose views it
/// projects), or a view that failed. A session that shows views parks so without a sink too (unless
/// paced): a batch that changes none of its views then costs it a step read from the batch, not a task.
/// The subscription's progress is what the client was sent: a batch the sink took (the publisher reports
/// it), one sent through `send` (once the task asks for the next), and versions no batch carries or that
/// changed no view it shows (G13), with no bookkeeping of the session's own per batch. Its first message
/// is sent by ``start(_:)``, in a task of its own that the session awaits for what must follow it.
struct SessionSender<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// What the client holds of its views: their states (`nil` until a resumed subscription's first
  /// batch), the version they were last sent at, and the step the publisher made of the batch it woke the
  /// task for (so that the task does not look it up again). Read and written by the sending task and,
  /// while it is parked, by a writer of the scope's publisher through the sink: never both at once (the
  /// subscription wakes the task only for what the sink refused, and only once the write is done), but
  /// from two threads, so under a lock.
  struct Held: Sendable {
    var states: [String: ProjectionState<Section>]?
    var sent: Int
    var woken: (from: Int, to: Int, step: ViewsOfBatch<Section>.Step)?
  }

  /// What following a subscription needs once its first message is sent: for views, what the client
  /// holds of them.
  enum Started: Sendable {
    case scope
    case views(Locked<Held>)
  }

  let send: @Sendable (Data) async throws -> Void
  /// `nil` when every message goes through `send` (no sink, or paced).
  let sink: WireSink?
  /// Whether the subscription delivers each batch as it is published (not paced): a session that shows
  /// views then parks between batches even with no sink, and wakes only for a batch that changes one.
  let immediate: Bool
  let coder: WireCoder
  let control: SendingControl<Section>
  let shown: Shown<Section>

  /// Sends `opened`'s first message: the scope's reset (shared per scope, version and format), a query's
  /// reset (shared per view, version and format), the views' states, or that the client is resumed.
  /// - Returns: What ``follow(_:from:)`` needs; `nil` when the subscription was stopped first, or `send`
  ///   threw (the client went away): the subscription has ended then.
  func start(_ opened: WireService<Section, some Hashable & Sendable>.Opened) async -> Started? {
    let feed = opened.feed
    guard control.hold(feed.subscription) else { return nil }
    do {
      switch (shown, feed.start) {
      case (.scope, .reset(_, let version, _)):
        try await send(
          opened.encodings.reset(version: version, format: coder.formatVersion) { coder.encode(feed.start) })
        return .scope
      case (.scope, .resumed):
        try await send(coder.encode(feed.start))
        return .scope
      case (.query(let view), .reset(let stream, let version, _)):
        guard let state = opened.states?[""] else { break }
        try await send(
          view.encodings.reset(version: version, format: coder.formatVersion) {
            coder.encode(
              WireMessage<Section>.reset(stream: stream, version: version, snapshot: state.published))
          })
        return .views(Locked(Held(states: opened.states, sent: version)))
      case (.views, .reset(let stream, let version, _)):
        guard let states = opened.states else { break }
        let snapshots = states.mapValues(\.published)
        try await send(
          coder.encode(WireMessage<Section>.views(stream: stream, version: version, snapshots: snapshots)))
        return .views(Locked(Held(states: states, sent: version)))
      case (_, .resumed(_, let version)):
        try await send(coder.encode(feed.start))
        return .views(Locked(Held(states: nil, sent: version)))
      default:
        break
      }
    } catch {
      // `send` threw: the client went away.
    }
    control.stop()
    return nil
  }

  /// Sends every batch after the first message (`started`) until the subscription ends or `send` throws,
  /// then stops and calls `ended`, once. Parked with a sink (or stepping its views through the publisher),
  /// it holds no task: it returns once it first parks, and a task is started only for what wakes it.
  func follow(
    _ opened: WireService<Section, some Hashable & Sendable>.Opened, from started: Started,
    ended: @escaping @Sendable () -> Void
  ) async {
    let ended: @Sendable () -> Void = { [control] in
      control.stop()
      ended()
    }
    switch (shown, started) {
    case (.scope, _): await followScope(opened.feed, encodings: opened.encodings, ended: ended)
    case (.query(let view), .views(let held)):
      await followViews(opened.feed, ["": view], held: held, ended: ended)
    case (.views(let views), .views(let held)):
      await followViews(opened.feed, views, held: held, ended: ended)
    default: ended()
    }
  }

  /// Follows `feed`'s subscription: parked with `writeFrame` and no task when there is one, otherwise in
  /// the caller's task; `handle` gets what wakes it, and `ended` is called once at the end.
  private func follow(
    _ feed: WireFeed<Section>, writingTo writeFrame: SubscriptionSink<Section>?,
    lane: @escaping @Sendable () -> SubscriptionLane = { .first },
    _ handle: @escaping @Sendable (SubscriptionEvent<Section>) async throws -> Bool,
    ended: @escaping @Sendable () -> Void
  ) async {
    guard let writeFrame else {
      // `send` threw when it ends by throwing: the client went away.
      _ = try? await feed.subscription.follow(lane: lane, handle)
      ended()
      return
    }
    await feed.subscription.follow(
      parkingWith: writeFrame, lane: lane, parked: control.didPark, handle, ended: ended)
  }

  /// Sends each batch of the scope's state as it is, encoded once per batch and format for every session
  /// of the scope.
  private func followScope(
    _ feed: WireFeed<Section>, encodings: SharedEncodings, ended: @escaping @Sendable () -> Void
  ) async {
    var writeFrame: SubscriptionSink<Section>?
    if let sink {
      let format = coder.formatVersion
      writeFrame = { [coder] batch in
        sink(
          encodings.frame(from: batch.fromNumber, to: batch.toNumber, format: format) { coder.encode(batch) })
      }
    }
    await follow(
      feed, writingTo: writeFrame,
      { [control, send, coder] event in
        // Not announcing: batches only, each held once the follower asks for the next, right after.
        guard case .batch(let batch) = event else { return true }
        control.wakes.withLock { $0 += 1 }
        try await send(coder.encode(batch))
        return true
      }, ended: ended)
  }

  /// Sends each batch of the scope's state as the batches of `views` (one, named "", for a query) that it
  /// changed, from the version last sent (`held`). A view whose query throws ends the subscription with
  /// `queryFailed`, naming the view (or the query) only.
  private func followViews(
    _ feed: WireFeed<Section>, _ views: [String: SharedViewSteps<Section>], held: Locked<Held>,
    ended: @escaping @Sendable () -> Void
  ) async {
    let key = ViewsOfBatch<Section>.Key(views)
    let encode = batchEncoder()
    // Parked, the publisher steps the views for the task: a batch that changes none of them is held at
    // once, one that changes some is written to the sink; the task wakes only for what is left.
    var writeFrame: SubscriptionSink<Section>?
    if immediate {
      writeFrame = { [views, sink] batch in
        held.withLock { client in
          // A resumed subscription's views are projected by the task, off the publisher's.
          guard let states = client.states else { return false }
          let step = ViewsOfBatch.of(batch).step(views, key: key, from: states, batch)
          guard case .stepped(let next, let changes) = step.outcome else {
            client.woken = (batch.fromNumber, batch.toNumber, step)
            return false
          }
          if !changes.isEmpty {
            let frame = step.frame(from: client.sent, to: batch.toNumber, changes: changes, encode: encode)
            guard let sink, sink(frame) else {
              client.woken = (batch.fromNumber, batch.toNumber, step)
              return false
            }
            client.sent = batch.toNumber
          }
          client.states = next
          return true
        }
      }
    }
    // The subscription holds each batch once the sink took it, or once the loop asks for the next: an
    // edit's answer follows the message of its version, or the batch that changed no view. Each view costs
    // a step and a part of the message: the sink takes the lane of its number of views, after the sessions
    // that follow the scope as it is (a shared frame each) and those that show fewer views.
    await follow(
      feed, writingTo: writeFrame, lane: { SubscriptionLane(views.count) },
      { [control, send, self] event in
        guard case .batch(let batch) = event else { return true }
        control.wakes.withLock { $0 += 1 }
        var client = held.withLock { client in
          defer { client.woken = nil }
          return client
        }
        if client.states == nil {
          // Resumed: the client holds the views at this batch's start, the state they project from.
          switch SharedViewSteps.start(views, batch.changeset.source, at: batch.fromNumber) {
          case .success(let states): client.states = states
          case .failure(let error):
            try await failed(error)
            return false
          }
        }
        guard let states = client.states else { return false }
        var sent = client.sent
        // The step the publisher made of this batch when it woke the task, or the batch's shared one.
        let step =
          client.woken.flatMap { $0.from == batch.fromNumber && $0.to == batch.toNumber ? $0.step : nil }
          ?? ViewsOfBatch.of(batch).step(views, key: key, from: states, batch)
        guard case .stepped(let next, let changes) = step.outcome else {
          if case .failed(let name) = step.outcome, let view = views[name] {
            try await failed(SharedViewSteps.failure(of: view, named: name))
          }
          return false
        }
        if !changes.isEmpty {
          try await send(step.frame(from: sent, to: batch.toNumber, changes: changes, encode: encode).bytes)
          sent = batch.toNumber
        }
        held.withLock { $0 = Held(states: next, sent: sent) }
        return true
      }, ended: ended)
  }

  /// How the views' changes from one version to another are written: a query's `batch`, or a
  /// `viewBatches` message.
  private func batchEncoder() -> ViewsOfBatch<Section>.Encoder {
    let (coder, isQuery) = (coder, { if case .query = shown { true } else { false } }())
    // Two forms per format number: a query's and several views'.
    return ViewsOfBatch<Section>.Encoder(form: coder.formatVersion * 2 + (isQuery ? 1 : 0)) {
      from, to, changes, items in
      guard isQuery else {
        return WireBatchWriter.viewBatches(
          from: from, to: to, changes.mapValues { .changeset($0) }, items: items)
      }
      return WireBatchWriter.batch(
        from: from, to: to, .changeset(changes[""]!), formatVersion: coder.formatVersion, items: items)
    }
  }

  /// Tells the client that a view could not be evaluated (`error`, which never names a row), and ends the
  /// subscription.
  private func failed(_ error: WireError) async throws {
    control.stop()
    try await send(coder.encode(WireMessage<Section>.error(error)))
  }
}
