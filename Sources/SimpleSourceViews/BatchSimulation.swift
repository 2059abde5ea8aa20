// One batch update simulated step by step in UIKit's validation order (the order UIKit checks its rules in).

import SimpleSourceCore

/// An index path as UIKit sorts update items: a section operation sorts after every item of its section,
/// as UIKit's `(section, NSNotFound)` does. The flag is explicit so that an item index of `Int.max` in a
/// garbage batch is never taken for a section operation.
struct UpdatePath: Hashable, Comparable {
  var section: Int
  var item: Int
  var isSection: Bool

  static func section(_ section: Int) -> UpdatePath { UpdatePath(section: section, item: 0, isSection: true) }
  init(section: Int, item: Int, isSection: Bool = false) {
    self.section = section
    self.item = item
    self.isSection = isSection
  }
  init(_ position: ItemPosition) { self.init(section: position.section, item: position.item) }

  var position: ItemPosition { ItemPosition(section: section, item: item) }

  static func < (lhs: UpdatePath, rhs: UpdatePath) -> Bool {
    if lhs.section != rhs.section { return lhs.section < rhs.section }
    if lhs.isSection != rhs.isSection { return rhs.isSection }
    return lhs.item < rhs.item
  }
}

/// Simulates one `performBatchUpdates` on a list of sections; ``run()`` throws where UIKit would.
struct BatchSimulation<Section: SectionType> {
  typealias Item = Section.Item
  typealias View = ReferenceListView<Section>

  let before: [View.SectionView]
  let batch: StageCalls
  let after: [Section]
  /// Items whose refresh was asked for although their content is equal: not needless (R33).
  let requestedRefreshes: Set<Item.ID>
  var nextSerial: Int
  var warnings: [ListViewWarning] = []
  var result: [View.SectionView] = []

  // The batch after de-duplication and reload decomposition.
  private var sectionDeletes: Set<Int> = []
  private var sectionInserts: Set<Int> = []
  private var reloadedSections: Set<Int> = []
  private var sectionMoves: [StageCalls.Move<Int>] = []
  private var itemDeletes: Set<ItemPosition> = []
  private var itemInserts: Set<ItemPosition> = []
  /// Item deletes and inserts that are halves of a reload (R4), for messages and R29 hints.
  private var reloadDeleteHalves: Set<ItemPosition> = []
  private var reloadInsertHalves: Set<ItemPosition> = []
  private var itemMoves: [StageCalls.Move<ItemPosition>] = []
  /// The requested item moves by source and by destination (before duplicates are resolved).
  private var requestedMoveSources: Set<ItemPosition> = []
  private var requestedMoveDestinations: Set<ItemPosition> = []
  private var requestedMoveSourceSections: [Int: ItemPosition] = [:]
  private var requestedMoveDestinationSections: [Int: ItemPosition] = [:]

  init(
    before: [View.SectionView], batch: StageCalls, after: [Section], nextSerial: Int,
    requestedRefreshes: Set<Item.ID> = []
  ) {
    self.before = before
    self.batch = batch
    self.after = after
    self.nextSerial = nextSerial
    self.requestedRefreshes = requestedRefreshes
  }

  private var hasMoves: Bool { !batch.moveItems.isEmpty || !batch.moveSections.isEmpty }
  private var hasReloads: Bool { !batch.reloadItems.isEmpty || !batch.reloadSections.isEmpty }
  private var isStructural: Bool {
    !batch.deleteSections.isEmpty || !batch.insertSections.isEmpty || !batch.moveSections.isEmpty
      || !batch.deleteItems.isEmpty || !batch.insertItems.isEmpty || !batch.moveItems.isEmpty
  }

  mutating func run() throws(ListViewError) {
    for move in batch.moveItems {
      requestedMoveSources.insert(move.from)
      requestedMoveDestinations.insert(move.to)
      if requestedMoveSourceSections[move.from.section] == nil {
        requestedMoveSourceSections[move.from.section] = move.from
      }
      if requestedMoveDestinationSections[move.to.section] == nil {
        requestedMoveDestinationSections[move.to.section] = move.to
      }
    }
    try checkDuplicates()
    try checkSectionMoves()
    try decomposeReloads()
    try runDeleteLoop()
    try runInsertLoop()
    try runMoveLoop()
    try checkMovedSections()
    let sectionOrigins = try mapSections()
    try checkItemCounts(sectionOrigins)
    let reconfigured = try reconfigure()
    try buildResult(sectionOrigins, reconfigured: reconfigured)
    collectNeedlessRefreshes()
  }

  // MARK: - Before the loops

  /// R25: section lists are index sets (duplicates merge, with a warning); item lists must not repeat.
  private mutating func checkDuplicates() throws(ListViewError) {
    for (name, list) in [
      ("deleteSections", batch.deleteSections), ("insertSections", batch.insertSections),
      ("reloadSections", batch.reloadSections),
    ] where Set(list).count != list.count {
      warnings.append(ListViewWarning(.r25, "\(name) lists a section twice: \(list)"))
    }
    sectionDeletes = Set(batch.deleteSections)
    sectionInserts = Set(batch.insertSections)
    reloadedSections = Set(batch.reloadSections)
    for (name, list) in [
      ("delete", batch.deleteItems), ("insert", batch.insertItems), ("reload", batch.reloadItems),
    ] {
      var seen = Set<ItemPosition>()
      for position in list where !seen.insert(position).inserted {
        throw ListViewError(
          .r25, "attempt to \(name) the same index path (\(position)) twice in one batch",
          positions: [position])
      }
    }
  }

  /// R15, R23, R24 for section moves (checked before the delete loop, §8).
  private mutating func checkSectionMoves() throws(ListViewError) {
    var destinationOf = [Int: Int]()
    var sourceOf = [Int: Int]()
    for move in batch.moveSections {
      guard before.indices.contains(move.from) else {
        throw ListViewError(
          .r15,
          "attempt to move section \(move.from), but there are only \(before.count) sections before the update",
          sections: [move.from])
      }
      guard after.indices.contains(move.to) else {
        throw ListViewError(
          .r15,
          "attempt to to move section \(move.from) to section \(move.to), but there are only \(after.count) sections after the update",
          sections: [move.to])
      }
      if destinationOf[move.from] == move.to { continue }  // an exact duplicate is dropped
      if let other = destinationOf[move.from] {
        throw ListViewError(
          .r23, "attempt to move section \(move.from) to both section \(other) and section \(move.to)",
          sections: [move.from])
      }
      if let other = sourceOf[move.to] {
        throw ListViewError(
          .r24, "attempt to move both section \(other) and section \(move.from) to section \(move.to)",
          sections: [move.to])
      }
      destinationOf[move.from] = move.to
      sourceOf[move.to] = move.from
      sectionMoves.append(move)
    }
  }

  /// R4: every reload becomes a delete at its before path and an insert at an adjusted path, which
  /// accounts for the original deletes and inserts but not for moves. R18 and R26 are raised here.
  ///
  /// Section lists are index sets (R25), so a section listed twice shifts a reload once. Every reload is
  /// decomposed, also an item reload inside a reloaded section: UIKit raises R18 for it before the
  /// section's delete drops its halves (R27). Indices are not range-checked yet (that is the delete loop's
  /// job), so the adjustment wraps instead of trapping on a garbage index.
  private mutating func decomposeReloads() throws(ListViewError) {
    let originalDeletes =
      (sectionDeletes.map(UpdatePath.section) + batch.deleteItems.map(UpdatePath.init)).sorted(by: >)
    let originalInserts =
      (sectionInserts.map(UpdatePath.section) + batch.insertItems.map(UpdatePath.init)).sorted()

    func adjusted(_ reload: UpdatePath) throws(ListViewError) -> UpdatePath {
      var section = reload.section
      var item = reload.item
      for delete in originalDeletes {
        if delete == reload {
          throw ListViewError(
            .r18,
            "attempt to delete and reload the same index path (\(reload.isSection ? "\(reload.section)" : "\(reload.position)"))",
            sections: reload.isSection ? [reload.section] : [],
            positions: reload.isSection ? [] : [reload.position])
        }
        if delete.isSection && delete.section == reload.section { continue }
        if delete.isSection {
          if delete.section <= section { section &-= 1 }
        } else if !reload.isSection && delete.section == section && delete.item <= item {
          item &-= 1
        }
      }
      for insert in originalInserts {
        if insert.isSection && insert.section <= section { section &+= 1 }
        if !reload.isSection && !insert.isSection && insert.section == section && insert.item <= item {
          item &+= 1
        }
      }
      return UpdatePath(section: section, item: item, isSection: reload.isSection)
    }

    let originalSectionDeletes = sectionDeletes
    for section in reloadedSections.sorted() {
      let insert = try adjusted(.section(section))
      sectionDeletes.insert(section)
      sectionInserts.insert(insert.section)
    }
    itemDeletes = Set(batch.deleteItems)
    itemInserts = Set(batch.insertItems)
    // UIKit decomposes every reload (raising R18) before anything else looks at them.
    var adjustedInserts: [ItemPosition] = []
    for position in batch.reloadItems { adjustedInserts.append(try adjusted(UpdatePath(position)).position) }
    for (position, insert) in zip(batch.reloadItems, adjustedInserts) {
      if reloadedSections.contains(position.section) {
        warnings.append(
          ListViewWarning(.r27, "reload of item \(position) inside reloaded section \(position.section)"))
        continue
      }
      if originalSectionDeletes.contains(position.section) {
        throw ListViewError(
          .r26, "attempt to reload item \(position) inside section \(position.section), which is deleted",
          positions: [position])
      }
      itemDeletes.insert(position)
      reloadDeleteHalves.insert(position)
      itemInserts.insert(insert)
      reloadInsertHalves.insert(insert)
    }
  }

  // MARK: - The loops

  /// Deletes in descending order: R11, R27, R19, R21 for sections; R13, R19 for items.
  private mutating func runDeleteLoop() throws(ListViewError) {
    for section in sectionDeletes.sorted(by: >) {
      guard before.indices.contains(section) else {
        throw ListViewError(
          .r11,
          "attempt to delete section \(section), but there are only \(before.count) sections before the update",
          sections: [section])
      }
      let dropped = itemDeletes.filter { $0.section == section }
      if !dropped.isEmpty {
        itemDeletes.subtract(dropped)
        warnings.append(
          ListViewWarning(.r27, "item deletes \(dropped.sorted()) inside deleted section \(section)"))
      }
      if sectionMoves.contains(where: { $0.from == section }) {
        throw ListViewError(
          .r19, "attempt to perform a delete and a move from the same section (\(section))",
          sections: [section])
      }
      if let from = requestedMoveSourceSections[section] {
        throw ListViewError(
          .r21, "cannot move an item from a deleted section (\(section))", sections: [section],
          positions: [from])
      }
    }
    for position in itemDeletes.sorted(by: >) {
      guard before.indices.contains(position.section) else {
        throw ListViewError(
          .r13,
          "attempt to delete item \(position.item) from section \(position.section), but there are only \(before.count) sections before the update",
          positions: [position])
      }
      guard before[position.section].cells.indices.contains(position.item) else {
        throw ListViewError(
          .r13,
          "attempt to delete item \(position.item) from section \(position.section) which only contains \(before[position.section].cells.count) items before the update",
          positions: [position])
      }
      if requestedMoveSources.contains(position) {
        throw ListViewError(
          .r19, "attempt to perform a delete and a move from the same index path (\(position))",
          positions: [position], hint: reloadDeleteHalves.contains(position) ? .r29 : nil)
      }
    }
  }

  /// Inserts in ascending order: R12, R27, R20, R22 for sections; R14, R20 for items.
  private mutating func runInsertLoop() throws(ListViewError) {
    for section in sectionInserts.sorted() {
      guard after.indices.contains(section) else {
        throw ListViewError(
          .r12,
          "attempt to insert section \(section) but there are only \(after.count) sections after the update",
          sections: [section])
      }
      let dropped = itemInserts.filter { $0.section == section }
      if !dropped.isEmpty {
        itemInserts.subtract(dropped)
        warnings.append(
          ListViewWarning(.r27, "item inserts \(dropped.sorted()) inside inserted section \(section)"))
      }
      if sectionMoves.contains(where: { $0.to == section }) {
        throw ListViewError(
          .r20, "attempt to perform an insert and a move to the same section (\(section))",
          sections: [section])
      }
      if let to = requestedMoveDestinationSections[section] {
        throw ListViewError(
          .r22, "cannot move an item into a newly inserted section (\(section))", sections: [section],
          positions: [to])
      }
    }
    for position in itemInserts.sorted() {
      guard after.indices.contains(position.section) else {
        throw ListViewError(
          .r14,
          "attempt to insert item \(position.item) into section \(position.section), but there are only \(after.count) sections after the update",
          positions: [position])
      }
      guard after[position.section].items.indices.contains(position.item) else {
        throw ListViewError(
          .r14,
          "attempt to insert item \(position.item) into section \(position.section), but there are only \(after[position.section].items.count) items in section \(position.section) after the update",
          positions: [position])
      }
      if requestedMoveDestinations.contains(position) {
        throw ListViewError(
          .r20, "attempt to perform an insert and a move to the same index path (\(position))",
          positions: [position], hint: reloadInsertHalves.contains(position) ? .r29 : nil)
      }
    }
  }

  /// Item moves: R16 ranges, R23 and R24 duplicates (exact duplicates are dropped).
  private mutating func runMoveLoop() throws(ListViewError) {
    var destinationOf = [ItemPosition: ItemPosition]()
    var sourceOf = [ItemPosition: ItemPosition]()
    for move in batch.moveItems {
      let (from, to) = (move.from, move.to)
      guard before.indices.contains(from.section) else {
        throw ListViewError(
          .r16,
          "attempt to move index path (\(from)) from a section that does not exist - there are only \(before.count) sections before the update",
          positions: [from])
      }
      guard before[from.section].cells.indices.contains(from.item) else {
        throw ListViewError(
          .r16,
          "attempt to move index path (\(from)) that does not exist - there are only \(before[from.section].cells.count) items in section \(from.section) before the update",
          positions: [from])
      }
      guard after.indices.contains(to.section) else {
        throw ListViewError(
          .r16,
          "attempt to move index path (\(from)) to index path (\(to)) in section that does not exist - there are only \(after.count) sections after the update",
          positions: [to])
      }
      guard after[to.section].items.indices.contains(to.item) else {
        throw ListViewError(
          .r16,
          "attempt to move index path (\(from)) to index path (\(to)) that does not exist - there are only \(after[to.section].items.count) items in section \(to.section) after the update",
          positions: [to])
      }
      if destinationOf[from] == to { continue }
      if let other = destinationOf[from] {
        throw ListViewError(
          .r23, "attempt to move item at index path \(from) to both \(other) and \(to)", positions: [from])
      }
      if let other = sourceOf[to] {
        throw ListViewError(
          .r24, "attempt to move both item at index path \(other) and \(from) to \(to)", positions: [to])
      }
      destinationOf[from] = to
      sourceOf[to] = from
      itemMoves.append(move)
    }
  }

  /// R28: no item operation in a section that is moved in the same batch (a known UIKit bug).
  private func checkMovedSections() throws(ListViewError) {
    let movedFrom = Set(sectionMoves.map(\.from))
    let movedTo = Set(sectionMoves.map(\.to))
    if movedFrom.isEmpty { return }
    func fail(_ what: String, _ position: ItemPosition, _ section: Int) -> ListViewError {
      ListViewError(
        .r28, "\(what) \(position) touches section \(section), which is moved in the same batch",
        sections: [section], positions: [position])
    }
    for position in itemDeletes.sorted() where movedFrom.contains(position.section) {
      throw fail(
        reloadDeleteHalves.contains(position) ? "item reload" : "item delete", position, position.section)
    }
    for move in itemMoves where movedFrom.contains(move.from.section) {
      throw fail("item move from", move.from, move.from.section)
    }
    for position in itemInserts.sorted() where movedTo.contains(position.section) {
      throw fail(
        reloadInsertHalves.contains(position) ? "item reload" : "item insert", position, position.section)
    }
    for move in itemMoves where movedTo.contains(move.to.section) {
      throw fail("item move to", move.to, move.to.section)
    }
  }

  // MARK: - Counts and mapping

  /// R8, then R7: the old section that lands in each after slot (`nil` for a new section).
  private func mapSections() throws(ListViewError) -> [Int?] {
    let expected = before.count + sectionInserts.count - sectionDeletes.count
    guard after.count == expected else {
      throw ListViewError(
        .r8,
        "Invalid update: invalid number of sections.  The number of sections contained in the list view after the update (\(after.count)) must be equal to the number of sections contained in the list view before the update (\(before.count)), plus or minus the number of sections inserted or deleted (\(sectionInserts.count) inserted, \(sectionDeletes.count) deleted)."
      )
    }
    var origins = [Int?](repeating: nil, count: after.count)
    var taken = [Bool](repeating: false, count: after.count)
    for section in sectionInserts { taken[section] = true }
    var movedFrom = Set<Int>()
    for move in sectionMoves {
      origins[move.to] = move.from
      taken[move.to] = true
      movedFrom.insert(move.from)
    }
    var free = (0..<after.count).filter { !taken[$0] }.makeIterator()
    for old in before.indices where !sectionDeletes.contains(old) && !movedFrom.contains(old) {
      guard let slot = free.next() else {
        preconditionFailure("SimpleSourceTesting internal inconsistency: no slot for section \(old)")
      }
      origins[slot] = old
    }
    return origins
  }

  /// R9: the item count of every surviving section.
  private func checkItemCounts(_ origins: [Int?]) throws(ListViewError) {
    var newIndexOf = [Int: Int]()
    for (new, old) in origins.enumerated() { if let old { newIndexOf[old] = new } }
    var insertedInto = [Int: Int](), deletedFrom = [Int: Int](), movedInto = [Int: Int](),
      movedOutOf = [Int: Int]()
    for position in itemInserts { insertedInto[position.section, default: 0] += 1 }
    for position in itemDeletes { deletedFrom[position.section, default: 0] += 1 }
    for move in itemMoves where newIndexOf[move.from.section] != move.to.section {
      movedInto[move.to.section, default: 0] += 1
      movedOutOf[move.from.section, default: 0] += 1
    }
    for (new, origin) in origins.enumerated() {
      guard let old = origin else { continue }
      let inserted = insertedInto[new] ?? 0
      let deleted = deletedFrom[old] ?? 0
      let movedIn = movedInto[new] ?? 0
      let movedOut = movedOutOf[old] ?? 0
      let expected = before[old].cells.count + inserted - deleted + movedIn - movedOut
      if expected < 0 {
        throw ListViewError(
          .r9,
          "Invalid update: invalid number of items in section \(old).  Attempt to delete more items than exist in section.",
          sections: [old])
      }
      if after[new].items.count != expected {
        throw ListViewError(
          .r9,
          "Invalid update: invalid number of items in section \(new).  The number of items contained in an existing section after the update (\(after[new].items.count)) must be equal to the number of items contained in that section before the update (\(before[old].cells.count)), plus or minus the number of items inserted or deleted from that section (\(inserted) inserted, \(deleted) deleted) and plus or minus the number of items moved into or out of that section (\(movedIn) moved in, \(movedOut) moved out).",
          sections: [new])
      }
    }
  }

  /// R17 and R5: reconfigure runs the cell provider at once, at the before path, against the data source.
  /// Sections in `reconfigureSections` get their header content the same way.
  private mutating func reconfigure() throws(ListViewError) -> [View.SectionView] {
    var sections = before
    for index in batch.reconfigureSections {
      guard before.indices.contains(index) else {
        throw ListViewError(
          .r17, "attempt to reconfigure section \(index), which does not exist before the update",
          sections: [index])
      }
      guard after.indices.contains(index), after[index].id == before[index].id else {
        throw ListViewError(
          .r5, "reconfigure of section \(index) finds another section there in the data source",
          sections: [index])
      }
      if before[index].section.isContentEqual(to: after[index]) {
        warnings.append(
          ListViewWarning(.r33, "reconfigure of section \(before[index].id), whose header is unchanged"))
      }
      sections[index].section = after[index]
    }
    var cells = before.map(\.cells)
    if !(batch.reconfigureItems.isEmpty && batch.reconfigureSections.isEmpty) && isStructural {
      warnings.append(
        ListViewWarning(.r5, "reconfigure in a batch with structural changes resolves before-state paths"))
    }
    for position in batch.reconfigureItems {
      guard before.indices.contains(position.section), cells[position.section].indices.contains(position.item)
      else {
        throw ListViewError(
          .r17, "attempt to reconfigure item \(position), which does not exist before the update",
          positions: [position])
      }
      let cell = cells[position.section][position.item]
      guard after.indices.contains(position.section),
        after[position.section].items.indices.contains(position.item)
      else {
        throw ListViewError(
          .r5, "reconfigure of \(position) finds no item there in the data source", positions: [position])
      }
      let item = after[position.section].items[position.item]
      guard item.id == cell.itemID else {
        throw ListViewError(
          .r5, "reconfigure of \(position) configures the cell of item \(cell.itemID) with item \(item.id)",
          positions: [position])
      }
      if itemDeletes.contains(position) || sectionDeletes.contains(position.section) {
        warnings.append(ListViewWarning(.r5, "reconfigure of \(position), which is also deleted or reloaded"))
      }
      if cell.item == item && !requestedRefreshes.contains(item.id) {
        warnings.append(ListViewWarning(.r33, "reconfigure of unchanged item \(item.id) at \(position)"))
      }
      cells[position.section][position.item].item = item
    }
    for index in sections.indices { sections[index].cells = cells[index] }
    return sections
  }

  /// R7 for items, then R31 (the mapping equals the data source) and R32 (changed content refreshed).
  private mutating func buildResult(_ origins: [Int?], reconfigured: [View.SectionView]) throws(ListViewError)
  {
    let cells = reconfigured.map(\.cells)
    var movesInto = [Int: [StageCalls.Move<ItemPosition>]]()
    var movedFrom = Set<ItemPosition>()
    for move in itemMoves {
      movesInto[move.to.section, default: []].append(move)
      movedFrom.insert(move.from)
    }
    var insertsInto = [Int: [Int]]()
    for position in itemInserts { insertsInto[position.section, default: []].append(position.item) }
    let misMapped: BatchRule? = hasReloads && hasMoves ? .r29 : nil
    var sections: [View.SectionView] = []
    sections.reserveCapacity(after.count)
    for (new, origin) in origins.enumerated() {
      let data = after[new]
      guard let old = origin else {
        sections.append(makeSectionView(data))
        continue
      }
      let view = reconfigured[old]
      guard view.id == data.id else {
        throw ListViewError(
          .r31, "section \(new) shows section \(view.id) but the data source has section \(data.id)",
          sections: [new], hint: misMapped)
      }
      var slots = [View.Cell?](repeating: nil, count: data.items.count)
      for item in insertsInto[new] ?? [] {
        slots[item] = makeCell(data.items[item])
      }
      for move in movesInto[new] ?? [] {
        slots[move.to.item] = cells[move.from.section][move.from.item]
      }
      var free = slots.indices.filter { slots[$0] == nil }.makeIterator()
      for (index, cell) in cells[old].enumerated() {
        let position = ItemPosition(section: old, item: index)
        if itemDeletes.contains(position) || movedFrom.contains(position) { continue }
        guard let slot = free.next() else {
          preconditionFailure("SimpleSourceTesting internal inconsistency: no slot for item \(position)")
        }
        slots[slot] = cell
      }
      var result = [View.Cell]()
      result.reserveCapacity(slots.count)
      for (index, slot) in slots.enumerated() {
        guard let cell = slot else {
          preconditionFailure(
            "SimpleSourceTesting internal inconsistency: empty slot \(index) in section \(new)")
        }
        let item = data.items[index]
        let position = ItemPosition(section: new, item: index)
        guard cell.itemID == item.id else {
          throw ListViewError(
            .r31, "the cell at \(position) shows item \(cell.itemID) but the data source has item \(item.id)",
            positions: [position], hint: misMapped)
        }
        guard cell.item == item else {
          throw ListViewError(
            .r32, "item \(item.id) at \(position) changed content but its cell was not refreshed",
            positions: [position])
        }
        result.append(cell)
      }
      guard view.section.isContentEqual(to: data) else {
        throw ListViewError(
          .r32, "section \(data.id) at \(new) changed its own content but was not refreshed", sections: [new])
      }
      sections.append(View.SectionView(serial: view.serial, id: view.id, section: data, cells: result))
    }
    result = sections
  }

  // MARK: - Warnings

  /// R30 and R33: fragile section reloads and needless refreshes.
  private mutating func collectNeedlessRefreshes() {
    if !batch.reloadSections.isEmpty && isStructural {
      warnings.append(ListViewWarning(.r30, "reloadSections mixed with other operations in one batch"))
    }
    guard !batch.reloadItems.isEmpty || !batch.reloadSections.isEmpty || !batch.deleteItems.isEmpty else {
      return
    }
    var newItems = [Item.ID: Item]()
    for section in after { for item in section.items { newItems[item.id] = item } }
    for position in batch.reloadItems where !reloadedSections.contains(position.section) {
      let cell = before[position.section].cells[position.item]
      if let item = newItems[cell.itemID], item == cell.item, !requestedRefreshes.contains(cell.itemID) {
        warnings.append(ListViewWarning(.r33, "reload of unchanged item \(cell.itemID) at \(position)"))
      }
    }
    // Only the operations that survived R27 were range-checked; the dropped ones may point anywhere.
    let insertedIDs = Set(
      itemInserts.subtracting(reloadInsertHalves).map { after[$0.section].items[$0.item].id })
    for position in itemDeletes.subtracting(reloadDeleteHalves).sorted() {
      let cell = before[position.section].cells[position.item]
      if insertedIDs.contains(cell.itemID), let item = newItems[cell.itemID], item == cell.item {
        warnings.append(
          ListViewWarning(
            .r33, "delete and insert of unchanged item \(cell.itemID): a move would keep its cell"))
      }
    }
    for section in batch.reloadSections {
      let view = before[section]
      guard let data = after.first(where: { $0.id == view.id }), view.section.isContentEqual(to: data) else {
        continue
      }
      let unchanged = view.cells.allSatisfy { cell in newItems[cell.itemID].map { $0 == cell.item } ?? false }
      if unchanged {
        warnings.append(
          ListViewWarning(.r33, "reload of section \(view.id), whose header and items are unchanged"))
      }
    }
  }

  // MARK: - New cells

  private mutating func makeCell(_ item: Item) -> View.Cell {
    defer { nextSerial += 1 }
    return View.Cell(serial: nextSerial, itemID: item.id, item: item)
  }

  private mutating func makeSectionView(_ section: Section) -> View.SectionView {
    let cells = section.items.map { makeCell($0) }
    defer { nextSerial += 1 }
    return View.SectionView(serial: nextSerial, id: section.id, section: section, cells: cells)
  }
}
