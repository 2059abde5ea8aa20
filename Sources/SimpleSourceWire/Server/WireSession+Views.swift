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
      for await batch in subscription.batches {
        if states.isEmpty {
          // Resumed: the client holds the views at this batch's start, the state they project from.
          guard let made = try await project(batch.changeset.source, at: batch.from) else { return }
          states = made
        }
        var batches: [String: WireBatch<Section>] = [:]
        for (name, state) in states {
          guard let view = views[name], let (next, change) = view.apply(batch, to: state) else {
            return try await failed(name)
          }
          states[name] = next
          if let change, !change.isEmpty {
            batches[name] = WireBatch(from: sent, to: batch.to, stages: change.stages.map(WireStage.init))
          }
        }
        guard !batches.isEmpty else { continue }
        try await send(
          coder.encode(WireMessage<Section>.viewBatches(from: sent, to: batch.to, batches: batches)))
        sent = batch.to
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
