// One view of a scope's state (a query in one scope, or the whole scope), projected once for every session
// of that scope that shows it, whatever its format.

import SimpleSourceCore

/// The projection of one view (a declared query with its parameters, or the whole scope, in one scope),
/// shared by every session of that scope that shows it: a format-2 query, or a view of a subscribe of
/// several views (format 3).
///
/// Each session keeps its views' states, but takes them from here: the state at the version it starts
/// from is made once per version (the newest is kept), and a batch of the scope's state is projected once
/// per batch (the result is stored on the batch, which every session in step with the scope receives as
/// the same value). Sessions in step therefore hold the same states, not copies, and an edit costs each
/// distinct view one projection step, not each session. A session that lagged receives a batch of its own
/// (what it missed, composed) and projects that one itself.
///
/// The states are equal whichever session made them: a view's state at a version of its scope's stream is
/// the projection of the scope's state at that version.
final class SharedViewSteps<Section: SectionType>: Sendable {
  /// A step stored on a batch. It holds its maker, so that no other object takes the maker's identity (the
  /// batch's key) while the batch lives.
  private struct Step: Sendable {
    let maker: SharedViewSteps
    let result: (state: ProjectionState<Section>, change: Changeset<Section>?)?
  }

  let projection: Projection<Section>
  /// The query's name, for errors.
  let name: String
  /// Its newest reset, encoded once per version and format, for the sessions that subscribe it as a
  /// query (format 2).
  let encodings: SharedEncodings
  private let steps: ProjectionSteps<Section>
  /// The newest state made to start from, and its version of the scope's stream.
  private let newestStart = Locked<(version: Int, state: ProjectionState<Section>)?>(nil)
  /// What was made here (not taken from another session): how many states and steps (tests read it),
  /// and the rows of the newest state (to start from, or by a step) with its version. One lock: a step
  /// counts both at once.
  private let made = Locked<(count: Int, version: Int, rows: Int)>((0, .min, 0))

  /// How many states and steps were made here (not taken from another session).
  /// - Complexity: O(1).
  package var projected: Int { made.withLock { $0.count } }

  /// The rows the view's newest state shows: what it costs its scope's and origin's budgets of rows
  /// (``WireLimits/rowsPerScope``); 0 until a state is made.
  /// - Complexity: O(1).
  var rows: Int { made.withLock { $0.rows } }

  /// Counts a state made here, `state`, the view at `version`, and its rows unless a newer state's were
  /// counted.
  private func count(_ state: ProjectionState<Section>, at version: Int) {
    let rows = state.published.itemCount
    made.withLock { made in
      made.count += 1
      if made.version <= version { (made.version, made.rows) = (version, rows) }
    }
  }

  init(
    _ projection: Projection<Section>, name: String, steps: ProjectionSteps<Section> = ProjectionSteps(),
    encodings: SharedEncodings
  ) {
    self.projection = projection
    self.name = name
    self.steps = steps
    self.encodings = encodings
  }

  /// The view's state at `version` of the scope's stream, whose state is `scope`; `nil` when the
  /// projection throws.
  /// - Complexity: O(1) when a session started at `version` already; O(*n*) predicate calls otherwise.
  func start(_ scope: Snapshot<Section>, at version: Int) -> ProjectionState<Section>? {
    if let newest = newestStart.withLock({ $0 }), newest.version == version { return newest.state }
    guard let state = try? steps.make(scope, projection) else { return nil }
    count(state, at: version)
    newestStart.withLock { newest in
      if newest.map({ $0.version < version }) ?? true { newest = (version, state) }
    }
    return state
  }

  /// The states of `views` (by the client's names; a query is named "") at `version` of the scope's
  /// stream, whose state is `scope`: each view's ``start(_:at:)``.
  /// - Returns: The states, or `queryFailed` naming the first view that could not be evaluated (the query,
  ///   for a query), never the row: the projection's error may name one.
  /// - Complexity: O(*v* *n*) predicate calls for *v* views no session started at `version`; O(*v*)
  ///   otherwise.
  static func start(_ views: [String: SharedViewSteps], _ scope: Snapshot<Section>, at version: Int)
    -> Result<[String: ProjectionState<Section>], WireError>
  {
    var states: [String: ProjectionState<Section>] = [:]
    for (name, view) in views {
      guard let state = view.start(scope, at: version) else {
        return .failure(failure(of: view, named: name))
      }
      states[name] = state
    }
    return .success(states)
  }

  /// What a client is told when `view`, under the name `name` ("" for a query), could not be evaluated.
  static func failure(of view: SharedViewSteps, named name: String) -> WireError {
    let what = name.isEmpty ? "the query \(view.name)" : "the view \(name)"
    return WireError(.queryFailed, "\(what) could not be evaluated")
  }

  /// What the view shows of `scope`, made anew (tests compare clients with it); `nil` when the projection
  /// throws.
  /// - Complexity: O(*n*) predicate calls.
  func project(_ scope: Snapshot<Section>) -> Snapshot<Section>? {
    (try? steps.make(scope, projection))?.published
  }

  /// The view's state after `batch` of the scope's state, applied to `state` (the view at `batch.from`),
  /// and the change of what the view shows (`nil` or empty: none); `nil` when the projection throws.
  /// - Complexity: O(1) when another session took this batch; O(*k* log *n*) for *k* changes otherwise.
  func apply(_ batch: UpdateBatch<Section>, to state: ProjectionState<Section>)
    -> (state: ProjectionState<Section>, change: Changeset<Section>?)?
  {
    batch.shared(ObjectIdentifier(self)) {
      let result = try? steps.apply(state, batch.changeset, true)
      if let result { count(result.0, at: batch.toNumber) } else { made.withLock { $0.count += 1 } }
      return Step(maker: self, result: result)
    }.result
  }
}
