// An independent, deliberately plain model of UIKit's batch rules, to check ReferenceListView against.
//
// It is written from shared/UIKIT_BATCH_RULES.md alone: lists and linear scans instead of sets and maps,
// concrete TestSection data, and the validation order of §8. It shares no code with BatchSimulation.

import SimpleSource
import SimpleSourceTesting

/// Where a cell shown after a batch came from.
enum CellOrigin: Hashable, CustomStringConvertible {
  /// The cell that showed this position before the batch.
  case old(section: Int, item: Int)
  /// A cell made for the batch (an insert, a reload, an inserted or reloaded section).
  case new

  var description: String {
    switch self {
    case .old(let section, let item): "old[\(section),\(item)]"
    case .new: "new"
    }
  }
}

/// What UIKit does with one batch: the first rule it breaks, or where every cell and section comes from.
enum BatchVerdict: Equatable, CustomStringConvertible {
  case rejected(rule: String)
  case accepted(sections: [Int?], cells: [[CellOrigin]])

  var description: String {
    switch self {
    case .rejected(let rule): "rejected by \(rule)"
    case .accepted(let sections, let cells): "accepted: sections from \(sections), cells \(cells)"
    }
  }
}

/// The rules of `UIKIT_BATCH_RULES.md`, applied in UIKit's validation order (§8) to one batch.
struct BatchRulesModel {
  /// What the view shows before the batch, with the content its cells were configured with.
  let before: [TestSection]
  /// What the data source holds after the batch.
  let after: [TestSection]
  let batch: StageCalls

  private struct Broken: Error { let rule: String }

  /// An update item as UIKit sorts them: a section operation has no item and sorts after its items.
  private struct Operation {
    var section: Int
    var item: Int?
    var key: (Int, Int, Int) { (section, item == nil ? 1 : 0, item ?? 0) }
  }

  func verdict() -> BatchVerdict {
    do {
      return try run()
    } catch {
      return .rejected(rule: error.rule)
    }
  }

  private func existsBefore(_ section: Int) -> Bool { section >= 0 && section < before.count }
  private func existsAfter(_ section: Int) -> Bool { section >= 0 && section < after.count }
  private func existsBefore(_ position: ItemPosition) -> Bool {
    existsBefore(position.section) && position.item >= 0
      && position.item < before[position.section].items.count
  }
  private func existsAfter(_ position: ItemPosition) -> Bool {
    existsAfter(position.section) && position.item >= 0 && position.item < after[position.section].items.count
  }

  private func withoutRepeats<T: Equatable>(_ list: [T]) -> [T] {
    var result: [T] = []
    for element in list where !result.contains(element) { result.append(element) }
    return result
  }

  private func run() throws(Broken) -> BatchVerdict {
    // R25: item lists must not repeat; section lists are index sets.
    for list in [batch.deleteItems, batch.insertItems, batch.reloadItems]
    where withoutRepeats(list).count != list.count {
      throw Broken(rule: "R25")
    }
    let deletedSections = withoutRepeats(batch.deleteSections)
    let insertedSections = withoutRepeats(batch.insertSections)
    let reloadedSections = withoutRepeats(batch.reloadSections)

    // Section moves are range-checked and de-duplicated first (R15, R23, R24).
    var sectionMoves: [StageCalls.Move<Int>] = []
    for move in batch.moveSections {
      if !existsBefore(move.from) || !existsAfter(move.to) { throw Broken(rule: "R15") }
      if sectionMoves.contains(move) { continue }
      if sectionMoves.contains(where: { $0.from == move.from }) { throw Broken(rule: "R23") }
      if sectionMoves.contains(where: { $0.to == move.to }) { throw Broken(rule: "R24") }
      sectionMoves.append(move)
    }

    // R4: reloads become a delete and an adjusted insert; R18.
    let deletes =
      (deletedSections.map { Operation(section: $0) }
      + batch.deleteItems.map { Operation(section: $0.section, item: $0.item) })
      .sorted { $0.key > $1.key }
    let inserts =
      (insertedSections.map { Operation(section: $0) }
      + batch.insertItems.map { Operation(section: $0.section, item: $0.item) })
      .sorted { $0.key < $1.key }
    func adjust(_ reload: Operation) throws(Broken) -> Operation {
      var section = reload.section
      var item = reload.item
      for delete in deletes {
        if delete.section == reload.section && delete.item == reload.item { throw Broken(rule: "R18") }
        if delete.item == nil {
          if delete.section == reload.section { continue }
          if delete.section <= section { section = section &- 1 }
        } else if let current = item, delete.section == section, let deleted = delete.item, deleted <= current
        {
          item = current &- 1
        }
      }
      for insert in inserts {
        if insert.item == nil, insert.section <= section { section = section &+ 1 }
        if let current = item, let inserted = insert.item, insert.section == section, inserted <= current {
          item = current &+ 1
        }
      }
      return Operation(section: section, item: item)
    }
    var sectionDeletes = deletedSections
    var sectionInserts = insertedSections
    for section in reloadedSections.sorted() {
      let insert = try adjust(Operation(section: section))
      sectionDeletes.append(section)
      sectionInserts.append(insert.section)
    }
    sectionDeletes = withoutRepeats(sectionDeletes)
    sectionInserts = withoutRepeats(sectionInserts)
    var reloadInserts: [ItemPosition] = []
    for position in batch.reloadItems {
      let insert = try adjust(Operation(section: position.section, item: position.item))
      reloadInserts.append(ItemPosition(section: insert.section, item: insert.item ?? 0))
    }
    var itemDeletes = batch.deleteItems
    var itemInserts = batch.insertItems
    for (position, insert) in zip(batch.reloadItems, reloadInserts) {
      if reloadedSections.contains(position.section) { continue }  // R27: redundant
      if deletedSections.contains(position.section) { throw Broken(rule: "R26") }
      itemDeletes.append(position)
      itemInserts.append(insert)
    }
    itemDeletes = withoutRepeats(itemDeletes)
    itemInserts = withoutRepeats(itemInserts)

    // The delete loop, descending (R11, R27, R19, R21; R13, R19).
    for section in sectionDeletes.sorted(by: >) {
      if !existsBefore(section) { throw Broken(rule: "R11") }
      itemDeletes.removeAll { $0.section == section }
      if sectionMoves.contains(where: { $0.from == section }) { throw Broken(rule: "R19") }
      if batch.moveItems.contains(where: { $0.from.section == section }) { throw Broken(rule: "R21") }
    }
    for position in itemDeletes.sorted(by: >) {
      if !existsBefore(position) { throw Broken(rule: "R13") }
      if batch.moveItems.contains(where: { $0.from == position }) { throw Broken(rule: "R19") }
    }
    // The insert loop, ascending (R12, R27, R20, R22; R14, R20).
    for section in sectionInserts.sorted() {
      if !existsAfter(section) { throw Broken(rule: "R12") }
      itemInserts.removeAll { $0.section == section }
      if sectionMoves.contains(where: { $0.to == section }) { throw Broken(rule: "R20") }
      if batch.moveItems.contains(where: { $0.to.section == section }) { throw Broken(rule: "R22") }
    }
    for position in itemInserts.sorted() {
      if !existsAfter(position) { throw Broken(rule: "R14") }
      if batch.moveItems.contains(where: { $0.to == position }) { throw Broken(rule: "R20") }
    }
    // The move loop (R16, R23, R24; exact duplicates dropped).
    var itemMoves: [StageCalls.Move<ItemPosition>] = []
    for move in batch.moveItems {
      if !existsBefore(move.from) || !existsAfter(move.to) { throw Broken(rule: "R16") }
      if itemMoves.contains(move) { continue }
      if itemMoves.contains(where: { $0.from == move.from }) { throw Broken(rule: "R23") }
      if itemMoves.contains(where: { $0.to == move.to }) { throw Broken(rule: "R24") }
      itemMoves.append(move)
    }
    // R28: no item operation in a moved section.
    let movedFrom = sectionMoves.map(\.from)
    let movedTo = sectionMoves.map(\.to)
    if itemDeletes.contains(where: { movedFrom.contains($0.section) })
      || itemMoves.contains(where: { movedFrom.contains($0.from.section) || movedTo.contains($0.to.section) })
      || itemInserts.contains(where: { movedTo.contains($0.section) })
    {
      throw Broken(rule: "R28")
    }
    // R8, then R7 for sections.
    if after.count != before.count + sectionInserts.count - sectionDeletes.count { throw Broken(rule: "R8") }
    var sectionOrigin = [Int?](repeating: nil, count: after.count)
    var isSlotTaken = [Bool](repeating: false, count: after.count)
    for section in sectionInserts { isSlotTaken[section] = true }
    for move in sectionMoves {
      sectionOrigin[move.to] = move.from
      isSlotTaken[move.to] = true
    }
    var carried = before.indices.filter { old in
      !sectionDeletes.contains(old) && !sectionMoves.contains { $0.from == old }
    }
    for slot in after.indices where !isSlotTaken[slot] {
      guard !carried.isEmpty else { throw Broken(rule: "model: no section for slot \(slot)") }
      sectionOrigin[slot] = carried.removeFirst()
    }
    // R9: the item count of every carried section.
    for (new, origin) in sectionOrigin.enumerated() {
      guard let old = origin else { continue }
      let inserted = itemInserts.filter { $0.section == new }.count
      let deleted = itemDeletes.filter { $0.section == old }.count
      let movedIn = itemMoves.filter {
        $0.to.section == new && sectionOrigin.firstIndex(of: $0.from.section) != new
      }
      let movedOut = itemMoves.filter {
        $0.from.section == old && sectionOrigin.firstIndex(of: old) != $0.to.section
      }
      if before[old].items.count + inserted - deleted + movedIn.count - movedOut.count
        != after[new].items.count
      {
        throw Broken(rule: "R9")
      }
    }
    // R17 and R5: reconfigures run at once at before paths against the data source.
    var shown = before
    for section in batch.reconfigureSections {
      if !existsBefore(section) { throw Broken(rule: "R17") }
      if !existsAfter(section) || after[section].id != before[section].id { throw Broken(rule: "R5") }
      shown[section].header = after[section].header
      shown[section].footer = after[section].footer
    }
    for position in batch.reconfigureItems {
      if !existsBefore(position) { throw Broken(rule: "R17") }
      if !existsAfter(position) { throw Broken(rule: "R5") }
      let item = after[position.section].items[position.item]
      if item.id != before[position.section].items[position.item].id { throw Broken(rule: "R5") }
      shown[position.section].items[position.item] = item
    }
    // R7 for items, then R31 and R32.
    var cells: [[CellOrigin]] = []
    for (new, origin) in sectionOrigin.enumerated() {
      let data = after[new]
      guard let old = origin else {
        cells.append(data.items.map { _ in .new })
        continue
      }
      if before[old].id != data.id { throw Broken(rule: "R31") }
      var slots = [CellOrigin?](repeating: nil, count: data.items.count)
      for position in itemInserts where position.section == new { slots[position.item] = .new }
      for move in itemMoves where move.to.section == new {
        slots[move.to.item] = .old(section: move.from.section, item: move.from.item)
      }
      var remaining = before[old].items.indices.filter { index in
        let position = ItemPosition(section: old, item: index)
        return !itemDeletes.contains(position) && !itemMoves.contains { $0.from == position }
      }
      for slot in slots.indices where slots[slot] == nil {
        guard !remaining.isEmpty else { throw Broken(rule: "model: no cell for slot \(slot)") }
        slots[slot] = .old(section: old, item: remaining.removeFirst())
      }
      var row: [CellOrigin] = []
      for (index, slot) in slots.enumerated() {
        let item = data.items[index]
        switch slot {
        case .old(let section, let position):
          let shownItem = shown[section].items[position]
          if shownItem.id != item.id { throw Broken(rule: "R31") }
          if shownItem != item { throw Broken(rule: "R32") }
          row.append(.old(section: section, item: position))
        case .new, nil:
          row.append(.new)
        }
      }
      if !shown[old].isContentEqual(to: data) { throw Broken(rule: "R32") }
      cells.append(row)
    }
    return .accepted(sections: sectionOrigin, cells: cells)
  }
}

extension ReferenceListView where Section == TestSection {
  /// The verdict of this view on `batch`, in the model's terms: where each cell and section came from.
  static func verdict(before: [TestSection], after: [TestSection], batch: StageCalls) -> BatchVerdict {
    var view = ReferenceListView(before)
    var cellOrigin: [Int: CellOrigin] = [:]
    var sectionOrigin: [Int: Int] = [:]
    for (section, sectionView) in view.sections.enumerated() {
      sectionOrigin[sectionView.serial] = section
      for (item, cell) in sectionView.cells.enumerated() {
        cellOrigin[cell.serial] = .old(section: section, item: item)
      }
    }
    do {
      try view.performBatchUpdates(batch, data: after)
    } catch {
      return .rejected(rule: error.rule.id)
    }
    return .accepted(
      sections: view.sections.map { sectionOrigin[$0.serial] },
      cells: view.sections.map { $0.cells.map { cellOrigin[$0.serial] ?? .new } })
  }
}
