// A source that shows a filtered and sorted view of another, deriving its batches from the parent's.

/// A data source that shows a filtered and sorted view of a parent source: allaboutapps' `isHidden`, live.
///
/// ```swift
/// let roster = try BasicDataSource(sections: teams)
/// let visible = try await ProjectedDataSource(roster, projection: Projection(where: { $0.isActive }))
/// let subscription = await visible.subscribe()          // any number of subscribers and views
/// try await visible.setProjection(Projection(where: { $0.name.contains(query) }))   // one batch
/// ```
///
/// A projected source is a ``DataSourceType`` with the whole contract (G1–G13): it follows its parent
/// through one subscription and publishes through a ``Broadcaster``. Its versions are its own by default:
/// they count the batches of what it shows, one per parent batch that changes what is shown and one per
/// ``setProjection(_:)`` that does. With ``ProjectedVersions/parent`` they are the parent's instead (a
/// fixed projection whose clients match versions their writes were answered with).
///
/// - **Cost follows the change.** A parent batch that touches *k* items costs O(*k* log *n*): the
///   projection's closures are asked about those *k* items only, each is taken out of the persistent
///   shown list and put back where the projection places it (by descent; an edited item that stays where
///   it was costs two comparisons), and the batch is derived from the touched ids. A batch that inserts,
///   deletes or moves parent sections, or shows or hides a section, costs O(*n*) integer steps. A new
///   projection projects and diffs in full. See <doc:DerivedSources>.
/// - **Windows.** With ``Projection/rows`` it publishes those rows of each section (a page, or what a
///   scrolled view shows): a parent batch whose changes all land after the window costs its O(*k* log *n*)
///   and publishes nothing; one that reaches the window reads it again, O(*s* · *w* log *n*) for *w* rows
///   in *s* sections. ``moveWindow(to:)`` moves it without asking the closures anything.
/// - **Bad closures.** When a closure throws, or the order is not a strict weak ordering, what is shown
///   stays as it was: ``setProjection(_:)`` throws the ``ProjectionError``, and a parent batch's error is
///   delivered on ``errors`` (the next parent batch projects in full again). A closure that traps stops
///   the process, as anywhere in Swift.
/// - **Per subscriber.** Each view or client that needs its own filter makes its own projected source
///   over the same parent (``DataSourceType/projected(_:versions:history:)``): each one's work runs on its own actor, off
///   the main actor.
/// - **Lifetime.** The projected source holds its parent. Dropping it ends its subscription to the
///   parent and finishes its own subscribers' streams.
public final class ProjectedDataSource<Section: SectionType>: DataSourceType {
  // Guard map: every field is set once. What changes is the engine's (an actor: the projected state and
  // the parent version it reflects), changed only by the follower task, one parent event at a time;
  // subscribers live in the engine's `broadcaster`, behind its own locks; the follower's progress is its
  // parent subscription's, a lock of its own.
  @usableFromInline let engine: ProjectionEngine<Section>
  @usableFromInline let follower: Task<Void, Never>
  @usableFromInline let parentSubscription: Subscription<Section>

  /// The source this one shows.
  public let parent: any DataSourceType<Section>

  /// Errors of parent batches whose projection failed (a closure threw); the previous projection stayed.
  /// Keeps the newest 100 if nobody reads them.
  public let errors: AsyncStream<ProjectionError>

  /// Starts showing `parent` through `projection`.
  ///
  /// Inlinable so that the projection's work is specialised for your types in your build.
  ///
  /// - Parameters:
  ///   - parent: The source shown.
  ///   - projection: What is shown of it.
  ///   - versions: How versions are numbered: the source's own count, or the parent's versions.
  ///   - history: How many versions it retains for subscribers that resume (G11).
  /// - Throws: ``ProjectionError`` when the projection's closures fail on the parent's current state.
  /// - Complexity: O(*n*) predicate calls (O(*n* log *n*) comparisons when sorting), off the caller's actor.
  @inlinable
  public convenience init<Parent: DataSourceType>(
    _ parent: Parent, projection: Projection<Section> = .all, versions: ProjectedVersions = .own,
    history: HistoryLimit = .default
  ) async throws(ProjectionError) where Parent.Section == Section {
    try await self.init(
      parent, projection: projection, versions: versions, history: history, steps: ProjectionSteps())
  }

  /// A projected source that steps through `steps`: made where the build specialises them for
  /// `Section`, when the caller itself is generic code (a service's scopes). It follows the parent in the
  /// lane `lane` gives each time it asks for the parent's next batch (``SubscriptionLane``).
  /// - Complexity: as ``init(_:projection:versions:history:)``.
  @inlinable
  package init<Parent: DataSourceType>(
    _ parent: Parent, projection: Projection<Section>, versions: ProjectedVersions, history: HistoryLimit,
    steps: ProjectionSteps<Section>, lane: @escaping @Sendable () -> SubscriptionLane = { .first }
  ) async throws(ProjectionError) where Parent.Section == Section {
    let subscription = await parent.subscribe()
    let state: ProjectionState<Section>
    do {
      state = try await steps.start(subscription.snapshot, projection)
    } catch {
      subscription.cancel()
      throw error
    }
    let (errors, reporter) = AsyncStream.makeStream(
      of: ProjectionError.self, bufferingPolicy: .bufferingNewest(100))
    let engine = ProjectionEngine(
      state: state, parentVersion: subscription.version.number, parentCounter: subscription.counter,
      versions: versions, history: history, steps: steps, reporter: reporter)
    self.engine = engine
    self.errors = errors
    self.parentSubscription = subscription
    self.parent = parent
    follower = followParent(subscription, on: engine, lane: lane) {
      $0.heldWithoutBatch($1)
    } receive: {
      $0.receive($1)
    }
  }

  deinit {
    follower.cancel()
    parentSubscription.cancel()
    engine.broadcaster.finish()
    engine.reporter.finish()
  }

  /// The projection in use.
  public var projection: Projection<Section> { get async { await engine.state.projection } }

  /// Shows the parent through `projection` from now on, publishing the difference as one batch (none
  /// when nothing shown changes).
  ///
  /// Its window (``Projection/rows``, counted as ``Projection/rowsAcrossSections`` says) is read anew,
  /// whatever the projection it replaces counted: once the call returns, ``snapshot`` is the new
  /// projection of the parent state it last followed, and ``settled()`` brings it to the parent's newest.
  ///
  /// - Throws: ``ProjectionError`` when a closure fails, or
  ///   ``ProjectionError/Code-swift.enum/projectionFixed`` when versions are the parent's; the previous
  ///   projection stays, and nothing is published.
  /// - Complexity: O(*n*) predicate calls (O(*n* log *n*) comparisons when sorting) and a full diff, on
  ///   the projected source's actor.
  public func setProjection(_ projection: Projection<Section>) async throws(ProjectionError) {
    try await engine.replace(projection)
  }

  /// Shows rows `rows` of each section from now on (`nil`: every row), keeping the filter and the order,
  /// and publishes the difference as one batch (none when nothing shown changes): a list's page, or the
  /// window a scrolled view needs.
  ///
  /// - Throws: ``ProjectionError/Code-swift.enum/projectionFixed`` when versions are the parent's; the
  ///   window stays, and nothing is published.
  /// - Complexity: O(*s* · *w* log *n*) to read a window of *w* rows in each of *s* shown sections, and a
  ///   diff of the two windows: no predicate or comparison is asked. O(*n*) to or from `nil`.
  public func moveWindow(to rows: Range<Int>?) async throws(ProjectionError) {
    try await engine.moveWindow(to: rows)
  }

  /// The newest state shown.
  public var snapshot: Snapshot<Section> { get async { engine.broadcaster.snapshot } }

  /// The version of the newest state shown.
  public var version: Version { get async { engine.broadcaster.version } }

  /// The number of live subscriptions.
  public var subscriberCount: Int { engine.broadcaster.subscriberCount }

  /// Returns the current snapshot and the batches that follow it; see ``Subscription``.
  public func subscribe(pacing: Pacing) async -> Subscription<Section> {
    engine.broadcaster.subscribe(pacing: pacing)
  }

  /// Resumes a subscriber from a version it holds, or resets it (G11); see ``Resumption``.
  ///
  /// With ``ProjectedVersions/parent``, the state at any parent version *v* is the projection of the
  /// parent's state at *v*, whoever showed it: so a version this source does not retain (it was made
  /// later, or pruned it, or never published *v* because nothing shown changed) still resumes when the
  /// parent retains *v*. This is how a view made late, on another instance following the same log,
  /// resumes a client of the view that instance had.
  /// - Complexity: O(log *v*) for *v* retained versions and O(*k*) for the ids changed since; a version
  ///   only the parent retains costs O(*n*) predicate calls and a full diff, off the caller's actor.
  public func subscribe(from version: Int, pacing: Pacing) async -> Resumption<Section> {
    let resumption = engine.broadcaster.subscribe(from: version, pacing: pacing)
    guard case .reset(let reset) = resumption, engine.versions == .parent, version < reset.version.number,
      let held = await shownByParent(at: version)
    else { return resumption }
    reset.cancel()
    return engine.broadcaster.subscribe(from: version, derived: held, pacing: pacing)
  }

  /// What this source shows at the parent's `version`, when the parent retains it.
  private func shownByParent(at version: Int) async -> Snapshot<Section>? {
    let resumption = await parent.subscribe(from: version, pacing: .immediate)
    resumption.subscription.cancel()
    guard resumption.isResumed else { return nil }
    let projection = await engine.state.projection
    return try? ProjectionState(parent: resumption.subscription.snapshot, projection: projection).published
  }

  /// Returns once every mutation of the parent made before the call has reached this source and its
  /// result has been offered to every subscriber (G10).
  public func settled() async {
    await settle(parent, following: parentSubscription)
  }
}

extension DataSourceType {
  /// A projected source showing this one through `projection`: one per view or client that needs its
  /// own filter.
  /// - Complexity: O(*n*) predicate calls, off the caller's actor.
  @inlinable
  public func projected(
    _ projection: Projection<Section>, versions: ProjectedVersions = .own, history: HistoryLimit = .default
  ) async throws(ProjectionError) -> ProjectedDataSource<Section> {
    try await ProjectedDataSource(self, projection: projection, versions: versions, history: history)
  }

  /// ``projected(_:versions:history:)`` stepping through `steps`, following this source in the lane
  /// `lane` gives (``SubscriptionLane``).
  /// - Complexity: as ``projected(_:versions:history:)``.
  @inlinable
  package func projected(
    _ projection: Projection<Section>, versions: ProjectedVersions, history: HistoryLimit,
    steps: ProjectionSteps<Section>, lane: @escaping @Sendable () -> SubscriptionLane = { .first }
  ) async throws(ProjectionError) -> ProjectedDataSource<Section> {
    try await ProjectedDataSource(
      self, projection: projection, versions: versions, history: history, steps: steps, lane: lane)
  }
}

/// The projection's steps as function values, made where the client's build specialises them (see
/// `Differ`).
@usableFromInline
package struct ProjectionSteps<Section: SectionType>: Sendable {
  @usableFromInline package let make:
    @Sendable (Snapshot<Section>, Projection<Section>) throws(ProjectionError) -> ProjectionState<Section>
  @usableFromInline package let apply:
    @Sendable (ProjectionState<Section>, Changeset<Section>, Bool) throws(ProjectionError) -> (
      ProjectionState<Section>, Changeset<Section>?
    )
  @usableFromInline let replace:
    @Sendable (ProjectionState<Section>, Projection<Section>) throws(ProjectionError) -> (
      ProjectionState<Section>, Changeset<Section>?
    )
  @usableFromInline let moveWindow:
    @Sendable (ProjectionState<Section>, Range<Int>?) -> (ProjectionState<Section>, Changeset<Section>?)
  /// The loops of the projected source's hub over its subscribers, made here with the steps.
  @usableFromInline let loops: HubLoops<Section>

  @inlinable
  package init() {
    make = { (parent, projection) throws(ProjectionError) in
      let state = try ProjectionState(parent: parent, projection: projection)
      // The persistent form that parent batches edit, built with the rest of the O(n) start rather than
      // on the first parent batch (a new projection, being a full diff, leaves it to that batch).
      _ = state.shown.tree
      return state
    }
    apply = { (state, changeset, startsAtParent) throws(ProjectionError) in
      let (next, change) = try state.applying(changeset, startsAtParent: startsAtParent)
      return next.windowing(change, after: state)
    }
    replace = { (state, projection) throws(ProjectionError) in
      let (next, change) = try state.replacingProjection(with: projection)
      return next.windowing(change, after: state, sameOrder: false)
    }
    moveWindow = { state, rows in state.movingWindow(to: rows) }
    loops = HubLoops()
  }

  /// The first projection, on the global concurrent executor (G9).
  @concurrent
  @usableFromInline
  func start(_ parent: Snapshot<Section>, _ projection: Projection<Section>) async throws(ProjectionError)
    -> ProjectionState<Section>
  {
    try make(parent, projection)
  }
}

/// The actor a projected source works on: it applies parent batches and new projections in order, and
/// publishes what changes.
@usableFromInline
actor ProjectionEngine<Section: SectionType> {
  @usableFromInline var state: ProjectionState<Section>
  /// The parent version the state reflects.
  @usableFromInline var parentVersion: Int
  /// How versions are numbered.
  @usableFromInline let versions: ProjectedVersions
  @usableFromInline let steps: ProjectionSteps<Section>
  @usableFromInline nonisolated let reporter: AsyncStream<ProjectionError>.Continuation
  @usableFromInline nonisolated let broadcaster: Broadcaster<Section>

  @usableFromInline
  init(
    state: ProjectionState<Section>, parentVersion: Int, parentCounter: VersionCounter,
    versions: ProjectedVersions, history: HistoryLimit, steps: ProjectionSteps<Section>,
    reporter: AsyncStream<ProjectionError>.Continuation
  ) {
    self.state = state
    self.parentVersion = parentVersion
    self.versions = versions
    self.steps = steps
    self.reporter = reporter
    // Numbered by the parent, it counts with the parent's counter: a wait for a parent's version is
    // answered here, and one for another counter's throws (see ``Version``).
    broadcaster = Broadcaster(
      snapshot: state.published, version: versions == .parent ? parentVersion : 0, history: history,
      counter: versions == .parent ? parentCounter : nil, loops: steps.loops)
  }

  /// The parent holds `version` with no batch: its mutations cancelled out (G4). Numbered by the parent,
  /// this source holds it too (G13); numbering its own, it made no version.
  @usableFromInline
  func heldWithoutBatch(_ version: Int) {
    if versions == .parent { broadcaster.reachedWithoutBatch(to: version) }
  }

  /// Applies one parent batch.
  @usableFromInline
  func receive(_ batch: UpdateBatch<Section>) {
    do {
      let (next, change) = try steps.apply(state, batch.changeset, batch.fromNumber == parentVersion)
      state = next
      let published = change.map {
        broadcaster.publishNext($0, as: versions == .parent ? batch.toNumber : nil)
      }
      // A parent version that changed nothing here is held by whoever holds the newest state (G13).
      if versions == .parent, published != true { broadcaster.reachedWithoutBatch(to: batch.toNumber) }
    } catch {
      reporter.yield(error)
      state = state.skipping(to: batch.snapshot)
    }
    parentVersion = batch.toNumber
  }

  /// Replaces the projection.
  @usableFromInline
  func replace(_ projection: Projection<Section>) throws(ProjectionError) {
    guard versions == .own else { throw ProjectionError(.projectionFixed) }
    let (next, change) = try steps.replace(state, projection)
    state = next
    if let change { publish(change, as: nil) }
  }

  /// Moves the window.
  @usableFromInline
  func moveWindow(to rows: Range<Int>?) throws(ProjectionError) {
    guard versions == .own else { throw ProjectionError(.projectionFixed) }
    let (next, change) = steps.moveWindow(state, rows)
    state = next
    if let change { publish(change, as: nil) }
  }

  /// Publishes `change` as `version`, or as the version after the newest.
  private func publish(_ change: Changeset<Section>, as version: Int?) {
    broadcaster.publishNext(change, as: version)
  }
}
