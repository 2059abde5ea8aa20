// What a record outline shows, its sibling lists, and how a parent batch or an expansion changes them.

/// A record's place among its siblings: its order, then its id.
@usableFromInline
struct SiblingKey<Record: OutlineRecord>: Comparable, Sendable {
  @usableFromInline let order: Record.SiblingOrder
  @usableFromInline let id: Record.ID

  @inlinable init(_ record: Record) {
    order = record.siblingOrder
    id = record.id
  }

  @inlinable static func < (lhs: Self, rhs: Self) -> Bool {
    lhs.order != rhs.order ? lhs.order < rhs.order : lhs.id < rhs.id
  }

  @inlinable static func == (lhs: Self, rhs: Self) -> Bool { lhs.order == rhs.order && lhs.id == rhs.id }
}

/// The children of one record (or the top-level records of one section), sorted by ``SiblingKey``: a
/// B-tree, so that a sibling list of any length is edited and searched in O(log² *s*).
@usableFromInline
struct SiblingList<Record: OutlineRecord>: Sendable {
  @usableFromInline typealias Key = SiblingKey<Record>
  @usableFromInline var keys: PersistentList<Labeled<Key>>

  @inlinable init(sorted keys: [Key]) {
    self.keys = PersistentList(keys.map { Labeled(orderLabel: 0, value: $0) })
  }

  @inlinable var isEmpty: Bool { keys.isEmpty }
  @inlinable var count: Int { keys.count }

  /// The index of the first key after `key`.
  @inlinable func index(after key: Key) -> Int { keys.partitioningIndex { $0.value > key } }

  /// The id at `index`.
  @inlinable func id(at index: Int) -> Record.ID { keys[index].value.id }

  @inlinable mutating func insert(_ key: Key) {
    keys.insert(Labeled(orderLabel: 0, value: key), at: index(after: key))
  }

  @inlinable mutating func remove(_ key: Key) {
    let index = keys.partitioningIndex { $0.value >= key }
    precondition(index < keys.count && keys[index].value == key, "SiblingList: \(key.id) is not a sibling")
    keys.remove(at: index)
  }

  /// The ids in order.
  @inlinable var ids: [Record.ID] { keys.map(\.value.id) }
}

/// What a record outline shows, and the sibling lists it changes it by.
@usableFromInline
struct RecordOutlineState<Base: SectionType>: OutlineStateProtocol where Base.Item: OutlineRecord {
  @usableFromInline typealias Record = Base.Item
  @usableFromInline typealias Row = RecordOutlineRow<Record>
  @usableFromInline typealias Parent = Base
  @usableFromInline typealias Shown = RecordOutlineSection<Base>
  @usableFromInline typealias NodeID = Record.ID
  @usableFromInline typealias Key = SiblingKey<Record>

  /// The parent's state shown (the newest one that was a tree).
  @usableFromInline var parent: Snapshot<Base>
  /// The parent version it is, or `nil` after a parent state that was not a tree.
  @usableFromInline var parentVersion: Int?
  /// The top-level records of each section, by section index.
  @usableFromInline var roots: [SiblingList<Record>]
  /// The children of each record that has any: no list is empty.
  @usableFromInline var children: [Record.ID: SiblingList<Record>]
  @usableFromInline var expanded: Set<Record.ID>
  /// The rows shown, in the persistent form that batches edit.
  @usableFromInline var shown: Snapshot<Shown>

  /// The state of `parent` at `version` with `expanded` records expanded.
  /// - Throws: ``OutlineError`` when `parent` is not a tree.
  /// - Complexity: O(*n* log *n*).
  @inlinable
  init(parent: Snapshot<Base>, version: Int, expanded: Set<Record.ID>) throws(OutlineError) {
    let built = try Self.build(parent, expanded: expanded)
    self.parent = parent
    parentVersion = version
    roots = built.roots
    children = built.children
    self.expanded = expanded.filter { parent.contains(item: $0) }
    shown = Snapshot(trusted: built.sections)
    // The persistent form that batches edit, built with the rest of the start rather than on the first
    // batch.
    _ = shown.tree
  }

  // MARK: - Parent batches

  /// Shows the parent's new state; throws, changing nothing, when it is not a tree.
  @inlinable
  mutating func receive(_ batch: UpdateBatch<Base>) throws(OutlineError) -> Changeset<Shown> {
    let next: Snapshot<Shown>
    let touched: Set<Record.ID>?
    if batch.fromNumber == parentVersion, !batch.changeset.sectionChanges.hasStructuralChanges {
      let plan = try plan(batch.changeset)
      (next, touched) = apply(plan, to: batch.changeset)
    } else {
      let built = try Self.build(batch.snapshot, expanded: expanded)
      next = Snapshot(trusted: built.sections, reindexing: shown)
      touched = nil
      roots = built.roots
      children = built.children
      expanded = expanded.filter { batch.snapshot.contains(item: $0) }
    }
    parent = batch.snapshot
    parentVersion = batch.toNumber
    // The parent's refreshes of records that are rows: a row shows its record, so it is refreshed too.
    let refreshing = batch.changeset.forcedRefreshes.filter { next.contains(item: $0) }
    let change =
      touched.flatMap { Changeset(from: shown, to: next, logged: $0, refreshing: refreshing) }
      ?? Changeset(from: shown, to: next, refreshing: refreshing)
    if !change.isEmpty { shown = next }
    return change
  }

  /// A record the batch changed: where it was and where it is.
  @usableFromInline struct Placement {
    /// The record before, and its section's index; `nil` for an inserted record. (A batch applied record
    /// by record keeps the sections: an index names the same section before and after.)
    @usableFromInline let old: (record: Record, section: Int)?
    /// The record now, and its section's index; `nil` for a deleted record.
    @usableFromInline let new: (record: Record, section: Int)?

    @inlinable init(old: (record: Record, section: Int)?, new: (record: Record, section: Int)?) {
      self.old = old
      self.new = new
    }

    /// Whether the record changed its parent, its place among siblings or its section (or came or went).
    @inlinable var isRelocated: Bool {
      guard let old, let new else { return true }
      return old.section != new.section || old.record.parentID != new.record.parentID
        || SiblingKey(old.record) != SiblingKey(new.record)
    }
  }

  /// The records `changeset` changed, checked: every record's parent is a record of its section, and no
  /// record is its own ancestor. Reads the state, changes nothing.
  /// - Throws: ``OutlineError/Code-swift.enum/unknownParent`` or ``OutlineError/Code-swift.enum/cycle``.
  /// - Complexity: O(*k* (*d* + log² *s*) log *n*), plus the children of deleted records and of records
  ///   moved to another section.
  @inlinable
  func plan(_ changeset: Changeset<Base>) throws(OutlineError) -> [Placement] {
    let (source, target) = (parent, changeset.target)
    var placements: [Placement] = []
    let ids = Set(changeset.itemChanges.ids)
    for id in ids {
      let old = source.position(ofItem: id).map { (source[$0], $0.section) }
      let new = target.position(ofItem: id).map { (target[$0], $0.section) }
      if old == nil && new == nil { continue }
      placements.append(Placement(old: old, new: new))
    }
    // Every moved or inserted record's parent is a record of its section.
    for placement in placements where placement.isRelocated {
      guard let (record, section) = placement.new, let parentID = record.parentID else { continue }
      guard let at = target.position(ofItem: parentID), at.section == section else {
        throw OutlineError(.unknownParent, id: "\(record.id)", path: ["\(parentID)"])
      }
    }
    // The children the batch did not touch keep their parent: it must still be there, in their section.
    for placement in placements {
      guard let (record, section) = placement.old, let list = children[record.id] else { continue }
      if let new = placement.new, new.section == section { continue }
      for id in list.ids where !ids.contains(id) {
        throw OutlineError(.unknownParent, id: "\(id)", path: ["\(record.id)"])
      }
    }
    // A cycle runs through a record whose parent changed: walk up from each, until a top-level record
    // or a record already walked from.
    // A short path is searched as it is; a long one gets a set.
    var reachesTop = Set<Record.ID>()
    for placement in placements {
      guard let (record, _) = placement.new, record.parentID != nil,
        placement.old?.record.parentID != record.parentID
      else { continue }
      var path: [Record.ID] = [record.id]
      var onPath: Set<Record.ID>? = nil
      var next = record.parentID
      while let id = next, !reachesTop.contains(id) {
        if onPath?.contains(id) ?? path.contains(id) { throw Self.cycle(upward: path, repeating: id) }
        path.append(id)
        if onPath != nil { onPath?.insert(id) } else if path.count > 16 { onPath = Set(path) }
        next = target.item(withID: id)?.parentID
      }
      if placements.count > 1 { reachesTop.formUnion(path) }
    }
    return placements
  }

  /// Applies checked `placements` to the sibling lists and the rows shown, and returns the rows and the
  /// ids of the rows touched.
  ///
  /// 1. The rows of every relocated record, and the rows below them, are taken out.
  /// 2. The sibling lists are edited; deleted records leave ``expanded``.
  /// 3. Records edited in place get their rows replaced.
  /// 4. Every relocated record whose parent's row is shown and expanded gets its rows (and its shown
  ///    subtree's) back in, before its next sibling's row; a record put in with an ancestor's subtree is
  ///    not put in again.
  /// 5. The rows of parents that gained their first child or lost their last are refreshed.
  @inlinable
  mutating func apply(_ placements: [Placement], to changeset: Changeset<Base>) -> (
    Snapshot<Shown>, Set<Record.ID>
  ) {
    let target = changeset.target
    var tree = shown.tree
    var touched = Set<Record.ID>()
    for update in changeset.sectionChanges.updates {
      tree.replaceSectionContent(at: update.to, with: Self.header(target.sectionContent(at: update.to)))
    }
    // 1.
    for placement in placements where placement.isRelocated {
      guard let (record, _) = placement.old, let position = tree.position(ofItem: record.id) else { continue }
      Self.removeRows(at: position, includingRow: true, in: &tree, touched: &touched)
    }
    // 2. (`parents`: those whose list was emptied or made.)
    var parents = Set<Record.ID>()
    for placement in placements where placement.isRelocated {
      guard let (record, section) = placement.old else { continue }
      if let parentID = record.parentID {
        children[parentID]?.remove(SiblingKey(record))
        if children[parentID]?.isEmpty == true {
          children[parentID] = nil
          parents.insert(parentID)
        }
      } else {
        roots[section].remove(SiblingKey(record))
      }
    }
    for placement in placements {
      guard let (record, section) = placement.new else {
        if let id = placement.old?.record.id { expanded.remove(id) }
        continue
      }
      guard placement.isRelocated else { continue }
      if let parentID = record.parentID {
        if children[parentID] == nil { parents.insert(parentID) }
        children[parentID, default: SiblingList(sorted: [])].insert(SiblingKey(record))
      } else {
        roots[section].insert(SiblingKey(record))
      }
    }
    // 3.
    for placement in placements where !placement.isRelocated {
      guard let (record, _) = placement.new, let position = tree.position(ofItem: record.id) else { continue }
      var row = tree.item(at: position)
      guard row.record != record else { continue }
      row.record = record
      tree.replaceItem(at: position, with: row)
      touched.insert(record.id)
    }
    // 4.
    for placement in placements where placement.isRelocated {
      guard let (record, section) = placement.new, !tree.contains(item: record.id) else { continue }
      var depth = 0
      if let parentID = record.parentID {
        guard expanded.contains(parentID), let parentRow = tree.position(ofItem: parentID) else { continue }
        depth = tree.item(at: parentRow).depth + 1
      }
      let at = insertionPoint(for: record, section: section, in: tree, records: target)
      var rows: [Row] = []
      appendRows(of: record, depth: depth, records: target, to: &rows)
      for (offset, row) in rows.enumerated() {
        tree.insertItem(row, at: ItemPosition(section: at.section, item: at.item + offset))
        touched.insert(row.id)
      }
    }
    // 5.
    for id in parents {
      guard let position = tree.position(ofItem: id) else { continue }
      var row = tree.item(at: position)
      let hasChildren = children[id] != nil
      guard row.hasChildren != hasChildren else { continue }
      row.hasChildren = hasChildren
      tree.replaceItem(at: position, with: row)
      touched.insert(id)
    }
    return (Snapshot(tree: tree), touched)
  }

  /// Where the rows of `record` go: before the row of its first next sibling that is shown; after the
  /// last, before what follows its parent's subtree; at the end of its section for the last top-level
  /// record.
  /// - Complexity: O(*d* (log² *s* + log *n*)), plus one step for each next sibling not shown yet.
  @inlinable
  func insertionPoint(
    for record: Record, section: Int, in tree: SnapshotTree<Shown>, records: Snapshot<Base>
  ) -> ItemPosition {
    var record = record
    while true {
      if let siblings = record.parentID.map({ children[$0] }) ?? roots[section] {
        var index = siblings.index(after: SiblingKey(record))
        while index < siblings.count {
          if let position = tree.position(ofItem: siblings.id(at: index)) { return position }
          index += 1
        }
      }
      guard let parentID = record.parentID, let parentRecord = records.item(withID: parentID) else { break }
      record = parentRecord
    }
    return ItemPosition(section: section, item: tree.itemCount(inSection: section))
  }

  // MARK: - Expansion

  /// Expands or collapses `ids`; throws, changing nothing, for an id to expand that is not a record.
  @inlinable
  mutating func setExpanded(_ ids: [Record.ID], to isExpanded: Bool) throws(OutlineError) -> Changeset<Shown>
  {
    // A record that is gone is not expanded: collapsing it asks nothing. Expanding one is an error.
    if isExpanded, let unknown = ids.first(where: { !parent.contains(item: $0) }) {
      throw OutlineError(.unknownItem, id: "\(unknown)")
    }
    var changed = Set<Record.ID>()
    for id in ids where expanded.contains(id) != isExpanded {
      changed.insert(id)
      if isExpanded { expanded.insert(id) } else { expanded.remove(id) }
    }
    var tree = shown.tree
    var touched = Set<Record.ID>()
    // The changed records that are rows, from the last back: a record redone after a changed descendant
    // covers it.
    var rows = changed.compactMap { tree.position(ofItem: $0) }
    rows.sort { ($0.section, $0.item) > ($1.section, $1.item) }
    for position in rows {
      var row = tree.item(at: position)
      Self.removeRows(at: position, includingRow: false, in: &tree, touched: &touched)
      row.isExpanded = expanded.contains(row.id)
      tree.replaceItem(at: position, with: row)
      touched.insert(row.id)
      guard row.isExpanded, let list = children[row.id] else { continue }
      var below: [Row] = []
      for id in list.ids {
        guard let child = parent.item(withID: id) else { continue }
        appendRows(of: child, depth: row.depth + 1, records: parent, to: &below)
      }
      for (offset, child) in below.enumerated() {
        tree.insertItem(child, at: ItemPosition(section: position.section, item: position.item + 1 + offset))
        touched.insert(child.id)
      }
    }
    let next = Snapshot(tree: tree)
    let change =
      Changeset(from: shown, to: next, logged: touched, refreshing: [])
      ?? Changeset(from: shown, to: next, refreshing: [])
    if !change.isEmpty { shown = next }
    return change
  }

  // MARK: - Rows

  /// Takes out the rows below the row at `position` (its descendants: the rows after it that are
  /// deeper), and the row itself when `includingRow`.
  /// - Complexity: O(*r* log *n*) for *r* rows taken out.
  @inlinable
  static func removeRows(
    at position: ItemPosition, includingRow: Bool, in tree: inout SnapshotTree<Shown>,
    touched: inout Set<Record.ID>
  ) {
    let depth = tree.item(at: position).depth
    let below = ItemPosition(section: position.section, item: position.item + 1)
    while below.item < tree.itemCount(inSection: position.section), tree.item(at: below).depth > depth {
      touched.insert(tree.removeItem(at: below).id)
    }
    if includingRow { touched.insert(tree.removeItem(at: position).id) }
  }

  /// Appends the rows of `record` at `depth` and of its descendants that ``expanded`` shows, reading
  /// records from `records`. Walks with a stack of its own: a chain of any depth is flattened.
  /// - Complexity: O(*r* log *n*) for *r* rows.
  @inlinable
  func appendRows(of record: Record, depth: Int, records: Snapshot<Base>, to rows: inout [Row]) {
    appendRows(of: record, depth: depth, to: &rows) { records.item(withID: $0) }
  }

  /// ``appendRows(of:depth:records:to:)`` with records looked up by `record`.
  @inlinable
  func appendRows(of record: Record, depth: Int, to rows: inout [Row], record lookup: (Record.ID) -> Record?)
  {
    var stack: [(record: Record, depth: Int)] = [(record, depth)]
    while let (record, depth) = stack.popLast() {
      let list = children[record.id]
      let isExpanded = expanded.contains(record.id)
      rows.append(Row(record: record, depth: depth, isExpanded: isExpanded, hasChildren: list != nil))
      guard isExpanded, let list else { continue }
      for id in list.ids.reversed() {
        if let child = lookup(id) { stack.append((child, depth + 1)) }
      }
    }
  }

  /// An outline section's own content: the parent's section without its items.
  @inlinable static func header(_ section: Base) -> Shown {
    var base = section
    base.items = []
    return RecordOutlineSection(base: base, items: [])
  }

  // MARK: - Building anew

  /// The sibling lists of `snapshot` and its rows with `expanded` records expanded; throws for a state
  /// that is not a tree.
  /// - Complexity: O(*n* log *n*) for *n* records.
  @inlinable
  static func build(_ snapshot: Snapshot<Base>, expanded: Set<Record.ID>) throws(OutlineError) -> (
    roots: [SiblingList<Record>], children: [Record.ID: SiblingList<Record>], sections: [Shown]
  ) {
    var records: [Record.ID: (record: Record, section: Int)] = [:]
    let sections = snapshot.sections
    for (index, section) in sections.enumerated() {
      for record in section.items { records[record.id] = (record, index) }
    }
    var rootKeys: [[Key]] = Array(repeating: [], count: sections.count)
    var childKeys: [Record.ID: [Key]] = [:]
    for (index, section) in sections.enumerated() {
      for record in section.items {
        guard let parentID = record.parentID else {
          rootKeys[index].append(SiblingKey(record))
          continue
        }
        guard let parent = records[parentID], parent.section == index else {
          throw OutlineError(.unknownParent, id: "\(record.id)", path: ["\(parentID)"])
        }
        childKeys[parentID, default: []].append(SiblingKey(record))
      }
    }
    let roots = rootKeys.map { SiblingList(sorted: $0.sorted()) }
    let children = childKeys.mapValues { SiblingList(sorted: $0.sorted()) }
    // Every record is under a top-level one, unless it is on a cycle or below one.
    var reached = 0
    var stack = roots.flatMap(\.ids)
    while let id = stack.popLast() {
      reached += 1
      if let list = children[id] { stack.append(contentsOf: list.ids) }
    }
    if reached < records.count {
      let state = Self(roots: roots, children: children, expanded: [])
      throw state.cycle(amongst: records.mapValues(\.record))
    }
    let state = Self(roots: roots, children: children, expanded: expanded)
    let shown = sections.indices.map { index in
      var outline = header(sections[index])
      for id in roots[index].ids {
        guard let record = records[id]?.record else { continue }
        state.appendRows(of: record, depth: 0, to: &outline.items) { records[$0]?.record }
      }
      return outline
    }
    return (roots, children, shown)
  }

  /// A state of sibling lists alone, to flatten with while building.
  @inlinable
  init(roots: [SiblingList<Record>], children: [Record.ID: SiblingList<Record>], expanded: Set<Record.ID>) {
    parent = Snapshot()
    parentVersion = nil
    self.roots = roots
    self.children = children
    self.expanded = expanded
    shown = Snapshot()
  }

  /// The error for a cycle among `records`, some of which no top-level record reaches: walks up from
  /// one of those until an id repeats.
  @inlinable
  func cycle(amongst records: [Record.ID: Record]) -> OutlineError {
    var reached = Set<Record.ID>()
    var stack = roots.flatMap(\.ids)
    while let id = stack.popLast() {
      reached.insert(id)
      if let list = children[id] { stack.append(contentsOf: list.ids) }
    }
    guard let start = records.keys.first(where: { !reached.contains($0) }) else {
      return OutlineError(.cycle, id: "?")
    }
    var path: [Record.ID] = [start]
    var seen: Set<Record.ID> = [start]
    var next = records[start]?.parentID
    while let id = next, seen.insert(id).inserted {
      path.append(id)
      next = records[id]?.parentID
    }
    return Self.cycle(upward: path, repeating: next ?? start)
  }

  /// The error for the cycle a walk up from a record found: `upward` are the ids walked, and the next
  /// parent was `repeated`, walked already. The path is the cycle from `repeated` down to its parent, as
  /// ``OutlineDataSource`` gives it: `cycle: id 1 under 1 > 11`.
  @inlinable
  static func cycle(upward: [Record.ID], repeating repeated: Record.ID) -> OutlineError {
    let cycle = upward.drop(while: { $0 != repeated })
    return OutlineError(
      .cycle, id: "\(repeated)", path: ([repeated] + cycle.dropFirst().reversed()).map { "\($0)" })
  }
}
