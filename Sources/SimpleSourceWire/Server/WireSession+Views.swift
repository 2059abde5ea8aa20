// Several views of the source on one connection, presented at one version: the session follows the
// scope's state once and projects every view from each of its batches, so the views' batches of one
// version leave together, in one message.

import Foundation
import SimpleSourceCore

extension WireSession {
  /// Subscribes the client to `requested` views (format 3), replacing its subscription: each view a
  /// declared query with its parameters, or the whole scope (`nil`), under the client's name for it.
  ///
  /// The session follows its scope's state (the whole source, or the scope's shared view) with one
  /// subscription and keeps every view's state, so that one batch of that state becomes the batches of
  /// every view for the same versions, sent in one ``WireMessage/viewBatches(from:to:batches:)`` message;
  /// views that did not change are left out, and a batch that changes no view sends nothing. The views'
  /// projections are shared: every session of the scope that asks for the same query and parameters takes
  /// its states from one ``SharedViewSteps``, so a batch is projected once per distinct view, not once per
  /// session, and sessions in step hold the same states rather than copies. It
  /// starts with ``WireMessage/views(stream:version:snapshots:)``, or with
  /// ``WireMessage/resumed(stream:version:)`` when the client holds the views at a version of the scope's
  /// stream that is still retained (`stream`, `from`): the views' projections then start from the first
  /// batch's starting state.
  /// - Throws: ``WireError``: `invalidParameters` for no views, `limitReached` for more than the service's
  ///   ``WireLimits/viewsPerSubscribe`` or a scope with as many subscriptions as it allows; a query's
  ///   `unknownQuery` or `invalidParameters`.
  /// - Complexity: O(*v* *n*) predicate calls to start *v* views at a version no session of the scope
  ///   started them at, O(*v*) otherwise; per batch of *k* changes, O(*v* *k* log *n*) for the first session
  ///   that receives it and O(*v*) for every other (a session that lagged projects its own catch-up).
  func subscribeViews(_ requested: [String: WireQueryRequest?], stream: String?, from: Int?)
    async throws(WireError)
  {
    guard !isClosed else { return }
    guard !requested.isEmpty else { throw WireError(.invalidParameters, "a subscribe names at least 1 view") }
    let limit = service.limits.viewsPerSubscribe
    guard requested.count <= limit else {
      throw WireError(.limitReached, "a subscribe names at most \(limit) views, not \(requested.count)")
    }
    let scope = scope
    let (views, leases) = try await service.viewSteps(for: requested, scope: scope)
    var opened: WireService<Section, Scope>.Opened
    do throws(WireError) {
      opened = try await service.open(
        stream: stream, from: from, query: nil, scope: scope, pacing: pacing, session: number)
    } catch {
      await service.release(leases)
      throw error
    }
    opened.stepsLeases = leases
    let send = send
    await install(opened, scope: scope) {
      (request, viewsRequest) = (nil, requested)
    } sending: { feed, started, control in
      await ViewsSender(send: send, started: started, control: control, views: views).run(feed)
    }
  }
}

/// The sending task of a subscription of several views: their states at the scope's version, then each
/// batch of the scope's state as the batches of the views it changed, in one message.
struct ViewsSender<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  let send: @Sendable (Data) async throws -> Void
  /// Reaches the subscription's version once the views' states are sent.
  let started: HeldVersion
  let control: SendingControl<Section>
  /// The views' shared projections, by the client's names for them.
  let views: [String: SharedViewSteps<Section>]
  let coder = WireCoder(formatVersion: WireMessage<Section>.viewsFormat)

  /// Sends the views' states (or that they are resumed), then their batches. A view whose query throws
  /// ends the subscription with `queryFailed`, naming the view only.
  func run(_ feed: WireFeed<Section>) async {
    defer { started.finish() }
    let subscription = feed.subscription
    guard control.hold(subscription) else { return }
    let key = ViewsOfBatch<Section>.Key(views)
    do {
      var states: [String: ProjectionState<Section>] = [:]
      var sent: Int
      switch feed.start {
      case .reset(let stream, let version, let snapshot):
        guard let made = try await project(snapshot, at: version) else { return }
        states = made
        let snapshots = states.mapValues(\.published)
        try await send(
          coder.encode(WireMessage<Section>.views(stream: stream, version: version, snapshots: snapshots)))
        sent = version
      case .resumed(_, let version):
        try await send(coder.encode(feed.start))
        sent = version
      default:
        return
      }
      started.hold(through: subscription.version)
      // The subscription holds each batch once the loop asks for the next: an edit's answer follows the
      // message of its version, or the batch that changed no view.
      try await subscription.follow { event in
        guard case .batch(let batch) = event else { return true }
        if states.isEmpty {
          // Resumed: the client holds the views at this batch's start, the state they project from.
          guard let made = try await project(batch.changeset.source, at: batch.from) else { return false }
          states = made
        }
        // Projected and encoded once per batch for every session that holds the same views.
        let shared = batch.shared(ObjectIdentifier(ViewsOfBatch<Section>.self)) { ViewsOfBatch<Section>() }
        let step = shared.step(views, key: key, from: states, batch)
        guard case .stepped(let next, let changes) = step.outcome else {
          if case .failed(let name) = step.outcome { try await failed(name) }
          return false
        }
        states = next
        guard !changes.isEmpty else { return true }
        let (from, coder) = (sent, coder)
        try await send(
          step.message(from: from) {
            let batches = changes.mapValues { change in
              WireBatch(from: from, to: batch.to, stages: change.stages.map(WireStage.init))
            }
            return coder.encode(WireMessage<Section>.viewBatches(from: from, to: batch.to, batches: batches))
          })
        sent = batch.to
        return true
      }
    } catch {
      // `send` threw: the client went away.
      control.stop()
    }
  }

  /// Every view's projection of `state`; `nil` once a view failed (the client was told).
  private func project(_ state: Snapshot<Section>, at version: Int) async throws
    -> [String: ProjectionState<Section>]?
  {
    var states: [String: ProjectionState<Section>] = [:]
    for (name, view) in views {
      guard let projected = view.start(state, at: version) else {
        try await failed(name)
        return nil
      }
      states[name] = projected
    }
    return states
  }

  /// Tells the client that view `name` could not be evaluated (never which row), and ends the subscription.
  private func failed(_ name: String) async throws {
    control.stop()
    let error = WireError(.queryFailed, "the view \(name) could not be evaluated")
    try await send(coder.encode(WireMessage<Section>.error(error)))
  }
}

/// What one batch of a scope's state becomes for the sessions that follow it with the same views (the same
/// shared projections under the same names): the views' next states and changes, made once, and each
/// `viewBatches` message, encoded once per version it starts from. Kept on the batch
/// (``UpdateBatch/shared(_:_:)``), so it lives as long as the batch does.
final class ViewsOfBatch<Section: SectionType>: Sendable {
  /// A session's views, by name and identity.
  struct Key: Hashable {
    let views: [String: ObjectIdentifier]

    init(_ views: [String: SharedViewSteps<Section>]) {
      self.views = views.mapValues { ObjectIdentifier($0) }
    }
  }

  /// What the views became.
  enum Outcome: Sendable {
    /// Every view's state after the batch, and the changes of those it changed.
    case stepped([String: ProjectionState<Section>], [String: Changeset<Section>])
    /// The view of this name could not be evaluated.
    case failed(String)
  }

  /// The batch stepped for one set of views, and its messages.
  final class Step: Sendable {
    /// Held, so that no other view takes their identities (the key) while the batch lives.
    let views: [String: SharedViewSteps<Section>]
    let outcome: Outcome
    private let messages = Locked<[Int: Data]>([:])

    init(views: [String: SharedViewSteps<Section>], outcome: Outcome) {
      self.views = views
      self.outcome = outcome
    }

    /// The message from version `from`: made by `make` the first time, then shared. Two sessions racing
    /// may both make it; the first stored is sent by both.
    /// - Complexity: O(1) besides `make` the first time.
    func message(from: Int, make: () -> Data) -> Data {
      if let bytes = messages.withLock({ $0[from] }) { return bytes }
      let bytes = make()
      return messages.withLock { messages in
        if let stored = messages[from] { return stored }
        messages[from] = bytes
        return bytes
      }
    }
  }

  private let steps = Locked<[Key: Step]>([:])

  /// The batch stepped for `views` (`key`), from `states` (the views at the batch's start): made by the
  /// first session that asks, from each view's shared step (``SharedViewSteps/apply(_:to:)``).
  /// - Complexity: O(*v*) for *v* views when another session asked; otherwise as *v* shared steps.
  func step(
    _ views: [String: SharedViewSteps<Section>], key: Key, from states: [String: ProjectionState<Section>],
    _ batch: UpdateBatch<Section>
  ) -> Step {
    if let step = steps.withLock({ $0[key] }) { return step }
    var next = states
    var changes: [String: Changeset<Section>] = [:]
    var outcome: Outcome?
    for (name, state) in states {
      guard let view = views[name], let (stepped, change) = view.apply(batch, to: state) else {
        outcome = .failed(name)
        break
      }
      next[name] = stepped
      if let change, !change.isEmpty { changes[name] = change }
    }
    let step = Step(views: views, outcome: outcome ?? .stepped(next, changes))
    return steps.withLock { steps in
      if let stored = steps[key] { return stored }
      steps[key] = step
      return step
    }
  }
}
