// Items with children shown as a flat list with depths: expanding inserts the descendants, collapsing
// deletes them, each as a batch.

/// An item with children, for ``OutlineDataSource``: AEViewModel's item with a `child` data source, or a
/// folder in a file browser.
///
/// What it requires: an `id` unique in the whole forest (not only among siblings), `==` that compares the
/// node's own content *and* its children (a row is refreshed when either changes), and `children` in
/// display order. The parent source's sections hold the top-level nodes as their items; the tree is the
/// values themselves, so a change deep in a tree is a new value of its top-level node (copy-on-write keeps
/// the untouched subtrees shared, and the outline walks only the children arrays that changed).
///
/// ```swift
/// struct Folder: OutlineNode {
///   var id: String
///   var name: String
///   var children: [Folder]
/// }
/// ```
public protocol OutlineNode: Identifiable, Equatable, Sendable where ID: Sendable {
  /// The children, in order; empty for a leaf.
  var children: [Self] { get }
}

/// One row of an outline: a node, its depth, and whether it is expanded.
///
/// Two rows are equal when their nodes (children included), depths and expansion are: a row is
/// refreshed when anything it could show changes, such as its number of children.
public struct OutlineRow<Node: OutlineNode>: Identifiable, Equatable, Sendable {
  /// The node.
  public var node: Node
  /// 0 for a top-level item, 1 for its children, and so on.
  public var depth: Int
  /// Whether the node's children are shown below it.
  public var isExpanded: Bool

  /// Creates a row.
  @usableFromInline package init(node: Node, depth: Int, isExpanded: Bool) {
    self.node = node
    self.depth = depth
    self.isExpanded = isExpanded
  }

  /// The node's id.
  public var id: Node.ID { node.id }
  /// Whether the node has children: whether its row shows a disclosure indicator.
  /// - Complexity: O(1).
  public var hasChildren: Bool { !node.children.isEmpty }
}

/// A section of an outline: the parent's section, and its rows.
public struct OutlineSection<Base: SectionType>: SectionType where Base.Item: OutlineNode {
  /// The parent's section's own content (its header); its `items` are empty: the rows are ``items``.
  public var base: Base
  /// The rows shown: every top-level node, and the descendants of expanded ones.
  public var items: [OutlineRow<Base.Item>]

  /// Creates a section.
  @usableFromInline package init(base: Base, items: [OutlineRow<Base.Item>]) {
    self.base = base
    self.items = items
  }

  /// The parent section's id.
  public var id: Base.ID { base.id }

  /// Whether the parent sections' contents are equal.
  public func isContentEqual(to other: Self) -> Bool { base.isContentEqual(to: other.base) }
}

/// Why an outline could not be shown or changed; what is shown stays.
public struct OutlineError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public enum Code: String, Hashable, Sendable, CustomStringConvertible {
    /// The raw value.
    public var description: String { rawValue }

    /// A node has a descendant with its own id.
    case cycle
    /// Two nodes in different places share an id.
    case duplicateID
    /// The id to expand or collapse is not in the outline.
    case unknownItem
    /// A record names a parent that is not a record of its section (``RecordOutlineDataSource``).
    case unknownParent
  }

  /// What went wrong.
  public var code: Code
  /// The id involved, described.
  public var id: String
  /// The ids of the node's ancestors, outermost first, described (where the problem was found).
  public var path: [String]

  /// Creates an error.
  @usableFromInline package init(_ code: Code, id: String, path: [String] = []) {
    self.code = code
    self.id = id
    self.path = path
  }

  /// `cycle: id 3 under 1 > 2 > 3`.
  public var description: String {
    "\(code): id \(id)" + (path.isEmpty ? "" : " under " + path.joined(separator: " > "))
  }
}

/// A data source that shows a parent's items and, below each expanded item, its children, flattened with
/// their depths: an outline, as Apple's section snapshots expand and collapse.
///
/// ```swift
/// let files = try BasicDataSource(sections: [Section(id: "root", items: folders)])
/// let browser = try await OutlineDataSource(files)
/// try await browser.expand(["Documents"])        // its children appear as one batch
/// ```
///
/// The expansion state belongs to the outline: two views that expand differently each make their own
/// outline of the same parent. An outline is a ``DataSourceType`` with the whole contract; a changed child
/// list of an expanded node shows as moves, inserts and deletes of its rows.
///
/// - **Bad input.** Expanding or collapsing an id that is not in the tree throws
///   ``OutlineError/Code-swift.enum/unknownItem``. A parent state where a node is its own descendant
///   (``OutlineError/Code-swift.enum/cycle``) or two nodes share an id
///   (``OutlineError/Code-swift.enum/duplicateID``) is not shown: the error goes to ``errors``, and the
///   outline shows the parent's next state that is a tree.
/// - **Cost follows the change.** The rows shown are a persistent list, edited by descent, and the batch
///   is derived from the touched rows. An edited top-level node is walked against its old value: rows of
///   nodes that changed are replaced in place, children arrays shared with the old value (the untouched
///   parts of a tree edited in place: copy-on-write keeps them shared) are skipped, and a node whose
///   children's ids changed (a child inserted, deleted or moved) has the rows below it redone. That is
///   O(*p* log *n*) for the *p* nodes on changed paths and their siblings, plus O(*t* log *n*) for the *t*
///   nodes below redone nodes; a tree rebuilt without sharing is compared node by node. A top-level node
///   inserted, deleted or moved costs its subtree. Expanding or collapsing costs O((*e* + *r*) log *n*) for
///   *e* ids and *r* rows shown or hidden. A parent batch that inserts, deletes or moves sections, or
///   follows a state that was not a tree, flattens and diffs in full: O(*n*).
/// - **Sections.** Each ``OutlineSection``'s ``OutlineSection/base`` is the parent section's own content:
///   its `items` are empty (the rows are the outline's items), so that a batch does not copy a section.
public final class OutlineDataSource<Base: SectionType>: DataSourceType where Base.Item: OutlineNode {
  /// The section type shown.
  public typealias Section = OutlineSection<Base>
  /// The node type.
  public typealias Node = Base.Item

  // Guard map: every field is set once. What changes is the engine's (an actor: the outline's state),
  // changed only by the follower task, one parent event at a time; subscribers live in the engine's
  // `broadcaster`, behind its own locks; the follower's progress is its parent subscription's, a lock of
  // its own.
  @usableFromInline let engine: OutlineEngine<OutlineState<Base>>
  @usableFromInline let follower: Task<Void, Never>
  @usableFromInline let parentSubscription: Subscription<Base>
  /// The source this one shows.
  public let parent: any DataSourceType<Base>
  /// Parent states that were not trees; the outline kept showing the previous one. Keeps the newest 100.
  public let errors: AsyncStream<OutlineError>

  /// Starts showing `parent` with the nodes in `expanded` expanded (an id of `expanded` that is not in the
  /// parent's tree is not kept).
  /// - Throws: ``OutlineError`` when the parent's state is not a tree.
  /// - Complexity: O(*n*) for *n* nodes.
  @inlinable
  public init<Parent: DataSourceType>(_ parent: Parent, expanded: Set<Node.ID> = [])
    async throws(OutlineError) where Parent.Section == Base
  {
    let subscription = await parent.subscribe()
    let state: OutlineState<Base>
    do {
      state = try OutlineState(
        parent: subscription.snapshot, version: subscription.version.number, expanded: expanded)
    } catch {
      subscription.cancel()
      throw error
    }
    let (errors, reporter) = AsyncStream.makeStream(
      of: OutlineError.self, bufferingPolicy: .bufferingNewest(100))
    let steps = OutlineSteps<OutlineState<Base>>(
      receive: { (state, batch) throws(OutlineError) in try state.receive(batch) },
      setExpanded: { (state, ids, isExpanded) throws(OutlineError) in
        try state.setExpanded(ids, to: isExpanded)
      })
    let engine = OutlineEngine(state: state, steps: steps, reporter: reporter)
    self.engine = engine
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

  /// The expanded nodes: always nodes of the tree shown. A node that leaves the parent's tree (deleted, or
  /// its ancestor deleted) leaves the set, and comes back collapsed if it is added again; a node moved
  /// within one batch stays expanded.
  /// - Complexity: O(*e*) for *e* expanded nodes, to copy the set.
  public var expanded: Set<Node.ID> { get async { await engine.expanded } }

  /// Expands `ids`: their children appear below them, as one batch.
  /// - Throws: ``OutlineError/Code-swift.enum/unknownItem`` for an id that is not in the tree; nothing
  ///   changes then.
  /// - Complexity: O((*e* + *r*) log *n*) for *e* ids and *r* rows shown.
  @inlinable
  public func expand(_ ids: some Sequence<Node.ID> & Sendable) async throws(OutlineError) {
    try await engine.setExpanded(Array(ids), to: true)
  }

  /// Collapses `ids`: their descendants disappear, as one batch. An id that is not in the tree (a node
  /// deleted meanwhile) is not expanded, and is passed over: collapsing never throws.
  /// - Complexity: O((*e* + *r*) log *n*) for *e* ids and *r* rows hidden.
  @inlinable
  public func collapse(_ ids: some Sequence<Node.ID> & Sendable) async {
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

/// What an outline engine works on: the rows shown, the nodes expanded, and the parent version they
/// follow. ``OutlineState`` (nested values) and ``RecordOutlineState`` (rows that name their parent) are
/// its two forms.
@usableFromInline
protocol OutlineStateProtocol: Sendable {
  /// The parent's section type.
  associatedtype Parent: SectionType
  /// The outline's section type.
  associatedtype Shown: SectionType
  /// The id of a node.
  associatedtype NodeID: Hashable & Sendable

  /// The rows shown.
  var shown: Snapshot<Shown> { get }
  /// The expanded nodes.
  var expanded: Set<NodeID> { get }
  /// The parent version shown, or `nil` after a parent state that was not a tree.
  var parentVersion: Int? { get set }
}

/// An outline's steps as function values, made where the client's build specialises them (see
/// `ProjectionSteps`): generic code called through an actor's methods across modules runs unspecialised.
@usableFromInline
struct OutlineSteps<State: OutlineStateProtocol>: Sendable {
  @usableFromInline typealias Receive =
    @Sendable (inout State, UpdateBatch<State.Parent>) throws(OutlineError)
    -> Changeset<State.Shown>
  @usableFromInline typealias SetExpanded =
    @Sendable (inout State, [State.NodeID], Bool) throws(OutlineError)
    -> Changeset<State.Shown>

  @usableFromInline let receive: Receive
  @usableFromInline let setExpanded: SetExpanded

  @inlinable
  init(receive: @escaping Receive, setExpanded: @escaping SetExpanded) {
    self.receive = receive
    self.setExpanded = setExpanded
  }
}

/// The actor an outline works on: it applies parent batches and expansions in order, and publishes what
/// changes.
@usableFromInline
actor OutlineEngine<State: OutlineStateProtocol> {
  @usableFromInline var state: State
  @usableFromInline let steps: OutlineSteps<State>
  @usableFromInline nonisolated let broadcaster: Broadcaster<State.Shown>
  @usableFromInline nonisolated let reporter: AsyncStream<OutlineError>.Continuation

  @inlinable
  init(state: State, steps: OutlineSteps<State>, reporter: AsyncStream<OutlineError>.Continuation) {
    self.state = state
    self.steps = steps
    self.reporter = reporter
    broadcaster = Broadcaster(snapshot: state.shown)
  }

  /// The expanded nodes.
  @usableFromInline var expanded: Set<State.NodeID> { state.expanded }

  /// Shows the parent's new state, unless it is not a tree.
  @usableFromInline
  func receive(_ batch: UpdateBatch<State.Parent>) {
    do {
      broadcaster.publishNext(try steps.receive(&state, batch))
    } catch {
      reporter.yield(error)
      state.parentVersion = nil
    }
  }

  /// Expands or collapses `ids` and shows the result.
  @usableFromInline
  func setExpanded(_ ids: [State.NodeID], to isExpanded: Bool) throws(OutlineError) {
    broadcaster.publishNext(try steps.setExpanded(&state, ids, isExpanded))
  }
}

/// What an outline shows, and what it needs to change it by descent.
@usableFromInline
struct OutlineState<Base: SectionType>: OutlineStateProtocol where Base.Item: OutlineNode {
  @usableFromInline typealias Node = Base.Item
  @usableFromInline typealias Row = OutlineRow<Node>
  @usableFromInline typealias Parent = Base
  @usableFromInline typealias Shown = OutlineSection<Base>
  @usableFromInline typealias NodeID = Node.ID

  /// The parent's state shown (the newest one that was a tree).
  @usableFromInline var parent: Snapshot<Base>
  /// The parent version it is, or `nil` after a parent state that was not a tree (the next batch is then
  /// not from it, and is flattened in full).
  @usableFromInline var parentVersion: Int?
  /// Every node id of the tree shown, collapsed ones included: one persistent copy per batch costs O(1).
  @usableFromInline var known: PersistentDictionary<Node.ID, Void>
  @usableFromInline var expanded: Set<Node.ID>
  /// The rows shown, in the persistent form that batches edit.
  @usableFromInline var shown: Snapshot<OutlineSection<Base>>

  /// The state of `parent` at `version` with `expanded` nodes expanded.
  /// - Throws: ``OutlineError`` when `parent` is not a tree.
  /// - Complexity: O(*n*).
  @inlinable
  init(parent: Snapshot<Base>, version: Int, expanded: Set<Node.ID>) throws(OutlineError) {
    let (sections, ids) = try Self.flatten(parent, expanded: expanded)
    self.parent = parent
    parentVersion = version
    known = ids
    // Only nodes of the tree are expanded: an id it does not hold is not kept for later.
    self.expanded = expanded.filter { ids[$0] != nil }
    shown = Snapshot(trusted: sections)
    // The persistent form that batches edit, built with the rest of the O(n) start rather than on the
    // first batch.
    _ = shown.tree
  }

  /// Shows the parent's new state; throws, changing nothing, when it is not a tree.
  @inlinable
  mutating func receive(_ batch: UpdateBatch<Base>) throws(OutlineError) -> Changeset<OutlineSection<Base>> {
    let next: Snapshot<OutlineSection<Base>>
    let touched: Set<Row.ID>?
    if batch.fromNumber == parentVersion, let edited = try applyingByDescent(batch.changeset) {
      (next, touched) = (edited.shown, edited.touched)
      known = edited.known
      // A node that left the tree leaves the expanded set: it comes back collapsed.
      for id in edited.left where known[id] == nil { expanded.remove(id) }
    } else {
      let (sections, ids) = try Self.flatten(batch.snapshot, expanded: expanded)
      next = Snapshot(trusted: sections, reindexing: shown)
      touched = nil
      known = ids
      expanded = expanded.filter { ids[$0] != nil }
    }
    parent = batch.snapshot
    parentVersion = batch.toNumber
    // The parent's refreshes of nodes that are rows: a row shows its node, so it is refreshed too.
    let refreshing = batch.changeset.forcedRefreshes.filter { next.contains(item: $0) }
    return show(next, touched: touched, refreshing: refreshing)
  }

  /// Expands or collapses `ids`; throws, changing nothing, for an id that is not in the tree.
  @inlinable
  mutating func setExpanded(_ ids: [Node.ID], to isExpanded: Bool) throws(OutlineError) -> Changeset<
    OutlineSection<Base>
  > {
    // A node that is gone is not expanded: collapsing it asks nothing. Expanding one is an error.
    if isExpanded, let unknown = ids.first(where: { known[$0] == nil }) {
      throw OutlineError(.unknownItem, id: "\(unknown)")
    }
    var changed = Set<Node.ID>()
    for id in ids where expanded.contains(id) != isExpanded {
      changed.insert(id)
      if isExpanded { expanded.insert(id) } else { expanded.remove(id) }
    }
    var tree = shown.tree
    var touched = Set<Row.ID>()
    // The changed nodes that are rows, deepest last in each section: each is re-flattened below its row,
    // from the last back, so that a node re-flattened after a changed descendant covers it.
    var rows = changed.compactMap { tree.position(ofItem: $0) }
    rows.sort { ($0.section, $0.item) > ($1.section, $1.item) }
    for position in rows {
      let row = tree.item(at: position)
      let shownBelow = Self.rowsBelow(position, in: tree)
      for offset in stride(from: shownBelow, through: 1, by: -1) {
        let below = ItemPosition(section: position.section, item: position.item + offset)
        touched.insert(tree.removeItem(at: below).id)
      }
      let rowIsExpanded = expanded.contains(row.id)
      tree.replaceItem(at: position, with: Row(node: row.node, depth: row.depth, isExpanded: rowIsExpanded))
      touched.insert(row.id)
      var below: [Row] = []
      if rowIsExpanded {
        for child in row.node.children {
          Self.appendRows(of: child, depth: row.depth + 1, expanded: expanded, to: &below)
        }
      }
      for (offset, child) in below.enumerated() {
        tree.insertItem(child, at: ItemPosition(section: position.section, item: position.item + 1 + offset))
        touched.insert(child.id)
      }
    }
    return show(Snapshot(tree: tree), touched: touched, refreshing: [])
  }

  /// Shows `next`, and returns the change from what was shown, derived from the `touched` rows when they
  /// are known.
  @inlinable
  mutating func show(
    _ next: Snapshot<OutlineSection<Base>>, touched: Set<Row.ID>?, refreshing: Set<Row.ID>
  ) -> Changeset<OutlineSection<Base>> {
    let change =
      touched.flatMap { Changeset(from: shown, to: next, logged: $0, refreshing: refreshing) }
      ?? Changeset(from: shown, to: next, refreshing: refreshing)
    if !change.isEmpty { shown = next }
    return change
  }

  /// The parent's batch `changeset` applied to the rows shown by descent, when it kept the parent's
  /// sections (ids and order).
  ///
  /// 1. Each top-level node the parent only edited is walked with its old value: the rows of changed
  ///    nodes are replaced in place, children arrays that share storage (the untouched parts of a tree
  ///    edited by copy-on-write) are skipped, and a node whose children's ids changed is re-flattened: the
  ///    ids below it leave `known` now, its rows are redone in step 3.
  /// 2. The rows of each top-level node inserted, deleted or moved are taken out, and its ids.
  /// 3. The new ids are registered (a clash throws), the re-flattened nodes get their new rows below
  ///    them, and each inserted or moved top-level node its rows before its next sibling's.
  ///
  /// - Returns: `nil` when sections were inserted, deleted or moved.
  /// - Throws: ``OutlineError`` when the new state is not a tree.
  /// - Complexity: O(*p* log *n*) for *p* nodes on changed paths and their siblings, plus O(*t* log *n*)
  ///   for *t* nodes below re-flattened nodes and in inserted, deleted or moved top-level nodes.
  @inlinable func applyingByDescent(_ changeset: Changeset<Base>)
    throws(OutlineError) -> (
      shown: Snapshot<OutlineSection<Base>>, known: PersistentDictionary<Node.ID, Void>, touched: Set<Row.ID>,
      left: [Node.ID]
    )?
  {
    guard !changeset.sectionChanges.hasStructuralChanges else { return nil }
    let target = changeset.target
    var tree = shown.tree
    var known = self.known
    for update in changeset.sectionChanges.updates {
      tree.replaceSectionContent(at: update.to, with: Self.header(target.sectionContent(at: update.to)))
    }
    let items = changeset.itemChanges
    let tops = items.structuralIDs
    var touched = Set<Row.ID>()
    // The ids taken out of `known`: those not registered again left the tree.
    var left: [Node.ID] = []

    // 1. Edited top-level nodes, walked.
    var reflattened: [Reflattened] = []
    for update in items.updates where !tops.contains(update.id) {
      guard let position = tree.position(ofItem: update.id) else { continue }
      let old = tree.item(at: position)
      replaceChanged(
        old.node, with: target[update.to], depth: old.depth, row: position, ancestors: [], in: &tree,
        known: &known, left: &left,
        reflattened: &reflattened, touched: &touched)
    }

    // 2. Rows and ids of top-level nodes inserted, deleted or moved, taken out from the last back.
    var removals: [ItemPosition] = []
    for id in tops { if let position = tree.position(ofItem: id) { removals.append(position) } }
    removals.sort { ($0.section, $0.item) > ($1.section, $1.item) }
    for position in removals {
      let node = tree.item(at: position).node
      for offset in (0...Self.rowsBelow(position, in: tree)).reversed() {
        touched.insert(
          tree.removeItem(at: ItemPosition(section: position.section, item: position.item + offset)).id)
      }
      Self.forEachID(in: node) {
        known.removeValue(forKey: $0)
        left.append($0)
      }
    }

    // 3. Every old row below re-flattened nodes out first (a node may move from below one to below
    // another), then the new ids registered, then the new rows in.
    for entry in reflattened {
      guard let position = tree.position(ofItem: entry.node.id) else { continue }  // not shown
      for offset in stride(from: Self.rowsBelow(position, in: tree), through: 1, by: -1) {
        touched.insert(
          tree.removeItem(at: ItemPosition(section: position.section, item: position.item + offset)).id)
      }
    }
    for entry in reflattened {
      for child in entry.node.children { try Self.register(child, in: &known, below: entry.path) }
    }
    for id in tops {
      if let position = target.position(ofItem: id) { try Self.register(target[position], in: &known) }
    }
    for entry in reflattened where expanded.contains(entry.node.id) {
      guard let position = tree.position(ofItem: entry.node.id) else { continue }
      var rows: [Row] = []
      for child in entry.node.children {
        Self.appendRows(of: child, depth: entry.depth + 1, expanded: expanded, to: &rows)
      }
      for (offset, row) in rows.enumerated() {
        tree.insertItem(row, at: ItemPosition(section: position.section, item: position.item + 1 + offset))
        touched.insert(row.id)
      }
    }
    // From the last back: each goes before its next sibling's rows, which are in place (untouched, or put
    // in already).
    var placements: [ItemPosition] = []
    for id in tops { if let position = target.position(ofItem: id) { placements.append(position) } }
    placements.sort { ($0.section, $0.item) > ($1.section, $1.item) }
    for position in placements {
      let node = target[position]
      var rows: [Row] = []
      Self.appendRows(of: node, depth: 0, expanded: expanded, to: &rows)
      var at = tree.itemCount(inSection: position.section)
      if position.item + 1 < target.itemCount(inSection: position.section) {
        let next = target[ItemPosition(section: position.section, item: position.item + 1)].id
        guard let nextRow = tree.position(ofItem: next) else { return nil }
        at = nextRow.item
      }
      for (offset, row) in rows.enumerated() {
        tree.insertItem(row, at: ItemPosition(section: position.section, item: at + offset))
        touched.insert(row.id)
      }
    }
    return (Snapshot(tree: tree), known, touched, left)
  }

  /// A node whose children's ids changed: its rows below are redone.
  @usableFromInline struct Reflattened {
    /// The node, new.
    @usableFromInline let node: Node
    @usableFromInline let depth: Int
    /// The ids of its ancestors and its own, outermost first.
    @usableFromInline let path: [Node.ID]

    @inlinable init(node: Node, depth: Int, path: [Node.ID]) {
      self.node = node
      self.depth = depth
      self.path = path
    }
  }

  /// Step 1 of ``applyingByDescent(_:)`` for `old`, now `new` (same id, below `ancestors`): replaces its
  /// row (at `row`, when shown) if it changed, then walks the children that changed; when the children's
  /// ids changed, the ids below it leave `known` and it joins `reflattened`.
  @inlinable func replaceChanged(
    _ old: Node, with new: Node, depth: Int, row: ItemPosition?, ancestors: [Node.ID],
    in tree: inout SnapshotTree<OutlineSection<Base>>, known: inout PersistentDictionary<Node.ID, Void>,
    left: inout [Node.ID], reflattened: inout [Reflattened], touched: inout Set<Row.ID>
  ) {
    let isExpanded = expanded.contains(new.id)
    if let row {
      let replacement = Row(node: new, depth: depth, isExpanded: isExpanded)
      if tree.item(at: row) != replacement {
        tree.replaceItem(at: row, with: replacement)
        touched.insert(new.id)
      }
    }
    if FlatSnapshot<Base>.sharesStorage(old.children, new.children) { return }
    guard old.children.map(\.id) == new.children.map(\.id) else {
      for child in old.children {
        Self.forEachID(in: child) {
          known.removeValue(forKey: $0)
          left.append($0)
        }
      }
      reflattened.append(Reflattened(node: new, depth: depth, path: ancestors + [new.id]))
      return
    }
    let childrenShown = row != nil && isExpanded
    for (oldChild, newChild) in zip(old.children, new.children) where oldChild != newChild {
      replaceChanged(
        oldChild, with: newChild, depth: depth + 1,
        row: childrenShown ? tree.position(ofItem: newChild.id) : nil, ancestors: ancestors + [new.id],
        in: &tree, known: &known, left: &left, reflattened: &reflattened, touched: &touched)
    }
  }

  /// How many rows below the row at `position` are its descendants: the rows after it that are deeper.
  /// - Complexity: O(*r* log *n*) for *r* such rows.
  @inlinable static func rowsBelow(_ position: ItemPosition, in tree: SnapshotTree<OutlineSection<Base>>)
    -> Int
  {
    let depth = tree.item(at: position).depth
    let count = tree.itemCount(inSection: position.section)
    var below = 0
    while position.item + below + 1 < count,
      tree.item(at: ItemPosition(section: position.section, item: position.item + below + 1)).depth > depth
    {
      below += 1
    }
    return below
  }

  /// Appends the rows of `node` at `depth` and of its descendants that `expanded` shows.
  @inlinable static func appendRows(of node: Node, depth: Int, expanded: Set<Node.ID>, to rows: inout [Row]) {
    let isExpanded = expanded.contains(node.id)
    rows.append(Row(node: node, depth: depth, isExpanded: isExpanded))
    guard isExpanded else { return }
    for child in node.children { appendRows(of: child, depth: depth + 1, expanded: expanded, to: &rows) }
  }

  /// Calls `body` with the id of `node` and of every descendant.
  @inlinable static func forEachID(in node: Node, _ body: (Node.ID) -> Void) {
    body(node.id)
    for child in node.children { forEachID(in: child, body) }
  }

  /// Adds the ids of `node`'s subtree (below `ancestors`) to `known`; throws for one that is there
  /// already: a ``OutlineError/Code-swift.enum/cycle`` when it is one of its own ancestors, a
  /// ``OutlineError/Code-swift.enum/duplicateID`` otherwise.
  @inlinable static func register(
    _ node: Node, in known: inout PersistentDictionary<Node.ID, Void>, below ancestors: [Node.ID] = []
  ) throws(OutlineError) {
    var path = ancestors
    func visit(_ node: Node) throws(OutlineError) {
      if known.updateValue((), forKey: node.id) != nil {
        let code: OutlineError.Code = path.contains(node.id) ? .cycle : .duplicateID
        throw OutlineError(code, id: "\(node.id)", path: path.map { "\($0)" })
      }
      path.append(node.id)
      for child in node.children { try visit(child) }
      path.removeLast()
    }
    try visit(node)
  }

  /// An outline section's own content: the parent's section without its items.
  @inlinable static func header(_ section: Base) -> OutlineSection<Base> {
    var base = section
    base.items = []
    return OutlineSection(base: base, items: [])
  }

  /// The rows of `snapshot` with `expanded` nodes expanded, and every node id (collapsed ones too); throws
  /// for a state that is not a tree.
  /// - Complexity: O(*n*) for *n* nodes.
  @inlinable
  static func flatten(_ snapshot: Snapshot<Base>, expanded: Set<Node.ID>) throws(OutlineError) -> (
    [OutlineSection<Base>], PersistentDictionary<Node.ID, Void>
  ) {
    var known = PersistentDictionary<Node.ID, Void>()
    var sections: [OutlineSection<Base>] = []
    for section in snapshot.sections {
      var outline = header(section)
      for node in section.items {
        try register(node, in: &known)
        appendRows(of: node, depth: 0, expanded: expanded, to: &outline.items)
      }
      sections.append(outline)
    }
    return (sections, known)
  }
}
