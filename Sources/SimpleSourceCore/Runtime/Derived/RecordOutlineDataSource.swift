// Records that name their parent, shown as an outline: each record's row below its parent's, siblings in
// the order the records give, with expansion; each parent batch is applied by the records it changed.

/// A record that names its parent, for ``RecordOutlineDataSource``: a note with a `parentID` column, a
/// folder row of a database, or what a client's edits carry.
///
/// What it requires: an `id` unique in the parent source (the source guarantees it), the `parentID` of a
/// record *of the same section* (or `nil` for a top-level record), and a `siblingOrder` that places the
/// record among its siblings. Siblings with equal orders are ordered by id, so that concurrent inserts
/// with the same order still show in one order everywhere.
///
/// ```swift
/// struct Note: OutlineRecord {
///   var id: Int
///   var parentID: Int?
///   var siblingOrder: Double
///   var title: String
/// }
/// ```
public protocol OutlineRecord: Identifiable, Equatable, Sendable where ID: Comparable & Sendable {
  /// What orders siblings: a position, a fractional index, a date.
  associatedtype SiblingOrder: Comparable & Sendable

  /// The id of the record this one is a child of; `nil` for a top-level record.
  var parentID: ID? { get }
  /// The record's place among its siblings: smaller comes first; ties are ordered by id.
  var siblingOrder: SiblingOrder { get }
}

/// One row of a ``RecordOutlineDataSource``: a record, its depth, whether it is expanded, and whether it
/// has children.
///
/// Two rows are equal when all four are: a row is refreshed when its record changes, and when it gains its
/// first child or loses its last.
public struct RecordOutlineRow<Record: OutlineRecord>: Identifiable, Equatable, Sendable {
  /// The record.
  public var record: Record
  /// 0 for a top-level record, 1 for its children, and so on.
  public var depth: Int
  /// Whether the record's children are shown below it.
  public var isExpanded: Bool
  /// Whether the record has children: whether its row shows a disclosure indicator.
  public var hasChildren: Bool

  /// Creates a row.
  @usableFromInline package init(record: Record, depth: Int, isExpanded: Bool, hasChildren: Bool) {
    self.record = record
    self.depth = depth
    self.isExpanded = isExpanded
    self.hasChildren = hasChildren
  }

  /// The record's id.
  public var id: Record.ID { record.id }
}

/// A section of a ``RecordOutlineDataSource``: the parent's section, and its rows.
public struct RecordOutlineSection<Base: SectionType>: SectionType where Base.Item: OutlineRecord {
  /// The parent's section's own content (its header); its `items` are empty: the rows are ``items``.
  public var base: Base
  /// The rows shown: every top-level record, and the descendants of expanded ones.
  public var items: [RecordOutlineRow<Base.Item>]

  /// Creates a section.
  @usableFromInline package init(base: Base, items: [RecordOutlineRow<Base.Item>]) {
    self.base = base
    self.items = items
  }

  /// The parent section's id.
  public var id: Base.ID { base.id }

  /// Whether the parent sections' contents are equal.
  public func isContentEqual(to other: Self) -> Bool { base.isContentEqual(to: other.base) }
}

/// A data source that shows a flat source's records as an outline: each record below the record it names
/// as its parent, siblings in their ``OutlineRecord/siblingOrder``, and the children of expanded records
/// shown, with their depths.
///
/// ```swift
/// let notes = try BasicDataSource(sections: [Section(id: "notes", items: allNotes)])
/// let outline = try await RecordOutlineDataSource(notes)
/// try await outline.expand([inbox.id])          // its children appear as one batch
/// try await notes.replaceItem(moved)            // a new parentID moves the row and its subtree
/// await outline.settled()                       // one wait: the outline shows the edit
/// ```
///
/// It is the outline for rows as a database, the wire's edits and every notes app keep a tree: the parent
/// is an ordinary source of records, edited one record at a time; ``OutlineDataSource`` is the one for
/// nested values. The expansion state belongs to the outline, and follows the data: a record that leaves
/// the parent leaves ``expanded``, and comes back collapsed if it is added again; a record moved to
/// another parent stays expanded.
///
/// - **Bad input.** Expanding an id that is not a record throws
///   ``OutlineError/Code-swift.enum/unknownItem``; collapsing one passes it over. A parent state where a
///   record names a parent that is not a record of its section (``OutlineError/Code-swift.enum/unknownParent``,
///   such as a parent deleted without its children) or is its own ancestor
///   (``OutlineError/Code-swift.enum/cycle``) is not shown: the error goes to ``errors``, and the outline
///   shows the parent's next state that is a tree.
/// - **Cost follows the change.** A parent batch that changes *k* records costs O(*k* (*d* + log² *s*)
///   log *n*) for records *d* deep among *s* siblings in a parent of *n* records, plus O(*r* log *n*) for
///   the *r* rows a moved, inserted or deleted record brings along (its shown subtree). The sibling lists
///   are B-trees searched by order; the rows shown are a persistent list edited in place, and the batch is
///   derived from the touched rows. Expanding or collapsing costs O((*e* + *r*) log *n*) for *e* ids and
///   *r* rows shown or hidden. A parent batch that inserts, deletes or moves sections, or follows a state
///   that was not a tree, builds the outline anew: O(*n* log *n*).
/// - **Sections.** Each section's records form their own forest: a record's parent is in its section.
///   Each ``RecordOutlineSection``'s ``RecordOutlineSection/base`` is the parent section's own content;
///   its `items` are empty.
public final class RecordOutlineDataSource<Base: SectionType>: DataSourceType where Base.Item: OutlineRecord {
  /// The section type shown.
  public typealias Section = RecordOutlineSection<Base>
  /// The record type.
  public typealias Record = Base.Item

  // Guard map: as ``OutlineDataSource``: the engine (an actor) holds what changes, and the follower task
  // alone hands it the parent's batches.
  @usableFromInline let engine: OutlineEngine<RecordOutlineState<Base>>
  @usableFromInline let follower: Task<Void, Never>
  @usableFromInline let parentSubscription: Subscription<Base>
  /// The source this one shows.
  public let parent: any DataSourceType<Base>
  /// Parent states that were not trees; the outline kept showing the previous one. Keeps the newest 100.
  public let errors: AsyncStream<OutlineError>

  /// Starts showing `parent` with the records in `expanded` expanded (an id of `expanded` that is not a
  /// record is not kept).
  /// - Throws: ``OutlineError`` when the parent's state is not a tree.
  /// - Complexity: O(*n* log *n*) for *n* records.
  @inlinable
  public init<Parent: DataSourceType>(_ parent: Parent, expanded: Set<Record.ID> = [])
    async throws(OutlineError) where Parent.Section == Base
  {
    let subscription = await parent.subscribe()
    let state: RecordOutlineState<Base>
    do {
      state = try RecordOutlineState(
        parent: subscription.snapshot, version: subscription.version.number, expanded: expanded)
    } catch {
      subscription.cancel()
      throw error
    }
    let (errors, reporter) = AsyncStream.makeStream(
      of: OutlineError.self, bufferingPolicy: .bufferingNewest(100))
    let steps = OutlineSteps<RecordOutlineState<Base>>(
      receive: { (state, batch) throws(OutlineError) in try state.receive(batch) },
      setExpanded: { (state, ids, isExpanded) throws(OutlineError) in
        try state.setExpanded(ids, to: isExpanded)
      })
    engine = OutlineEngine(state: state, steps: steps, reporter: reporter)
    self.errors = errors
    self.parent = parent
    parentSubscription = subscription
    follower = followParent(subscription, on: engine) { $0.receive($1) }
  }

  deinit {
    follower.cancel()
    parentSubscription.cancel()
    engine.broadcaster.finish()
    engine.reporter.finish()
  }

  /// The expanded records: always records of the parent's state shown.
  /// - Complexity: O(*e*) for *e* expanded records, to copy the set.
  public var expanded: Set<Record.ID> { get async { await engine.expanded } }

  /// Expands `ids`: their children appear below them, as one batch.
  /// - Throws: ``OutlineError/Code-swift.enum/unknownItem`` for an id that is not a record; nothing
  ///   changes then.
  /// - Complexity: O((*e* + *r*) log *n*) for *e* ids and *r* rows shown.
  @inlinable
  public func expand(_ ids: some Sequence<Record.ID> & Sendable) async throws(OutlineError) {
    try await engine.setExpanded(Array(ids), to: true)
  }

  /// Collapses `ids`: their descendants disappear, as one batch. An id that is not a record (one deleted
  /// meanwhile) is not expanded, and is passed over: collapsing never throws.
  /// - Complexity: O((*e* + *r*) log *n*) for *e* ids and *r* rows hidden.
  @inlinable
  public func collapse(_ ids: some Sequence<Record.ID> & Sendable) async {
    // Only an unknown id to expand throws.
    try? await engine.setExpanded(Array(ids), to: false)
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

  /// Returns once every mutation of the parent made before the call has reached the outline and been
  /// offered to every subscriber (G10).
  public func settled() async { await settle(parent, following: parentSubscription) }
}
