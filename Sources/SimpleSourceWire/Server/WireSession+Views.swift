// Several views of the source on one connection, presented at one version: the session follows the
// scope's state once and projects every view from each of its batches, so the views' batches of one
// version leave together, in one message.

import Foundation
import SimpleSourceCore

extension WireSession {
  /// Subscribes the client to `requested` views (format 3), replacing its subscription: each view a
  /// declared query with its parameters, or the whole scope (`nil`), under the client's name for it.
  ///
  /// The session follows its scope's state (the whole source, or the scope's shared state) with one
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
  ///   `unknownQuery` or `invalidParameters`; `queryFailed` for a view that cannot be evaluated at the
  ///   version the client starts from. The subscription it had goes on then.
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
    try await subscribe(.views(requested), stream: stream, from: from)
  }
}

/// What one batch of a scope's state becomes for the sessions that follow it with the same views (the same
/// shared projections under the same names; a query is one view named ""): the views' next states and
/// changes, made once, and each message, encoded once per version it starts from, form and format. Kept on the batch
/// (``UpdateBatch/shared(_:_:)``), so it lives as long as the batch does.
final class ViewsOfBatch<Section: SectionType>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// A session's views, by name and identity.
  struct Key: Hashable {
    let views: [String: ObjectIdentifier]
    /// The hash of `views`, made once: a session looks its step up with the same key for every batch.
    let hash: Int

    init(_ views: [String: SharedViewSteps<Section>]) {
      self.views = views.mapValues { ObjectIdentifier($0) }
      hash = self.views.hashValue
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    static func == (lhs: Key, rhs: Key) -> Bool { lhs.hash == rhs.hash && lhs.views == rhs.views }
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
    /// The batch's items' JSON, shared with every other step of the batch.
    let items: WireValueCache<Section.Item.ID>
    private let frames = Locked<[Encoder.Key: WireFrame]>([:])

    init(views: [String: SharedViewSteps<Section>], outcome: Outcome, items: WireValueCache<Section.Item.ID>)
    {
      self.views = views
      self.outcome = outcome
      self.items = items
    }

    /// The message of `changes` (this step's) from version `from` to `to`, written by `encode`: made the
    /// first time, then shared by every session that sends it in the same form (a session that resumed at
    /// another version asks for its own). Two sessions racing may both encode it; the first stored is sent
    /// by both.
    /// - Complexity: O(1) when made already; O(size of the changes) otherwise.
    func frame(from: Int, to: Int, changes: [String: Changeset<Section>], encode: Encoder) -> WireFrame {
      let key = Encoder.Key(from: from, form: encode.form)
      if let frame = frames.withLock({ $0[key] }) { return frame }
      let frame = WireFrame(bytes: encode.make(from, to, changes, items))
      return frames.withLock { frames in
        if let stored = frames[key] { return stored }
        frames[key] = frame
        return frame
      }
    }
  }

  /// How the views' changes from one version to another are written, and what tells that form from others
  /// (a query's `batch` or a `viewBatches` message, and the format number).
  struct Encoder: Sendable {
    struct Key: Hashable {
      let from: Int
      let form: Int
    }

    /// Tells this form from the others a batch is written in.
    let form: Int
    let make:
      @Sendable (
        _ from: Int, _ to: Int, _ changes: [String: Changeset<Section>],
        _ items: WireValueCache<Section.Item.ID>
      ) -> Data
  }

  /// What `batch` becomes for the sessions that follow it with views: made by the first that asks.
  /// - Complexity: O(1).
  static func of(_ batch: UpdateBatch<Section>) -> ViewsOfBatch {
    batch.shared(ObjectIdentifier(ViewsOfBatch<Section>.self)) { ViewsOfBatch<Section>() }
  }

  private let steps = Locked<[Key: Step]>([:])
  /// The JSON of the batch's items, made once for every view that shows them: a batch's item of a given id
  /// has one content, whichever view shows it.
  private let items = WireValueCache<Section.Item.ID>()

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
    let step = Step(views: views, outcome: outcome ?? .stepped(next, changes), items: items)
    return steps.withLock { steps in
      if let stored = steps[key] { return stored }
      steps[key] = step
      return step
    }
  }
}
