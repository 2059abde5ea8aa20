// Items with children shown as a flat list with depths: expanding inserts the descendants, collapsing
// deletes them, each as a batch.

/// An item with children, for ``OutlineDataSource``: AEViewModel's item with a `child` data source, or a
/// folder in a file browser.
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
  public init(node: Node, depth: Int, isExpanded: Bool) {
    self.node = node
    self.depth = depth
    self.isExpanded = isExpanded
  }

  /// The node's id.
  public var id: Node.ID { node.id }
  /// Whether the node has children (a disclosure indicator).
  public var hasChildren: Bool { !node.children.isEmpty }
}

/// A section of an outline: the parent's section, and its rows.
public struct OutlineSection<Base: SectionType>: SectionType where Base.Item: OutlineNode {
  /// The parent's section (its `items` are the top-level nodes).
  public var base: Base
  /// The rows shown: every top-level node, and the descendants of expanded ones.
  public var items: [OutlineRow<Base.Item>]

  /// Creates a section.
  public init(base: Base, items: [OutlineRow<Base.Item>]) {
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
  /// What went wrong. New codes may be added.
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// A stable, readable name of the code, such as `"cycle"`.
    public let rawValue: String
    /// Creates a code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The raw value.
    public var description: String { rawValue }

    /// A node has a descendant with its own id.
    public static let cycle = Code(rawValue: "cycle")
    /// Two nodes in different places share an id.
    public static let duplicateID = Code(rawValue: "duplicateID")
    /// The id to expand or collapse is not in the outline.
    public static let unknownItem = Code(rawValue: "unknownItem")
  }

  /// What went wrong.
  public var code: Code
  /// The id involved, described.
  public var id: String
  /// The ids of the node's ancestors, outermost first, described (where the problem was found).
  public var path: [String]

  /// Creates an error.
  public init(_ code: Code, id: String, path: [String] = []) {
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
///   ``OutlineError/Code-swift.struct/unknownItem``. A parent state where a node is its own descendant
///   (``OutlineError/Code-swift.struct/cycle``) or two nodes share an id
///   (``OutlineError/Code-swift.struct/duplicateID``) is not shown: the error goes to ``errors``, and the
///   outline shows the parent's next state that is a tree.
/// - **Cost.** Every parent batch and every expansion flattens the tree and diffs in full: O(*n*) for *n*
///   nodes, collapsed ones included (their ids are checked).
public final class OutlineDataSource<Base: SectionType>: DataSourceType where Base.Item: OutlineNode {
  /// The section type shown.
  public typealias Section = OutlineSection<Base>
  /// The node type.
  public typealias Node = Base.Item

  @usableFromInline let engine: OutlineEngine<Base>
  @usableFromInline let follower: Task<Void, Never>
  @usableFromInline let parentSubscription: Subscription<Base>
  /// The source this one shows.
  public let parent: any DataSourceType<Base>
  /// Parent states that were not trees; the outline kept showing the previous one. Keeps the newest 100.
  public let errors: AsyncStream<OutlineError>

  /// Starts showing `parent` with the nodes in `expanded` expanded.
  /// - Throws: ``OutlineError`` when the parent's state is not a tree.
  /// - Complexity: O(*n*) for *n* nodes.
  @inlinable
  public init<Parent: DataSourceType>(_ parent: Parent, expanded: Set<Node.ID> = [])
    async throws(OutlineError) where Parent.Section == Base
  {
    let subscription = await parent.subscribe()
    let flat: (sections: [Section], known: Set<Node.ID>)
    do {
      flat = try OutlineEngine<Base>.flatten(subscription.snapshot, expanded: expanded)
    } catch {
      subscription.cancel()
      throw error
    }
    let (errors, reporter) = AsyncStream.makeStream(
      of: OutlineError.self, bufferingPolicy: .bufferingNewest(100))
    let engine = OutlineEngine(
      parent: subscription.snapshot, shown: Snapshot(trusted: flat.sections), known: flat.known,
      expanded: expanded,
      parentVersion: subscription.version, reporter: reporter)
    self.engine = engine
    self.errors = errors
    self.parent = parent
    parentSubscription = subscription
    follower = followParent(subscription, applied: engine.applied, on: engine) { $0.receive($1) }
  }

  deinit {
    follower.cancel()
    parentSubscription.cancel()
    engine.broadcaster.finish()
    engine.reporter.finish()
  }

  /// The expanded nodes.
  public var expanded: Set<Node.ID> { get async { await engine.expanded } }

  /// Expands `ids`: their children appear below them, as one batch.
  /// - Throws: ``OutlineError/Code-swift.struct/unknownItem`` for an id that is not in the tree; nothing
  ///   changes then.
  /// - Complexity: O(*n*): the tree is flattened and diffed.
  public func expand(_ ids: some Sequence<Node.ID> & Sendable) async throws(OutlineError) {
    try await engine.setExpanded { $0.formUnion(ids) }
  }

  /// Collapses `ids`: their descendants disappear, as one batch.
  /// - Throws: ``OutlineError/Code-swift.struct/unknownItem`` for an id that is not in the tree; nothing
  ///   changes then.
  /// - Complexity: O(*n*).
  public func collapse(_ ids: some Sequence<Node.ID> & Sendable) async throws(OutlineError) {
    try await engine.setExpanded { $0.subtract(ids) }
  }

  /// The newest state shown.
  public var snapshot: Snapshot<Section> { get async { engine.broadcaster.snapshot } }

  /// The version of the newest state shown.
  public var version: Int { get async { engine.broadcaster.version } }

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
  public func settled() async { await settle(parent, applied: engine.applied) }
}

/// The actor an outline works on.
@usableFromInline
actor OutlineEngine<Base: SectionType> where Base.Item: OutlineNode {
  @usableFromInline typealias Node = Base.Item

  /// The parent's state shown (the newest one that was a tree).
  var parent: Snapshot<Base>
  /// Every node id of the tree shown.
  var known: Set<Node.ID>
  @usableFromInline var expanded: Set<Node.ID>
  @usableFromInline nonisolated let broadcaster: Broadcaster<OutlineSection<Base>>
  @usableFromInline nonisolated let applied: AppliedVersion
  @usableFromInline nonisolated let reporter: AsyncStream<OutlineError>.Continuation

  @usableFromInline
  init(
    parent: Snapshot<Base>, shown: Snapshot<OutlineSection<Base>>, known: Set<Node.ID>,
    expanded: Set<Node.ID>, parentVersion: Int,
    reporter: AsyncStream<OutlineError>.Continuation
  ) {
    self.parent = parent
    self.known = known
    self.expanded = expanded
    self.reporter = reporter
    broadcaster = Broadcaster(snapshot: shown)
    applied = AppliedVersion(parentVersion)
  }

  /// Shows the parent's new state, unless it is not a tree.
  @usableFromInline
  func receive(_ batch: UpdateBatch<Base>) {
    do {
      let (sections, known) = try Self.flatten(batch.snapshot, expanded: expanded)
      parent = batch.snapshot
      self.known = known
      let next = Snapshot(trusted: sections, reindexing: broadcaster.snapshot)
      // The parent's refreshes of nodes that are rows: a row shows its node, so it is refreshed too.
      let refreshing = batch.changeset.forcedRefreshes.filter { next.contains(item: $0) }
      broadcaster.publishNext(Changeset(from: broadcaster.snapshot, to: next, refreshing: refreshing))
    } catch {
      reporter.yield(error)
    }
  }

  /// Changes the expanded set and shows the result.
  @usableFromInline
  func setExpanded(_ change: @Sendable (inout Set<Node.ID>) -> Void) throws(OutlineError) {
    var next = expanded
    change(&next)
    if let unknown = next.symmetricDifference(expanded).first(where: { !known.contains($0) }) {
      throw OutlineError(.unknownItem, id: "\(unknown)")
    }
    expanded = next
    let (flat, _) = try Self.flatten(parent, expanded: next)
    broadcaster.publishNext(Changeset(from: broadcaster.snapshot, to: Snapshot(trusted: flat)))
  }

  /// The rows of `snapshot` with `expanded` nodes expanded, and every node id; throws for a state that is
  /// not a tree.
  @usableFromInline
  static func flatten(_ snapshot: Snapshot<Base>, expanded: Set<Node.ID>) throws(OutlineError) -> (
    [OutlineSection<Base>], Set<Node.ID>
  ) {
    var known = Set<Node.ID>()
    var path: [Node.ID] = []
    // One pass: every node's id is checked (collapsed ones too), and visible ones become rows.
    func visit(_ node: Node, depth: Int, visible: Bool, rows: inout [OutlineRow<Node>]) throws(OutlineError) {
      guard known.insert(node.id).inserted else {
        // A repeated id is a cycle when it is one of the node's own ancestors.
        let code: OutlineError.Code = path.contains(node.id) ? .cycle : .duplicateID
        throw OutlineError(code, id: "\(node.id)", path: path.map { "\($0)" })
      }
      let isExpanded = expanded.contains(node.id)
      if visible { rows.append(OutlineRow(node: node, depth: depth, isExpanded: isExpanded)) }
      path.append(node.id)
      for child in node.children {
        try visit(child, depth: depth + 1, visible: visible && isExpanded, rows: &rows)
      }
      path.removeLast()
    }
    var sections: [OutlineSection<Base>] = []
    for section in snapshot.sections {
      var rows: [OutlineRow<Node>] = []
      for node in section.items { try visit(node, depth: 0, visible: true, rows: &rows) }
      sections.append(OutlineSection(base: section, items: rows))
    }
    return (sections, known)
  }
}
