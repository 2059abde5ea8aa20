// The persistent form of a snapshot against plain arrays: random edits, relabelling, old versions untouched.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Snapshot tree")
struct SnapshotTreeTests {
  /// Seeded random edit sequences (`SIMPLESOURCE_PERSISTENT_CASES`, 200 here and 4,000 in CI): item
  /// inserts (a third of them at one hot spot, which exhausts the labels there and forces relabelling),
  /// removals, replacements, moves, and section inserts, removals and moves. After the edits the tree
  /// equals the array model, its invariants hold, every id's position is its index in the model, and a
  /// version kept aside is exactly as it was.
  @Test("random edits match arrays, keep labels increasing, and leave old versions alone")
  func randomEdits() {
    let settings = RandomTestSettings.current(
      defaultCases: 200, casesVariable: "SIMPLESOURCE_PERSISTENT_CASES")
    var random = SeededGenerator(seed: settings.seed(forShard: 3))
    var failures = 0
    for index in 0..<settings.cases where failures < 3 {
      var serial = 0
      func newItem() -> TestItem {
        serial += 1
        return TestItem("n\(serial)")
      }
      var model: [TestSection] = (0..<Int.random(in: 1...3, using: &random)).map { section in
        TestSection(
          id: "S\(section)", header: "S\(section)",
          items: (0..<Int.random(in: 0..<300, using: &random)).map { TestItem("i\(section)_\($0)") })
      }
      var tree = SnapshotTree(trusted: model)
      var kept: (tree: SnapshotTree<TestSection>, model: [TestSection])?
      let hotSpot = Int.random(in: 0...model[0].items.count, using: &random)
      for step in 0..<Int.random(in: 1..<400, using: &random) {
        if step == 20 { kept = (tree, model) }
        let section = Int.random(in: 0..<model.count, using: &random)
        let count = model[section].items.count
        switch Int.random(in: 0..<20, using: &random) {
        case 0..<5:
          let item = newItem()
          let at = min(hotSpot, model[0].items.count)
          model[0].items.insert(item, at: at)
          tree.insertItem(item, at: ItemPosition(section: 0, item: at))
        case 5..<9:
          let item = newItem()
          let at = Int.random(in: 0...count, using: &random)
          model[section].items.insert(item, at: at)
          tree.insertItem(item, at: ItemPosition(section: section, item: at))
        case 9..<12 where count > 0:
          let at = Int.random(in: 0..<count, using: &random)
          let removed = tree.removeItem(at: ItemPosition(section: section, item: at))
          if removed != model[section].items.remove(at: at) { Issue.record("removed the wrong item") }
        case 12..<14 where count > 0:
          let at = Int.random(in: 0..<count, using: &random)
          model[section].items[at].version += 1
          tree.replaceItem(at: ItemPosition(section: section, item: at), with: model[section].items[at])
        case 14..<17 where count > 0:
          let from = Int.random(in: 0..<count, using: &random)
          let item = model[section].items.remove(at: from)
          let target = Int.random(in: 0..<model.count, using: &random)
          let to = Int.random(in: 0...model[target].items.count, using: &random)
          model[target].items.insert(item, at: to)
          tree.insertItem(
            tree.removeItem(at: ItemPosition(section: section, item: from)),
            at: ItemPosition(section: target, item: to))
        case 17:
          let added = TestSection(id: "T\(step)", header: "T", items: (0..<3).map { _ in newItem() })
          let at = Int.random(in: 0...model.count, using: &random)
          model.insert(added, at: at)
          tree.insertSections([added], at: at)
        case 18 where model.count > 1:
          let at = Int.random(in: 1..<model.count, using: &random)
          if tree.removeSection(at: at) != model.remove(at: at) { Issue.record("removed the wrong section") }
        case 19:
          let from = Int.random(in: 0..<model.count, using: &random)
          let to = Int.random(in: 0..<model.count, using: &random)
          model.insert(model.remove(at: from), at: to)
          tree.moveSection(from: from, to: to)
        default:
          break
        }
      }
      var problems = tree.violations
      if tree.sections != model { problems.append("sections differ from the model") }
      for (sectionIndex, section) in model.enumerated() {
        for (itemIndex, item) in section.items.enumerated() where itemIndex % 7 == 0 {
          let expected = ItemPosition(section: sectionIndex, item: itemIndex)
          if tree.position(ofItem: item.id) != expected || tree.item(at: expected) != item {
            problems.append("\(item.id) is not found at \(expected)")
          }
        }
      }
      if let kept, kept.tree.sections != kept.model || !kept.tree.violations.isEmpty {
        problems.append("an old version changed")
      }
      // Content comparison: against a fresh tree of other shape and labels, and against the kept version,
      // which shares most of its nodes.
      if !tree.hasSameContent(as: SnapshotTree(trusted: model)) {
        problems.append("not the same as a fresh tree")
      }
      if let kept, tree.hasSameContent(as: kept.tree) != (kept.model == model) {
        problems.append("hasSameContent disagrees with the arrays on the kept version")
      }
      if !problems.isEmpty {
        failures += 1
        Issue.record("case \(index): \(problems.prefix(5)) \(settings.replay)")
      }
    }
    print("Snapshot tree: \(settings.cases) random edit sequences checked, \(settings.replay)")
  }

  @Test("6,000 inserts at two places relabel locally: labels stay increasing and positions exact")
  func hotSpotRelabelling() {
    var tree = SnapshotTree(trusted: [TestSection(id: "S", items: (0..<1_000).map { TestItem("i\($0)") })])
    var model = tree.sections[0].items
    for serial in 0..<6_000 {
      let item = TestItem("n\(serial)")
      // Alternately at a fixed index and at the front: both exhaust the labels between two neighbours.
      let at = serial.isMultiple(of: 2) ? 500 : 0
      model.insert(item, at: at)
      tree.insertItem(item, at: ItemPosition(section: 0, item: at))
    }
    #expect(tree.violations == [])
    #expect(tree.sections[0].items == model)
    for index in stride(from: 0, to: model.count, by: 97) {
      #expect(tree.position(ofItem: model[index].id) == ItemPosition(section: 0, item: index))
    }
  }
}
