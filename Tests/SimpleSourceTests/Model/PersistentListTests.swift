// The persistent list against a plain Array: random edits, old versions untouched, and what an edit copies.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Persistent list")
struct PersistentListTests {
  @Test("an empty list, one element, and a bulk-built list read back as built")
  func basics() {
    var list = PersistentList<Labeled<Int>>()
    #expect(list.isEmpty && list.values == [] && Array(list).isEmpty)
    list.append(Labeled(7))
    #expect(list.count == 1 && list[0].value == 7)
    for count in [1, 63, 64, 65, 2_048, 2_049, 100_000] {
      let built = PersistentList(labeling: 0..<count)
      #expect(built.values == Array(0..<count), "\(count)")
      #expect(built.map(\.value) == Array(0..<count), "iteration, \(count)")
      #expect(built.violations == [], "\(count)")
    }
  }

  /// Seeded random edit sequences (`SIMPLESOURCE_PERSISTENT_CASES`, 200 here and 4,000 in CI), each on a
  /// list of up to 2,500 elements (up to three levels): after the edits the list equals the Array model,
  /// its invariants hold, and an earlier version kept aside is exactly as it was.
  @Test("random edits match an Array, keep the B-tree's invariants, and leave old versions alone")
  func randomEdits() {
    let settings = RandomTestSettings.current(
      defaultCases: 200, casesVariable: "SIMPLESOURCE_PERSISTENT_CASES")
    var random = SeededGenerator(seed: settings.seed)
    var failures = 0
    for index in 0..<settings.cases where failures < 3 {
      let size = Int.random(in: 0..<2_500, using: &random)
      var model = Array(0..<size)
      var list = PersistentList(labeling: model)
      var kept: (list: PersistentList<Labeled<Int>>, model: [Int])?
      for step in 0..<Int.random(in: 1..<120, using: &random) {
        if step == 10 { kept = (list, model) }
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4:
          let at = Int.random(in: 0...model.count, using: &random)
          model.insert(-step, at: at)
          list.insert(Labeled(-step), at: at)
        case 4..<8 where !model.isEmpty:
          let at = Int.random(in: 0..<model.count, using: &random)
          #expect(list.remove(at: at).value == model.remove(at: at))
        case 8 where !model.isEmpty:
          let at = Int.random(in: 0..<model.count, using: &random)
          model[at] = 1_000_000 + step
          list[at] = Labeled(1_000_000 + step)
        default:
          // A burst of removals from one end, which drains leaves and merges nodes.
          for _ in 0..<min(model.count, Int.random(in: 0..<200, using: &random)) {
            model.removeLast()
            list.remove(at: list.count - 1)
          }
        }
      }
      let at = model.isEmpty ? 0 : Int.random(in: 0..<model.count, using: &random)
      if list.values != model || list.count != model.count || !list.violations.isEmpty
        || (!model.isEmpty && list[at].value != model[at])
      {
        failures += 1
        Issue.record("case \(index): \(list.violations) \(settings.replay)")
      }
      if let kept, kept.list.values != kept.model {
        failures += 1
        Issue.record("case \(index): an old version changed \(settings.replay)")
      }
    }
    print("Persistent list: \(settings.cases) random edit sequences checked, \(settings.replay)")
  }

  @Test("partitioningIndex(where:) finds where a value goes in a sorted list, as a scan of the values does")
  func partitioning() {
    var random = SeededGenerator(seed: 0x5EED_0071)
    for count in [0, 1, 63, 64, 65, 2_048, 5_000, 70_000] {
      // Sorted, with runs of equal values: the first index past a value, and the first index at it.
      var values = (0..<count).map { _ in Int.random(in: 0..<(count / 3 + 2), using: &random) }
      values.sort()
      var list = PersistentList<Labeled<Int>>()
      for value in values { list.append(Labeled(value)) }
      for probe in [-1, count / 3 + 2]
        + (0..<40).map({ _ in Int.random(in: 0..<(count / 3 + 2), using: &random) })
      {
        let after = list.partitioningIndex { $0.value > probe }
        let at = list.partitioningIndex { $0.value >= probe }
        #expect(after == (values.firstIndex { $0 > probe } ?? count), "\(count), after \(probe)")
        #expect(at == (values.firstIndex { $0 >= probe } ?? count), "\(count), at \(probe)")
      }
    }
  }

  @Test("rank(ofLabel:) finds each element's index from its label, and where a missing label would go")
  func rankOfLabel() {
    for count in [0, 1, 64, 65, 3_000, 70_000] {
      // Even labels 2, 4, 6, …: each odd label falls between two elements.
      let list = PersistentList((0..<count).map { Labeled(orderLabel: UInt64(2 * $0 + 2), value: $0) })
      for index in stride(from: 0, to: count, by: max(1, count / 300)) {
        #expect(list.rank(ofLabel: UInt64(2 * index + 2)) == index, "\(count): label of \(index)")
        #expect(list.rank(ofLabel: UInt64(2 * index + 1)) == index, "\(count): just before \(index)")
      }
      #expect(list.rank(ofLabel: UInt64(2 * count + 5)) == count, "\(count): past the end")
      #expect(list.rank(ofLabel: 0) == 0)
    }
  }

  @Test("both descents, the unretained one and the diff's retaining one, find the same leaf, offset and rank")
  func descentsAgree() {
    for count in [0, 1, 64, 65, 3_000, 70_000] {
      var list = PersistentList((0..<count).map { Labeled(orderLabel: UInt64(2 * $0 + 2), value: $0) })
      // A version edited after a copy, so that the descents also cross copied and shared nodes.
      let original = list
      if count > 1 { list.remove(at: count / 2) }
      let labels = list.elements.map(\.orderLabel)
      for label in stride(from: UInt64(0), through: UInt64(2 * count + 3), by: max(1, 2 * count / 199)) {
        let quick = list.descend(toLabel: label)
        let retaining = list.retainingDescend(toLabel: label)
        let rank = labels.count { $0 < label }
        #expect(quick.leaf === retaining.leaf && quick.offset == retaining.offset, "\(count): \(label)")
        #expect(quick.rank == rank && retaining.rank == rank, "\(count): \(label)")
        if rank < labels.count && labels[rank] == label {
          #expect(list.find(label: label).index == rank && list.findRetaining(label: label).index == rank)
          #expect(list.find(label: label).element.value == list.findRetaining(label: label).element.value)
        }
      }
      #expect(original.values == Array(0..<count), "\(count): the copy kept its version")
    }
  }

  @Test("an edit of a copy copies one path: O(log n) nodes, the rest shared with the original")
  func editCopiesOnePath() {
    for count in [10_000, 300_000] {
      let original = PersistentList(labeling: 0..<count)
      let before = Set(original.nodes.map(ObjectIdentifier.init))
      for edit in 0..<3 {
        var copy = original
        switch edit {
        case 0: copy[count / 2] = Labeled(-1)
        case 1: copy.insert(Labeled(-1), at: 0)
        default: copy.remove(at: count - 1)
        }
        let fresh = copy.nodes.filter { !before.contains(ObjectIdentifier($0)) }.count
        #expect(fresh <= copy.height + 1, "\(count) elements, edit \(edit): \(fresh) new nodes")
      }
      #expect(original.values.count == count && original[count / 2].value == count / 2, "the original stays")
      #expect(original.height <= 4, "64 · 32 · 32 · 32 > 2,000,000")
    }
  }
}

extension Labeled<Int> {
  /// `value` labelled by its own bit pattern: labels that increase with non-negative values.
  init(_ value: Int) { self.init(orderLabel: UInt64(bitPattern: Int64(value)), value: value) }
}

extension PersistentList<Labeled<Int>> {
  /// A list of `values`, each labelled by itself.
  init(labeling values: some Sequence<Int>) { self.init(values.map(Labeled.init)) }

  /// The values in order.
  var values: [Int] { elements.map(\.value) }
}
