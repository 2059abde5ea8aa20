// One source showing the sections of several, in order, each child mutating on its own.

/// Why a composite refused a child or one of its states.
public struct CompositionError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public enum Code: String, Hashable, Sendable, CustomStringConvertible {
    /// The raw value.
    public var description: String { rawValue }

    /// A section id of the child is also a section id of another child.
    case duplicateSectionID
    /// An item id of the child is also an item id of another child.
    case duplicateItemID
    /// The child is already in the composite.
    case childAlreadyAdded
    /// The child is not in the composite.
    case unknownChild
    /// The insertion index is outside `0...children.count`.
    case indexOutOfRange
  }

  /// What went wrong.
  public var code: Code
  /// The child's index in the composite (where it is, or would be).
  public var child: Int?
  /// The clashing id, described.
  public var id: String?

  /// Creates an error.
  @usableFromInline package init(_ code: Code, child: Int? = nil, id: String? = nil) {
    self.code = code
    self.child = child
    self.id = id
  }

  /// `duplicateItemID: child 2: id 42`.
  public var description: String {
    "\(code)" + (child.map { ": child \($0)" } ?? "") + (id.map { ": id \($0)" } ?? "")
  }
}

/// One source showing the sections of several child sources, in order: Squarespace's `CompositeDataSource`.
///
/// ```swift
/// let screen = try await CompositeDataSource(pinned, inbox, archive)
/// try await screen.insert(drafts, at: 1)            // its sections appear as one batch
/// ```
///
/// - **Ids.** Section ids and item ids stay unique across the children: a child that would clash is
///   refused with a ``CompositionError`` when added. When a child's *new state* clashes, the composite
///   keeps showing that child's previous state, reports the error once on ``errors``, and shows the
///   child's newest state as soon as it fits: after any child's batch or a removal, the held-back
///   children are tried together (children that swapped ids fit only together), then one by one.
/// - **Versions** are the composite's own, contiguous: one per child batch, and one per child added or
///   removed. Each child mutates on its own; their batches are applied one at a time, in the order they
///   arrive.
/// - **Cost follows the change.** A child's batch that keeps the child's sections costs O(*s* + *k* log
///   *n*) for *s* sections and *k* touched items: the touched items are moved in the composite's
///   persistent tree and the batch is derived from their ids, without copying any child's sections. A
///   batch that inserts, deletes or moves sections is shifted into place over the arrays, O(*n*). Adding
///   or removing a child, or showing a held-back one, diffs in full.
/// - **Lifetime.** The composite holds its children; dropping it ends its subscriptions to them and
///   finishes its own subscribers' streams.
public final class CompositeDataSource<Section: SectionType>: DataSourceType {
  @usableFromInline let engine: CompositeEngine<Section>

  /// Child states that clashed with another child's ids; the composite kept the child's previous state.
  /// Keeps the newest 100 if nobody reads them.
  public let errors: AsyncStream<CompositionError>

  /// A composite with no children yet: add them with ``append(_:)`` and ``insert(_:at:)``. This is the
  /// way to build a composite below iOS 16, macOS 13, tvOS 16 and watchOS 9 (see ``init(_:)``).
  /// - Complexity: O(1).
  @inlinable
  public init() {
    let (errors, reporter) = AsyncStream.makeStream(
      of: CompositionError.self, bufferingPolicy: .bufferingNewest(100))
    self.errors = errors
    engine = CompositeEngine(snapshot: Snapshot(), reporter: reporter, placing: CompositePlacing())
  }

  /// Shows `children`, in order.
  ///
  /// An array of `any DataSourceType<Section>` needs the runtime support for parameterized protocol types
  /// that arrived with iOS 16, macOS 13, tvOS 16 and watchOS 9; below those, list the children as arguments.
  /// - Throws: ``CompositionError`` when two children share a section or item id.
  /// - Complexity: O(*n*) for *n* items in all.
  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  @inlinable
  public convenience init(_ children: [any DataSourceType<Section>]) async throws(CompositionError) {
    try await self.init(sources: children.map { ChildSource($0) })
  }

  @inlinable
  init(sources children: [ChildSource<Section>]) async throws(CompositionError) {
    let (errors, reporter) = AsyncStream.makeStream(
      of: CompositionError.self, bufferingPolicy: .bufferingNewest(100))
    self.errors = errors
    // The first children make the first state, version 0: no batch.
    var subscriptions: [Subscription<Section>] = []
    var sections: [Section] = []
    for child in children {
      let subscription = await child.source.subscribe()
      subscriptions.append(subscription)
      sections += subscription.snapshot.sections
    }
    let keys = children.map { ObjectIdentifier($0.source) }
    if let repeated = keys.indices.first(where: { keys[..<$0].contains(keys[$0]) }) {
      for subscription in subscriptions { subscription.cancel() }
      throw CompositionError(.childAlreadyAdded, child: repeated)
    }
    let snapshot: Snapshot<Section>
    do {
      snapshot = try Snapshot(sections)
    } catch {
      for subscription in subscriptions { subscription.cancel() }
      let position = error.positions.last?.section ?? error.sectionIndices.last ?? 0
      var child = 0
      var count = 0
      for subscription in subscriptions {
        count += subscription.snapshot.sections.count
        if position < count { break }
        child += 1
      }
      throw CompositeEngine<Section>.clash(error, childAt: child)
    }
    // The persistent form that children's batches edit, built with the rest of the O(n) start (here,
    // where the client's build specialises it).
    _ = snapshot.tree
    engine = CompositeEngine(snapshot: snapshot, reporter: reporter, placing: CompositePlacing())
    for (child, subscription) in zip(children, subscriptions) {
      await engine.follow(child.source, subscription, at: nil)
    }
  }

  deinit { engine.stop() }

  /// The children, in order.
  ///
  /// An array of `any DataSourceType<Section>` needs the runtime support for parameterized protocol types
  /// that arrived with iOS 16, macOS 13, tvOS 16 and watchOS 9.
  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  public var children: [any DataSourceType<Section>] { get async { await engine.children.map(\.source) } }

  /// Adds `child` after the others; its sections appear as one batch.
  /// - Throws: ``CompositionError`` when it shares an id with another child or is already added.
  /// - Complexity: O(*n*): one full diff.
  public func append(_ child: some DataSourceType<Section>) async throws(CompositionError) {
    try await engine.insert(child, at: nil)
  }

  /// Inserts `child` at `index` among the children; its sections appear as one batch.
  /// - Throws: ``CompositionError`` when it shares an id with another child, is already added, or `index`
  ///   is out of range.
  /// - Complexity: O(*n*): one full diff.
  public func insert(_ child: some DataSourceType<Section>, at index: Int) async throws(CompositionError) {
    try await engine.insert(child, at: index)
  }

  /// Removes `child`; its sections disappear as one batch.
  /// - Throws: ``CompositionError/Code-swift.enum/unknownChild`` when it is not a child.
  /// - Complexity: O(*n*): one full diff.
  public func remove(_ child: some DataSourceType<Section>) async throws(CompositionError) {
    try await engine.remove(child)
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
  public func subscribe(from version: Int, pacing: Pacing) async -> Resumption<Section> {
    engine.broadcaster.subscribe(from: version, pacing: pacing)
  }

  /// Returns once every mutation of every child made before the call has reached the composite and been
  /// offered to every subscriber (G10).
  public func settled() async {
    for child in await engine.children { await settle(child.source, following: child.subscription) }
  }
}

/// A child as the composite's initialisers pass it on: an existential in a struct, so that an array of them
/// needs no runtime support for parameterized protocol types (an array of the existential itself does).
@usableFromInline
struct ChildSource<Section: SectionType>: Sendable {
  @usableFromInline let source: any DataSourceType<Section>

  @inlinable
  init(_ source: any DataSourceType<Section>) { self.source = source }
}

/// The actor a composite works on: it applies children's batches and changes of children one at a time.
@usableFromInline
actor CompositeEngine<Section: SectionType> {
  /// One child: what the composite shows of it, and how far it has followed it.
  @usableFromInline
  struct Child: Sendable {
    @usableFromInline let source: any DataSourceType<Section>
    @usableFromInline let key: ObjectIdentifier
    /// The child's subscription, whose progress is the composite's follower's (G13).
    @usableFromInline let subscription: Subscription<Section>
    /// The child's state shown (its sections are in the composite).
    @usableFromInline var shown: Snapshot<Section>
    /// The child version `shown` is, or the newest one seen when it clashed.
    @usableFromInline var version: Int
    /// Whether `shown` is the child's state at `version` (false after a clash).
    @usableFromInline var isCurrent = true
    /// The child's newest state, held back while it clashes.
    @usableFromInline var latest: Snapshot<Section>
    /// The forced refreshes of the batches held back since `shown`, given to the batch that shows
    /// `latest`.
    @usableFromInline var heldRefreshes: Set<Section.Item.ID> = []
    @usableFromInline var follower: Task<Void, Never>?

    @inlinable
    init(
      source: any DataSourceType<Section>, key: ObjectIdentifier, subscription: Subscription<Section>,
      shown: Snapshot<Section>, version: Int, latest: Snapshot<Section>
    ) {
      self.source = source
      self.key = key
      self.subscription = subscription
      self.shown = shown
      self.version = version
      self.latest = latest
    }
  }

  // Guard map: `children` (each child's subscription, what is shown of it and its follower task) is the
  // actor's; each child's follower task hands its batches to the actor, one step each; subscribers live
  // in `broadcaster`, behind its own locks; each child's progress (its subscription's) is a lock of its own.
  // `stop()` starts one task to end the children on the actor.
  @usableFromInline var children: [Child] = []
  @usableFromInline nonisolated let broadcaster: Broadcaster<Section>
  @usableFromInline let reporter: AsyncStream<CompositionError>.Continuation
  /// ``Snapshot/placingChildBatch(_:atSectionOffset:)``, specialised in the client's build.
  @usableFromInline let placing: CompositePlacing<Section>

  @usableFromInline
  init(
    snapshot: Snapshot<Section>, reporter: AsyncStream<CompositionError>.Continuation,
    placing: CompositePlacing<Section>
  ) {
    self.placing = placing
    broadcaster = Broadcaster(snapshot: snapshot, loops: placing.loops)
    self.reporter = reporter
  }

  @usableFromInline
  nonisolated func stop() {
    broadcaster.finish()
    reporter.finish()
    Task.schedulable("ending a composite's children") { await self.endAll() }
  }

  private func endAll() {
    for child in children {
      child.follower?.cancel()
      child.subscription.cancel()
    }
    children = []
  }

  @inlinable var shown: Snapshot<Section> { broadcaster.snapshot }

  @inlinable func sectionOffset(of index: Int) -> Int {
    var offset = 0
    for before in 0..<index { offset += children[before].shown.sectionCount }
    return offset
  }

  @usableFromInline
  func insert(_ source: some DataSourceType<Section>, at index: Int?) async throws(CompositionError) {
    let key = ObjectIdentifier(source)
    guard !children.contains(where: { $0.key == key }) else {
      throw CompositionError(.childAlreadyAdded, child: children.firstIndex { $0.key == key })
    }
    let requested = index ?? children.count
    guard (0...children.count).contains(requested) else {
      throw CompositionError(.indexOutOfRange, child: requested)
    }
    let subscription = await source.subscribe()
    // The subscription awaited: another insert may have run meanwhile.
    guard !children.contains(where: { $0.key == key }) else {
      subscription.cancel()
      throw CompositionError(.childAlreadyAdded, child: children.firstIndex { $0.key == key })
    }
    let index = min(requested, children.count)
    let offset = sectionOffset(of: index)
    var sections = shown.sections
    sections.insert(contentsOf: subscription.snapshot.sections, at: offset)
    let next: Snapshot<Section>
    do {
      next = try Snapshot(sections)
    } catch {
      subscription.cancel()
      throw Self.clash(error, childAt: index)
    }
    follow(source, subscription, at: index)
    publish(Changeset(from: shown, to: next))
  }

  /// Starts following a child whose sections are in place (at `index`, or last).
  ///
  /// Inlinable, as is the path of a child's batch, so that it runs specialised for the client's types.
  @inlinable
  func follow(_ source: some DataSourceType<Section>, _ subscription: Subscription<Section>, at index: Int?) {
    let key = ObjectIdentifier(source)
    var child = Child(
      source: source, key: key, subscription: subscription, shown: subscription.snapshot,
      version: subscription.version.number, latest: subscription.snapshot)
    let receive = placing.receive
    child.follower = followParent(subscription, on: self) { receive($0, $1, key) }
    children.insert(child, at: index ?? children.count)
  }

  @usableFromInline
  func remove(_ source: some DataSourceType<Section>) throws(CompositionError) {
    let key = ObjectIdentifier(source)
    guard let index = children.firstIndex(where: { $0.key == key }) else {
      throw CompositionError(.unknownChild)
    }
    let offset = sectionOffset(of: index)
    let child = children.remove(at: index)
    child.follower?.cancel()
    child.subscription.cancel()
    var sections = shown.sections
    sections.removeSubrange(offset..<(offset + child.shown.sectionCount))
    publish(Changeset(from: shown, to: Snapshot(trusted: sections)))
    // A held-back child whose newest state clashed with the removed one's fits now.
    showHeldChildren(reportingChildAt: nil)
  }

  /// Applies one child batch: placed by descent, or shifted into place, when it follows what is shown;
  /// otherwise the child is held back. Then children held back by a clash are tried again.
  ///
  /// A static function of the engine, isolated to it, rather than a method: the client's build
  /// specialises it (see ``CompositePlacing``), which it does not do for an actor's methods.
  @inlinable
  static func receive(
    _ batch: UpdateBatch<Section>, from key: ObjectIdentifier, in engine: isolated CompositeEngine
  ) {
    guard let index = engine.children.firstIndex(where: { $0.key == key }) else { return }
    engine.children[index].latest = batch.snapshot
    var reported = false
    var holds = !(engine.children[index].isCurrent && batch.fromNumber == engine.children[index].version)
    if !holds {
      let offset = engine.sectionOffset(of: index)
      let range = offset..<(offset + engine.children[index].shown.sectionCount)
      let source = engine.shown
      do {
        if let (_, change) = try engine.placing.place(source, batch.changeset, offset) {
          engine.children[index].shown = batch.snapshot
          engine.publish(change)
        } else {
          let target = try source.replacingSections(
            range, with: batch.snapshot.sections, reindexed: Self.reindexed(by: batch.changeset))
          engine.children[index].shown = batch.snapshot
          engine.publish(
            batch.changeset.embedded(
              in: source, target: target, offset: offset, prefix: source.sections[..<range.lowerBound],
              suffix: source.sections[range.upperBound...]))
        }
      } catch {
        engine.reporter.yield(Self.clash(error, childAt: index))
        reported = true
        holds = true
      }
    }
    if holds {
      // Held back: the batch's refreshes are owed to the batch that shows the child's newest state.
      engine.children[index].isCurrent = false
      engine.children[index].heldRefreshes.formUnion(batch.changeset.forcedRefreshes)
    }
    engine.children[index].version = batch.toNumber
    // Checked here, specialised, so that the usual batch (nothing held back) makes no further call.
    if engine.children.contains(where: { !$0.isCurrent }) {
      engine.showHeldChildren(reportingChildAt: reported ? nil : index)
    }
  }

  /// Shows the newest states of the children held back by a clash that no longer clash: all of them
  /// together first (children that swapped ids fit only together), then each one alone. Reports the
  /// clash of the child at `reporting` once, if it still clashes.
  /// - Complexity: O(*c*) for *c* children when none is held back; O(*n*) otherwise: full diffs of what
  ///   changes.
  @inlinable
  func showHeldChildren(reportingChildAt reporting: Int?) {
    let held = children.indices.filter { !children[$0].isCurrent }
    if held.isEmpty || (held.count > 1 && showLatest(ofChildrenAt: Set(held), reporting: nil)) { return }
    for index in held where !children[index].isCurrent {
      showLatest(ofChildrenAt: [index], reporting: index == reporting ? index : nil)
    }
  }

  /// Shows the newest states of the children at `indices` if, with the others as shown, no id clashes:
  /// one full diff. Otherwise reports the clash as the child at `reporting`'s, if given.
  /// - Returns: Whether they are shown.
  @discardableResult
  @inlinable
  func showLatest(ofChildrenAt indices: Set<Int>, reporting: Int?) -> Bool {
    var sections: [Section] = []
    for (index, child) in children.enumerated() {
      sections += indices.contains(index) ? child.latest.sections : child.shown.sections
    }
    do {
      let target = try Snapshot(sections)
      // The refreshes of the batches held back are owed to the items still shown.
      var refreshing = Set<Section.Item.ID>()
      for index in indices {
        children[index].shown = children[index].latest
        children[index].isCurrent = true
        refreshing.formUnion(children[index].heldRefreshes)
        children[index].heldRefreshes = []
      }
      let source = shown
      refreshing = refreshing.filter { source.contains(item: $0) && target.contains(item: $0) }
      publish(Changeset(from: source, to: target, refreshing: refreshing))
      return true
    } catch {
      if let reporting { reporter.yield(Self.clash(error, childAt: reporting)) }
      return false
    }
  }

  /// The sections (new indices) whose items a changeset inserts, deletes or moves: their positions change.
  @inlinable
  static func reindexed(by changeset: Changeset<Section>) -> Set<Int> {
    var sections = Set<Int>()
    let items = changeset.itemChanges
    for change in items.inserts { sections.insert(change.to.section) }
    for change in items.moves {
      sections.insert(change.to.section)
      if let index = changeset.target.index(ofSection: changeset.source.sections[change.from.section].id) {
        sections.insert(index)
      }
    }
    for change in items.deletes {
      if let index = changeset.target.index(ofSection: changeset.source.sections[change.from.section].id) {
        sections.insert(index)
      }
    }
    return sections
  }

  @usableFromInline
  static func clash(_ error: DataSourceError<Section.ID, Section.Item.ID>, childAt index: Int)
    -> CompositionError
  {
    if let id = error.itemID { return CompositionError(.duplicateItemID, child: index, id: "\(id)") }
    return CompositionError(.duplicateSectionID, child: index, id: error.sectionID.map { "\($0)" })
  }

  @inlinable func publish(_ change: Changeset<Section>) { broadcaster.publishNext(change) }
}
